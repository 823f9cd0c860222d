"""Small pure pieces of the flow (no database)."""

from __future__ import annotations

import dataclasses
import uuid
from pathlib import Path

import cocoindex as coco
import pytest
from cocoindex._internal.memo_fingerprint import memo_fingerprint as coco_memo_fingerprint
from mdchunks import NAMESPACE, Recipe, SearchHit, chunk_id
from mdchunks.db.queries import QUERIES, parse
from mdchunks.db.urls import redact, scrub
from mdchunks.heading_index import StructureOptions
from mdchunks.heading_index.chunkers import CHUNKERS
from mdchunks.source.app import rel_path_of
from mdchunks.source.listing import walk


def test_ids_are_uuid5_of_source_path_and_position() -> None:
    assert chunk_id("docs", "a/b.md", 3) == uuid.uuid5(NAMESPACE, "chunk:docs:a/b.md:3")
    assert uuid.UUID("fb8159f0-c42d-4e50-8a16-a15733f9b164") == NAMESPACE  # never changes


def test_the_recipe_fingerprint_is_stable_and_sees_every_field() -> None:
    base = Recipe()
    assert base.fingerprint() == Recipe().fingerprint()
    # The same fields give the same fingerprint in every version of the code.
    # (It was c4894de01bbe before rows had breadcrumb and embed_text: the
    # breadcrumb budget joined every recipe then, so every source backfills once;
    # ab943ee83edb before the page title: the title rule joined every recipe;
    # 011e863c6c1f before the language rules joined it, issue 38.)
    assert Recipe(heading_index_version="1").fingerprint() == "def92b6aa03a"
    variants = [
        Recipe(chunk_size=2001),
        Recipe(min_chunk_size=999),
        Recipe(chunk_overlap=201),
        Recipe(headings=False),
        Recipe(titles=False),
        Recipe(heading_index_version="1"),
        Recipe(language_rules_version="0"),
        Recipe(languages=((".md", "markdown"),)),
        Recipe(breadcrumb_budget=100),
        Recipe(chunker="structure"),
        Recipe(chunker="structure", split_levels=2),
        Recipe(chunker="structure", merged_path="common"),
        Recipe(chunker="structure", chunker_version="2"),
    ]
    assert len({v.fingerprint() for v in variants} | {base.fingerprint()}) == len(variants) + 1
    assert Recipe.from_json(base.to_json()) == base
    structure = Recipe(chunker="structure", split_levels=2, merged_path="common")
    assert Recipe.from_json(structure.to_json()) == structure


def test_structure_only_fields_leave_the_recursive_fingerprint_alone(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    # They decide nothing under the budget splitter, so they re-process nothing:
    # neither the fingerprint (the `recipe` column) nor the memo key changes.
    base = Recipe()
    for other in (
        Recipe(split_levels=2),
        Recipe(merged_path="common"),
    ):
        assert other.fingerprint() == base.fingerprint()
        assert coco_memo_fingerprint(other) == coco_memo_fingerprint(base)
    assert coco_memo_fingerprint(Recipe(chunk_size=2001)) != coco_memo_fingerprint(base)
    # Nor does a new version of the structure chunker (only the chosen
    # chunker's version is part of a recipe), while it does re-process its own.
    structure = Recipe(chunker="structure")
    before = (base.fingerprint(), structure.fingerprint())
    bumped = dataclasses.replace(CHUNKERS["structure"], version="999")
    monkeypatch.setitem(CHUNKERS, "structure", bumped)
    assert Recipe().fingerprint() == before[0]
    assert Recipe(chunker="structure").fingerprint() != before[1]


def test_the_recipe_validates_the_structure_options() -> None:
    with pytest.raises(ValueError, match="unknown chunker"):
        Recipe(chunker="semantic")
    with pytest.raises(ValueError, match="split levels"):
        Recipe(split_levels=7)
    with pytest.raises(ValueError, match="merged path"):
        Recipe(merged_path="last")
    with pytest.raises(ValueError, match="breadcrumb budget"):
        Recipe(breadcrumb_budget=3)
    recipe = Recipe(chunker="structure", split_levels=2).with_options(chunk_size=900)
    options = StructureOptions.of(recipe)
    assert (options.chunk_size, options.min_chunk_size, options.chunk_overlap) == (900, 450, 200)
    assert (options.split_levels, options.merged_path) == (2, "first")
    assert options.breadcrumb_budget == 256
    assert Recipe(chunker="structure").uses_structure("a/b.MD")
    assert not Recipe(chunker="structure").uses_structure("notes.txt")
    assert not Recipe(chunker="structure", headings=False).uses_structure("a.md")
    assert not Recipe().uses_structure("a.md")


def test_a_smaller_chunk_size_scales_the_defaults_it_would_break() -> None:
    assert Recipe().with_options(chunk_size=500) == Recipe(
        chunk_size=500, min_chunk_size=250, chunk_overlap=200
    )
    assert Recipe().with_options(chunk_size=150).chunk_overlap == 15
    with pytest.raises(ValueError, match="min chunk size"):
        Recipe(chunk_size=100, min_chunk_size=200)


def test_languages_follow_the_suffix_in_any_case() -> None:
    recipe = Recipe()
    assert recipe.language_for("a/B.MD") == "markdown"
    assert recipe.language_for("x.mdx") == "markdown"
    assert recipe.language_for("notes.txt") is None


@pytest.mark.parametrize(
    ("url", "shown"),
    [
        ("postgresql://u:pw@h:5/db", "postgresql://u:***@h:5/db"),
        ("postgresql://u@h/db", "postgresql://u@h/db"),
        (
            "postgresql://h/db?password=pw&sslmode=require",
            "postgresql://h/db?password=***&sslmode=require",
        ),
        ("host=h password=pw dbname=x", "host=h password=*** dbname=x"),
    ],
)
def test_passwords_are_redacted(url: str, shown: str) -> None:
    assert redact(url) == shown


def test_scrub_masks_the_password_anywhere() -> None:
    assert scrub("failed for pw-123 here", "postgresql://u:pw-123@h/db") == "failed for *** here"


def test_a_password_that_is_a_word_is_masked_as_a_word_only() -> None:
    # Not inside longer words: the message stays readable ("postgresql",
    # "password", "authentication" keep their letters).
    url = "postgresql://me:postgres@h/db"
    message = f"at {redact(url)}: password authentication failed; postgres, postgres_x"
    assert scrub(message, url) == (
        "at postgresql://me:***@h/db: password authentication failed; ***, ***_x"
    )
    assert scrub('password authentication failed for user "me"', "postgresql://me:a@h/db") == (
        'password authentication failed for user "me"'
    )


@pytest.mark.parametrize("name", ["plain.md", "a/b.md", 'we"ird ü\\x.md', "x'y.md", "tab\there.md"])
def test_failed_components_are_traced_back_to_their_document(name: str) -> None:
    stable_path = f"/@process_document{coco.ROOT_PATH / name}"
    keys = {str(coco.ROOT_PATH / name): name}
    assert rel_path_of(stable_path, keys) == name
    assert rel_path_of(stable_path, {}) == name  # live mode: no listing to look up


def test_queries_file_parses_into_named_statements() -> None:
    assert {"reconcile_chunks", "drop_source", "documents_missing_rows"} <= set(QUERIES)
    assert parse("-- name: a\nSELECT 1;\n-- name: b\nSELECT 2;\n") == {
        "a": "SELECT 1",
        "b": "SELECT 2",
    }


def test_the_walk_skips_hidden_folders_and_node_modules_but_not_hidden_files(
    tmp_path: Path,
) -> None:
    for rel in [
        "a.md",
        "..md",
        "sub/b.MARKDOWN",
        "sub/c.txt",
        "d.rst",
        ".git/x.md",
        "sub/.hidden/y.md",
        "node_modules/z.md",
        "big.md",
    ]:
        path = tmp_path / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("x" * (200 if rel == "big.md" else 10))
    (tmp_path / "loop").symlink_to(tmp_path)
    (tmp_path / "broken.md").symlink_to(tmp_path / "missing.md")

    found = walk(tmp_path, Recipe().suffixes, max_doc_bytes=100)

    assert found.rel_paths == ["..md", "a.md", "sub/b.MARKDOWN", "sub/c.txt"]
    skipped = {s.rel_path: s.cause for s in found.skipped}
    assert skipped["big.md"].startswith("too large: 200 bytes")
    assert skipped["broken.md"].startswith("broken symlink")
    assert skipped["loop/"].startswith("symlink loop")


def test_a_search_hit_shows_its_stored_breadcrumb() -> None:
    def hit(path: tuple[str, ...], stored: str | None) -> SearchHit:
        return SearchHit(1.0, "s", "a.md", 0, path, "snippet", stored_breadcrumb=stored)

    assert hit(("A", "B"), "… > B").breadcrumb == "… > B"
    assert hit((), None).breadcrumb == "(preamble)"
    # A row from before migration 0006 (no stored breadcrumb): rendered from its path.
    assert hit(("A", " B\t"), None).breadcrumb == "A > B"
