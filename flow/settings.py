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

import hashlib
import json
from dataclasses import asdict, dataclass, field, replace
from pathlib import PurePosixPath
from typing import Any

from heading_index import HEADING_INDEX_VERSION

# Suffix (lower case) -> splitter language. Markdown is split on its syntax
# and gets heading columns; plain text is split with `language=None` and keeps
# NULL heading columns. The suffixes are also what the walk picks up.
DEFAULT_LANGUAGES: tuple[tuple[str, str | None], ...] = (
    (".md", "markdown"),
    (".markdown", "markdown"),
    (".mdx", "markdown"),
    (".txt", None),
)

# The only chunker so far: cocoindex's budget splitter (DESIGN section 10
# adds a structure-first one later; the recipe names which one made a row).
CHUNKERS = ("recursive",)

# Folders the walk never enters, besides every hidden one (`.git` among them).
# Hidden files are documents like any other (tldr has a page named `..md`).
EXCLUDED_DIRS = ("node_modules",)

# Documents larger than this are skipped (with their size in the message). The
# markdown splitter's memory grows with the document: measured on 2 cores, a
# 20 MB markdown document splits in about 12 s at a peak of about 1.2 GB (the
# whole per-document step: about 25 s), a 50 MB one peaks at about 3 GB.
DEFAULT_MAX_DOC_BYTES = 32 * 1024 * 1024

# What a document that is not valid UTF-8 becomes: "skip" (a failure naming the
# byte offset, no rows) or "replace" (each invalid sequence becomes U+FFFD, and
# the text with the replacements is what is stored and what offsets count in).
INVALID_UTF8_MODES = ("skip", "replace")

# Fields added after the first release, with the value that behaves as before.
# At that value they are left out of the fingerprint, so adding an option never
# changes the fingerprint of an existing recipe (nor re-processes anything).
_LATER_FIELDS = {"invalid_utf8": "skip"}


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
        if not self.languages:
            found.append("the language policy names no file suffix")
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

    def fingerprint(self) -> str:
        """A short stable hash of every field: stored on each row as `recipe`."""
        data = self.to_json()
        for name, value in _LATER_FIELDS.items():
            if data.get(name) == value:
                del data[name]
        canonical = json.dumps(data, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(canonical.encode()).hexdigest()[:12]

    def describe(self) -> str:
        headings = "on" if self.headings else "off"
        replace_note = ", invalid UTF-8 replaced" if self.invalid_utf8 == "replace" else ""
        return (
            f"chunk {self.chunk_size}/{self.min_chunk_size}/{self.chunk_overlap} bytes, "
            f"{self.chunker}, headings {headings}, heading index v{self.heading_index_version}"
            f"{replace_note}"
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["languages"] = [[suffix, language] for suffix, language in self.languages]
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], *, current_index: bool = True) -> Recipe:
        """A recipe stored by an earlier run. Fields this version does not know are
        dropped. With `current_index` the heading index version is the one of the
        code that runs now (a backfill re-processes under it)."""
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
