"""Two checkouts' whole ingests, interleaved (`python -m benchmarks.ab`).

`python -m benchmarks.ab --base DIR [--other DIR ...] [--corpus DIR ...]
[--trials N]`: for each corpus and trial, each checkout's `python -m mdchunks
ingest` (its own `.venv`) runs a first ingest into a fresh database of one
embedded PostgreSQL, with a fresh engine state, then a no-op re-run; the
checkouts take turns within a trial, in an order that alternates between
trials. Prints the median wall seconds of each and their ratio to the first
checkout's (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import os
import shutil
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

from benchmarks import postgres
from benchmarks.breakdown import postmaster_of, server_cpu
from benchmarks.jobs import REPO, child_env


@dataclass(frozen=True, slots=True)
class Timing:
    wall: float
    cpu: float  # the ingest process's user + system seconds, every thread
    server: float  # the database server's CPU seconds during the run


def _ingest(checkout: Path, corpus: Path, url: str, data_dir: Path, postmaster: int) -> Timing:
    server_before = server_cpu(postmaster)
    started = time.perf_counter()
    done = _run(
        [
            str(checkout / ".venv" / "bin" / "python"),
            "-m",
            "mdchunks",
            "ingest",
            str(corpus),
            "--database-url",
            url,
            "--data-dir",
            str(data_dir),
        ],
        cwd=checkout,
        env=child_env(),
    )
    wall = time.perf_counter() - started
    status, cpu, stderr = done
    if status != 0:
        raise RuntimeError(f"{checkout}: ingest of {corpus} failed: {stderr[-2000:]}")
    return Timing(wall, cpu, server_cpu(postmaster) - server_before)


def _run(command: list[str], *, cwd: Path, env: dict[str, str]) -> tuple[int, float, str]:
    """Exit status, user + system CPU seconds (from wait4) and stderr of `command`."""
    with tempfile.TemporaryFile() as err:
        child = subprocess.Popen(command, cwd=cwd, env=env, stdout=subprocess.DEVNULL, stderr=err)
        _, status, usage = os.wait4(child.pid, 0)
        child.returncode = os.waitstatus_to_exitcode(status)
        err.seek(0)
        return (
            child.returncode,
            usage.ru_utime + usage.ru_stime,
            err.read().decode(errors="replace"),
        )


def main(argv: list[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.ab")
    parser.add_argument("--base", type=Path, required=True, help="the baseline checkout")
    parser.add_argument("--other", type=Path, action="append", default=[], help="[this one]")
    parser.add_argument("--corpus", type=Path, action="append", default=[])
    parser.add_argument("--trials", type=int, default=5)
    args = parser.parse_args(argv)
    checkouts = [args.base.resolve()] + ([p.resolve() for p in args.other] or [REPO])
    corpora = args.corpus or [REPO / "corpora" / "rust-book", REPO / "corpora" / "tldr"]
    work = Path(tempfile.mkdtemp(prefix="mdchunks-ab-"))
    first: dict[tuple[int, Path], list[Timing]] = {}
    noop: dict[tuple[int, Path], list[Timing]] = {}
    try:
        with postgres.server(work / "server") as server:
            postmaster = postmaster_of(server.admin_url)
            assert postmaster is not None, "the server's CPU is read from /proc"
            for trial in range(args.trials):
                for c, corpus in enumerate(corpora):
                    order = list(enumerate(checkouts))
                    if trial % 2:
                        order.reverse()
                    for i, checkout in order:
                        name = f"ab_{i}_{c}"
                        url = server.create(name)
                        data_dir = work / name
                        shutil.rmtree(data_dir, ignore_errors=True)
                        first.setdefault((i, corpus), []).append(
                            _ingest(checkout, corpus, url, data_dir, postmaster)
                        )
                        noop.setdefault((i, corpus), []).append(
                            _ingest(checkout, corpus, url, data_dir, postmaster)
                        )
                        server.drop(name)
                print(f"trial {trial + 1}/{args.trials} done", flush=True)
    finally:
        shutil.rmtree(work, ignore_errors=True)
    print(f"\n{args.trials} trials, medians (ratio to {checkouts[0]}): wall seconds,")
    print("CPU seconds of the ingest process, CPU seconds of the database server")
    print(
        "| corpus | checkout | first wall | ratio | first cpu | ratio | first server | ratio "
        "| no-op wall | ratio | no-op cpu | ratio |"
    )
    print("|---|---|" + "---:|" * 10)
    for corpus in corpora:
        for i, checkout in enumerate(checkouts):
            cells = []
            for runs, kinds in ((first, ("wall", "cpu", "server")), (noop, ("wall", "cpu"))):
                for kind in kinds:
                    base = statistics.median(getattr(t, kind) for t in runs[(0, corpus)])
                    mine = statistics.median(getattr(t, kind) for t in runs[(i, corpus)])
                    cells.append(f"{mine:.2f} | {mine / base:.2f}x")
            print(f"| {corpus.name} | {checkout.name} | " + " | ".join(cells) + " |")


if __name__ == "__main__":
    main()
