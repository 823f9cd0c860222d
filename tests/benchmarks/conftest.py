"""The benchmarks' tests run on tiny stand-ins for the bundled corpora, so the
smoke run stays small (the real ones are in corpora/)."""

from __future__ import annotations

from pathlib import Path

import pytest

from benchmarks import corpora

REPO = Path(__file__).resolve().parents[2]


@pytest.fixture(autouse=True)
def tiny_corpora(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """Stand-ins for the bundled corpora (the defaults of `--rust-book` and
    `--tldr`): the sample's markdown as "rust-book", a few small pages as "tldr"."""
    root = tmp_path / "corpora"
    book = root / "rust-book"
    for path in sorted((REPO / "sample").rglob("*.md")):
        target = book / path.relative_to(REPO / "sample")
        target.parent.mkdir(parents=True, exist_ok=True)
        target.write_bytes(path.read_bytes())
    pages = root / "tldr"
    pages.mkdir(parents=True)
    for k in range(60):  # about 20 KB: the index stage rounds sizes to 10 KB
        examples = "".join(f"- Run it, way {j}:\n\n`tool{k} --way {j}`\n\n" for j in range(4))
        (pages / f"tool{k}.md").write_text(
            f"# tool{k}\n\n> Does thing {k}.\n\n{examples}", encoding="utf-8"
        )
    monkeypatch.setattr(corpora, "RUST_BOOK", book)
    monkeypatch.setattr(corpora, "TLDR", pages)
    return root
