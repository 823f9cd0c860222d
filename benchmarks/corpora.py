"""The corpora the stages run on, written into the run's work folder.

Shared corpora (`../shared/corpora`, read-only) are copied, so a stage may
edit a file. Generated ones are deterministic functions of them:

- `many_files`: N small documents (tldr pages, each made unique by a last
  line naming its copy), 500 per folder;
- `big_document`: rust-book chapters joined, repeated up to a size in MB;
- `book_copies`: k copies of the rust-book side by side (cost growth);
- `long_documents`: documents of 40-160 KB (runs of consecutive rust-book
  chapters under a title of their own) up to a total size (the peer stage).

`MDCHUNKS_SHARED_CORPORA` points elsewhere than `../shared/corpora`.
Every corpus is described by a `Corpus`: its root, documents and bytes.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

SHARED_CORPORA = Path(
    os.environ.get("MDCHUNKS_SHARED_CORPORA")
    or Path(__file__).resolve().parents[2] / "shared" / "corpora"
)
FILES_PER_FOLDER = 500


@dataclass(frozen=True, slots=True)
class Corpus:
    name: str
    root: Path  # a folder (or, for one document, the folder holding only it)
    documents: int
    bytes: int

    @property
    def megabytes(self) -> float:
        return self.bytes / 1e6

    def label(self) -> str:
        return f"{self.name} ({self.documents:,} docs, {self.megabytes:.1f} MB)"


def markdown_files(root: Path) -> list[Path]:
    """Every `.md` file under `root`, sorted (the corpora hold no other kind)."""
    return sorted(path for path in root.rglob("*.md") if path.is_file())


def describe(name: str, root: Path) -> Corpus:
    files = markdown_files(root)
    return Corpus(name, root, len(files), sum(path.stat().st_size for path in files))


def shared_files(name: str, limit: int | None = None) -> list[Path]:
    source = SHARED_CORPORA / name
    if not source.is_dir():
        raise FileNotFoundError(f"no shared corpus {name!r} at {source}")
    files = markdown_files(source)
    return files if limit is None else files[:limit]


def copy_shared(name: str, destination: Path, limit: int | None = None) -> Corpus:
    """A writable copy of a shared corpus (its first `limit` files, sorted)."""
    source = SHARED_CORPORA / name
    for path in shared_files(name, limit):
        target = destination / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return describe(name if limit is None else f"{name}[:{limit}]", destination)


def many_files(destination: Path, count: int) -> Corpus:
    """`count` small markdown documents made of tldr pages, all distinct."""
    pages = [(path.stem, path.read_bytes()) for path in shared_files("tldr")]
    for k in range(count):
        stem, data = pages[k % len(pages)]
        folder = destination / f"part{k // FILES_PER_FOLDER:03d}"
        if k % FILES_PER_FOLDER == 0:
            folder.mkdir(parents=True, exist_ok=True)
        suffix = f"\n> generated copy {k} of {stem}\n".encode()
        (folder / f"{k:05d}-{stem}.md").write_bytes(data + suffix)
    return describe(f"generated {count:,} files", destination)


def big_text(megabytes: int) -> str:
    """Rust-book chapters joined, repeated until the text holds `megabytes` MB."""
    book = "\n\n".join(path.read_text(encoding="utf-8") for path in shared_files("rust-book"))
    book_bytes = len(book.encode("utf-8"))
    copies = -(-megabytes * 1_000_000 // book_bytes)  # ceiling
    return "\n\n".join([book] * copies)


def big_document(destination: Path, megabytes: int) -> Corpus:
    """One generated document of about `megabytes` MB, alone in its folder."""
    destination.mkdir(parents=True, exist_ok=True)
    (destination / f"big-{megabytes}mb.md").write_text(big_text(megabytes), encoding="utf-8")
    return describe(f"one {megabytes} MB document", destination)


def book_copies(destination: Path, copies: int, limit: int | None = None) -> Corpus:
    """`copies` copies of the rust-book (its first `limit` files) in sibling folders."""
    for copy in range(copies):
        copy_shared("rust-book", destination / f"copy{copy:02d}", limit)
    return describe(f"rust-book x{copies}", destination)


def edit_targets(corpus: Corpus, count: int) -> Iterator[Path]:
    """`count` documents to edit, one each, spread over the corpus."""
    files = markdown_files(corpus.root)
    step = max(1, len(files) // (count + 1))
    for k in range(count):
        yield files[min(len(files) - 1, (k + 1) * step)]


def long_documents(destination: Path, megabytes: float) -> Corpus:
    """Long documents, about `megabytes` MB in all: each a run of consecutive
    rust-book chapters (a different run each) under a title of its own, sized
    40-160 KB in a fixed cycle, 100 per folder."""
    chapters = [path.read_text(encoding="utf-8") for path in shared_files("rust-book")]
    wanted = int(megabytes * 1_000_000)
    written = next_chapter = k = 0
    while written < wanted:
        size = min(40_000 + (k * 37_000) % 120_000, max(wanted - written, 1))
        parts: list[str] = []
        length = 0
        while length < size:
            part = chapters[next_chapter % len(chapters)]
            parts.append(part)
            length += len(part)
            next_chapter += 1
        text = f"# Design document {k}\n\n" + "\n\n".join(parts) + f"\n\n> document {k}\n"
        folder = destination / f"part{k // 100:02d}"
        folder.mkdir(parents=True, exist_ok=True)
        data = text.encode("utf-8")
        (folder / f"doc-{k:04d}.md").write_bytes(data)
        written += len(data)
        k += 1
    return describe("long documents", destination)
