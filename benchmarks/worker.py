"""One measured job in a fresh process: its time and its peak memory.

    python -m benchmarks.worker '{"job": "ours", ...}'

The parent (`benchmarks.jobs`) starts one process per job, so every ingest
starts from the same state (no warm caches, no memory left by an earlier
job) and the process's peak resident memory (`VmHWM`) is the job's own.
Jobs:

- `ours`: `flow.ingest` of a root (migrations applied before the clock starts);
- `bare`: one update of the bare app (benchmarks/bare_app.py);
- `split`: the splitter alone over every document of a root, one at a time;
- `pipeline`: our per-document work (`mdchunks.source.app.chunk_document`: split,
  `build_index`, `assign`, rows) over the same documents;
- `read`: only reading them (the floor both of the last two stand on);
- `breakdown`: one ingest with timers around each step (benchmarks/breakdown.py).

With `written_in` set, the rows each document got written by the job are
counted afterwards (not timed) from the rows' transaction ids.

The result is the last line of stdout, after `RESULT_MARKER`, as JSON.
"""

from __future__ import annotations

import asyncio
import json
import os
import resource
import sys
import time
from pathlib import Path
from typing import Any

os.environ.setdefault("COCOINDEX_DISABLE_USAGE_TRACKING", "1")

RESULT_MARKER = "BENCH-RESULT "


def peak_rss_mb() -> float:
    """This process's peak resident set size, MB (VmHWM; ru_maxrss as a fallback)."""
    try:
        for line in Path("/proc/self/status").read_text().splitlines():
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
    except OSError:
        pass
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def cpu_seconds() -> float:
    """User + system CPU time of this process so far (all its threads)."""
    usage = resource.getrusage(resource.RUSAGE_SELF)
    return usage.ru_utime + usage.ru_stime


def _documents(root: Path) -> list[Path]:
    from benchmarks.corpora import markdown_files

    return markdown_files(root)


def job_ours(spec: dict[str, Any]) -> dict[str, Any]:
    import mdchunks
    from mdchunks.db import migrate

    url = spec["database_url"]
    migrate.ensure(url)
    start_xid = _start_xid(spec)
    cpu = cpu_seconds()
    started = time.perf_counter()
    report = mdchunks.ingest(
        Path(spec["root"]), source=spec["source"], database_url=url, data_dir=Path(spec["data_dir"])
    )
    seconds = time.perf_counter() - started
    return {
        "seconds": seconds,
        "cpu_seconds": cpu_seconds() - cpu,
        "documents": report.documents,
        "processed": report.processed,
        "unchanged": report.unchanged,
        "failed": len(report.failures),  # skipped entries too: anything not ingested
        "failures": [[failure.rel_path, failure.cause] for failure in report.failures],
        "rows_written": report.rows_written,
        "rows_total": report.rows_total,
        "bytes_processed": report.bytes_processed,
        "written_by_path": _written(spec, "content_chunks", start_xid),
    }


def job_bare(spec: dict[str, Any]) -> dict[str, Any]:
    from benchmarks import bare_app
    from benchmarks.postgres import row_count

    start_xid = _start_xid(spec)
    cpu = cpu_seconds()
    result = asyncio.run(
        bare_app.run(
            root=Path(spec["root"]),
            database_url=spec["database_url"],
            state_dir=Path(spec["state_dir"]),
            source=spec["source"],
        )
    )
    return {
        "seconds": result.seconds,
        "cpu_seconds": cpu_seconds() - cpu,
        "processed": result.added + result.reprocessed,
        "unchanged": result.unchanged,
        "failed": result.errors,
        "rows_total": row_count(spec["database_url"], bare_app.TABLE),
        "written_by_path": _written(spec, bare_app.TABLE, start_xid),
    }


def job_split(spec: dict[str, Any]) -> dict[str, Any]:
    from cocoindex.ops.text import RecursiveSplitter
    from mdchunks.plugin.recipe import Recipe

    splitter = RecursiveSplitter()  # the app's splitter (mdchunks.plugin.chunking)
    recipe = Recipe()
    texts = _read_all(spec)
    started = time.perf_counter()
    chunks = 0
    for text in texts:
        chunks += len(
            splitter.split(
                text,
                recipe.chunk_size,
                min_chunk_size=recipe.min_chunk_size,
                chunk_overlap=recipe.chunk_overlap,
                language="markdown",
            )
        )
    return {"seconds": time.perf_counter() - started, "chunks": chunks}


def job_pipeline(spec: dict[str, Any]) -> dict[str, Any]:
    from mdchunks.plugin.recipe import Recipe
    from mdchunks.source.app import chunk_document

    recipe = Recipe()
    texts = _read_all(spec)
    started = time.perf_counter()
    chunks = 0
    for k, text in enumerate(texts):
        chunks += len(chunk_document(text, source="bench", rel_path=f"{k}.md", recipe=recipe).rows)
    return {"seconds": time.perf_counter() - started, "chunks": chunks}


def job_read(spec: dict[str, Any]) -> dict[str, Any]:
    import mdchunks.source.app  # noqa: F401 - the same imports as the jobs above

    started = time.perf_counter()
    texts = _read_all(spec)
    return {"seconds": time.perf_counter() - started, "chunks": 0, "documents": len(texts)}


def job_breakdown(spec: dict[str, Any]) -> dict[str, Any]:
    from benchmarks.breakdown import measure

    return measure(spec)


def _read_all(spec: dict[str, Any]) -> list[str]:
    from mdchunks.heading_index import decode_document

    return [decode_document(path.read_bytes()) for path in _documents(Path(spec["root"]))]


def _start_xid(spec: dict[str, Any]) -> int | None:
    if not spec.get("written_in"):
        return None
    from benchmarks.postgres import next_xid

    return next_xid(spec["database_url"])


def _written(spec: dict[str, Any], table: str, start_xid: int | None) -> dict[str, int] | None:
    if start_xid is None:
        return None
    from benchmarks.postgres import rows_written_since

    return rows_written_since(spec["database_url"], table, start_xid)


JOBS = {
    "ours": job_ours,
    "bare": job_bare,
    "split": job_split,
    "pipeline": job_pipeline,
    "read": job_read,
    "breakdown": job_breakdown,
}


def main(argv: list[str]) -> int:
    spec = json.loads(argv[0])
    result = JOBS[spec["job"]](spec)
    result["peak_rss_mb"] = peak_rss_mb()
    sys.stdout.write("\n" + RESULT_MARKER + json.dumps(result) + "\n")
    sys.stdout.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
