"""The registry of chunkers: the one list the flow, the harness and the
benchmarks loop over (docs/chunkers.md). A new chunker is one module with a
`CHUNKER` implementing `mdchunks.heading_index.chunk.Chunker`, and one line here.
"""

from __future__ import annotations

from mdchunks.heading_index import recursive, structure
from mdchunks.heading_index.chunk import Chunker

CHUNKERS: dict[str, Chunker] = {
    chunker.name: chunker
    for chunker in (
        recursive.CHUNKER,
        structure.CHUNKER,
    )
}


def get_chunker(name: str) -> Chunker:
    try:
        return CHUNKERS[name]
    except KeyError:
        raise ValueError(f"unknown chunker {name!r} (known: {', '.join(CHUNKERS)})") from None


def chunker_versions() -> dict[str, str]:
    """Each chunker's version (those that have one): part of what a host's memo
    sees of `split_markdown`, so new chunker code re-processes its documents."""
    return {c.name: c.version for c in CHUNKERS.values() if c.version is not None}
