"""Writes the stored samples of this folder (see NOTICE): one rust-book
chapter as a web page (HTML with a site's chrome), a DOCX and a PDF with an
outline, through spikes/format_documents.py. Run from the repository root:
`.venv/bin/python tests/importers/data/make_samples.py`."""

from __future__ import annotations

from pathlib import Path

from spikes.format_documents import docx_of, html_of, pdf_of, spec_from_markdown

HERE = Path(__file__).resolve().parent
CHAPTER = HERE.parents[2] / "corpora" / "rust-book" / "ch03-02-data-types.md"


def main() -> None:
    spec = spec_from_markdown("Data Types", CHAPTER.read_text())
    (HERE / "data-types.html").write_bytes(html_of(spec))
    (HERE / "data-types.docx").write_bytes(docx_of(spec))
    (HERE / "data-types.pdf").write_bytes(pdf_of(spec))


if __name__ == "__main__":
    main()
