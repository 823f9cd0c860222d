"""`dev.py` runs `mdchunks` in the caller's folder, and the demo and the tests
in the checkout whatever folder they are called from. The commands it would
run are captured instead of run (the venv is the one these tests run in),
except in the last test, where its `run` runs a real pytest to be stopped."""

from __future__ import annotations

import contextlib
import importlib.util
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from types import ModuleType

import pytest

ROOT = Path(__file__).resolve().parents[1]


@pytest.fixture
def dev(monkeypatch: pytest.MonkeyPatch) -> tuple[ModuleType, list[tuple[list[str], Path]]]:
    spec = importlib.util.spec_from_file_location("dev", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    ran: list[tuple[list[str], Path]] = []

    def run(argv: list[str], cwd: Path = module.ROOT) -> int:
        ran.append((argv, cwd))
        return 0

    monkeypatch.setattr(module, "ensure_venv", lambda extras: None)
    monkeypatch.setattr(module, "run", run)
    return module, ran


def test_mdchunks_runs_in_the_callers_folder(
    dev: tuple[ModuleType, list[tuple[list[str], Path]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module, ran = dev
    monkeypatch.chdir(tmp_path)

    assert module.main(["mdchunks", "ingest", "docs"]) == 0

    [(argv, cwd)] = ran
    assert argv[1:] == ["ingest", "docs"] and Path(argv[0]).name == "mdchunks"
    assert cwd == tmp_path


def test_the_demo_runs_in_the_checkout_from_anywhere(
    dev: tuple[ModuleType, list[tuple[list[str], Path]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    module, ran = dev
    monkeypatch.chdir(tmp_path)

    assert module.main(["demo"]) == 0

    (ingest, ingest_cwd), (search, search_cwd) = ran
    assert ingest[1:4] == ["ingest", "sample", "--source"] and search[1] == "search"
    assert ingest_cwd == search_cwd == ROOT
    assert (ROOT / "sample").is_dir()


def test_test_paths_are_taken_from_the_callers_folder(
    dev: tuple[ModuleType, list[tuple[list[str], Path]]], monkeypatch: pytest.MonkeyPatch
) -> None:
    module, ran = dev
    monkeypatch.chdir(ROOT / "tests")

    module.main(["test", "test_dev.py::test_x", "-k", "name", "heading_index", "no_such_file"])

    [(argv, cwd)] = ran
    assert cwd == ROOT
    assert argv[3:] == [
        f"{ROOT / 'tests' / 'test_dev.py'}::test_x",
        "-k",
        "name",
        str(ROOT / "tests" / "heading_index"),
        "no_such_file",
    ]


def test_the_demo_prints_its_query_and_that_the_server_stays_up(
    dev: tuple[ModuleType, list[tuple[list[str], Path]]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    module, ran = dev
    monkeypatch.delenv("DATABASE_URL", raising=False)
    monkeypatch.chdir(tmp_path)

    assert module.main(["demo"]) == 0

    (_, _), (search, _) = ran
    printed = capsys.readouterr().out
    assert f'$ mdchunks search "{module.DEMO_QUERY}" -k 3' in printed
    assert search[2:] == [module.DEMO_QUERY, "-k", "3"]
    # Called from elsewhere, the stop command names the checkout's data dir.
    note = printed.strip().splitlines()[-1]
    assert f"embedded PostgreSQL in {ROOT / '.mdchunks'} stays up" in note
    assert note.endswith(
        f"stop it with: python3 {ROOT / 'dev.py'} mdchunks stop --data-dir {ROOT / '.mdchunks'}"
    )
    assert module.demo_server_note(ROOT).endswith("stop it with: python3 dev.py mdchunks stop")


def test_a_demo_into_database_url_leaves_no_server_to_stop(
    dev: tuple[ModuleType, list[tuple[list[str], Path]]],
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    module, _ = dev
    monkeypatch.setenv("DATABASE_URL", "postgresql://somewhere/db")
    assert module.main(["demo"]) == 0
    assert "stays up" not in capsys.readouterr().out


@pytest.mark.slow
@pytest.mark.parametrize("stop", [signal.SIGTERM, signal.SIGINT], ids=["sigterm", "sigint"])
def test_a_stop_request_ends_the_tests_as_ctrl_c_does(tmp_path: Path, stop: signal.Signals) -> None:
    # SIGTERM (`timeout`, a CI runner) or SIGINT sent to dev.py alone: pytest
    # is interrupted as by Ctrl-C, so it tears its fixtures down (the tests'
    # embedded servers) instead of being left running, or killed with them up.
    started, torn_down = tmp_path / "started", tmp_path / "torn-down"
    (tmp_path / "test_waits.py").write_text(
        "import pathlib, time\n"
        "import pytest\n"
        "@pytest.fixture\n"
        "def server():\n"
        "    yield\n"
        f"    pathlib.Path({str(torn_down)!r}).write_text('done')\n"
        "def test_waits(server):\n"
        f"    pathlib.Path({str(started)!r}).write_text('up')\n"
        "    time.sleep(120)\n"
    )
    # dev.py's own `run`, as `dev.py test` calls it (without its venv set-up).
    driver = (
        "import importlib.util, sys; "
        f"spec = importlib.util.spec_from_file_location('dev', {str(ROOT / 'dev.py')!r}); "
        "dev = importlib.util.module_from_spec(spec); spec.loader.exec_module(dev); "
        "sys.exit(dev.run([sys.executable, '-m', 'pytest', '-p', 'no:cacheprovider', "
        "sys.argv[1]]))"
    )
    process = subprocess.Popen(
        [sys.executable, "-c", driver, str(tmp_path / "test_waits.py")],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        start_new_session=True,  # so that nothing of it outlives the test
    )
    try:
        deadline = time.monotonic() + 120
        while not started.exists() and time.monotonic() < deadline:
            time.sleep(0.1)
        if not started.exists():
            os.killpg(process.pid, signal.SIGKILL)
            raise AssertionError(f"the test never started: {process.communicate()[0]}")
        process.send_signal(stop)  # to dev.py alone (no terminal here)
        out, _ = process.communicate(timeout=60)
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, signal.SIGKILL)
    assert torn_down.read_text() == "done", out
    assert process.returncode != 0 and "KeyboardInterrupt" in out, out
