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
from dataclasses import asdict, dataclass
from pathlib import PurePosixPath
from typing import Any

from mdchunks.heading_index import HEADING_INDEX_VERSION
from mdchunks.heading_index.chunkers import CHUNKERS as CHUNKER_REGISTRY
from mdchunks.heading_index.options import (
    MERGED_PATHS,
    Check,
    ChunkOptions,
    option,
    options_of,
)
from mdchunks.importers.registry import available_suffixes, importer_for, importer_versions
from mdchunks.plugin.languages import LANGUAGE_RULES_VERSION

# Suffix (lower case) -> splitter language. Markdown is split on its syntax
# and gets heading columns; plain text is split with `language=None` and keeps
# NULL heading columns. The suffixes are also what the walk picks up, with
# those of the importers whose libraries are installed (docs/importers.md):
# their documents are the markdown they convert to.
DEFAULT_LANGUAGES: tuple[tuple[str, str | None], ...] = (
    (".md", "markdown"),
    (".markdown", "markdown"),
    (".mdx", "markdown"),
    (".txt", None),
)

# Who places chunk boundaries: the registry (mdchunks.heading_index.chunkers,
# docs/chunkers.md). The structure chunker needs the heading index: for `.txt`
# documents, and for every document when headings are off, the budget splitter
# is used instead.
CHUNKERS = tuple(CHUNKER_REGISTRY)

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

# How the budget splitter splits markdown documents: on markdown syntax
# (`RecursiveSplitter(language="markdown")`, the product's way) or as plain text
# (`language=None`, blind to markdown; the heading columns are still assigned
# by position). "plain" exists for the retrieval evaluation's baseline chunker.
MARKDOWN_SPLITS = ("markdown", "plain")

__all__ = ["CHUNKERS", "DEFAULT_MAX_DOC_BYTES", "INVALID_UTF8_MODES", "MERGED_PATHS", "Recipe"]


def _languages(value: tuple[tuple[str, str | None], ...], _: object) -> str | None:
    return None if value else "the language policy names no file suffix"


def _one_of(what: str, known: tuple[str, ...]) -> Check:
    def check(value: object, _: object) -> str | None:
        return (
            None if value in known else f"{what} must be one of {', '.join(known)} (got {value!r})"
        )

    return check


@dataclass(frozen=True, slots=True)
class Recipe(ChunkOptions):
    """How documents become rows: the chunk options (mdchunks.heading_index.options)
    and what the managed source adds (file policy, versions, embeddings).
    Defaults are the product's defaults. Each field is declared once, with its
    `Option`: help, check, fingerprint rule (docs/recipe.md)."""

    heading_index_version: str = option(
        HEADING_INDEX_VERSION, help="The heading index's version.", cli=False
    )
    # The rules that decide a document's language and how search parses it
    # (flow/plugin/languages.py, migration 0018): stored on every chunk row.
    language_rules_version: str = option(
        LANGUAGE_RULES_VERSION, help="The document language rules' version.", cli=False
    )
    languages: tuple[tuple[str, str | None], ...] = option(
        DEFAULT_LANGUAGES, help="File suffix -> splitter language.", check=_languages, cli=False
    )
    invalid_utf8: str = option(
        "skip",
        help="Documents that are not valid UTF-8: skip them (reported as failed, with "
        "the byte offset) or replace each invalid sequence with U+FFFD and ingest the "
        "result (offsets then count in that text).",
        check=_one_of("invalid UTF-8 handling", INVALID_UTF8_MODES),
        choices=INVALID_UTF8_MODES,
        fingerprint="later",
    )
    # The budget splitter's language for markdown (MARKDOWN_SPLITS).
    markdown_split: str = option(
        "markdown",
        help="How the budget splitter splits markdown.",
        check=_one_of("markdown split", MARKDOWN_SPLITS),
        fingerprint="later",
        cli=False,
    )
    # Embedding model of the source's vectors (None: no vectors). Decides no
    # chunk row: vector rows carry their model and a hash of the text they
    # embed, so turning embeddings on, off or to another model re-embeds (or
    # deletes) exactly the vectors concerned, and re-chunks nothing.
    embed: str | None = option(None, help="Embedding model.", fingerprint="never", cli=False)
    # How a chunk longer than the model reads is embedded (None: the embedder's
    # default rule; flow/retrieval/embedder.py names the rules). Vector rows
    # carry their rule, so a change re-embeds them (every one: all carry it) and
    # re-chunks nothing.
    embed_long_input: str | None = option(
        None, help="Long-input rule of the embeddings.", fingerprint="never", cli=False
    )
    # The chosen chunker's version; None: the registry's, the code that runs.
    # Stored and fingerprinted as `<chunker>_chunker_version` (to_json), so a
    # chunker with a version needs no field of its own here.
    chunker_version: str | None = option(
        None, help="The chosen chunker's version.", fingerprint="never", cli=False
    )

    # The importers' versions, (name, version) pairs; None: the registry's.
    # Not fingerprinted: a converted document's memo sees its own importer's
    # version (flow/source/files.py), so a new importer version re-processes
    # the files of that format and no other, under the same recipe.
    importer_versions: tuple[tuple[str, str], ...] | None = option(
        None, help="The importers' versions.", fingerprint="never", cli=False
    )

    @property
    def effective_importer_versions(self) -> dict[str, str]:
        versions = importer_versions()
        versions.update(dict(self.importer_versions or ()))
        return versions

    def importer_version(self, rel_path: str) -> str | None:
        """The version of the importer that converts this document (None: it is
        read as it is)."""
        importer = importer_for(rel_path)
        return None if importer is None else self.effective_importer_versions[importer.name]

    def importer_key(self, rel_path: str) -> str | None:
        """`"<importer> <version>"` of a converted document, else None: what its
        memo key adds (flow/source/files.py)."""
        version = self.importer_version(rel_path)
        return None if version is None else f"{self.source_format(rel_path)} {version}"

    def source_format(self, rel_path: str) -> str:
        """What the document was: its importer's name, else markdown or text."""
        importer = importer_for(rel_path)
        if importer is not None:
            return importer.name
        return "markdown" if self.language_for(rel_path) == "markdown" else "text"

    @property
    def effective_chunker_version(self) -> str | None:
        if self.chunker_version is not None:
            return self.chunker_version
        return CHUNKER_REGISTRY[self.chunker].version

    def chunk_options(self) -> ChunkOptions:
        """The part of the recipe `split_markdown` reads."""
        return ChunkOptions(
            **{name: getattr(self, name) for name, _, _ in options_of(ChunkOptions)}
        )

    def language_for(self, rel_path: str) -> str | None:
        """The splitter language of a document, by its suffix (case-insensitive):
        a converted document is markdown."""
        suffix = PurePosixPath(rel_path).suffix.lower()
        if importer_for(suffix) is not None:
            return "markdown"
        return dict(self.languages).get(suffix)

    def is_markdown(self, rel_path: str) -> bool:
        return self.language_for(rel_path) == "markdown"

    @property
    def suffixes(self) -> tuple[str, ...]:
        """What the walk picks up: the language policy's suffixes and those of
        the importers that can run here."""
        own = tuple(suffix for suffix, _ in self.languages)
        return own + tuple(suffix for suffix in available_suffixes() if suffix not in own)

    def uses_structure(self, rel_path: str) -> bool:
        """Whether the structure chunker splits this document (else the budget splitter)."""
        return self.chunker == "structure" and self.headings and self.is_markdown(rel_path)

    def fingerprint(self) -> str:
        """A short stable hash of every field that decides rows: stored on each row
        as `recipe`. Left out: the structure chunker's fields when another chunker
        is chosen, later fields at the value that behaves as before, and `embed`
        (it decides vector rows, not chunk rows)."""
        return _fingerprint(self, self.effective_chunker_version)

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
            if self.embed_long_input is not None:
                replace_note += f" (long inputs: {self.embed_long_input})"
        chunker = self.chunker
        version = self.effective_chunker_version
        if version is not None:
            chunker = f"{chunker} v{version}"
        if self.chunker == "structure":
            chunker += f" (split H1-H{self.split_levels}, merged path {self.merged_path})"
        return (
            f"chunk {self.chunk_size}/{self.min_chunk_size}/{self.chunk_overlap} bytes, "
            f"{chunker}, headings {headings}, heading index v{self.heading_index_version}, "
            f"breadcrumb {self.breadcrumb_budget} bytes{replace_note}"
        )

    def to_json(self) -> dict[str, Any]:
        data = asdict(self)
        data["languages"] = [[suffix, language] for suffix, language in self.languages]
        del data["chunker_version"]
        data["importer_versions"] = self.effective_importer_versions
        version = self.effective_chunker_version
        if version is not None:
            data[f"{self.chunker}_chunker_version"] = version
        return data

    @classmethod
    def from_json(cls, data: dict[str, Any], *, current_index: bool = True) -> Recipe:
        """A recipe stored by an earlier run. Fields this version does not know are
        dropped, fields it lacks take their defaults. With `current_index` the
        heading index and chunker versions are those of the code that runs now
        (a backfill re-processes under them)."""
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
        stored_importers = known.pop("importer_versions", None)
        if not current_index and isinstance(stored_importers, dict):
            known["importer_versions"] = tuple(
                sorted((str(name), str(version)) for name, version in stored_importers.items())
            )
        stored_version = data.get(f"{known.get('chunker', 'recursive')}_chunker_version")
        if not current_index and stored_version is not None:
            known["chunker_version"] = str(stored_version)
        return cls(**known)

    @classmethod
    def describe_json(cls, data: dict[str, Any]) -> str:
        """The description of a stored recipe, as it was."""
        try:
            return cls.from_json(data, current_index=False).describe()
        except (TypeError, ValueError):
            return "a recipe this version cannot read"


@functools.lru_cache(maxsize=64)
def _fingerprint(recipe: Recipe, chunker_version: str | None) -> str:
    # Cached: the flow asks for it for every document (about 25 us each time);
    # keyed by the chunker's version too, which comes from the registry.
    data = recipe.to_json()
    for name, default, info in options_of(Recipe):
        leave_out = (
            info.fingerprint == "never"
            or (info.fingerprint == "later" and data[name] == default)
            or not recipe.reads(name)
        )
        if leave_out:
            data.pop(name, None)
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
