"""Starting a worker process for one job and reading its result."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

from benchmarks.worker import RESULT_MARKER

REPO = Path(__file__).resolve().parents[1]


class JobFailed(RuntimeError):
    pass


def run_job(job: str, **spec: Any) -> dict[str, Any]:
    """Run `job` in a fresh interpreter (this one's), return its result dict."""
    payload = json.dumps(
        {"job": job, **{k: str(v) if isinstance(v, Path) else v for k, v in spec.items()}}
    )
    env = {**os.environ, "COCOINDEX_DISABLE_USAGE_TRACKING": "1"}
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
