"""BM25 in PostgreSQL (flow/retrieval/lexical.py) against a reference BM25 computed here,
in Python, on the same tokens: the lexemes, positions and weights of the
stored `search_vector`s, read back from the real database.

The reference scores every chunk (no candidate pruning, no statistics
tables), so agreement also proves that the GIN candidates, the MaxScore early
stop and the stored statistics change nothing.
"""

from __future__ import annotations

import math
import random
import shutil
import uuid
from collections import Counter
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import mdchunks
import pytest
from mdchunks.db import database
from mdchunks.db.connection import Connection
from mdchunks.retrieval import lexical, lexical_stats, lexical_terms, rankings
from mdchunks.source import bm25_stats

SAMPLE = Path(__file__).resolve().parents[2] / "sample"
TOLERANCE = 1e-9
Ingest = Callable[..., mdchunks.IngestReport]


@dataclass(frozen=True)
class Chunk:
    id: uuid.UUID
    source: str
    rel_path: str
    position: int
    heading: Counter[str]  # lexeme -> occurrences weighted A (heading path)
    body: Counter[str]  # lexeme -> occurrences of any other weight (text)


def read_chunks(conn: Connection, source: str | None) -> list[Chunk]:
    rows = conn.execute(
        "SELECT c.id, c.source, c.rel_path, c.position, u.lexeme, u.weights "
        "FROM content_chunks c LEFT JOIN LATERAL unnest(c.search_vector) u ON true "
        "WHERE %(s)s::text IS NULL OR c.source = %(s)s::text",
        {"s": source},
    ).fetchall()
    chunks: dict[uuid.UUID, Chunk] = {}
    for chunk_id, src, rel_path, position, lexeme, weights in rows:
        chunk = chunks.setdefault(
            chunk_id, Chunk(chunk_id, src, rel_path, position, Counter(), Counter())
        )
        for weight in weights or ():
            (chunk.heading if weight == "A" else chunk.body)[lexeme] += 1
    return list(chunks.values())


def query_lexemes(conn: Connection, query: str) -> Counter[str]:
    """The query's tokens: to_tsvector's lexemes, hyphenated compounds left out."""
    rows = conn.execute(
        "SELECT lexeme, cardinality(positions) FROM unnest(to_tsvector('english', %s))", [query]
    ).fetchall()
    return Counter({lexeme: count for lexeme, count in rows if "-" not in lexeme})


def reference_bm25(
    chunks: list[Chunk],
    terms: Counter[str],
    k: int,
    params: lexical_terms.Bm25Params = lexical_terms.DEFAULT_PARAMS,
    match: str = "any",
) -> list[tuple[uuid.UUID, float]]:
    """Textbook BM25 over every chunk, weighted heading counts, Lucene idf."""
    w, k1, b = params.heading_weight, params.k1, params.b

    def tf(chunk: Chunk, lexeme: str) -> float:
        return chunk.body[lexeme] + w * chunk.heading[lexeme]

    def length(chunk: Chunk) -> float:
        return sum(chunk.body.values()) + w * sum(chunk.heading.values())

    n = len(chunks)
    avgdl = sum(length(c) for c in chunks) / n
    df = {t: sum(1 for c in chunks if tf(c, t) > 0) for t in terms}
    idf = {t: math.log(1 + (n - df[t] + 0.5) / (df[t] + 0.5)) for t in terms}
    scored = []
    for chunk in chunks:
        held = [t for t in terms if tf(chunk, t) > 0]
        if not held or (match == "all" and len(held) < len(terms)):
            continue
        norm = k1 * (1 - b + b * length(chunk) / avgdl)
        score = sum(
            terms[t] * idf[t] * tf(chunk, t) * (k1 + 1) / (tf(chunk, t) + norm) for t in held
        )
        scored.append((score, chunk))
    scored.sort(key=lambda pair: (-pair[0], pair[1].source, pair[1].rel_path, pair[1].position))
    return [(chunk.id, score) for score, chunk in scored[:k]]


def assert_same_ranking(
    got: list[tuple[uuid.UUID, float]], want: list[tuple[uuid.UUID, float]]
) -> None:
    """Same scores, rank by rank; same chunks wherever the score is not a tie
    (two chunks whose float scores agree to 1e-9 may come in either order)."""
    assert len(got) == len(want), (got, want)
    scores = [score for _, score in want]
    for rank, ((got_id, got_score), (want_id, want_score)) in enumerate(
        zip(got, want, strict=True)
    ):
        assert got_score == pytest.approx(want_score, rel=TOLERANCE)
        tied = any(
            math.isclose(want_score, other, rel_tol=TOLERANCE)
            for other in scores[:rank] + scores[rank + 1 :]
        )
        if not tied:
            assert got_id == want_id, (rank, got, want)


@pytest.fixture(autouse=True)
def bounds_for_every_source(monkeypatch: pytest.MonkeyPatch) -> None:
    """MaxScore's bounds for these small sources too, so that the reference
    checks the tight ceilings (the loose ones: statistics counted live, and
    tests/migrations/test_migration_0009.py)."""
    monkeypatch.setattr(lexical_stats, "BOUNDS_MIN_CHUNKS", 0)


QUERIES = (
    "How are strings stored in memory?",
    "ownership rules and the heap",
    "install on linux with a package manager",
    "Why does the String type need to be mutable to push_str?",
    "troubleshooting configuration errors",
    "reference-counted borrowing rules",  # a hyphenated compound
    "string string string slice",  # a repeated word weighs more
    "the of and",  # stop words only: no term, no hit
    "zzzunknownword memory",  # a term no chunk holds
)


@pytest.fixture
def sample_db(ingest: Ingest, database_url: str, tmp_path: Path) -> str:
    root = Path(shutil.copytree(SAMPLE, tmp_path / "sample"))
    assert ingest(root, source="docs").ok
    other = tmp_path / "other"
    other.mkdir()
    (other / "notes.md").write_text(
        "# Memory notes\n\nStrings live on the heap. Memory memory memory.\n\n"
        "## Ownership\n\nEach value has an owner.\n",
        encoding="utf-8",
    )
    assert ingest(other, source="other").ok
    return database_url


@pytest.mark.parametrize("match", ["any", "all"])
def test_scores_equal_a_reference_bm25_on_the_stored_tokens(sample_db: str, match: str) -> None:
    with database.connect(sample_db) as conn:
        for source in ("docs", None):  # one source, or all of them
            chunks = read_chunks(conn, source)
            assert len(chunks) > 20
            for query in QUERIES:
                terms = query_lexemes(conn, query)
                for k in (1, 3, 10):
                    got = lexical.bm25(conn, query, k=k, source=source, match=match)
                    want = reference_bm25(chunks, terms, k, match=match)
                    assert_same_ranking(got, want)
                    if query == QUERIES[0] and match == "any":
                        assert got, "a query over the sample must find something"


def test_other_parameters_agree_too(sample_db: str) -> None:
    params = lexical_terms.Bm25Params(k1=0.9, b=0.4, heading_weight=1.0)
    with database.connect(sample_db) as conn:
        chunks = read_chunks(conn, "docs")
        for query in QUERIES[:5]:
            got = lexical.bm25(conn, query, k=5, source="docs", params=params)
            assert_same_ranking(got, reference_bm25(chunks, query_lexemes(conn, query), 5, params))


def test_stored_statistics_are_the_counts_of_the_rows(sample_db: str) -> None:
    with database.connect(sample_db) as conn:
        for source in ("docs", "other"):
            chunks = read_chunks(conn, source)
            df = Counter(lexeme for c in chunks for lexeme in {*c.heading, *c.body})
            stored = dict(
                conn.execute(
                    "SELECT lexeme, df FROM mdchunks_search_terms WHERE source = %s", [source]
                ).fetchall()
            )
            assert stored == dict(df)
            row = conn.execute(
                "SELECT chunks, heading_length, text_length FROM mdchunks_search_stats "
                "WHERE source = %s",
                [source],
            ).fetchone()
            assert row == (
                len(chunks),
                sum(sum(c.heading.values()) for c in chunks),
                sum(sum(c.body.values()) for c in chunks),
            )


def test_without_stored_statistics_the_counts_are_taken_live(sample_db: str) -> None:
    with database.connect(sample_db) as conn:
        before = {q: lexical.bm25(conn, q, k=5, source=None) for q in QUERIES}
        assert lexical_terms.query_terms(conn, QUERIES[0], source=None).stored
        conn.execute("DELETE FROM mdchunks_search_terms WHERE source = 'other'")
        conn.execute("DELETE FROM mdchunks_search_stats WHERE source = 'other'")
        assert not lexical_terms.query_terms(conn, QUERIES[0], source=None).stored
        for query, hits in before.items():
            assert_same_ranking(lexical.bm25(conn, query, k=5, source=None), hits)


def test_statistics_follow_edits_removals_and_drop(
    sample_db: str, ingest: Ingest, tmp_path: Path
) -> None:
    root = tmp_path / "sample"
    (root / "ch08-02-strings.md").unlink()
    (root / "guide" / "install.md").write_text("# Install\n\nUse the zebra installer.\n")
    assert ingest(root, source="docs").ok
    test_stored_statistics_are_the_counts_of_the_rows(sample_db)
    with database.connect(sample_db) as conn:
        hits = lexical.bm25(conn, "zebra", k=3, source="docs")
        assert len(hits) == 1
    mdchunks.drop("docs", database_url=sample_db, data_dir=tmp_path / "mdchunks-data")
    with database.connect(sample_db) as conn:
        for table in ("mdchunks_search_terms", "mdchunks_search_stats"):
            row = conn.execute(f"SELECT count(*) FROM {table} WHERE source = 'docs'").fetchone()
            assert row == (0,)


def test_a_run_stopped_before_the_statistics_followed_leaves_them_to_the_next(
    sample_db: str, ingest: Ingest, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Stopped (Ctrl-C, a crash) after its rows were written but before the
    statistics were recounted (a run that changes more rows than it moves
    the statistics by: all of them here): the next run, with no row left to
    write, brings them up to date all the same, so BM25 finds the new word.
    (A run that moves them does so in each write's transaction: they cannot
    lag its rows; tests/flow/test_flow_stats_follow.py stops those.)"""
    root = tmp_path / "sample"
    (root / "guide" / "install.md").write_text("# Install\n\nUse the zebra installer.\n")

    def stopped(conn: Connection, source: str) -> None:
        raise KeyboardInterrupt

    with monkeypatch.context() as patched:
        patched.setattr(bm25_stats, "MOVE_SHARE", 10**9)  # any change: a recount
        patched.setattr(lexical_stats, "refresh_stats", stopped)
        with pytest.raises(KeyboardInterrupt):
            ingest(root, source="docs")
    assert ingest(root, source="docs").ok
    test_stored_statistics_are_the_counts_of_the_rows(sample_db)
    with database.connect(sample_db) as conn:
        assert len(lexical.bm25(conn, "zebra", k=3, source="docs")) == 1


def test_the_early_stop_is_exact_on_a_corpus_of_common_words(
    ingest: Ingest, database_url: str, tmp_path: Path
) -> None:
    """Many chunks share the common words, so MaxScore needs several rounds;
    its top k must still be the reference's over every chunk."""
    rng = random.Random(15)
    words = [f"w{i}x" for i in range(300)]
    weights = [1 / (i + 1) for i in range(len(words))]
    root = tmp_path / "zipf"
    root.mkdir()
    for doc in range(30):
        sections = []
        for section in range(4):
            heading = " ".join(rng.choices(words, weights, k=2))
            body = " ".join(rng.choices(words, weights, k=rng.randint(20, 120)))
            sections.append(f"## {heading} {section}\n\n{body}\n")
        (root / f"d{doc:02}.md").write_text(f"# Doc {doc}\n\n" + "\n".join(sections))
    assert ingest(root, source="zipf").ok
    with database.connect(database_url) as conn:
        chunks = read_chunks(conn, "zipf")
        for _ in range(40):
            query = " ".join(rng.choices(words[:40], k=2) + rng.choices(words, k=rng.randint(1, 3)))
            terms = query_lexemes(conn, query)
            for k in (1, 5):
                want = reference_bm25(chunks, terms, k)
                # budget 1: the first round takes one term, then one more per round.
                for budget in (1, lexical_terms.FIRST_ROUND_CHUNKS):
                    got = lexical.bm25(conn, query, k=k, source="zipf", budget=budget)
                    assert_same_ranking(got, want)


def test_retrieval_bm25_is_the_lexical_ranking(sample_db: str) -> None:
    with database.connect(sample_db) as conn:
        ranked = rankings.rank(conn, QUERIES[0], k=4, source="docs", method="bm25")
        assert [(r.id, r.score) for r in ranked] == lexical.bm25(
            conn, QUERIES[0], k=4, source="docs"
        )


def test_could_enter_lists_exactly_the_sets_that_can_reach_the_threshold() -> None:
    """A set of terms can reach the threshold (its ceilings add up to it) iff
    it holds one of the subsets `could_enter` lists; over random ceilings."""
    from itertools import combinations

    rng = random.Random(12)
    for _ in range(300):
        ceilings = sorted((rng.uniform(0, 10) for _ in range(rng.randint(1, 7))), reverse=True)
        threshold = rng.uniform(0, sum(ceilings) * 1.2)
        subsets = lexical.could_enter(ceilings, threshold)
        assert subsets is not None
        for size in range(len(ceilings) + 1):
            for held in combinations(range(len(ceilings)), size):
                reaches = sum(ceilings[i] for i in held) >= threshold
                covered = any(set(subset) <= set(held) for subset in subsets)
                assert reaches == covered, (ceilings, threshold, held, subsets)
    assert lexical.could_enter([1.0] * 12, 6.0) is None  # C(12, 6) sets: too many


def test_the_last_round_takes_only_the_chunks_that_can_still_enter(
    ingest: Ingest, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """On a corpus where one rare word leads and common ones follow, the last
    round's tsquery is a set of ANDs, and the answer is the reference's."""
    rng = random.Random(3)
    words = [f"c{i}x" for i in range(8)]
    root = tmp_path / "lead"
    root.mkdir()
    for doc in range(40):
        # Each common word in about half the chunks; fillers vary the lengths.
        held = [word for word in words if rng.random() < 0.5]
        body = " ".join(
            held * rng.randint(1, 3) + [f"f{doc}x{i}" for i in range(rng.randint(5, 40))]
        )
        rare = " rareword" * (1 + doc % 3) if doc < 12 else ""
        (root / f"d{doc:02}.md").write_text(f"# Doc {doc}\n\n{body}{rare}\n")
    assert ingest(root, source="lead").ok
    queries: list[str] = []
    real = lexical._score

    def spy(conn: Connection, terms: Any, candidates: str, *args: Any, **kw: Any) -> Any:
        queries.append(candidates)
        return real(conn, terms, candidates, *args, **kw)

    monkeypatch.setattr(lexical, "_score", spy)
    with database.connect(database_url) as conn:
        chunks = read_chunks(conn, "lead")
        query = "rareword c0x c1x c2x"
        got = lexical.bm25(conn, query, k=5, source="lead", budget=1)
        assert_same_ranking(got, reference_bm25(chunks, query_lexemes(conn, query), 5))
    assert len(queries) == 2 and "&" in queries[1], queries


def _zipf_corpus(root: Path, rng: random.Random, words: list[str], documents: int) -> None:
    weights = [1 / (i + 1) for i in range(len(words))]
    root.mkdir(exist_ok=True)
    for doc in range(documents):
        sections = []
        for section in range(rng.randint(1, 4)):
            heading = " ".join(rng.choices(words, weights, k=2))
            body = " ".join(rng.choices(words, weights, k=rng.randint(10, 120)))
            sections.append(f"## {heading} {section}\n\n{body}\n")
        (root / f"d{doc:02}.md").write_text(f"# Doc {doc}\n\n" + "\n".join(sections))


def test_top_chunks_keep_the_top_k_exact_through_edits(
    ingest: Ingest, database_url: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Top chunks of every lexeme of 3 chunks or more, 3 of them each, read
    one at a time: the rounds of top and rare chunks, and the last round the
    floors leave, give the reference's top k, over one source and two; then
    again after runs that moved the statistics and the lists by the
    documents they touched (no recount)."""
    monkeypatch.setattr(lexical_stats, "TOP_MIN_DF", 3)
    monkeypatch.setattr(lexical_stats, "TOP_CHUNKS", 3)
    monkeypatch.setattr(lexical_stats, "TOP_SEGMENT", 1)
    rng = random.Random(21)
    words = [f"w{i}x" for i in range(200)]
    _zipf_corpus(tmp_path / "one", rng, words, 30)
    _zipf_corpus(tmp_path / "two", rng, words, 10)
    assert ingest(tmp_path / "one", source="one").ok
    assert ingest(tmp_path / "two", source="two").ok
    listed: list[int] = []
    real = lexical._score

    def spy(*args: Any, **kw: Any) -> Any:
        listed.append(len(kw.get("ids", ())))
        return real(*args, **kw)

    monkeypatch.setattr(lexical, "_score", spy)

    def check(rounds: int) -> None:
        with database.connect(database_url) as conn:
            for source in ("one", None):
                chunks = read_chunks(conn, source)
                queries = [" ".join(words[i : i + 2]) for i in range(6)]
                for _ in range(rounds):
                    query = " ".join(rng.choices(words[:30], k=rng.randint(1, 3)))
                    queries.append(query + " " + " ".join(rng.choices(words, k=rng.randint(0, 2))))
                for query in queries:
                    terms = query_lexemes(conn, query)
                    for k in (1, 3, 5):
                        want = reference_bm25(chunks, terms, k)
                        got = lexical.bm25(conn, query, k=k, source=source, budget=4)
                        assert_same_ranking(got, want)

    check(25)
    assert any(listed), "the top chunks were never used"
    root = tmp_path / "one"
    for doc in (1, 2, 3):  # rewritten: their chunks beat the floors
        body = " ".join(words[doc - 1 : doc + 1] * 40)
        (root / f"d{doc:02}.md").write_text(f"# {words[doc]}\n\n{body}\n")
    (root / "d04.md").unlink()
    report = ingest(root, source="one")
    assert report.stats_update == "moved by the documents the run touched", report
    listed.clear()
    check(25)
    assert any(listed)


def test_bm25_index_engines_are_detected_by_extension(database_url: str) -> None:
    """The seam a server BM25 index would be used behind: the embedded server
    offers none of them (docs/search.md), so search stays ours."""
    with database.connect(database_url) as conn:
        assert lexical_stats.index_engines(conn) == {}
        offered = conn.execute("SELECT name FROM pg_available_extensions").fetchall()
        assert {"plpgsql"} <= {row[0] for row in offered}
