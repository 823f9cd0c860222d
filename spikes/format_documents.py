"""Documents of known structure in HTML, DOCX and PDF, for the importers'
tests and their measurement (`python -m spikes.formats`).

A `Spec` is a document as a list of blocks (headings, paragraphs, lists,
tables, code); each writer turns it into a file of its format with the
libraries a user's tools would use: HTML written by hand, DOCX by
python-docx (Heading 1-9 styles, list styles, a table), PDF by fpdf2 (each
heading an outline entry, `start_section`, its title then written on the
page). `expected_headings` says what an importer must recover: every heading
at its level (DOCX past 6 kept as 6) in order. `spec_from_markdown` reads a
markdown document into a spec (the stored samples are made from rust-book
chapters: tests/importers/data/NOTICE).
"""

from __future__ import annotations

import html
import io
from dataclasses import dataclass, field

from markdown_it import MarkdownIt


@dataclass(frozen=True, slots=True)
class Heading:
    level: int  # 1..9 (HTML and PDF writers take 1..6)
    text: str


@dataclass(frozen=True, slots=True)
class Paragraph:
    text: str


@dataclass(frozen=True, slots=True)
class ListBlock:
    ordered: bool
    items: tuple[tuple[int, str], ...]  # (depth, text)


@dataclass(frozen=True, slots=True)
class Table:
    rows: tuple[tuple[str, ...], ...]  # the first is the header


@dataclass(frozen=True, slots=True)
class Code:
    text: str
    language: str = ""


Block = Heading | Paragraph | ListBlock | Table | Code


@dataclass(frozen=True, slots=True)
class Spec:
    name: str
    blocks: tuple[Block, ...] = field(default_factory=tuple)

    def headings(self) -> list[Heading]:
        return [block for block in self.blocks if isinstance(block, Heading)]


def expected_headings(spec: Spec, fmt: str) -> list[tuple[int, str]]:
    """(level, text) an importer of `fmt` must recover, in order."""
    return [(min(h.level, 6), h.text) for h in spec.headings()]


def tender(deep: bool = False) -> Spec:
    """A tender's shape: numbered sections, a pricing table, lists, a code
    sample; `deep` adds headings at levels 4-9 (DOCX's Heading 7-9)."""
    blocks: list[Block] = [
        Heading(1, "Invitation to tender"),
        Paragraph("The contracting authority invites bids for the works described below."),
        Heading(2, "1. Scope of the works"),
        Paragraph("The works cover the renovation of the east wing, floors one to three."),
        ListBlock(
            False,
            (
                (0, "Demolition of partitions"),
                (1, "Asbestos survey first"),
                (0, "New electrical installation"),
            ),
        ),
        Heading(3, "1.1 Site access"),
        Paragraph("Access to the site is from Station Road between 7:00 and 18:00."),
        Heading(2, "2. Pricing schedule"),
        Paragraph("Bidders fill in the unit prices of the schedule."),
        Table(
            (
                ("Item", "Unit", "Quantity"),
                ("Partition removal", "m2", "420"),
                ("Cable tray", "m", "1,150"),
            )
        ),
        Heading(2, "3. Submission"),
        Paragraph("Bids are submitted through the portal before the deadline."),
        ListBlock(
            True,
            (
                (0, "Register on the portal"),
                (0, "Upload the signed forms"),
                (0, "Confirm the submission"),
            ),
        ),
        Heading(3, "3.1 File format"),
        Code('{"bid": "signed.pdf", "schedule": "prices.xlsx"}', "json"),
        Paragraph("Files over 20 MB are refused by the portal."),
    ]
    if deep:
        for level in range(4, 10):
            blocks.append(Heading(level, f"Clause {level - 3} at level {level}"))
            blocks.append(Paragraph(f"The text of clause {level - 3}, nested {level} deep."))
    blocks.append(Heading(2, "4. Award criteria"))
    blocks.append(Paragraph("Price weighs 60 percent and quality 40 percent."))
    return Spec("tender-deep" if deep else "tender", tuple(blocks))


# -- writers ------------------------------------------------------------------------------


def html_of(spec: Spec, *, chrome: bool = True) -> bytes:
    """A page as a site would serve it: navigation, a script, a footer around
    the `<main>` content when `chrome`."""
    out: list[str] = []
    for block in spec.blocks:
        if isinstance(block, Heading):
            level = min(block.level, 6)
            out.append(f"<h{level}>{html.escape(block.text)}</h{level}>")
        elif isinstance(block, Paragraph):
            out.append(f"<p>{html.escape(block.text)}</p>")
        elif isinstance(block, ListBlock):
            out.append(_html_list(block))
        elif isinstance(block, Table):
            head, *rows = block.rows
            cells = "".join(f"<th>{html.escape(c)}</th>" for c in head)
            body = "".join(
                "<tr>" + "".join(f"<td>{html.escape(c)}</td>" for c in row) + "</tr>"
                for row in rows
            )
            out.append(f"<table><thead><tr>{cells}</tr></thead><tbody>{body}</tbody></table>")
        else:
            cls = f' class="language-{block.language}"' if block.language else ""
            out.append(f"<pre><code{cls}>{html.escape(block.text)}</code></pre>")
    content = "\n".join(out)
    if not chrome:
        return f"<!doctype html><html><body>{content}</body></html>".encode()
    return (
        '<!doctype html><html><head><meta charset="utf-8"><title>'
        f"{html.escape(spec.name)}</title><style>h1{{color:red}}</style>"
        "<script>var tracking = 'Home > Tenders';</script></head><body>"
        '<nav><ul><li><a href="/">Home</a></li><li><a href="/t">Tenders</a></li></ul></nav>'
        f"<main>{content}</main>"
        "<footer><p>Copyright notice and cookie banner</p></footer></body></html>"
    ).encode()


def _html_list(block: ListBlock) -> str:
    """Nested as browsers nest them: a deeper list inside its parent's `<li>`."""
    tag = "ol" if block.ordered else "ul"
    out = [f"<{tag}>"]
    depth = 0
    for index, (item_depth, text) in enumerate(block.items):
        item_depth = min(item_depth, depth + 1) if index else 0
        if index:
            if item_depth > depth:
                out.append(f"<{tag}>")
            else:
                out.append("</li>")
                out.extend(f"</{tag}></li>" for _ in range(depth - item_depth))
        depth = item_depth
        out.append(f"<li>{html.escape(text)}")
    out.append("</li>")
    out.extend(f"</{tag}></li>" for _ in range(depth))
    out.append(f"</{tag}>")
    return "".join(out)


def docx_of(spec: Spec) -> bytes:
    import docx
    from docx.enum.style import WD_STYLE_TYPE

    document = docx.Document()
    code_style = document.styles.add_style("Code", WD_STYLE_TYPE.PARAGRAPH)
    code_style.font.name = "Courier New"
    for block in spec.blocks:
        if isinstance(block, Heading):
            document.add_heading(block.text, level=block.level)
        elif isinstance(block, Paragraph):
            document.add_paragraph(block.text)
        elif isinstance(block, ListBlock):
            base = "List Number" if block.ordered else "List Bullet"
            for depth, text in block.items:
                style = base if depth == 0 else f"{base} {min(depth + 1, 3)}"
                document.add_paragraph(text, style=style)
        elif isinstance(block, Table):
            table = document.add_table(rows=len(block.rows), cols=len(block.rows[0]))
            for r, row in enumerate(block.rows):
                for c, text in enumerate(row):
                    table.cell(r, c).text = text
        else:
            for line in block.text.split("\n"):
                document.add_paragraph(line, style="Code")
    out = io.BytesIO()
    document.save(out)
    return out.getvalue()


def pdf_of(spec: Spec, *, outline: bool = True, styled: bool = True) -> bytes:
    """The spec as a PDF: headings bold and larger by level (`styled`, else set
    like the body: a PDF whose pages show no heading), with an outline."""
    from fpdf import FPDF

    pdf = FPDF()
    pdf.set_auto_page_break(True, margin=15)
    pdf.add_page()
    pdf.set_font("helvetica", size=11)
    levels: list[int] = []
    for block in spec.blocks:
        if isinstance(block, Heading):
            # fpdf2's outline takes one level deeper than the one before at most.
            level = min(block.level - 1, (levels[-1] + 1) if levels else 0)
            levels.append(level)
            if outline:
                pdf.start_section(_latin1(block.text), level=level)
            if styled:
                pdf.set_font("helvetica", style="B", size=14 - min(level, 4))
            pdf.multi_cell(0, 7, _latin1(block.text), new_x="LMARGIN", new_y="NEXT")
            pdf.set_font("helvetica", size=11)
        elif isinstance(block, Paragraph):
            pdf.multi_cell(0, 6, _latin1(block.text), new_x="LMARGIN", new_y="NEXT")
        elif isinstance(block, ListBlock):
            for depth, text in block.items:
                marker = "-" if not block.ordered else "*"
                pdf.multi_cell(
                    0,
                    6,
                    "    " * depth + f"{marker} {_latin1(text)}",
                    new_x="LMARGIN",
                    new_y="NEXT",
                )
        elif isinstance(block, Table):
            for row in block.rows:
                pdf.multi_cell(0, 6, "   ".join(map(_latin1, row)), new_x="LMARGIN", new_y="NEXT")
        else:
            pdf.set_font("courier", size=10)
            pdf.multi_cell(0, 5, _latin1(block.text), new_x="LMARGIN", new_y="NEXT")
            pdf.set_font("helvetica", size=11)
        if styled:  # else no room between blocks either: nothing is set apart
            pdf.ln(2)
    return bytes(pdf.output())


def pdf_levels(spec: Spec) -> list[tuple[int, str]]:
    """The levels a PDF written by `pdf_of` has in its outline (a level may
    step down by one at most, as fpdf2 requires), as headings."""
    levels: list[int] = []
    out: list[tuple[int, str]] = []
    for h in spec.headings():
        level = min(h.level - 1, (levels[-1] + 1) if levels else 0)
        levels.append(level)
        out.append((min(level + 1, 6), h.text))
    return out


def _latin1(text: str) -> str:
    # fpdf2's core fonts are Latin-1; the samples' few other characters become "?"
    return text.encode("latin-1", "replace").decode("latin-1")


# -- markdown -> spec ---------------------------------------------------------------------


def spec_from_markdown(name: str, text: str) -> Spec:
    """A markdown document's blocks as a spec: headings, paragraphs (inline
    markup reduced to its text), lists with their depth, tables, code."""
    tokens = MarkdownIt("commonmark").enable("table").parse(text)
    blocks: list[Block] = []
    list_stack: list[bool] = []
    items: list[tuple[int, str]] = []
    rows: list[list[str]] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        kind = token.type
        if kind == "heading_open":
            blocks.append(Heading(int(token.tag[1]), _plain(tokens[i + 1])))
            i += 2
        elif kind in ("bullet_list_open", "ordered_list_open"):
            list_stack.append(kind == "ordered_list_open")
        elif kind in ("bullet_list_close", "ordered_list_close"):
            ordered = list_stack.pop()
            if not list_stack and items:
                blocks.append(ListBlock(ordered, tuple(items)))
                items = []
        elif kind == "inline" and list_stack:
            items.append((len(list_stack) - 1, _plain(token)))
        elif kind == "inline" and tokens[i - 1].type == "paragraph_open" and not rows:
            blocks.append(Paragraph(_plain(token)))
        elif kind == "tr_open":
            rows.append([])
        elif kind == "inline" and rows:
            rows[-1].append(_plain(token))
        elif kind == "table_close":
            blocks.append(Table(tuple(tuple(row) for row in rows)))
            rows = []
        elif kind in ("fence", "code_block"):
            blocks.append(Code(token.content.rstrip("\n"), token.info.split(" ")[0]))
        i += 1
    return Spec(name, tuple(blocks))


def _plain(token: object) -> str:
    children = getattr(token, "children", None) or []
    parts: list[str] = []
    for child in children:
        if child.type in ("text", "code_inline"):
            parts.append(child.content)
        elif child.type in ("softbreak", "hardbreak"):
            parts.append(" ")
    return " ".join("".join(parts).split())
