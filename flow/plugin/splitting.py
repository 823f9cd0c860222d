"""cocoindex's splitter, never handed a markdown text that would abort the process.

`RecursiveSplitter(language="markdown")` aborts (SIGABRT, no exception) on a
text whose blocks nest 255 deep (mdchunks.heading_index.nesting has the
measurements). `GuardedSplitter` measures the nesting first, from our own
parse when the line prefixes could nest that deep, and splits such a text as
plain text (`language=None`) instead: its chunks keep the heading columns our
index gives them, only their boundaries ignore markdown syntax. Both chunkers
go through it: the recursive chunker for whole documents, the structure
chunker for oversized sections.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

from cocoindex.ops.text import RecursiveSplitter
from mdchunks.heading_index.nesting import SAFE_NESTING, markdown_split_is_safe


class GuardedSplitter:
    """`RecursiveSplitter.split`, with markdown downgraded to plain text past SAFE_NESTING."""

    def __init__(self, inner: RecursiveSplitter, *, max_nesting: int = SAFE_NESTING) -> None:
        self._inner = inner
        self._max_nesting = max_nesting

    def split(
        self,
        text: str,
        chunk_size: int,
        *,
        min_chunk_size: int | None = None,
        chunk_overlap: int | None = None,
        language: str | None = None,
    ) -> Sequence[Any]:
        if language == "markdown" and not markdown_split_is_safe(text, self._max_nesting):
            language = None
        return self._inner.split(
            text,
            chunk_size,
            min_chunk_size=min_chunk_size,
            chunk_overlap=chunk_overlap,
            language=language,
        )
