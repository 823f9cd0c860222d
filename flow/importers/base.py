"""What an importer is, and what it returns (docs/importers.md)."""

from __future__ import annotations

import importlib.util
from collections.abc import Callable
from dataclasses import dataclass

# The optional dependency group that holds the parsing libraries.
EXTRA = "formats"
INSTALL_HINT = f"pip install 'mdchunks[{EXTRA}]'"


class ConversionFailed(Exception):
    """The file cannot be converted; the message says why, in one line."""


@dataclass(frozen=True, slots=True)
class Converted:
    """A document converted to markdown: `text` is the document from here on
    (offsets, lines and chunk text refer to it)."""

    text: str
    headings: int  # headings written (the document's own structure, recovered)
    note: str | None = None  # what the summary should say about it (a PDF without outline)


@dataclass(frozen=True, slots=True)
class Importer:
    """One format. `version` is part of the recipe the memo sees: bump it when
    the markdown a file converts to changes, and only files of this format are
    processed again."""

    name: str
    version: str
    suffixes: tuple[str, ...]  # lower case, with the dot
    libraries: tuple[str, ...]  # import names of the extra's libraries it needs
    convert: Callable[[bytes], Converted]

    def available(self) -> bool:
        """Whether its libraries are installed (looked up, not imported)."""
        return all(importlib.util.find_spec(name) is not None for name in self.libraries)


def library_missing(importer_name: str) -> ConversionFailed:
    return ConversionFailed(
        f"the {importer_name} importer needs the {EXTRA} extra ({INSTALL_HINT})"
    )
