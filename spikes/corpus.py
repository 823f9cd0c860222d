"""Markdown documents under a path, decoded exactly as the flow decodes them.

A corpus root is a directory (every `.md`, `.markdown` and `.mdx` file below
it, any case, recursively) or a single file (read whatever its suffix). Like
the flow's walk, hidden files and folders and `node_modules` are skipped;
unlike it, symlinked folders are not followed (no loops to guard against).
Documents come in a fixed order (their POSIX paths relative to the root,
sorted), so every run sees the same sequence.

Text is what the flow stores: a file with a NUL byte is refused (binary), else
`heading_index.decode_document(bytes)`: strict UTF-8, one leading BOM
removed. A file that cannot be read or decoded is skipped with a message on
stderr naming it and the cause; the others are still measured.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path, PurePosixPath

from mdchunks.heading_index import DocumentDecodeError, decode_document

MARKDOWN_SUFFIXES: frozenset[str] = frozenset({".md", ".markdown", ".mdx"})
EXCLUDED_DIRS: frozenset[str] = frozenset({"node_modules"})  # and every hidden one


@dataclass(frozen=True, slots=True)
class Document:
    path: str  # the root as given, joined with rel_path (POSIX); names it in reports
    rel_path: str  # POSIX path relative to the root ("" parts never)
    text: str


@dataclass(frozen=True, slots=True)
class SkippedFile:
    path: str
    reason: str


@dataclass(frozen=True, slots=True)
class Corpus:
    root: str  # as given on the command line, POSIX separators
    documents: tuple[Document, ...]
    skipped: tuple[SkippedFile, ...]


def _warn_on_stderr(message: str) -> None:
    print(message, file=sys.stderr)


class BinaryDocument(ValueError):
    """The document holds a NUL byte: the flow refuses it, so the harness does too."""


def _hidden(name: str) -> bool:
    return name.startswith(".")


def _document_text(data: bytes) -> str:
    """The flow's rule (flow.documents.document_text): no NUL bytes, then decode_document."""
    nul = data.find(b"\x00")
    if nul >= 0:
        raise BinaryDocument(f"binary content: NUL byte at byte offset {nul}")
    return decode_document(data)


def _markdown_files(root: Path) -> list[PurePosixPath]:
    found: list[PurePosixPath] = []
    for directory, subdirectories, files in os.walk(root):  # followlinks=False
        subdirectories[:] = sorted(
            name for name in subdirectories if not _hidden(name) and name not in EXCLUDED_DIRS
        )
        base = PurePosixPath(Path(directory).relative_to(root).as_posix())
        found.extend(
            base / name
            for name in files
            if not _hidden(name) and PurePosixPath(name).suffix.lower() in MARKDOWN_SUFFIXES
        )
    return sorted(found, key=str)


def read_corpus(root: Path, warn: Callable[[str], None] = _warn_on_stderr) -> Corpus:
    """Every markdown document under `root` (or `root` itself, if a file)."""
    root_name = root.as_posix()
    if root.is_file():
        files = [(root, PurePosixPath(root.name), root_name)]
    elif root.is_dir():
        files = [
            (root / rel, rel, (PurePosixPath(root_name) / rel).as_posix())
            for rel in _markdown_files(root)
        ]
    else:
        raise FileNotFoundError(f"no such file or directory: {root_name}")

    documents: list[Document] = []
    skipped: list[SkippedFile] = []
    for file, rel, display in files:
        try:
            text = _document_text(file.read_bytes())
        except (OSError, DocumentDecodeError, BinaryDocument) as exc:
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else str(exc)
            skipped.append(SkippedFile(display, reason))
            warn(f"skipped {display}: {reason}")
            continue
        documents.append(Document(display, rel.as_posix(), text))
    return Corpus(root_name, tuple(documents), tuple(skipped))
