"""`ChunkOptions`: how a document's text becomes chunks, each option declared once.

Every option is one dataclass field whose metadata (`Option`) says everything
else about it: its help text, its check, which chunkers read it, and how it
enters a recipe's fingerprint. The CLI's options, backfill's overrides, the
recipe's description and its validation are derived from these fields
(mdchunks.plugin.recipe, mdchunks.cli.ingest), so adding an option is this file plus the
chunker that reads it.

Budgets count UTF-8 bytes, as cocoindex's `RecursiveSplitter` counts them.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator
from dataclasses import dataclass, field, fields, replace
from typing import Any, Literal, Self

from mdchunks.heading_index.breadcrumb import DEFAULT_BREADCRUMB_BUDGET, MIN_BREADCRUMB_BUDGET
from mdchunks.heading_index.chunkers import CHUNKERS

# How a field enters a recipe's fingerprint: "always"; "later", left out at its
# default (a field added after the first release: adding it re-processes
# nothing); "never" (decides no chunk row).
Fingerprint = Literal["always", "later", "never"]
Check = Callable[[Any, Any], "str | None"]  # (value, the whole options) -> problem or None


@dataclass(frozen=True, slots=True)
class Option:
    """What the rest of the system knows of one option (a field's metadata)."""

    help: str
    check: Check | None = None
    choices: tuple[str, ...] = ()  # for a text option with a fixed set of values
    read_by: tuple[str, ...] = ()  # chunkers that read it (empty: all of them)
    fingerprint: Fingerprint = "always"
    cli: bool = True  # offered by ingest and backfill (as --<name with dashes>)
    metavar: str | None = None
    shown_default: str | None = None  # what --help says the default is, when not the value
    choices_from_registry: bool = False  # a chunker's name: the registry's names
    bounds: tuple[int, int] | None = None  # an int option's range, checked by the CLI too


def option(default: Any, **info: Any) -> Any:
    """A dataclass field with its `Option`."""
    return field(default=default, metadata={"option": Option(**info)})


def options_of(cls: type) -> Iterator[tuple[str, Any, Option]]:
    """(name, default, Option) of every declared option of a dataclass, in order."""
    for item in fields(cls):
        found = item.metadata.get("option")
        if isinstance(found, Option):
            yield item.name, item.default, found


def _at_least_one(value: int, _: Any) -> str | None:
    return None if value >= 1 else f"chunk size must be at least 1 byte (got {value})"


def _min_size(value: int, opts: Any) -> str | None:
    # Against a chunk size that is itself wrong the check says nothing: that
    # size's own check does (the user may not have given this value at all).
    if 1 <= value <= opts.chunk_size or (opts.chunk_size < 1 and value >= 1):
        return None
    return f"min chunk size must be between 1 and the chunk size {opts.chunk_size} (got {value})"


def _overlap(value: int, opts: Any) -> str | None:
    if 0 <= value < opts.chunk_size or (opts.chunk_size < 1 and value >= 0):
        return None
    return (
        f"chunk overlap must be at least 0 and below the chunk size {opts.chunk_size} (got {value})"
    )


def _chunker(value: str, _: Any) -> str | None:
    if value in CHUNKERS:
        return None
    return f"unknown chunker {value!r} (known: {', '.join(CHUNKERS)})"


def _split_levels(value: int, _: Any) -> str | None:
    return None if 1 <= value <= 6 else f"split levels must be between 1 and 6 (got {value})"


def _merged_path(value: str, _: Any) -> str | None:
    if value in MERGED_PATHS:
        return None
    return f"merged path must be one of {', '.join(MERGED_PATHS)} (got {value!r})"


def _breadcrumb_budget(value: int, _: Any) -> str | None:
    if value >= MIN_BREADCRUMB_BUDGET:
        return None
    return f"breadcrumb budget must be at least {MIN_BREADCRUMB_BUDGET} bytes (got {value})"


MERGED_PATHS = ("first", "common")


@dataclass(frozen=True, slots=True)
class ChunkOptions:
    """How text becomes chunks. Defaults are the product's defaults; an invalid
    value raises ValueError naming every problem."""

    chunk_size: int = option(
        2000,
        help="Largest chunk, in UTF-8 bytes (cocoindex's budgets are bytes).",
        check=_at_least_one,
        metavar="BYTES",
    )
    min_chunk_size: int = option(
        1000,
        help="Smallest chunk the splitter aims for, UTF-8 bytes.",
        shown_default="1000, or half a smaller --chunk-size",
        check=_min_size,
        metavar="BYTES",
    )
    chunk_overlap: int = option(
        200,
        help="Overlap between chunks, UTF-8 bytes.",
        shown_default="200, or a tenth of a --chunk-size of 200 or less",
        check=_overlap,
        metavar="BYTES",
    )
    headings: bool = option(
        True,
        help="Fill the heading columns of markdown chunks (off: NULL, as a pipeline "
        "without the heading index would).",
        shown_default="on",
    )
    titles: bool = option(
        True,
        help="Root every breadcrumb of a markdown document at its front matter's title "
        "(`title:` in YAML, `title =` in TOML): `Title > Section`, and the title alone "
        "before the first heading; kept in the `title` column and searched with the "
        "headings. Off: breadcrumbs are the heading path alone, `title` NULL.",
        shown_default="on",
    )
    chunker: str = option(
        "recursive",
        help="Who places chunk boundaries. `recursive`: cocoindex's budget splitter, "
        "blind to sections; each chunk gets the heading it starts under. `structure`: "
        "one chunk per section (the text after a heading line; the heading goes into the "
        "breadcrumb instead), oversized sections split by the budget splitter, small "
        "ones merged with the next (--split-levels, --merged-path). .txt documents, and "
        "all with --no-headings, use the budget splitter.",
        check=_chunker,
        choices_from_registry=True,
    )
    split_levels: int = option(
        3,
        help="Structure chunker: headings of levels 1..N start sections; deeper "
        "headings stay in the text as content.",
        check=_split_levels,
        bounds=(1, 6),
        read_by=("structure",),
        metavar="N",
    )
    merged_path: str = option(
        "first",
        help="Structure chunker: the heading columns of a chunk made of several small "
        "sections merged together: `first`, the first section's (the path where the "
        "chunk starts); `common`, the deepest heading whose section holds them all "
        "(never names a section the text is not in; none: NULL columns).",
        check=_merged_path,
        choices=MERGED_PATHS,
        read_by=("structure",),
    )
    breadcrumb_budget: int = option(
        DEFAULT_BREADCRUMB_BUDGET,
        help="Longest breadcrumb (`A > B > C`, stored in `breadcrumb` and at the top of "
        "`embed_text`), UTF-8 bytes; a longer one loses its leading parts "
        "(`… > B > C`). Both chunkers.",
        check=_breadcrumb_budget,
        metavar="BYTES",
    )

    def __post_init__(self) -> None:
        problems = self.problems()
        if problems:
            raise ValueError("; ".join(problems))

    def problems(self) -> list[str]:
        """Every declared option's check, in declaration order (subclasses' too)."""
        found: list[str] = []
        for name, _, info in options_of(type(self)):
            if info.check is not None:
                problem = info.check(getattr(self, name), self)
                if problem:
                    found.append(problem)
        return found

    def with_options(self, **options: Any) -> Self:
        """These options with the given fields changed (None means keep), as the
        CLI changes them: a chunk size given without a minimum or an overlap
        that the old ones would no longer fit (500 against the default minimum
        of 1000) scales them, to half the chunk size and a tenth of it."""
        changes = {name: value for name, value in options.items() if value is not None}
        size = changes.get("chunk_size")
        if isinstance(size, int) and size >= 1:
            if "min_chunk_size" not in changes and self.min_chunk_size > size:
                changes["min_chunk_size"] = max(1, size // 2)
            if "chunk_overlap" not in changes and self.chunk_overlap >= size:
                changes["chunk_overlap"] = size // 10
        return replace(self, **changes)

    def reads(self, name: str) -> bool:
        """Whether the chosen chunker reads option `name` (a recipe's fingerprint
        leaves out the options only other chunkers read)."""
        for option_name, _, info in options_of(type(self)):
            if option_name == name:
                return not info.read_by or self.chunker in info.read_by
        raise KeyError(name)
