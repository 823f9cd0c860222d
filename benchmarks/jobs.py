"""Starting a worker process for one job and reading its result."""

from __future__ import annotations

import compileall
import json
import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchmarks.worker import RESULT_MARKER

REPO = Path(__file__).resolve().parents[1]


class JobFailed(RuntimeError):
    pass


def child_env() -> dict[str, str]:
    """The environment of every measured process: usage tracking off, and
    bytecode cached as an installed package has it. With
    PYTHONDONTWRITEBYTECODE set (some CI images and sandboxes set it), an
    editable checkout recompiles every module of ours on each start (0.1-0.2 s
    of each whole run, measured), which a user's installed mdchunks never
    does, while the peer's and the bare app's libraries come compiled."""
    env = {**os.environ, "COCOINDEX_DISABLE_USAGE_TRACKING": "1"}
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    return env


def compile_checkout() -> None:
    """Compile the checkout's modules once, before anything is timed (what
    `pip install` does for an installed package)."""
    for folder in ("flow", "heading_index", "migrations", "benchmarks"):
        compileall.compile_dir(REPO / folder, quiet=2, workers=1)


def run_job(job: str, **spec: Any) -> dict[str, Any]:
    """Run `job` in a fresh interpreter (this one's), return its result dict."""
    payload = json.dumps(
        {"job": job, **{k: str(v) if isinstance(v, Path) else v for k, v in spec.items()}}
    )
    env = child_env()
    done = subprocess.run(
        [sys.executable, "-m", "benchmarks.worker", payload],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    for line in reversed(done.stdout.splitlines()):
        if line.startswith(RESULT_MARKER):
            result: dict[str, Any] = json.loads(line[len(RESULT_MARKER) :])
            return result
    tail = "\n".join((done.stderr or done.stdout).strip().splitlines()[-15:])
    raise JobFailed(f"job {job} failed (exit {done.returncode}):\n{tail}")


def run_whole(argv: list[str]) -> dict[str, Any]:
    """Run a whole command (`python -m ...`) in a fresh process and time it from
    the start of the interpreter to its exit: start-up and imports count, as
    they do for a user. Returns seconds, the process's peak RSS in MB (from
    `wait4`, the child's own rusage), its CPU seconds (user + system, every
    thread; not the database server's) and its last line of stdout."""
    env = child_env()
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        started = time.perf_counter()
        process = subprocess.Popen(argv, cwd=REPO, env=env, stdout=out, stderr=err, text=True)
        _, status, usage = os.wait4(process.pid, 0)
        seconds = time.perf_counter() - started
        process.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    if process.returncode != 0:
        tail = "\n".join((stderr or stdout).strip().splitlines()[-15:])
        raise JobFailed(f"{' '.join(argv[1:4])} failed (exit {process.returncode}):\n{tail}")
    lines = stdout.strip().splitlines()
    return {
        "seconds": seconds,
        "peak_rss_mb": usage.ru_maxrss / 1024,  # KiB on Linux
        "cpu_seconds": usage.ru_utime + usage.ru_stime,  # the process's own, all threads
        "last_line": lines[-1] if lines else "",
    }
