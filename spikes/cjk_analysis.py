"""How search should cut text written without spaces (issue 38): ingest a
corpus once, then for each analysis of `mdchunks_search_words` (migration
0018) index every chunk anew, and rank each golden set's questions with the
product's BM25 (`mdchunks.search`). Prints found@1/5/10, the questions that
found nothing at all, the search vectors' size and the time the re-index took
(what every chunk's parse costs at ingest), in one run.

    python -m spikes.cjk_analysis --corpus corpora/starlight-docs \\
        --golden spikes/golden/starlight-docs-zh-cn.jsonl \\
        spikes/golden/starlight-docs-ja.jsonl spikes/golden/starlight-docs-ko.jsonl

Analyses (each a body of mdchunks_search_words; CJK is the migration's class
of CJK, kana, Hangul and Thai characters):
- `runs`: PostgreSQL's parser alone (a run of such characters is one word),
  what search did before 0018;
- `bigrams`: overlapping bigrams, a lone character as itself (Lucene's
  CJKAnalyzer; what 0018 ships);
- `unigrams+bigrams`: the same plus every character alone (Lucene's
  CJKBigramFilter with outputUnigrams);
- `unigrams`: every character alone;
- `script-bigrams`: bigrams within a run of one script only (Han, hiragana,
  katakana, Hangul, Thai): a kanji word and the kana after it are apart.
"""

from __future__ import annotations

import argparse
import re
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path

import mdchunks
import psycopg
from mdchunks.db import database
from mdchunks.db.queries import QUERIES

from spikes.golden import load_golden
from spikes.recall import first_hit_rank

ROOT = Path(__file__).resolve().parents[1]
MIGRATION = ROOT / "migrations" / "0018_languages.sql"
KS = (1, 5, 10)


def _shipped_body() -> str:
    text = MIGRATION.read_text("utf-8")
    found = re.search(
        r"CREATE OR REPLACE FUNCTION mdchunks_search_words\(doc text\).*?\n\$\$;", text, re.S
    )
    assert found, "migration 0018 defines mdchunks_search_words"
    return found.group(0)


def _cjk_class(body: str) -> str:
    found = re.search(r"'\(\[([^\]]+)\]\+\)'", body)
    assert found
    return found.group(1)


def variants() -> dict[str, str]:
    shipped = _shipped_body()
    cjk = _cjk_class(shipped)
    head = shipped[: shipped.index("BEGIN") + len("BEGIN")]
    unigrams = (
        f"pg_catalog.regexp_replace(pg_catalog.regexp_replace(words, '[^{cjk}]+', ' ', 'g'), "
        f"'([{cjk}])', ' \\1 ', 'g')"
    )
    with_unigrams = shipped.replace(
        "    RETURN pg_catalog.regexp_replace(words, ",
        f"    RETURN {unigrams.replace('words', 'doc_cjk')} OPERATOR(pg_catalog.||) ' ' "
        "OPERATOR(pg_catalog.||) pg_catalog.regexp_replace(words, ",
    ).replace(
        "    words text := pg_catalog.regexp_replace(doc, '</?', ' ', 'g');",
        "    words text := pg_catalog.regexp_replace(doc, '</?', ' ', 'g');\n"
        "    doc_cjk text := words;",
    )
    # A lone character would count twice (as a bigram run's lone character too).
    with_unigrams = with_unigrams.replace(
        "    words := pg_catalog.regexp_replace(words, '(?<![",
        "    doc_cjk := pg_catalog.regexp_replace(doc_cjk, "
        f"'(^|[^{cjk}])[{cjk}](?![{cjk}])', '\\1 ', 'g');\n"
        "    words := pg_catalog.regexp_replace(words, '(?<![",
        1,
    )
    scripts = (
        "\\u3005-\\u3007\\u3400-\\u4DBF\\u4E00-\\u9FFF\\uF900-\\uFAFF\\U00020000-\\U0002FA1F",
        "\\u3040-\\u309F",
        "\\u30A0-\\u30FF\\u31F0-\\u31FF\\uFF66-\\uFF9F",
        "\\u1100-\\u11FF\\u3130-\\u318F\\uA960-\\uA97F\\uAC00-\\uD7FF",
        "\\u0E00-\\u0E7F",
    )
    spacing = f"    words := pg_catalog.regexp_replace(words, '([{cjk}]+)', ' \\1 ', 'g');"
    assert spacing in shipped, spacing
    by_script = shipped.replace(
        spacing,
        "\n".join(
            f"    words := pg_catalog.regexp_replace(words, '([{s}]+)', ' \\1 ', 'g');"
            for s in scripts
        ),
    )
    return {
        "script-bigrams": by_script,
        "runs": f"{head}\n    RETURN pg_catalog.regexp_replace(doc, '</?', ' ', 'g');\nEND\n$$;",
        "bigrams": shipped,
        "unigrams+bigrams": with_unigrams,
        "unigrams": (
            f"{head}\n    RETURN pg_catalog.regexp_replace(pg_catalog.regexp_replace("
            f"doc, '</?', ' ', 'g'), '([{cjk}])', ' \\1 ', 'g');\nEND\n$$;"
        ),
    }


REINDEX = """
UPDATE content_chunks c
SET search_vector = setweight(p.heading, 'A') || setweight(p.body, 'B'),
    search_heading_length = (SELECT coalesce(sum(coalesce(cardinality(u.positions), 1)), 0)
                             FROM unnest(p.heading) AS u),
    search_text_length = (SELECT coalesce(sum(coalesce(cardinality(u.positions), 1)), 0)
                          FROM unnest(p.body) AS u)
FROM (
    SELECT id,
           to_tsvector(mdchunks_search_config(language),
                       mdchunks_search_words(array_to_string(heading_path, ' '))) AS heading,
           to_tsvector(mdchunks_search_config(language), mdchunks_search_words(text)) AS body
    FROM content_chunks
) p
WHERE c.id = p.id
"""


def measure(conn: psycopg.Connection, body: str) -> tuple[float, int]:
    """Re-index every chunk with this analysis: seconds, vectors' bytes."""
    conn.execute(body)
    conn.execute("ALTER TABLE content_chunks DISABLE TRIGGER content_chunks_chunk_columns")
    started = time.perf_counter()
    conn.execute(REINDEX)
    seconds = time.perf_counter() - started
    conn.execute("ALTER TABLE content_chunks ENABLE TRIGGER content_chunks_chunk_columns")
    for source in [row[0] for row in conn.execute("SELECT DISTINCT source FROM content_chunks")]:
        values = {"source": source}
        conn.execute(QUERIES["search_stats_refresh"], values)
        conn.execute(QUERIES["search_terms_clear"], values)
        conn.execute(QUERIES["search_terms_refresh_df"], values)
    conn.execute("REINDEX INDEX content_chunks_search_vector_idx")
    row = conn.execute("SELECT sum(pg_column_size(search_vector)) FROM content_chunks").fetchone()
    return seconds, int(row[0]) if row and row[0] else 0


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m spikes.cjk_analysis")
    parser.add_argument("--corpus", type=Path, required=True)
    parser.add_argument("--golden", type=Path, nargs="+", required=True)
    parser.add_argument("--variants", default=",".join(variants()))
    args = parser.parse_args(argv)
    sets = {path.stem: load_golden(path) for path in args.golden}
    bodies = variants()
    with tempfile.TemporaryDirectory(prefix="mdchunks-cjk-") as tmp:
        data_dir = Path(tmp)
        mdchunks.ingest(args.corpus, data_dir=data_dir)
        url = database.resolve(None, data_dir, create=False).url
        print(
            "| analysis | set | found@1 | found@5 | found@10 | no hit | vectors MB | re-index s |"
        )
        print("|:--|:--|--:|--:|--:|--:|--:|--:|")
        with psycopg.connect(url, autocommit=True) as conn:
            for name in args.variants.split(","):
                seconds, size = measure(conn, bodies[name])
                for set_name, questions in sets.items():
                    ranks, empty = [], 0
                    for question in questions:
                        hits = mdchunks.search(
                            question.query, method="bm25", k=max(KS), data_dir=data_dir
                        )
                        empty += not hits
                        ranks.append(first_hit_rank(question.fact, [hit.text for hit in hits]))
                    found = [
                        sum(1 for rank in ranks if rank is not None and rank <= k) / len(ranks)
                        for k in KS
                    ]
                    print(
                        f"| {name} | {set_name} | "
                        + " | ".join(f"{value:.3f}" for value in found)
                        + f" | {empty} | {size / 1e6:.2f} | {seconds:.2f} |",
                        flush=True,
                    )
            conn.execute(bodies["bigrams"])
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
