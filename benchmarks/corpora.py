"""The corpora the stages run on, written into the run's work folder.

Two real corpora are read from folders, by default the ones bundled in the
repository (`corpora/README.md`: the whole rust-book, 600 tldr pages), or any
folder given (`python -m benchmarks --rust-book DIR --tldr DIR`). They are
copied, so a stage may edit a file. Generated ones are deterministic
functions of them:

- `many_files`: N small documents (tldr pages, each made unique by a last
  line naming its copy), 500 per folder;
- `big_document`: rust-book chapters joined, repeated up to a size in MB;
- `book_copies`: k copies of the rust-book side by side (cost growth);
- `long_documents`: documents of 40-160 KB (runs of consecutive rust-book
  chapters under a title of their own) up to a total size (the peer stage).

Every corpus is described by a `Corpus`: its root, documents and bytes.
"""

from __future__ import annotations

import shutil
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

BUNDLED = Path(__file__).resolve().parents[1] / "corpora"
RUST_BOOK = BUNDLED / "rust-book"
TLDR = BUNDLED / "tldr"
FILES_PER_FOLDER = 500


@dataclass(frozen=True, slots=True)
class Sources:
    """The folders of the real corpora a run reads."""

    rust_book: Path = RUST_BOOK
    tldr: Path = TLDR


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


def source_files(source: Path, limit: int | None = None) -> list[Path]:
    """The markdown files of a corpus folder (its first `limit`, sorted)."""
    files = markdown_files(source) if source.is_dir() else []
    if not files:
        raise FileNotFoundError(f"no markdown files in the corpus folder {source}")
    return files if limit is None else files[:limit]


def copy_corpus(name: str, source: Path, destination: Path, limit: int | None = None) -> Corpus:
    """A writable copy of a corpus folder (its first `limit` files, sorted)."""
    for path in source_files(source, limit):
        target = destination / path.relative_to(source)
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(path, target)
    return describe(name if limit is None else f"{name}[:{limit}]", destination)


def many_files(destination: Path, count: int, tldr: Path = TLDR) -> Corpus:
    """`count` small markdown documents made of tldr pages, all distinct."""
    pages = [(path.stem, path.read_bytes()) for path in source_files(tldr)]
    for k in range(count):
        stem, data = pages[k % len(pages)]
        folder = destination / f"part{k // FILES_PER_FOLDER:03d}"
        if k % FILES_PER_FOLDER == 0:
            folder.mkdir(parents=True, exist_ok=True)
        suffix = f"\n> generated copy {k} of {stem}\n".encode()
        (folder / f"{k:05d}-{stem}.md").write_bytes(data + suffix)
    return describe(f"generated {count:,} files", destination)


def big_text(megabytes: int, rust_book: Path = RUST_BOOK) -> str:
    """Rust-book chapters joined, repeated until the text holds `megabytes` MB."""
    book = "\n\n".join(path.read_text(encoding="utf-8") for path in source_files(rust_book))
    book_bytes = len(book.encode("utf-8"))
    copies = -(-megabytes * 1_000_000 // book_bytes)  # ceiling
    return "\n\n".join([book] * copies)


def big_document(destination: Path, megabytes: int, rust_book: Path = RUST_BOOK) -> Corpus:
    """One generated document of about `megabytes` MB, alone in its folder."""
    destination.mkdir(parents=True, exist_ok=True)
    text = big_text(megabytes, rust_book)
    (destination / f"big-{megabytes}mb.md").write_text(text, encoding="utf-8")
    return describe(f"one {megabytes} MB document", destination)


def book_copies(
    destination: Path, copies: int, limit: int | None = None, rust_book: Path = RUST_BOOK
) -> Corpus:
    """`copies` copies of the rust-book (its first `limit` files) in sibling folders."""
    for copy in range(copies):
        copy_corpus("rust-book", rust_book, destination / f"copy{copy:02d}", limit)
    return describe(f"rust-book x{copies}", destination)


def edit_targets(corpus: Corpus, count: int) -> Iterator[Path]:
    """`count` documents to edit, one each, spread over the corpus."""
    files = markdown_files(corpus.root)
    step = max(1, len(files) // (count + 1))
    for k in range(count):
        yield files[min(len(files) - 1, (k + 1) * step)]


def long_documents(destination: Path, megabytes: float, rust_book: Path = RUST_BOOK) -> Corpus:
    """Long documents, about `megabytes` MB in all: each a run of consecutive
    rust-book chapters (a different run each) under a title of its own, sized
    40-160 KB in a fixed cycle, 100 per folder."""
    chapters = [path.read_text(encoding="utf-8") for path in source_files(rust_book)]
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
