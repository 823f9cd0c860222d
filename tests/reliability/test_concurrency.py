"""Issue #5, concurrency: two `mdchunks ingest` processes started at the same
moment on the same source, and on two different sources.

Same source: the second waits for the lock (saying so) or, with --lock-wait 0,
refuses it with a clear message naming the holder; never are the two runs'
writes interleaved, and the table ends up exactly the table of one clean run
(of the recipe of the run that went second). Different sources: both hold
their locks at the same time (observed in pg_locks while they run).
"""

from __future__ import annotations

import threading
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import mdchunks
import psycopg
import pytest
from reliability_support import (
    RECIPE_A,
    RECIPE_B,
    assert_invariants,
    copy_corpus,
    documents,
    finish,
    one_line_error,
    recipe_args,
    recipe_of,
    start_cli,
    table,
)

SOURCE = "corpus"

# Advisory locks of `mdchunks ingest` runs (their lock connections are named
# "mdchunks ingest pid <pid> <source>"; the migration lock's is "mdchunks migrate").
HOLDERS = """
SELECT a.pid, a.application_name
FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
WHERE l.locktype = 'advisory' AND l.granted AND a.application_name LIKE 'mdchunks ingest %%'
"""
RECIPE_ROWS = "SELECT recipe, count(*) FROM content_chunks GROUP BY 1"


@dataclass(frozen=True)
class Setup:
    root: Path
    other_root: Path
    rows: dict[str, list[tuple[Any, ...]]]  # reference tables by name
    documents: dict[str, list[tuple[Any, ...]]]


@pytest.fixture(scope="module")
def setup(tmp_path_factory: pytest.TempPathFactory, module_database) -> Setup:  # type: ignore[no-untyped-def]
    base = tmp_path_factory.mktemp("concurrency")
    root = copy_corpus(base / "corpus", tldr_pages=290, book_chapters=10)
    other = copy_corpus(base / "other", tldr_pages=290, offset=290)
    rows: dict[str, list[tuple[Any, ...]]] = {}
    docs: dict[str, list[tuple[Any, ...]]] = {}
    for name, folder, source, budgets in [
        ("A", root, SOURCE, RECIPE_A),
        ("B", root, SOURCE, RECIPE_B),
        ("one", root, "one", RECIPE_A),
        ("two", other, "two", RECIPE_A),
    ]:
        url = module_database()
        report = mdchunks.ingest(
            folder,
            source=source,
            recipe=recipe_of(budgets),
            database_url=url,
            data_dir=base / f"data-{name}",
        )
        assert report.ok
        rows[name], docs[name] = table(url, source), documents(url, source)
    return Setup(root, other, rows, docs)


@dataclass
class Sampler:
    """Polls the server every 20 ms while runs go on: who holds an ingest lock,
    and how many rows of each recipe the table has."""

    url: str
    samples: list[tuple[float, frozenset[tuple[int, str]], dict[str, int]]] = field(
        default_factory=list
    )
    _stop: threading.Event = field(default_factory=threading.Event)
    _thread: threading.Thread | None = None

    def __enter__(self) -> Sampler:
        self._thread = threading.Thread(target=self._run, daemon=True)
        self._thread.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self._stop.set()
        assert self._thread is not None
        self._thread.join(timeout=30)

    def _run(self) -> None:
        with psycopg.connect(self.url, autocommit=True) as conn:
            while not self._stop.is_set():
                holders = frozenset((int(pid), str(app)) for pid, app in conn.execute(HOLDERS))
                recipes: dict[str, int] = {}
                exists = conn.execute("SELECT to_regclass('content_chunks')").fetchone()
                if exists and exists[0]:
                    recipes = {str(r): int(n) for r, n in conn.execute(RECIPE_ROWS)}
                self.samples.append((time.monotonic(), holders, recipes))
                time.sleep(0.02)


def _ingest(
    root: Path, source: str, budgets: tuple[str, ...], url: str, data_dir: Path, lock_wait: str
) -> Any:
    return start_cli(
        "ingest",
        str(root),
        "--source",
        source,
        *recipe_args(budgets),
        "--lock-wait",
        lock_wait,
        "--database-url",
        url,
        "--data-dir",
        str(data_dir),
    )


def test_a_second_run_on_the_same_source_waits_and_never_interleaves(
    setup: Setup, database_url: str, tmp_path: Path
) -> None:
    """Started together, recipes A and B: one runs, the other says it waits,
    then runs. Rows of the waiting run's recipe appear only once the first run
    let go of the lock; the end table is the clean table of the second recipe."""
    data_dir = tmp_path / "data"
    with Sampler(database_url) as sampler:
        first = _ingest(setup.root, SOURCE, RECIPE_A, database_url, data_dir, "120")
        second = _ingest(setup.root, SOURCE, RECIPE_B, database_url, data_dir, "120")
        done = {"A": finish(first), "B": finish(second)}
        runs = {"A": first, "B": second}

    assert done["A"].code == 0 and done["B"].code == 0, done
    waited = [name for name, run in done.items() if "is being ingested by" in run.err]
    assert len(waited) == 1, done
    later = waited[0]
    earlier = "B" if later == "A" else "A"
    line = one_line_error(done[later])
    assert line.startswith(
        f"warning: source '{SOURCE}' is being ingested by another run (`mdchunks ingest`, "
        f"process {runs[earlier].pid}); waiting"
    ), line
    assert "waiting up to 120 s for it to end (--lock-wait)" in line
    assert done[earlier].err.strip() == ""

    # The table: exactly the clean run of the later recipe, nothing of the other.
    assert table(database_url, SOURCE) == setup.rows[later]
    assert documents(database_url, SOURCE) == setup.documents[later]
    assert_invariants(database_url, SOURCE)

    # Never interleaved: the lock went from one run to the other exactly once,
    # and no row of the later run's recipe existed while the earlier one held it.
    later_recipe = recipe_of(RECIPE_A if later == "A" else RECIPE_B).fingerprint()
    holders = [next(iter(h))[0] for _, h, _ in sampler.samples if h]
    blocks = [pid for i, pid in enumerate(holders) if i == 0 or holders[i - 1] != pid]
    assert len(blocks) == 2, blocks
    earlier_pid = blocks[0]
    assert all(len(h) <= 1 for _, h, _ in sampler.samples)
    for _, held, recipes in sampler.samples:
        if held and next(iter(held))[0] == earlier_pid:
            assert recipes.get(later_recipe, 0) == 0, recipes


def test_with_lock_wait_0_the_second_run_refuses_with_a_clear_message(
    setup: Setup, database_url: str, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    runs = [_ingest(setup.root, SOURCE, RECIPE_A, database_url, data_dir, "0") for _ in range(2)]
    done = [finish(run) for run in runs]

    assert sorted(run.code for run in done) == [0, 4], done
    refused = next(i for i, run in enumerate(done) if run.code == 4)
    line = one_line_error(done[refused])
    # The holder by its command and process id (the one a user can look for).
    assert line.startswith(
        f"error: source '{SOURCE}' is being ingested by another run (`mdchunks ingest`, "
        f"process {runs[1 - refused].pid}); waited 0 s"
    ), line
    assert "--lock-wait SECONDS" in line
    assert table(database_url, SOURCE) == setup.rows["A"]
    assert documents(database_url, SOURCE) == setup.documents["A"]


def test_runs_on_different_sources_proceed_in_parallel(
    setup: Setup, database_url: str, tmp_path: Path
) -> None:
    data_dir = tmp_path / "data"
    with Sampler(database_url) as sampler:
        one = _ingest(setup.root, "one", RECIPE_A, database_url, data_dir, "0")
        two = _ingest(setup.other_root, "two", RECIPE_A, database_url, data_dir, "0")
        done = [finish(one), finish(two)]

    assert [run.code for run in done] == [0, 0], done
    assert all("is being ingested" not in run.err for run in done)
    both = {f"mdchunks ingest pid {one.pid} one", f"mdchunks ingest pid {two.pid} two"}
    overlapping = [t for t, held, _ in sampler.samples if {app for _, app in held} == both]
    assert overlapping, "the two runs never held their locks at the same time"
    assert table(database_url, "one") == setup.rows["one"]
    assert table(database_url, "two") == setup.rows["two"]
    assert documents(database_url, "two") == setup.documents["two"]
    print(f"\nboth sources' locks held at once for {len(overlapping)} samples (20 ms apart)")
