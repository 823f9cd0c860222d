"""`python -m benchmarks.disk`: what the data dir costs per MB of markdown.

    .venv/bin/python -m benchmarks.disk [--corpus DIR] [--copies N] [--json OUT]

Ingests the corpus (default: the bundled rust-book; `--copies N` ingests N
copies of it, in folders of their own, as one source) with the default
settings into an embedded PostgreSQL in a fresh data dir, the way a user's
first `mdchunks ingest` does, and prints what the data dir holds: each
table's heap, TOAST and indexes, the WAL, the rest of the server's files
(catalogs, the template databases) and the engine state (cocoindex's), in MB
and per MB of markdown. The figure the README states is `total / markdown`;
the last line splits it into the fixed part (the server's files and its
bounded WAL, the same whatever the corpus) and the rest per MB of markdown
(the ratio a large corpus tends to).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from pathlib import Path

os.environ.setdefault("COCOINDEX_DISABLE_USAGE_TRACKING", "1")

import mdchunks
from mdchunks.db import database

ROOT = Path(__file__).resolve().parents[1]
RUST_BOOK = ROOT / "corpora" / "rust-book"
MB = 1e6

# Per table: heap, TOAST (with its index), indexes, in bytes.
_RELATIONS = """
SELECT c.relname,
       pg_relation_size(c.oid) AS heap,
       coalesce(pg_total_relation_size(NULLIF(c.reltoastrelid, 0)), 0) AS toast,
       pg_indexes_size(c.oid) AS indexes
FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
WHERE c.relkind = 'r' AND n.nspname NOT IN ('pg_catalog', 'information_schema')
ORDER BY pg_total_relation_size(c.oid) DESC
"""


@dataclass(frozen=True)
class Table:
    name: str
    heap: int
    toast: int
    indexes: int


@dataclass(frozen=True)
class DiskCost:
    markdown: int  # bytes of the documents ingested
    total: int  # the whole data dir
    tables: tuple[Table, ...]
    wal: int  # pg/pg_wal
    server_rest: int  # the rest of pg/: catalogs, template databases, config, logs
    engine_state: int  # everything of the data dir outside pg/ (cocoindex's state)

    @property
    def ratio(self) -> float:
        return self.total / self.markdown if self.markdown else 0.0

    @property
    def fixed(self) -> int:
        """What does not grow with the markdown: the server's own files (its
        catalogs, the template databases) and the WAL, which the embedded
        server bounds (docs/database.md)."""
        return self.wal + self.server_rest

    @property
    def proportional(self) -> int:
        """What grows with the markdown: the tables and the engine state."""
        return self.total - self.fixed

    @property
    def per_mb(self) -> float:
        """The proportional part per MB of markdown: the ratio a large corpus tends to."""
        return self.proportional / self.markdown if self.markdown else 0.0


def folder_size(path: Path) -> int:
    """Bytes the files under `path` hold (what `du --apparent-size` counts)."""
    total = 0
    for folder, _, files in os.walk(path):
        for name in files:
            try:
                total += (Path(folder) / name).lstat().st_size
            except FileNotFoundError:  # a server file removed meanwhile
                continue
    return total


def measure(corpus: Path, work: Path) -> DiskCost:
    data_dir = work / "data"
    markdown = sum(p.stat().st_size for p in corpus.rglob("*") if p.is_file())
    env = os.environ.pop("DATABASE_URL", None)
    try:
        report = mdchunks.ingest(corpus, source="corpus", data_dir=data_dir)
        assert report.ok, report.failures
        db = database.resolve(None, data_dir)
        with database.connect(db.url) as conn:
            rows = conn.execute(_RELATIONS).fetchall()
    finally:
        if env is not None:
            os.environ["DATABASE_URL"] = env
    pg = data_dir / "pg"
    tables = tuple(Table(str(r[0]), int(r[1]), int(r[2]), int(r[3])) for r in rows)
    total = folder_size(data_dir)
    wal = folder_size(pg / "pg_wal")
    server = folder_size(pg)
    return DiskCost(
        markdown=markdown,
        total=total,
        tables=tables,
        wal=wal,
        server_rest=server - wal - sum(t.heap + t.toast + t.indexes for t in tables),
        engine_state=total - server,
    )


def render(cost: DiskCost) -> str:
    per = cost.markdown / MB

    def line(label: str, size: int) -> str:
        return f"{label:<34} {size / MB:9.2f} MB {size / MB / per:7.2f} per MB of markdown"

    lines = [f"markdown ingested: {cost.markdown / MB:.2f} MB", ""]
    for table in cost.tables:
        if table.heap + table.toast + table.indexes < 64 * 1024:
            continue
        lines.append(line(f"{table.name} heap", table.heap))
        if table.toast:
            lines.append(line(f"{table.name} TOAST", table.toast))
        lines.append(line(f"{table.name} indexes", table.indexes))
    small = [t for t in cost.tables if t.heap + t.toast + t.indexes < 64 * 1024]
    lines.append(
        line(f"{len(small)} small tables", sum(t.heap + t.toast + t.indexes for t in small))
    )
    lines.append(line("WAL (pg_wal)", cost.wal))
    lines.append(line("server: catalogs, templates, logs", cost.server_rest))
    lines.append(line("engine state (cocoindex)", cost.engine_state))
    lines.append(line("data dir in all", cost.total))
    lines.append(f"\ndata dir / markdown: {cost.ratio:.2f}x")
    lines.append(
        f"fixed (server files and WAL): {cost.fixed / MB:.2f} MB; "
        f"the rest, per MB of markdown: {cost.per_mb:.2f}x "
        f"({cost.proportional / MB:.2f} MB)"
    )
    return "\n".join(lines)


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.disk", description=__doc__)
    parser.add_argument("--corpus", type=Path, default=RUST_BOOK)
    parser.add_argument("--copies", type=int, default=1, help="copies of the corpus, one source")
    parser.add_argument("--json", type=Path, help="write the figures here too")
    args = parser.parse_args(argv)
    with tempfile.TemporaryDirectory(prefix="mdchunks-disk-") as work_dir:
        work = Path(work_dir)
        corpus = work / "corpus"
        for copy in range(args.copies):
            shutil.copytree(args.corpus, corpus / f"copy-{copy}")
        try:
            cost = measure(corpus, work)
        finally:
            database.stop_embedded(work / "data")
    print(render(cost))
    if args.json:
        figures = {**asdict(cost), "ratio": cost.ratio, "fixed": cost.fixed}
        figures.update(proportional=cost.proportional, per_mb=cost.per_mb)
        args.json.write_text(json.dumps(figures, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
