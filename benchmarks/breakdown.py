"""Where the seconds of one ingest go, measured by timers around our own steps.

Run inside a benchmark worker (a fresh process, benchmarks/worker.py job
`breakdown`): it wraps functions of the flow in place, for that process only,
then runs one `mdchunks.ingest`. Nothing of this is in the product.

Measured, not estimated:
- phases on the main thread, wall clock: start-up (process creation to the
  ingest call: interpreter and imports, as for the CLI), migrations, the
  rest of the set-up (lock, catalog, state check), the walk, the engine
  run, the reconciliation, the end (state stamp and counts);
- inside the engine run, the CPU time of each step on whatever thread runs
  it (`time.thread_time`, exclusive of the steps nested in it): read, split,
  index (`build_index`), assign, rows (the chunker's and the rows' work around
  them: breadcrumbs, embed texts, ids; and the content hash);
- engine: the process's CPU time over the engine run (`getrusage`, all
  threads) less those steps: cocoindex's Rust engine, its LMDB state, the
  event loop, asyncpg's side of the writes;
- PostgreSQL: the CPU time of the server's processes (the postmaster, its
  live children and the children it reaped), sampled from /proc at each
  phase boundary, so the server's share of each phase is its own figure.
"""

from __future__ import annotations

import contextlib
import functools
import os
import resource
import threading
import time
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

STEPS: tuple[str, ...] = ("read", "split", "index", "assign", "rows")
_TICKS = os.sysconf("SC_CLK_TCK")


def process_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _stat_fields(pid: int) -> list[str]:
    text = Path(f"/proc/{pid}/stat").read_text()
    return text[text.rindex(")") + 2 :].split()  # fields from the 3rd on (after "comm")


def process_age() -> float:
    """Seconds since this process was created (10 ms resolution)."""
    started = int(_stat_fields(os.getpid())[19]) / _TICKS  # field 22: starttime
    uptime = float(Path("/proc/uptime").read_text().split()[0])
    return uptime - started


def server_cpu(postmaster: int, settle_seconds: float = 10.0) -> float:
    """CPU seconds of a PostgreSQL server so far: the postmaster's own, those of
    the children it reaped, and those of its live children.

    Read so that no backend is lost in between: a child that has exited but is
    not yet reaped (a zombie: a backend whose client just disconnected) shows
    only part of its time, and one reaped during the scan of /proc would be in
    neither the postmaster's total nor the scan. So the reading is retried
    until the postmaster reaped nothing during it and no child is a zombie
    (backends exit just as a run's pool closes; on a loaded machine reaping
    them was seen to take over a second)."""
    deadline = time.monotonic() + settle_seconds
    while True:
        before = _stat_fields(postmaster)
        children = 0
        zombies = False
        for entry in os.scandir("/proc"):
            if not entry.name.isdigit():
                continue
            with contextlib.suppress(OSError, ValueError, IndexError):
                child = _stat_fields(int(entry.name))
                if int(child[1]) == postmaster:  # field 4: ppid
                    zombies = zombies or child[0] in ("Z", "X")  # field 3: state
                    children += int(child[11]) + int(child[12])  # utime, stime
        after = _stat_fields(postmaster)
        reaped = before[13:15] != after[13:15]  # cutime, cstime moved during the scan
        if not (zombies or reaped) or time.monotonic() > deadline:
            own = sum(int(after[k]) for k in (11, 12, 13, 14))  # utime stime cutime cstime
            return (own + children) / _TICKS
        time.sleep(0.005)


def postmaster_of(database_url: str) -> int | None:
    """The pid of the server's postmaster, or None when the server is not a
    process of this machine (a container, a remote host): then the server's
    CPU is not measured. Read from `postmaster.pid` in its data directory,
    checked against the parent of our own backend."""
    import psycopg

    with psycopg.connect(database_url, autocommit=True) as conn:
        row = conn.execute("SELECT pg_backend_pid(), current_setting('data_directory')").fetchone()
        assert row is not None
        backend, data_directory = int(row[0]), str(row[1])
        try:
            pid = int(Path(data_directory, "postmaster.pid").read_text().split()[0])
            parent = int(_stat_fields(backend)[1])
        except (OSError, ValueError, IndexError):
            return None
    return pid if pid == parent else None


@dataclass
class Recorder:
    """Exclusive thread-CPU time per step, and wall/CPU marks per phase."""

    postmaster: int | None
    step_cpu: dict[str, float] = field(default_factory=lambda: dict.fromkeys(STEPS, 0.0))
    phases: dict[str, dict[str, float]] = field(default_factory=dict)
    settled: float = 0.0  # seconds spent waiting for the server's backends to be reaped
    _lock: threading.Lock = field(default_factory=threading.Lock)
    _local: threading.local = field(default_factory=threading.local)

    def step(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            stack: list[float] = self._local.__dict__.setdefault("stack", [])
            started = time.thread_time()
            stack.append(0.0)
            try:
                return fn(*args, **kwargs)
            finally:
                elapsed = time.thread_time() - started
                nested = stack.pop()
                if stack:
                    stack[-1] += elapsed
                with self._lock:
                    self.step_cpu[name] += elapsed - nested

        return timed

    def snapshot(self) -> dict[str, float]:
        """Marks of now. The server's is read last: it may wait for backends
        to be reaped, time that belongs to no phase (the instrumented run's
        only overhead; stage 7's whole runs are not instrumented)."""
        with self._lock:
            steps = sum(self.step_cpu.values())
        marks = {"wall": time.perf_counter(), "cpu": process_cpu(), "steps": steps}
        marks["settle"] = self.settled  # waits so far, taken out of the phases' walls
        started = time.perf_counter()
        marks["server"] = 0.0 if self.postmaster is None else server_cpu(self.postmaster)
        self.settled += time.perf_counter() - started
        return marks

    def record(self, name: str, before: dict[str, float], after: dict[str, float]) -> None:
        phase = {key: after[key] - before[key] for key in before}
        phase["wall"] -= phase.pop("settle")
        self.phases[name] = phase

    @contextlib.contextmanager
    def phase(self, name: str) -> Iterator[None]:
        before = self.snapshot()
        try:
            yield
        finally:
            self.record(name, before, self.snapshot())

    def sync_phase(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        def timed(*args: Any, **kwargs: Any) -> Any:
            with self.phase(name):
                return fn(*args, **kwargs)

        return timed

    def async_phase(self, name: str, fn: Callable[..., Any]) -> Callable[..., Any]:
        @functools.wraps(fn)
        async def timed(*args: Any, **kwargs: Any) -> Any:
            with self.phase(name):
                return await fn(*args, **kwargs)

        return timed


def install(recorder: Recorder) -> None:
    """Wrap the flow's steps in this process (module attributes looked up at call time)."""
    from mdchunks.db import migrate
    from mdchunks.heading_index import recursive
    from mdchunks.plugin import chunking
    from mdchunks.source import app, engine, files, listing, reconcile

    budget_splits: dict[str | None, Callable[..., Any]] = {}
    make_budget_split = chunking._budget_split

    def timed_budget_split(language: str | None) -> Callable[..., Any]:
        if language not in budget_splits:
            budget_splits[language] = recorder.step("split", make_budget_split(language))
        return budget_splits[language]

    def assign_all(fn: Callable[..., Any]) -> Callable[..., Any]:
        return recorder.step("assign", lambda *a, **k: list(fn(*a, **k)))

    chunking._budget_split = timed_budget_split  # type: ignore[assignment]
    chunking.build_index = recorder.step("index", chunking.build_index)  # type: ignore[assignment]
    recursive.assign = assign_all(recursive.assign)  # type: ignore[assignment]
    app._read_chunk_and_hash = recorder.step("rows", app._read_chunk_and_hash)  # type: ignore[assignment]
    files.DocumentFile._read_sync = recorder.step(  # type: ignore[method-assign]
        "read", files.DocumentFile._read_sync
    )
    migrate.ensure = recorder.sync_phase("migrations", migrate.ensure)  # type: ignore[assignment]
    listing.walk = recorder.sync_phase("walk", listing.walk)  # type: ignore[assignment]
    engine.run_once = recorder.async_phase("engine", engine.run_once)  # type: ignore[assignment]
    reconcile.reconcile = recorder.sync_phase(  # type: ignore[assignment]
        "reconciliation", reconcile.reconcile
    )


def measure(spec: dict[str, Any]) -> dict[str, Any]:
    """One ingest of `spec["root"]`, broken down. The CLI's imports come first,
    so start-up is what `mdchunks ingest` pays before it starts."""
    import mdchunks.cli.commands  # noqa: F401 - the command's imports, timed as start-up
    from mdchunks import api

    url = spec["database_url"]
    recorder = Recorder(postmaster=postmaster_of(url))
    install(recorder)
    startup = process_age()
    begin = recorder.snapshot()
    report = api.ingest(
        Path(spec["root"]), source=spec["source"], database_url=url, data_dir=Path(spec["data_dir"])
    )
    end = recorder.snapshot()
    recorder.record("ingest", begin, end)
    phases = recorder.phases
    inside = phases["engine"]
    named = sum(phases[name]["wall"] for name in ("migrations", "walk", "engine", "reconciliation"))
    return {
        "startup_wall": startup,
        "ingest_wall": phases["ingest"]["wall"],
        "phases_wall": {name: phase["wall"] for name, phase in phases.items()},
        "other_wall": phases["ingest"]["wall"] - named,  # lock, catalog, state, counts
        "steps_cpu": dict(recorder.step_cpu),
        "engine_cpu": inside["cpu"] - inside["steps"],
        "engine_phase_cpu": inside["cpu"],
        "ingest_cpu": phases["ingest"]["cpu"],
        "server_cpu": {name: phase["server"] for name, phase in phases.items()},
        "server_measured": recorder.postmaster is not None,
        "postmaster": recorder.postmaster,
        "rows": report.rows_total,
        "documents": report.documents,
        "failed": len(report.failures),  # skipped entries too: anything not ingested
    }
