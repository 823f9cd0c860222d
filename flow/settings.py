"""The recipe: everything that decides a document's rows, and its fingerprint.

A recipe is a frozen value. The per-document function receives it as an
argument, so cocoindex's memo sees every field of it: change any field and
every document is re-processed on the next run (a backfill), files untouched.
Code outside that function is invisible to the memo, which is why the heading
index's version is a field here.

Budgets are counted the way cocoindex's `RecursiveSplitter` counts them: in
UTF-8 bytes, not characters.
"""

from __future__ import annotations

import functools
import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import PurePosixPath
from typing import Any

from mdchunks.heading_index import (
    DEFAULT_BREADCRUMB_BUDGET,
    HEADING_INDEX_VERSION,
    STRUCTURE_CHUNKER_VERSION,
    StructureOptions,
)
from mdchunks.heading_index.breadcrumb import MIN_BREADCRUMB_BUDGET

# Suffix (lower case) -> splitter language. Markdown is split on its syntax
# and gets heading columns; plain text is split with `language=None` and keeps
# NULL heading columns. The suffixes are also what the walk picks up.
DEFAULT_LANGUAGES: tuple[tuple[str, str | None], ...] = (
    (".md", "markdown"),
    (".markdown", "markdown"),
    (".mdx", "markdown"),
    (".txt", None),
)

# Who places chunk boundaries (the recipe names which one made a row):
# - "recursive": cocoindex's budget splitter (RecursiveSplitter), blind to
#   sections; the heading columns are then assigned by position (DESIGN 3).
# - "structure": the structure-first chunker (DESIGN 10, heading_index.structure):
#   one chunk per section of a splitting heading (levels 1..split_levels),
#   oversized sections split by the budget splitter, small ones merged forward.
# The structure chunker needs the heading index: for `.txt` documents, and for
# every document when headings are off, the budget splitter is used instead.
CHUNKERS = ("recursive", "structure")
MERGED_PATHS = ("first", "common")

# Fields that only the structure chunker reads: left out of the fingerprint of a
# recipe with another chunker, so they never re-process its documents.
_STRUCTURE_FIELDS = ("split_levels", "merged_path", "structure_chunker_version")

# Folders the walk never enters, besides every hidden one (`.git` among them).
# Hidden files are documents like any other (tldr has a page named `..md`).
EXCLUDED_DIRS = ("node_modules",)

# Documents larger than this are skipped (with their size in the message), so
# one huge file cannot exhaust the memory of a run. Measured on 2 cores, one
# 20 MB markdown document (the rust-book, concatenated): `mdchunks ingest`
# takes about 25 s (markdown split about 12 s, tree-sitter parse about 9 s) and
# peaks at about 1.5 GB of memory (2 GB for the chunking alone in a process
# that keeps the rows); a 50 MB one peaks above 3 GB in the split alone.
# 24 MiB admits a 20 MB document and keeps the worst case near 2.5 GB.
DEFAULT_MAX_DOC_BYTES = 24 * 1024 * 1024

# What a document that is not valid UTF-8 becomes: "skip" (a failure naming the
# byte offset, no rows) or "replace" (each invalid sequence becomes U+FFFD, and
# the text with the replacements is what is stored and what offsets count in).
INVALID_UTF8_MODES = ("skip", "replace")

# Fields added after the first release, with the value that behaves as before.
# At that value they are left out of the fingerprint, so adding an option never
# changes the fingerprint of an existing recipe (nor re-processes anything).
_LATER_FIELDS = {"invalid_utf8": "skip", "markdown_split": "markdown"}

# How the budget splitter splits markdown documents: on markdown syntax
# (`RecursiveSplitter(language="markdown")`, the product's way) or as plain text
# (`language=None`, blind to markdown; the heading columns are still assigned
# by position). "plain" exists for the retrieval evaluation's baseline chunker.
MARKDOWN_SPLITS = ("markdown", "plain")

# Fields that decide no chunk row, so the fingerprint leaves them out: `embed`
# names the model whose vectors `ingest --embed` keeps next to the chunks
# (flow/embedding.py). Vector rows carry their model and a hash of the text
# they embed, so turning embeddings on, off or to another model re-embeds (or
# deletes) exactly the vectors concerned, and re-chunks nothing.
_NOT_FINGERPRINTED = ("embed",)


@dataclass(frozen=True, slots=True)
class Recipe:
    """How documents become rows. Defaults are the product's defaults."""

    chunk_size: int = 2000
    min_chunk_size: int = 1000
    chunk_overlap: int = 200
    headings: bool = True  # False writes NULL heading columns (a pipeline without the index)
    chunker: str = "recursive"
    heading_index_version: str = HEADING_INDEX_VERSION
    languages: tuple[tuple[str, str | None], ...] = field(default=DEFAULT_LANGUAGES)
    invalid_utf8: str = "skip"  # INVALID_UTF8_MODES
    markdown_split: str = "markdown"  # MARKDOWN_SPLITS: the budget splitter's language for markdown
    embed: str | None = None  # embedding model of the source's vectors (None: no vectors)
    # The structure chunker's options (DESIGN section 10); see `structure_options`.
    split_levels: int = 3  # headings of levels 1..split_levels start sections
    merged_path: str = "first"  # MERGED_PATHS: a merged chunk's columns; first: the classic rule
    # Both chunkers: a rendered breadcrumb (`A > B > C`) longer than this many
    # UTF-8 bytes is truncated from the left (`… > C`). Not a "later field": the
    # breadcrumb and embed_text columns came with it, so every recipe's
    # fingerprint changed once and the next run filled them in (a backfill).
    breadcrumb_budget: int = DEFAULT_BREADCRUMB_BUDGET
    structure_chunker_version: str = STRUCTURE_CHUNKER_VERSION

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise ValueError("; ".join(problems))

    def problems(self) -> list[str]:
        found: list[str] = []
        if self.chunk_size < 1:
            found.append(f"chunk size must be at least 1 byte (got {self.chunk_size})")
        if self.min_chunk_size < 1 or self.min_chunk_size > self.chunk_size:
            found.append(
                f"min chunk size must be between 1 and the chunk size {self.chunk_size} "
                f"(got {self.min_chunk_size})"
            )
        if self.chunk_overlap < 0 or self.chunk_overlap >= self.chunk_size:
            found.append(
                f"chunk overlap must be at least 0 and below the chunk size {self.chunk_size} "
                f"(got {self.chunk_overlap})"
            )
        if self.chunker not in CHUNKERS:
            found.append(f"unknown chunker {self.chunker!r} (known: {', '.join(CHUNKERS)})")
        if not 1 <= self.split_levels <= 6:
            found.append(f"split levels must be between 1 and 6 (got {self.split_levels})")
        if self.merged_path not in MERGED_PATHS:
            found.append(
                f"merged path must be one of {', '.join(MERGED_PATHS)} (got {self.merged_path!r})"
            )
        if self.breadcrumb_budget < MIN_BREADCRUMB_BUDGET:
            found.append(
                f"breadcrumb budget must be at least {MIN_BREADCRUMB_BUDGET} bytes "
                f"(got {self.breadcrumb_budget})"
            )
        if not self.languages:
            found.append("the language policy names no file suffix")
        if self.markdown_split not in MARKDOWN_SPLITS:
            found.append(
                f"markdown split must be one of {', '.join(MARKDOWN_SPLITS)} "
                f"(got {self.markdown_split!r})"
            )
        if self.invalid_utf8 not in INVALID_UTF8_MODES:
            found.append(
                f"invalid UTF-8 handling must be one of {', '.join(INVALID_UTF8_MODES)} "
                f"(got {self.invalid_utf8!r})"
            )
        return found

    def language_for(self, rel_path: str) -> str | None:
        """The splitter language of a document, by its suffix (case-insensitive)."""
        suffix = PurePosixPath(rel_path).suffix.lower()
        return dict(self.languages).get(suffix)

    def is_markdown(self, rel_path: str) -> bool:
        return self.language_for(rel_path) == "markdown"

    @property
    def suffixes(self) -> tuple[str, ...]:
        return tuple(suffix for suffix, _ in self.languages)

    def uses_structure(self, rel_path: str) -> bool:
        """Whether the structure chunker splits this document (else the budget splitter)."""
        return self.chunker == "structure" and self.headings and self.is_markdown(rel_path)

    def structure_options(self) -> StructureOptions:
        return StructureOptions(
            chunk_size=self.chunk_size,
            min_chunk_size=self.min_chunk_size,
            chunk_overlap=self.chunk_overlap,
            split_levels=self.split_levels,
            merged_path="common" if self.merged_path == "common" else "first",
            breadcrumb_budget=self.breadcrumb_budget,
        )

    def fingerprint(self) -> str:
        """A short stable hash of every field that decides rows: stored on each row
        as `recipe`. Left out: the structure chunker's fields when another chunker
        is chosen, later fields at the value that behaves as before, and `embed`
        (it decides vector rows, not chunk rows)."""
        return _fingerprint(self)

    def __coco_memo_key__(self) -> str:
        """What cocoindex's memo sees of the recipe: its fingerprint, so the memo
        and the `recipe` column agree on what is the same recipe (a field the
        fingerprint leaves out, such as `split_levels` under the recursive
        chunker, re-processes nothing)."""
        return self.fingerprint()

    def describe(self) -> str:
        headings = "on" if self.headings else "off"
        replace_note = ", invalid UTF-8 replaced" if self.invalid_utf8 == "replace" else ""
        if self.markdown_split == "plain":
            replace_note += ", markdown split as plain text"
        if self.embed:
            replace_note += f", embeddings {self.embed}"
        chunker = self.chunker
        if self.chunker == "structure":
            chunker = (
                f"structure v{self.structure_chunker_version} (split H1-H{self.split_levels}, "
                f"merged path {self.merged_path})"
            )
        return (
            f"chunk {self.chunk_size}/{self.min_chunk_size}/{self.chunk_overlap} bytes, "
            f"{chunker}, headings {headings}, heading index v{self.heading_index_version}, "
            f"breadcrumb {self.breadcrumb_budget} bytes{replace_note}"
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["languages"] = [[suffix, language] for suffix, language in self.languages]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], *, current_index: bool = True) -> Recipe:
        """A recipe stored by an earlier run. Fields this version does not know are
        dropped, fields it lacks take their defaults. With `current_index` the
        heading index and structure chunker versions are those of the code that
        runs now (a backfill re-processes under them)."""
        known = {name: data[name] for name in cls.__dataclass_fields__ if name in data}
        if "languages" in known:
            known["languages"] = tuple(
                (str(suffix), None if language is None else str(language))
                for suffix, language in known["languages"]
            )
        if current_index or "heading_index_version" not in known:
            known["heading_index_version"] = HEADING_INDEX_VERSION
        else:
            known["heading_index_version"] = str(known["heading_index_version"])
        if current_index or "structure_chunker_version" not in known:
            known["structure_chunker_version"] = STRUCTURE_CHUNKER_VERSION
        else:
            known["structure_chunker_version"] = str(known["structure_chunker_version"])
        return cls(**known)

    @classmethod
    def describe_json(cls, data: dict[str, Any]) -> str:
        """The description of a stored recipe, as it was."""
        try:
            return cls.from_json(data, current_index=False).describe()
        except (TypeError, ValueError):
            return "a recipe this version cannot read"

    def with_options(self, **options: Any) -> Recipe:
        """This recipe with the given fields changed (None means keep).

        A chunk size given without a minimum or an overlap that the old ones
        would no longer fit (`--chunk-size 500` against the default minimum of
        1000) scales them: half the chunk size, a tenth of it."""
        changes = {name: value for name, value in options.items() if value is not None}
        size = changes.get("chunk_size")
        if isinstance(size, int) and size >= 1:
            if "min_chunk_size" not in changes and self.min_chunk_size > size:
                changes["min_chunk_size"] = max(1, size // 2)
            if "chunk_overlap" not in changes and self.chunk_overlap >= size:
                changes["chunk_overlap"] = size // 10
        return replace(self, **changes)


@functools.lru_cache(maxsize=64)
def _fingerprint(recipe: Recipe) -> str:
    # Cached: the flow asks for it for every document (about 25 us each time).
    data = recipe.to_json()
    for name in _NOT_FINGERPRINTED:
        del data[name]
    for name, value in _LATER_FIELDS.items():
        if data.get(name) == value:
            del data[name]
    if recipe.chunker != "structure":
        for name in _STRUCTURE_FIELDS:
            del data[name]
    canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(canonical.encode()).hexdigest()[:12]


def include_patterns(suffixes: tuple[str, ...]) -> list[str]:
    """Globset patterns for the suffixes at any depth, case-insensitive
    (`.md` -> `**/*.[mM][dD]`)."""

    def either_case(suffix: str) -> str:
        return "".join(f"[{ch.lower()}{ch.upper()}]" if ch.isalpha() else ch for ch in suffix)

    return [f"**/*{either_case(suffix)}" for suffix in suffixes]


def exclude_patterns() -> list[str]:
    """Everything inside a hidden folder (`.git` too) or `node_modules`, at any depth."""
    return ["**/.*/**", *(f"**/{name}/**" for name in EXCLUDED_DIRS)]


def is_excluded_dir(name: str) -> bool:
    return name.startswith(".") or name in EXCLUDED_DIRS
