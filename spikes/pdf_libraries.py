"""Which PDF library tells the headings a page shows (issue 39): the same
detector (mdchunks.importers.pdf_layout) fed by each candidate's text
pieces with their positions, sizes and fonts, scored against docling's
ground truth, with the seconds each takes to hand them over.

`python -m spikes.pdf_libraries DOCLING_TESTS_DATA` in a Python that has the
candidates (a spike-only venv: `pip install pypdf pdfminer.six pypdfium2`;
the product uses pypdf alone). Per library: headings matched (recall,
precision) over docling's PDFs, and seconds over all of them (best of 3).
A candidate that is not installed is left out.
"""

from __future__ import annotations

import argparse
import io
import re
import time
from collections.abc import Callable
from pathlib import Path

from mdchunks.importers import pdf_layout as layout

from spikes.docling_yardstick import _norm, match

Pages = list[layout.Page]


def pypdf_pages(data: bytes) -> Pages:
    from mdchunks.importers.pdf import _fonts_of, _Visitor
    from pypdf import PdfReader

    pages: Pages = []
    for page in PdfReader(io.BytesIO(data)).pages:
        pieces: list[layout.Piece] = []
        visitor = _Visitor(_fonts_of(page), pieces)
        page.extract_text(
            visitor_text=visitor.text,
            visitor_operand_before=visitor.before,
            visitor_operand_after=visitor.after,
        )
        box = page.mediabox
        pages.append(layout.Page(layout.lines_of(pieces), float(box.top), float(box.bottom)))
    return pages


def pdfminer_pages(data: bytes) -> Pages:
    from pdfminer.high_level import extract_pages
    from pdfminer.layout import LTChar, LTTextContainer, LTTextLine

    pages: Pages = []
    for page in extract_pages(io.BytesIO(data)):
        pieces: list[layout.Piece] = []
        for element in page:
            if not isinstance(element, LTTextContainer):
                continue
            for line in element:
                if not isinstance(line, LTTextLine):
                    continue
                chars = [c for c in line if isinstance(c, LTChar)]
                if not chars:
                    continue
                styles = [layout.style_of(c.fontname) for c in chars]
                pieces.append(
                    layout.Piece(
                        line.get_text().strip(),
                        line.x0,
                        chars[0].y0,
                        round(max(c.size for c in chars), 1),
                        all(s.bold for s in styles),
                        all(s.italic for s in styles),
                        any(s.mono for s in styles),
                    )
                )
        pages.append(layout.Page(layout.lines_of(pieces), page.y1, page.y0))
    return pages


def pypdfium2_pages(data: bytes) -> Pages:
    import ctypes

    import pypdfium2 as pdfium
    import pypdfium2.raw as raw

    pages: Pages = []
    document = pdfium.PdfDocument(data)
    buffer = ctypes.create_string_buffer(256)
    flags = ctypes.c_int()
    for page in document:
        text = page.get_textpage()
        pieces: list[layout.Piece] = []
        for index in range(text.count_chars()):
            char = chr(raw.FPDFText_GetUnicode(text, index))
            left, right, bottom, top = (ctypes.c_double() for _ in range(4))
            raw.FPDFText_GetCharBox(text, index, left, right, bottom, top)
            size = raw.FPDFText_GetFontSize(text, index)
            raw.FPDFText_GetFontInfo(text, index, buffer, 256, flags)
            weight = raw.FPDFText_GetFontWeight(text, index)
            style = layout.style_of(buffer.value.decode("latin-1"), weight, flags.value)
            pieces.append(
                layout.Piece(
                    char,
                    left.value,
                    bottom.value,
                    round(size, 1),
                    style.bold,
                    style.italic,
                    style.mono,
                )
            )
        _, bottom_edge, _, top_edge = page.get_bbox()
        pages.append(layout.Page(layout.lines_of(pieces), top_edge, bottom_edge))
    return pages


CANDIDATES: dict[str, tuple[str, Callable[[bytes], Pages]]] = {
    "pypdf": ("BSD-3-Clause", pypdf_pages),
    "pdfminer.six": ("MIT", pdfminer_pages),
    "pypdfium2": ("Apache-2.0 or BSD-3-Clause (PDFium: BSD-3-Clause)", pypdfium2_pages),
}


def _truth(path: Path) -> list[tuple[int, str]]:
    text = path.read_text(encoding="utf-8")
    return [(1, _norm(m.group(1))) for m in re.finditer(r"(?m)^#{1,6} (.+)$", text)]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("data", type=Path, help="docling's tests/data folder")
    args = parser.parse_args()
    sources = sorted((args.data / "pdf" / "sources").glob("*.pdf"))
    print("| library | licence | headings matched | recall | precision | seconds |")
    print("|---|---|---|---|---|---|")
    for name, (licence, read) in CANDIDATES.items():
        try:
            read(sources[0].read_bytes())
        except ImportError:
            continue
        matched = wanted = shown = 0
        seconds = 0.0
        for source in sources:
            truth = args.data / "pdf" / "groundtruth" / f"{source.stem}.md"
            if not truth.exists():
                continue
            data = source.read_bytes()
            best = float("inf")
            for _ in range(3):
                started = time.perf_counter()
                pages = read(data)
                best = min(best, time.perf_counter() - started)
            seconds += best
            ours = [(f.level, _norm(f.text)) for f in layout.headings(pages)]
            gt = _truth(truth)
            matched += len(match(ours, gt))
            wanted += len(gt)
            shown += len(ours)
        print(
            f"| {name} | {licence} | {matched}/{wanted} | {matched / max(wanted, 1):.2f} "
            f"| {matched / max(shown, 1):.2f} | {seconds:.2f} |"
        )


if __name__ == "__main__":
    main()
