"""Peak memory of one document, by shape, before beside after (issue 42).

    python -m benchmarks.memory_shapes [--base bdf4231] [--mb 0.5] [--shapes ...]

Each shape is a generated file of about `--mb` MB of text: heading-dense
markdown (`# a` lines), one huge line, a giant pipe table, deep nesting
(list items 32 levels deep, in block quotes), prose (rust-book chapters, the
reference), and two converted files (HTML sections; a DOCX of headings and
paragraphs, a few tens of KB on disk). Each file is read, converted,
chunked, hashed and encoded by the managed source's per-document work
(`mdchunks.source.app._read_chunk_and_hash`, what a run does in its own
process or in the bounded child) in a fresh process of its own, once with
this checkout's code and once with the base commit's (`git archive` of
`--base`, imported in this checkout's `.venv`), the two taking turns.
Printed per shape and checkout: the text's size (what a converted file
became), the peak resident memory above the process's own before the
document (the interpreter, the libraries, the file's bytes; the peak is
reset first, so none of the process's earlier ones counts), that peak as a
multiple of the text, and seconds. The contract's target: at most 30x for
every shape (docs/benchmarks.md).
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
import zipfile
from collections.abc import Callable, Sequence
from pathlib import Path

from benchmarks.document_cost import headings, one_line, prose, table

os.environ.setdefault("COCOINDEX_DISABLE_USAGE_TRACKING", "1")

REPO = Path(__file__).resolve().parents[1]
BASE = "bdf4231"


def nesting(size: int) -> str:
    lines = []
    total, i = 0, 0
    while total < size:
        line = "> " * 4 + "  " * (i % 32) + "- item\n"
        lines.append(line)
        total += len(line)
        i += 1
    return "# Nested\n\n" + "".join(lines)


def html_page(size: int) -> bytes:
    section = "<h2>Section {}</h2><p>" + "lorem ipsum dolor sit amet " * 8 + "</p>\n"
    count = size // len(section) + 1
    body = "".join(section.format(i) for i in range(count))
    return f"<html><body><main><h1>Page</h1>{body}</main></body></html>".encode()


def docx_file(size: int) -> bytes:
    """Headings and paragraphs, repeated: the copies compress away on disk."""
    heading = '<w:p><w:pPr><w:pStyle w:val="Heading2"/></w:pPr><w:r><w:t>Part</w:t></w:r></w:p>'
    paragraph = "<w:p><w:r><w:t>" + "lorem ipsum dolor sit amet " * 8 + "</w:t></w:r></w:p>"
    return repeated_docx(heading + paragraph, size // (len("## Part\n\n") + 8 * 27 + 2) + 1)


def repeated_docx(paragraph: str, count: int) -> bytes:
    """A DOCX whose body is `count` copies of `paragraph` (WordprocessingML):
    a few tens of KB on disk (the copies compress away), MBs of text once
    converted (also the tests' inflating DOCX)."""
    import docx

    template = io.BytesIO()
    docx.Document().save(template)
    out = io.BytesIO()
    with (
        zipfile.ZipFile(template) as source,
        zipfile.ZipFile(out, "w", zipfile.ZIP_DEFLATED, compresslevel=9) as package,
    ):
        for member in source.infolist():
            data = source.read(member.filename)
            if member.filename == "word/document.xml":
                head, body, tail = data.decode().partition("<w:body>")
                data = (head + body + paragraph * count + tail).encode()
            package.writestr(member.filename, data)
    return out.getvalue()


def _text(make: Callable[[int], str]) -> Callable[[int], bytes]:
    return lambda size: make(size).encode()


SHAPES: dict[str, tuple[str, Callable[[int], bytes]]] = {
    "headings": ("doc.md", _text(headings)),
    "line": ("doc.md", _text(one_line)),
    "table": ("doc.md", _text(table)),
    "nesting": ("doc.md", _text(nesting)),
    "prose": ("doc.md", _text(prose)),
    "html": ("doc.html", html_page),
    "docx": ("doc.docx", docx_file),
}


def _resident_mb() -> tuple[float, float]:
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return int(fields["VmHWM"].split()[0]) / 1024, int(fields["VmRSS"].split()[0]) / 1024


def _reset_peak() -> None:
    """The peak (VmHWM) set to what is resident now: else an earlier peak of
    the process (its imports, the warm-up) over the document's own would be
    read as the document's (the giant table's few MB)."""
    # Not Linux, or not allowed: the lifetime peak, as before.
    with contextlib.suppress(OSError):
        Path("/proc/self/clear_refs").write_text("5")


def measure_one(path: Path) -> dict[str, float]:
    """In this process: the per-document work on one file, after a warm-up
    on a small file of the same kind (its libraries imported)."""
    from mdchunks.plugin.documents import read_document
    from mdchunks.plugin.recipe import Recipe
    from mdchunks.source.app import _read_chunk_and_hash

    shape = next(name for name, (file, _) in SHAPES.items() if path.stem == name)
    name, make = SHAPES[shape]
    options = {"source": "bench", "rel_path": name, "recipe": Recipe()}
    _read_chunk_and_hash(make(2_000), **options)  # type: ignore[arg-type]
    data = path.read_bytes()
    _reset_peak()
    _, before = _resident_mb()
    started = time.perf_counter()
    _read_chunk_and_hash(data, **options)  # type: ignore[arg-type]
    seconds = time.perf_counter() - started
    peak, _ = _resident_mb()
    text = read_document(data, name).text  # after the peak is read
    return {
        "disk": len(data),
        "text": len(text.encode("utf-8", errors="surrogatepass")),
        "peak_mb": peak - before,
        "seconds": seconds,
    }


def base_tree(commit: str, into: Path) -> Path:
    """The installed layout (`mdchunks`, its `heading_index` and
    `migrations`) of `commit`'s code, for PYTHONPATH."""
    archive = subprocess.run(
        ["git", "archive", commit, "flow", "heading_index", "migrations"],
        cwd=REPO,
        capture_output=True,
        check=True,
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    package = into / "src" / "mdchunks"
    package.parent.mkdir()
    (into / "flow").rename(package)
    (into / "heading_index").rename(package / "heading_index")
    (into / "migrations").rename(package / "migrations")
    return into / "src"


def _run(path: Path, pythonpath: Path | None) -> dict[str, float]:
    env = dict(os.environ)
    if pythonpath is not None:
        env["PYTHONPATH"] = str(pythonpath)
    found = subprocess.run(
        [sys.executable, "-m", "benchmarks.memory_shapes", "--one", str(path)],
        capture_output=True,
        text=True,
        cwd=REPO,
        env=env,
    )
    if found.returncode != 0:
        raise RuntimeError(f"{path.name}: {found.stderr[-2000:]}")
    result: dict[str, float] = json.loads(found.stdout.splitlines()[-1])
    return result


def main(argv: Sequence[str] | None = None) -> int:
    parser = argparse.ArgumentParser(prog="python -m benchmarks.memory_shapes")
    parser.add_argument("--base", default=BASE, help=f"the commit compared with [{BASE}]")
    parser.add_argument("--mb", type=float, default=0.5, help="text per document, MB [0.5]")
    parser.add_argument("--shapes", default=",".join(SHAPES), help="comma-separated")
    parser.add_argument("--one", type=Path, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.one:
        print(json.dumps(measure_one(args.one)))
        return 0
    with tempfile.TemporaryDirectory(prefix="mdchunks-memory-") as work:
        folder = Path(work)
        base = base_tree(args.base, folder / "base")
        print(f"peak RSS above the process's own, one document each; base {args.base}")
        print(
            f"{'shape':<10}{'disk MB':>9}{'text MB':>9}"
            f"{'base MB':>9}{'x text':>8}{'base s':>8}{'after MB':>10}{'x text':>8}{'after s':>8}"
        )
        for shape in args.shapes.split(","):
            name, make = SHAPES[shape]
            path = folder / (shape + Path(name).suffix)
            path.write_bytes(make(int(args.mb * 1e6)))
            before = _run(path, base)
            after = _run(path, None)
            text_mb = after["text"] / 1e6
            print(
                f"{shape:<10}{after['disk'] / 1e6:>9.2f}{text_mb:>9.2f}"
                f"{before['peak_mb']:>9.0f}{before['peak_mb'] / text_mb:>7.0f}x"
                f"{before['seconds']:>8.1f}"
                f"{after['peak_mb']:>10.0f}{after['peak_mb'] / text_mb:>7.0f}x"
                f"{after['seconds']:>8.1f}",
                flush=True,
            )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
