"""The peer stage (the script a user would write instead, whole runs) and the
breakdown stage run end to end on tiny corpora made from `sample/`, and say
what they should. Nothing here is timed: the figures are not judged."""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any

import pytest

from benchmarks import corpora
from benchmarks.__main__ import main
from benchmarks.breakdown import STEPS


def test_long_documents_are_long_distinct_and_reach_the_size(tiny_corpora: Path) -> None:
    corpus = corpora.long_documents(tiny_corpora.parent / "long", 0.3)
    files = corpora.markdown_files(corpus.root)
    assert corpus.bytes >= 300_000
    sizes = [path.stat().st_size for path in files]
    assert all(size >= 40_000 for size in sizes[:-1])  # the last one tops the total up
    assert len({path.read_bytes() for path in files}) == len(files)


def test_quick_peer_and_breakdown_stages(
    tiny_corpora: Path,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    postgres_server: Any,
) -> None:
    code = main(
        [
            "--quick",
            *("--only", "peer,breakdown"),
            *("--out", str(tmp_path / "results")),
            *("--work-dir", str(tmp_path / "work")),
            *("--admin-url", postgres_server.admin_url),
        ]
    )
    assert code == 0
    printed = capsys.readouterr().out
    assert "Where our seconds go (stage 8)" in printed
    for part in ("start-up", "engine run", "CPU: index", "PostgreSQL, whole ingest"):
        assert part in printed, part

    results = json.loads((tmp_path / "results" / "quick.json").read_text())
    figures = results["figures"]
    peer = [figure for figure in figures if figure["stage"] == "7 peer"]
    # rust-book, long, tldr: time, MB/s, vs bare, memory, floor, floor with the database
    assert len(peer) == 3 * 6
    assert [f["met"] for f in peer if "ours/peer" in f["measure"]][2] is None  # tldr: no target
    for figure in peer:
        assert figure["ours"] > 0 and figure["baseline"] > 0, figure

    runs = results["raw"]["peer"]
    for key in ("rust-book", "long", "tldr"):
        for app in ("peer", "ours", "bare"):
            (run,) = runs[key][app]
            assert run["seconds"] > 0 and run["peak_rss_mb"] > 0, (key, app)
            assert run["cpu_seconds"] > 0, (key, app)
            assert run["rows"] > 0, (key, app)
        # The floor is the bare app's CPU spread over the cores.
        floor, with_database = [
            f for f in peer if f["case"].startswith(key) and "floor" in f["measure"]
        ]
        cores = os.cpu_count() or 1
        assert floor["ours"] == pytest.approx(runs[key]["bare"][0]["cpu_seconds"] / cores)
        # With the database: ours, its CPU and the server's during its run (the
        # embedded server is a process of this machine: measured).
        (ours_run,) = runs[key]["ours"]
        assert ours_run["server_cpu_seconds"] > 0, key
        assert with_database["ours"] == pytest.approx(
            (ours_run["cpu_seconds"] + ours_run["server_cpu_seconds"]) / cores
        )
        # Ours and the bare app split alike (the same splitter and budgets).
        assert runs[key]["ours"][0]["rows"] == runs[key]["bare"][0]["rows"], key

    breakdown = results["raw"]["breakdown"]
    assert set(breakdown) == {"rust-book", "long", "tldr"}
    for key, found in breakdown.items():
        assert found["failed"] == 0 and found["rows"] > 0, key
        assert set(found["steps_cpu"]) == set(STEPS)
        for step in ("read", "split", "index", "rows"):
            assert found["steps_cpu"][step] > 0, (key, step)
        assert found["startup_wall"] > 0 and found["server_cpu"]["ingest"] > 0, key
        assert found["phases_wall"]["engine"] < found["ingest_wall"], key
