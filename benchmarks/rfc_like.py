"""`python -m benchmarks.rfc_like OUT [--megabytes N]`: a corpus shaped like the
IETF's RFCs, for `python -m benchmarks.disk --corpus OUT`.

There is no RFC corpus here (no network), so this writes one of the same
shape: plain-text `.txt` documents of 20-600 KB (most RFCs are 20-150 KB, a
few are much longer), 72-column lines indented three spaces, numbered
section titles ("3.2.  Title", not markdown headings), a table of contents
of dotted leaders, indented figures, and pages of 56 lines, each ending in
a footer and a form feed, then the next page's running header. The prose is
English technical text that every CPython ships (no download, no licence
question beyond the PSF's): the reference manual's topics
(`pydoc_data.topics`) and the docstrings of the standard library's modules,
cut into paragraphs and dealt out by a seeded generator, so the corpus is
the same on every run of one Python version.
"""

from __future__ import annotations

import argparse
import ast
import random
import sys
import sysconfig
import textwrap
from collections.abc import Iterator, Sequence
from pathlib import Path

PAGE_LINES = 56
WIDTH = 72
SEED = 9110


def paragraphs() -> list[str]:
    """Paragraphs of English prose: the reference manual's topics, then the
    standard library's docstrings, each one line of words."""
    import pydoc_data.topics

    texts: list[str] = list(pydoc_data.topics.topics.values())
    stdlib = Path(sysconfig.get_paths()["stdlib"])
    for path in sorted(stdlib.rglob("*.py")):
        if "test" in path.parts or "site-packages" in path.parts:
            continue
        try:
            tree = ast.parse(path.read_text(encoding="utf-8"))
        except (SyntaxError, UnicodeDecodeError, OSError):
            continue
        for node in ast.walk(tree):
            if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef):
                doc = ast.get_docstring(node)
                if doc:
                    texts.append(doc)
    found: list[str] = []
    for text in texts:
        for block in text.split("\n\n"):
            words = block.split()
            # Prose, not a code sample or a one-word line.
            if len(words) >= 12 and not block.lstrip().startswith((">>>", "$", "...")):
                found.append(" ".join(words))
    return found


def _figure(rng: random.Random) -> list[str]:
    """An ASCII-art figure: a message diagram, as RFCs draw them."""
    names = rng.sample(["Client", "Proxy", "Server", "Cache", "Origin", "Agent"], 2)
    lines = [f"     {names[0]:<20}{'':>24}{names[1]}", f"       |{'':>40}|"]
    for step in range(rng.randint(2, 6)):
        label = rng.choice(["request", "response", "ack", "update", "query"])
        arrow = f"--- {label} {step} " + "-" * (30 - len(label)) + ">"
        lines.append(f"       |{arrow:<40}|" if step % 2 == 0 else f"       |<{arrow[1:-1]}|")
    lines += [f"       |{'':>40}|", "", f"                     Figure {rng.randint(1, 40)}"]
    return lines


def _document(number: int, size: int, prose: Sequence[str], rng: random.Random) -> str:
    title = " ".join(rng.choice(prose).split()[:5]).strip(".,:;").title()
    sections: list[tuple[str, list[str]]] = []
    body_lines = 0
    major = 0
    while body_lines * 70 < size:
        major += 1
        for minor in range(rng.randint(0, 4) + 1):
            number_text = f"{major}." if minor == 0 else f"{major}.{minor}."
            heading = " ".join(rng.choice(prose).split()[: rng.randint(2, 6)]).strip(".,:;")
            lines: list[str] = []
            for _ in range(rng.randint(2, 8)):
                if rng.random() < 0.08:
                    lines += _figure(rng)
                else:
                    lines += textwrap.wrap(
                        rng.choice(prose), WIDTH - 3, initial_indent="   ", subsequent_indent="   "
                    )
                lines.append("")
            sections.append((f"{number_text}  {heading.capitalize()}", lines))
            body_lines += len(lines) + 2
    contents = ["Table of Contents", ""]
    for page, (heading, _) in enumerate(sections, start=2):
        dots = " ." * ((WIDTH - len(heading) - 12) // 2)
        indent = "   " if heading.split(".")[1].strip() == "" else "     "
        contents.append(f"{indent}{heading}{dots}{page // 3 + 2:>5}")
    front = [
        f"Internet Engineering Task Force (IETF){'A. Author, Ed.':>34}",
        f"Request for Comments: {number}{'Example Org':>{WIDTH - 22 - len(str(number))}}",
        f"Category: Standards Track{'June 2026':>{WIDTH - 25}}",
        "ISSN: 2070-1721",
        "",
        "",
        title.center(WIDTH).rstrip(),
        "",
        "Abstract",
        "",
        *textwrap.wrap(rng.choice(prose), WIDTH - 3, initial_indent="   ", subsequent_indent="   "),
        "",
        *contents,
        "",
    ]
    lines = front + [line for heading, body in sections for line in ("", heading, "", *body)]
    return "".join(_paginate(lines, number, title))


def _paginate(lines: list[str], number: int, title: str) -> Iterator[str]:
    """Pages of PAGE_LINES lines: a running header, the text, a footer, a form feed."""
    page = 1
    for start in range(0, len(lines), PAGE_LINES - 6):
        if page > 1:
            head = f"RFC {number}"
            yield f"{head}{title[:40]:^{WIDTH - len(head) - 9}}June 2026\n\n"
        for line in lines[start : start + PAGE_LINES - 6]:
            yield line + "\n"
        footer = f"[Page {page}]"
        yield f"\nAuthor, et al.{'Standards Track':^{WIDTH - 14 - len(footer)}}{footer}\n\f\n"
        page += 1


def write_corpus(root: Path, megabytes: float) -> int:
    """RFC-like documents under `root` up to `megabytes` (10^6 bytes) in all;
    returns the bytes written."""
    rng = random.Random(SEED)
    prose = paragraphs()
    root.mkdir(parents=True, exist_ok=True)
    total, number = 0, 8000
    while total < megabytes * 1e6:
        # Most RFCs are short; a few are very long.
        size = int(min(600_000, max(20_000, rng.lognormvariate(11.2, 0.8))))
        text = _document(number, size, prose, rng)
        (root / f"rfc{number}.txt").write_text(text, encoding="utf-8")
        total += len(text.encode("utf-8"))
        number += 1
    return total


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.rfc_like", description=__doc__)
    parser.add_argument("out", type=Path, help="the folder to write the documents into")
    parser.add_argument("--megabytes", type=float, default=40.0)
    args = parser.parse_args(argv)
    written = write_corpus(args.out, args.megabytes)
    count = len(list(args.out.glob("*.txt")))
    print(f"{count} RFC-like documents, {written / 1e6:.1f} MB, in {args.out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
