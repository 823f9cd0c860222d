"""The registry of importers: the one list the plugin face, the managed
source, the tests and the benchmark loop over. A new format is one module
with an `IMPORTER` (mdchunks.importers.base.Importer) and one line here.
"""

from __future__ import annotations

from pathlib import PurePosixPath

from mdchunks.importers import docx, html, pdf
from mdchunks.importers.base import Importer

IMPORTERS: dict[str, Importer] = {
    importer.name: importer
    for importer in (
        html.IMPORTER,
        docx.IMPORTER,
        pdf.IMPORTER,
    )
}

_BY_SUFFIX: dict[str, Importer] = {
    suffix: importer for importer in IMPORTERS.values() for suffix in importer.suffixes
}


def importer_for(name: str) -> Importer | None:
    """The importer of a file name or suffix (case-insensitive), or None."""
    suffix = name.lower() if name.startswith(".") else PurePosixPath(name).suffix.lower()
    return _BY_SUFFIX.get(suffix)


def importer_versions() -> dict[str, str]:
    """Each importer's version: what a memo sees of the importers' logic."""
    return {importer.name: importer.version for importer in IMPORTERS.values()}


def available_suffixes() -> tuple[str, ...]:
    """The suffixes of the importers whose libraries are installed."""
    return tuple(
        suffix
        for importer in IMPORTERS.values()
        if importer.available()
        for suffix in importer.suffixes
    )


def installable_suffixes() -> tuple[str, ...]:
    """The suffixes an importer would take once its extra is installed."""
    return tuple(
        suffix
        for importer in IMPORTERS.values()
        if not importer.available()
        for suffix in importer.suffixes
    )
