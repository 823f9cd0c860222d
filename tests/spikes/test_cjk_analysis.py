"""The CJK analysis spike reads the shipped analysis from migration 0018 and
derives its variants from it (spikes/cjk_analysis.py)."""

from __future__ import annotations

from pathlib import Path

from spikes.cjk_analysis import variants

MIGRATION = Path(__file__).resolve().parents[2] / "migrations" / "0018_languages.sql"


def test_every_variant_is_a_whole_function_and_bigrams_is_the_shipped_one() -> None:
    found = variants()
    assert set(found) == {"runs", "bigrams", "unigrams+bigrams", "unigrams", "script-bigrams"}
    for name, body in found.items():
        assert body.startswith("CREATE OR REPLACE FUNCTION mdchunks_search_words(doc text)"), name
        assert body.rstrip().endswith("$$;"), name
    assert found["bigrams"] in MIGRATION.read_text("utf-8")
    assert found["script-bigrams"] != found["bigrams"]
    assert "doc_cjk" in found["unigrams+bigrams"]
