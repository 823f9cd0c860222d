"""`python -m spikes.retrieval_eval` end to end on four small rust-book chapters.

The run is real: a throwaway embedded PostgreSQL, the flow's ingest per
chunker, the bundled model. It is kept small (4 chapters, 7 golden queries,
about 20 chunks per chunker); the full table over the whole book is a script
(spikes/results/retrieval-rust-book.txt says how it was made).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest

from spikes import retrieval_eval
from spikes.corpus import read_corpus
from spikes.golden import load_golden, verify
from spikes.recall import recall_at_k

ROOT = Path(__file__).resolve().parents[2]
RUST_BOOK = ROOT / "corpora" / "rust-book"
GOLDEN = ROOT / "spikes" / "golden" / "rust-book.jsonl"
CHAPTERS = (
    "ch11-02-running-tests.md",
    "ch15-03-drop.md",
    "ch15-04-rc.md",
    "ch16-04-extensible-concurrency-sync-and-send.md",
)


@pytest.fixture(scope="module")
def small_book(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """Four chapters and the golden lines whose facts lie in them (verified)."""
    folder = tmp_path_factory.mktemp("small-book")
    corpus = folder / "corpus"
    corpus.mkdir()
    for name in CHAPTERS:
        shutil.copyfile(RUST_BOOK / name, corpus / name)
    lines = [
        line
        for line in GOLDEN.read_text(encoding="utf-8").splitlines()
        if line.strip() and json.loads(line)["file"] in CHAPTERS
    ]
    golden = folder / "golden.jsonl"
    golden.write_text("\n".join(lines) + "\n", encoding="utf-8")
    assert len(lines) == 7
    assert verify(load_golden(golden), read_corpus(corpus)) == ()
    return corpus, golden


@pytest.fixture(scope="module")
def cache(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The vector cache of this module's runs (never the user's own)."""
    return tmp_path_factory.mktemp("vector-cache")


def _run(small_book: tuple[Path, Path], cache: Path, out: Path) -> dict[str, Any]:
    corpus, golden = small_book
    argv = ["--corpus", str(corpus), "--golden", str(golden), "--cache", str(cache)]
    assert retrieval_eval.main([*argv, "--json", str(out), "--provenance"]) == 0
    return dict(json.loads(out.read_text(encoding="utf-8")))


@pytest.fixture(scope="module")
def result(
    small_book: tuple[Path, Path], cache: Path, tmp_path_factory: pytest.TempPathFactory
) -> dict[str, Any]:
    return _run(small_book, cache, tmp_path_factory.mktemp("eval") / "out.json")


@pytest.mark.slow  # an embedded PostgreSQL and real ingests of its own
def test_every_chunker_over_and_method_has_a_row(result: dict[str, Any]) -> None:
    rows = result["rows"]
    reference = (("bm25", None), ("semantic", None), ("hybrid", None))
    product = (
        ("bm25", "all"),
        ("bm25", "any"),
        ("semantic", None),
        ("hybrid", "all"),
        ("hybrid", "any"),
        ("default", "any"),
    )
    expected = {
        (chunker, over, method, match)
        for chunker in retrieval_eval.CHUNKERS
        for over, pairs in (("text", reference), ("embed_text", reference), ("product", product))
        for method, match in pairs
    }
    assert {(r["chunker"], r["over"], r["method"], r["match"]) for r in rows} == expected
    assert len(rows) == len(expected) == 48
    for row in rows:
        assert set(row["recall"]) == {"1", "5", "10"}
        assert row["chunks"] > 0 and row["ingest_seconds"] > 0
        values = [row["recall"][k] for k in ("1", "5", "10")]
        assert values == sorted(values) and all(0 <= v <= 1 for v in values)
    assert result["provenance"].startswith("# ")
    assert "command: python -m spikes.retrieval_eval --corpus" in result["provenance"]


@pytest.mark.slow  # an embedded PostgreSQL and real ingests of its own
def test_each_distinct_text_is_embedded_once_and_a_second_run_reads_the_cache(
    result: dict[str, Any], small_book: tuple[Path, Path], cache: Path, tmp_path: Path
) -> None:
    timing = result["timing"]
    # Every chunker's text and embed_text, and the queries: each distinct one once.
    assert 0 < timing["embedded"] == timing["distinct_texts"]
    shards = list(cache.rglob("*.npz"))
    assert shards and not list(cache.rglob("*.tmp.npz"))

    again = _run(small_book, cache, tmp_path / "again.json")

    assert again["timing"]["embedded"] == 0
    assert again["timing"]["distinct_texts"] == timing["distinct_texts"]

    def recalls(run: dict[str, Any]) -> list[tuple[str, dict[str, float]]]:
        return [(row["label"], row["recall"]) for row in run["rows"]]

    assert recalls(again) == recalls(result)
    assert [q["ranks"] for q in again["queries"]] == [q["ranks"] for q in result["queries"]]


@pytest.mark.slow  # an embedded PostgreSQL and real ingests of its own
def test_recall_is_what_the_per_query_ranks_say(result: dict[str, Any]) -> None:
    queries = result["queries"]
    assert [q["id"] for q in queries] and all(q["fact"] for q in queries)
    for row in result["rows"]:
        ranks = [q["ranks"][row["label"]] for q in queries]
        assert all(rank is None or 1 <= rank <= 10 for rank in ranks)
        for k in (1, 5, 10):
            assert row["recall"][str(k)] == recall_at_k(ranks, k)
        if row["over"] != "product":
            assert row["labelled"] is None and row["labelled_by_start"] is None
            continue
        for name, key in (
            ("labelled", "labelled_ranks"),
            ("labelled_by_start", "labelled_by_start_ranks"),
        ):
            named = [q[key][row["label"]] for q in queries]
            for k in (1, 5, 10):
                assert row[name][str(k)] == recall_at_k(named, k) <= row["recall"][str(k)]
            # A query is labelled only where it is found, never before.
            assert all(
                n is None or (r is not None and r <= n) for r, n in zip(ranks, named, strict=True)
            )
        # The shown path is some section's, found exactly when the fact is.
        shown = [q["shown_paths"][row["label"]] for q in queries]
        assert [path is None for path in shown] == [rank is None for rank in ranks]


@pytest.mark.slow  # an embedded PostgreSQL and real ingests of its own
def test_the_methods_behave_as_documented(result: dict[str, Any]) -> None:
    by = {(r["chunker"], r["over"], r["method"], r["match"]): r for r in result["rows"]}
    ranks = {q["id"]: q["ranks"] for q in result["queries"]}
    for chunker in retrieval_eval.CHUNKERS:
        # The product stores and searches vectors of embed_text: the pgvector
        # ranking and the in-memory one agree on every query.
        for query_ranks in ranks.values():
            assert (
                query_ranks[f"{chunker}/product/semantic"]
                == query_ranks[f"{chunker}/embed_text/semantic"]
            )
        # Natural-language questions: BM25 (the textbook one and the
        # product's, any word) finds most facts within 10; "every word must
        # occur" finds no more.
        for over in ("text", "embed_text"):
            assert by[chunker, over, "bm25", None]["recall"]["10"] >= 0.5
        product_any = by[chunker, "product", "bm25", "any"]["recall"]["10"]
        assert product_any >= 0.5
        assert by[chunker, "product", "bm25", "all"]["recall"]["10"] <= product_any
        assert by[chunker, "text", "semantic", None]["recall"]["10"] >= 0.5
        # The default search is hybrid here (the product has vectors).
        for query_ranks in ranks.values():
            assert (
                query_ranks[f"{chunker}/product/default-any"]
                == query_ranks[f"{chunker}/product/hybrid-any"]
            )


@pytest.mark.slow  # an embedded PostgreSQL and real ingests of its own
def test_the_table_has_the_issue_columns_and_a_line_per_row(result: dict[str, Any]) -> None:
    rows = [
        retrieval_eval.ResultRow(
            r["chunker"],
            r["over"],
            r["method"],
            r["match"],
            r["chunks"],
            r["ingest_seconds"],
            {int(k): v for k, v in r["recall"].items()},
        )
        for r in result["rows"]
    ]
    lines = retrieval_eval.format_table(rows, (1, 5, 10)).splitlines()
    header = [cell.strip() for cell in lines[0].split("|")[1:-1]]
    assert header == [
        "chunker",
        "over",
        "chunks",
        "ingest s",
        "method",
        "recall@1",
        "recall@5",
        "recall@10",
    ]
    assert len(lines) == 2 + len(rows)
    assert any(line.split("|")[5].strip() == "hybrid any" for line in lines[2:])


def test_an_invalid_golden_set_is_refused_with_every_problem(
    small_book: tuple[Path, Path], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    corpus, golden = small_book
    lines = golden.read_text(encoding="utf-8").splitlines()
    first = json.loads(lines[0])
    first["fact"] = "this sentence is in none of the four chapters at all"
    bad = tmp_path / "bad.jsonl"
    bad.write_text("\n".join([json.dumps(first), *lines[1:]]) + "\n", encoding="utf-8")

    assert retrieval_eval.main(["--corpus", str(corpus), "--golden", str(bad)]) == 2
    err = capsys.readouterr().err
    assert "does not hold for corpus" in err and f"({first['id']})" in err
    assert "fact is not in" in err

    broken = tmp_path / "broken.jsonl"
    broken.write_text('{"id": "x"}\nnot json\n', encoding="utf-8")
    assert retrieval_eval.main(["--corpus", str(corpus), "--golden", str(broken)]) == 2
    err = capsys.readouterr().err
    assert "line 1: missing" in err and "line 2: not JSON" in err


def test_unknown_names_are_refused(
    small_book: tuple[Path, Path], capsys: pytest.CaptureFixture[str]
) -> None:
    corpus, golden = small_book
    base = ["--corpus", str(corpus), "--golden", str(golden)]
    assert retrieval_eval.main([*base, "--chunkers", "markdown,paragraphs"]) == 2
    assert "--chunkers: unknown 'paragraphs'" in capsys.readouterr().err
    assert retrieval_eval.main([*base, "--k", "0,5"]) == 2
    assert "--k: integers of at least 1" in capsys.readouterr().err


def test_a_translated_set_is_proven_under_its_languages_rules() -> None:
    # The set's language comes from its file name (spikes.golden.set_language):
    # under the English rules its short Chinese facts would be refused.
    golden = ROOT / "spikes" / "golden" / "starlight-docs-zh-cn.jsonl"
    queries, files = retrieval_eval.load_and_verify(golden, ROOT / "corpora" / "starlight-docs")
    assert (len(queries), files) == (27, 338)


RECALL_TABLE = """\
| chunker         | over       | chunks | ingest s | method   | recall@1 | recall@10 |
|:----------------|:-----------|-------:|---------:|:---------|---------:|----------:|
| none            | product    |      9 |      0.3 | bm25 any |    0.500 |       n/a |
| structure-first | embed_text |   1234 |     12.0 | semantic |    0.125 |     1.000 |
"""


def test_the_recall_table_text() -> None:
    """The exact text, on hand-made rows (the shared renderer of spikes.report)."""
    rows = [
        retrieval_eval.ResultRow("none", "product", "bm25", "any", 9, 0.26, {1: 0.5, 10: None}),
        retrieval_eval.ResultRow(
            "structure-first", "embed_text", "semantic", None, 1234, 12.04, {1: 0.125, 10: 1.0}
        ),
    ]
    assert retrieval_eval.format_table(rows, (1, 10)) == RECALL_TABLE


LABELS_TABLE = """\
| chunker  | method   | found@1 | labelled@1 | by start@1 | found@5 | labelled@5 | by start@5 |
|:---------|:---------|--------:|-----------:|-----------:|--------:|-----------:|-----------:|
| markdown | bm25 any |   0.500 |      0.250 |      0.000 |   1.000 |      0.750 |      0.500 |
"""


def _labelled_evaluation() -> retrieval_eval.Evaluation:
    """Four queries over one product row and one reference row (no labels)."""
    from spikes.golden import GoldenQuery

    queries = tuple(
        GoldenQuery(f"q{i}", "a question", "a fact long enough", "a.md", ("A", "B"), "deep")
        for i in range(4)
    )
    product = retrieval_eval.ResultRow(
        "markdown", "product", "bm25", "any", 9, 0.5, {1: 0.5, 5: 1.0},
        labelled={1: 0.25, 5: 0.75}, labelled_by_start={1: 0.0, 5: 0.5},
    )  # fmt: skip
    reference = retrieval_eval.ResultRow("markdown", "text", "bm25", None, 9, 0.5, {1: 1, 5: 1})
    evaluation = retrieval_eval.Evaluation(ks=(1, 5), rows=[product, reference], queries=queries)
    label = product.label
    # q0 labelled at 1; q1 found at 1, named only at 2; q2 found at 3, never
    # named (shown under A); q3 found at 2, named at 4.
    for query, found, named, shown in zip(
        queries, (1, 1, 3, 2), (1, 2, None, 4), (["A", "B"], ["A"], ["A"], ["A", "C"]), strict=True
    ):
        evaluation.ranks[query.id] = {label: found, reference.label: 1}
        evaluation.labelled_ranks[query.id] = {label: named}
        evaluation.shown_paths[query.id] = {label: shown}
        evaluation.start_paths[query.id] = {label: ["A"]}
    return evaluation


def test_the_labels_table_puts_found_labelled_and_by_start_side_by_side() -> None:
    evaluation = _labelled_evaluation()
    # The reference row has no labels: only the product row is listed.
    assert retrieval_eval.format_labels_table(evaluation.rows, (1, 5)) == LABELS_TABLE
    row = evaluation.rows[0].to_json()
    assert row["labelled"] == {"1": 0.25, "5": 0.75}
    assert row["labelled_by_start"] == {"1": 0.0, "5": 0.5}
    assert evaluation.rows[1].to_json()["labelled"] is None


def test_the_mislabelled_list_names_the_shown_and_the_answer_paths() -> None:
    lines = retrieval_eval.format_mislabelled(_labelled_evaluation(), 1).splitlines()
    assert lines == [
        "markdown/product/bm25-any: 1 found@1 but not labelled@1",
        "  q1 (deep, a.md, rank 1): shown 'A'; answer 'A > B'; chunk starts under 'A'",
    ]
    lines = retrieval_eval.format_mislabelled(_labelled_evaluation(), 5).splitlines()
    assert [line.split(" (")[0].strip() for line in lines[1:]] == ["q2"]
    assert lines[0] == "markdown/product/bm25-any: 1 found@5 but not labelled@5"


def test_the_defaults_are_the_bundled_rust_book_and_its_golden_set() -> None:
    options, json_out, provenance, mislabelled_k = retrieval_eval.parse_options([])

    assert options.corpus == RUST_BOOK and options.golden == GOLDEN
    assert json_out is None and provenance is False and mislabelled_k == 5
