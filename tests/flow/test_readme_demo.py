"""The README's demo transcript is what `python3 dev.py demo` prints: its two
commands run here against this test's database, and the output compared line
by line with the README's (times, the clone's path and the database's lines
aside, which differ from machine to machine)."""

from __future__ import annotations

import importlib.util
import re
import shutil
from pathlib import Path
from types import ModuleType

from conftest import RunCli

ROOT = Path(__file__).resolve().parents[2]
README_CLONE = Path("/home/me/mdchunks")  # where the README's transcript was run
TIMES = re.compile(r"\d+\.\d s, \d+\.\d\d MB/s")
DATABASE_LINES = ("embedded PostgreSQL: ", "database: ", "inspect with: ")


def _dev() -> ModuleType:
    spec = importlib.util.spec_from_file_location("dev", ROOT / "dev.py")
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def _readme_transcript() -> list[str]:
    readme = (ROOT / "README.md").read_text(encoding="utf-8")
    block = readme.split("$ python3 dev.py demo\n", 1)[1].split("\n```\n", 1)[0]
    return block.splitlines()


def _comparable(lines: list[str]) -> list[str]:
    return [TIMES.sub("T", line) for line in lines if not line.startswith(DATABASE_LINES)]


def test_the_readme_shows_what_the_demo_prints(run_cli: RunCli, tmp_path: Path) -> None:
    dev = _dev()
    sample = Path(shutil.copytree(ROOT / "sample", tmp_path / "sample"))
    ingested = run_cli("ingest", str(sample), "--source", "sample")
    found = run_cli("search", dev.DEMO_QUERY, "-k", "3")
    assert ingested.code == 0 and found.code == 0, ingested.err + found.err

    note = dev.demo_server_note(dev.ROOT).replace(str(dev.ROOT), str(README_CLONE))
    printed = [
        *ingested.out.replace(str(sample), str(README_CLONE / "sample")).splitlines(),
        *("", f'$ mdchunks search "{dev.DEMO_QUERY}" -k 3'),
        *found.out.splitlines(),
        *("", note),
    ]
    readme = _readme_transcript()
    assert any(line.startswith("embedded PostgreSQL: ") for line in readme)
    assert _comparable(readme) == _comparable(printed)
