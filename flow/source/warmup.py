"""Imported by the fork server of the bounded children (flow/source/bounded.py):
one tiny document of each kind is read, converted and chunked once there, so
that every child forked from it starts warm. A child is forked per converted
file, and a cold one paid its parsers' first-call work each time (compiled
patterns, lazily built tables): an HTML page of 1.5 KB took 60 ms more than
in a warm process. A warm-up that fails costs nothing but the warmth. Its
objects are then frozen out of the cyclic collector (`gc.freeze`, as a
forking server does), which no child's collection walks."""

from __future__ import annotations

import gc
import io

from mdchunks.plugin.recipe import Recipe
from mdchunks.source.app import _read_chunk_and_hash


def _docx() -> bytes:
    import docx

    buffer = io.BytesIO()
    document = docx.Document()
    document.add_heading("a", level=1)
    document.add_paragraph("b")
    document.save(buffer)
    return buffer.getvalue()


def _pdf() -> bytes:
    from pypdf import PdfWriter

    writer = PdfWriter()
    writer.add_blank_page(72, 72)
    buffer = io.BytesIO()
    writer.write(buffer)
    return buffer.getvalue()


def warm_up() -> None:
    samples = {
        "warm.md": lambda: b"# a\n\nb\n\n| c |\n|---|\n| d |\n",
        # An entity too: Beautiful Soup builds its entity tables at the first one.
        "warm.html": lambda: (
            b"<html><body><h1>a</h1><p>b &amp; &nbsp;</p><ul><li>c</li></ul></body></html>"
        ),
        "warm.docx": _docx,
        "warm.pdf": _pdf,
    }
    for name, sample in samples.items():
        try:
            _read_chunk_and_hash(sample(), source="warm", rel_path=name, recipe=Recipe())
        except Exception:  # an importer's extra not installed, or any other miss
            continue


warm_up()
# What the server imported lives as long as it does: frozen out of the
# collector, so that a child's collections neither walk those objects nor
# touch (and so copy) their pages.
gc.collect()
gc.freeze()
