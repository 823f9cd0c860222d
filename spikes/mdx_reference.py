"""The MDX reference: remark + remark-mdx's structural headings of every page.

`python -m spikes.mdx_reference regenerate CORPUS_DIR OUT.jsonl` runs
`spikes/mdx_reference/headings.mjs` (Node; its packages pinned by the
folder's package-lock.json, installed there with `npm ci` on first use) over
every document of CORPUS_DIR (`spikes.corpus`'s walk) and writes JSON Lines,
one object per document:
`{"path", "headings": [{"level", "line", "end_line", "text"}...], "error"}`.
`.mdx` pages are parsed as MDX 3 parses them (remark-mdx), every other page
as CommonMark + GFM + front matter (remark without remark-mdx). The lists are
committed beside the corpora (`starlight-docs.jsonl`), so the tests read
them with `load_reference` and need no Node.

`python -m spikes.mdx_reference scan CORPUS_DIR [--reference LIST]` is the
harness's MDX scan (docs/harness.md): per page, our index's headings (in the
page's dialect, `dialect_for`) against the reference's (LIST, else remark run
now), as pages that differ and headings lost and invented; and the page
titles: pages whose front matter has one, and how many of their chunks (the
product's chunker at its defaults) name it at the root of their breadcrumb.
Exit status 1 if a page differs or a titled page's chunk misses its title.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path

import click
from mdchunks.heading_index import build_index, dialect_for

from spikes.corpus import read_corpus

SPIKE_DIR = Path(__file__).resolve().parent / "mdx_reference"
HEADINGS_SCRIPT = SPIKE_DIR / "headings.mjs"
STARLIGHT_REFERENCE = SPIKE_DIR / "starlight-docs.jsonl"


class ReferenceUnavailable(RuntimeError):
    """Node or npm is missing, or remark could not be installed or run (one line)."""


@dataclass(frozen=True, slots=True)
class RefHeading:
    level: int
    line: int  # 1-based line of the heading's first line
    end_line: int  # 1-based line of its last (a setext heading's underline)
    text: str  # mdast-util-to-string, whitespace runs collapsed, trimmed


@dataclass(frozen=True, slots=True)
class Reference:
    headings: Mapping[str, tuple[RefHeading, ...]]  # rel_path -> headings, parsed pages only
    errors: Mapping[str, str]  # rel_path -> remark's message, pages it could not parse


def parse_reference(lines: Iterable[str], source: str = "<reference>") -> Reference:
    """The JSON Lines `headings.mjs` prints; `source` names them in an error."""
    headings: dict[str, tuple[RefHeading, ...]] = {}
    errors: dict[str, str] = {}
    for number, line in enumerate(lines, start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
            path = str(record["path"])
            if record["error"] is not None:
                errors[path] = str(record["error"])
                continue
            headings[path] = tuple(
                RefHeading(int(h["level"]), int(h["line"]), int(h["end_line"]), str(h["text"]))
                for h in record["headings"]
            )
        except (ValueError, KeyError, TypeError) as exc:
            raise ValueError(f"{source}:{number}: not a reference record: {exc!r}") from exc
    return Reference(headings, errors)


def read_reference(path: Path) -> Reference:
    """A committed reference list: the pages' headings and the pages remark could not parse."""
    with path.open(encoding="utf-8") as lines:
        return parse_reference(lines, path.as_posix())


def load_reference(path: Path) -> dict[str, tuple[RefHeading, ...]]:
    """rel_path -> remark-mdx's structural headings; pages it could not parse are left out."""
    return dict(read_reference(path).headings)


def _tool(name: str) -> str:
    found = shutil.which(name)
    if found is None:
        raise ReferenceUnavailable(
            f"{name} not found on PATH: the MDX reference runs remark on Node "
            "(the committed lists need neither)"
        )
    return found


def _installed() -> bool:
    """npm ci's record of what it installed matches the committed lock file."""
    lock = SPIKE_DIR / "package-lock.json"
    installed = SPIKE_DIR / "node_modules" / ".package-lock.json"
    return installed.is_file() and installed.stat().st_mtime >= lock.stat().st_mtime


def _cause(stderr: str) -> str:
    """The line of a failed tool's stderr that says why (Node ends with its version line)."""
    lines = [line.strip() for line in stderr.splitlines() if line.strip()]
    errors = [line for line in lines if "Error" in line or line.startswith("npm ERR!")]
    return (errors or lines or ["no message"])[0 if errors else -1]


def ensure_installed() -> None:
    """`npm ci` into the spike's folder unless node_modules is already the lock file's."""
    _tool("node")
    if _installed():
        return
    done = subprocess.run(
        [_tool("npm"), "ci", "--no-audit", "--no-fund"],
        cwd=SPIKE_DIR,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode != 0:
        raise ReferenceUnavailable(
            f"npm ci in {SPIKE_DIR}: exit {done.returncode}: {_cause(done.stderr)}"
        )


def run_remark(corpus_dir: Path) -> str:
    """remark's JSON Lines for every document of `corpus_dir`, in spikes.corpus's order."""
    ensure_installed()
    rel_paths = [d.rel_path for d in read_corpus(corpus_dir).documents]
    done = subprocess.run(
        [_tool("node"), str(HEADINGS_SCRIPT), str(corpus_dir), "-"],
        input="".join(f"{rel}\n" for rel in rel_paths),
        capture_output=True,
        text=True,
        encoding="utf-8",
        check=False,
    )
    if done.returncode != 0:
        raise ReferenceUnavailable(
            f"{HEADINGS_SCRIPT}: exit {done.returncode}: {_cause(done.stderr)}"
        )
    return done.stdout


def live_reference(corpus_dir: Path) -> Reference:
    """remark's headings of a folder, run now (a held-out site: no committed list)."""
    return parse_reference(run_remark(corpus_dir).splitlines(), corpus_dir.as_posix())


@click.group()
def main() -> None:
    """The MDX reference heading lists (remark + remark-mdx, on Node)."""


@main.command()
@click.argument("corpus_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.argument("out", type=click.Path(dir_okay=False, path_type=Path))
def regenerate(corpus_dir: Path, out: Path) -> None:
    """Write remark's heading list of every document of CORPUS_DIR to OUT (JSON Lines)."""
    try:
        lines = run_remark(corpus_dir)
    except ReferenceUnavailable as exc:
        click.echo(f"mdx_reference: {exc}", err=True)
        sys.exit(2)
    out.write_text(lines, encoding="utf-8", newline="\n")
    reference = parse_reference(lines.splitlines(), out.as_posix())
    click.echo(
        f"{out}: {len(reference.headings) + len(reference.errors)} pages, "
        f"{sum(map(len, reference.headings.values()))} headings, "
        f"{len(reference.errors)} remark could not parse"
    )


@dataclass(frozen=True, slots=True)
class Scan:
    pages: int
    headings: int  # the reference's
    differing: tuple[str, ...]  # rel_paths whose heading lists differ
    lost: int  # reference headings our index does not give (line, level, text)
    invented: int  # headings our index gives that the reference does not
    titled: int  # pages whose front matter has a title
    titled_chunks: int  # their chunks
    rooted: int  # of those, chunks whose breadcrumb starts with the title
    untitled_examples: tuple[str, ...]  # `rel_path#position` of chunks that miss it


def scan(corpus_dir: Path, reference: Reference) -> Scan:
    """Our index and chunks of every page of `corpus_dir` against `reference`."""
    # The product's chunker and title rule (imported here: the rest of this
    # module runs without cocoindex).
    from mdchunks.plugin.chunking import chunk_markdown
    from mdchunks.plugin.titles import document_title

    pages = headings = lost = invented = titled = titled_chunks = rooted = 0
    differing: list[str] = []
    missing: list[str] = []
    for document in read_corpus(corpus_dir).documents:
        expected = reference.headings.get(document.rel_path)
        if expected is None:
            continue
        pages += 1
        headings += len(expected)
        text = document.text
        dialect = dialect_for(document.rel_path)
        lines = [0] + [i + 1 for i, char in enumerate(text) if char == "\n"]
        found = {
            (_line(lines, h.start), h.level, " ".join(h.text.split()))
            for h in build_index(text, dialect).headings
        }
        wanted = {(h.line, h.level, h.text) for h in expected}
        if found != wanted:
            differing.append(document.rel_path)
            lost += len(wanted - found)
            invented += len(found - wanted)
        title = document_title(text)
        if title is None:
            continue
        titled += 1
        for position, chunk in enumerate(chunk_markdown(text, dialect=dialect).chunks):
            titled_chunks += 1
            if (chunk.breadcrumb or "").startswith(title):
                rooted += 1
            else:
                missing.append(f"{document.rel_path}#{position}")
    return Scan(
        pages,
        headings,
        tuple(differing),
        lost,
        invented,
        titled,
        titled_chunks,
        rooted,
        tuple(missing[:10]),
    )


def _line(starts: list[int], offset: int) -> int:
    from bisect import bisect_right

    return bisect_right(starts, offset)


@main.command("scan")
@click.argument("corpus_dir", type=click.Path(exists=True, file_okay=False, path_type=Path))
@click.option(
    "--reference",
    "reference_path",
    type=click.Path(exists=True, dir_okay=False, path_type=Path),
    help="A committed reference list (default: run remark on CORPUS_DIR now, with Node).",
)
def scan_command(corpus_dir: Path, reference_path: Path | None) -> None:
    """Our headings and breadcrumbs of CORPUS_DIR against remark's (the MDX scan)."""
    try:
        reference = read_reference(reference_path) if reference_path else live_reference(corpus_dir)
    except ReferenceUnavailable as exc:
        click.echo(f"mdx_reference: {exc}", err=True)
        sys.exit(2)
    found = scan(corpus_dir, reference)
    click.echo(
        f"{'corpus':<32} {'pages':>5} {'headings':>8} {'differ':>6} {'lost':>5} "
        f"{'invented':>8} {'titled':>6} {'chunks':>6} {'rooted':>6}"
    )
    click.echo(
        f"{corpus_dir.as_posix():<32} {found.pages:>5} {found.headings:>8} "
        f"{len(found.differing):>6} {found.lost:>5} {found.invented:>8} {found.titled:>6} "
        f"{found.titled_chunks:>6} {found.rooted:>6}"
    )
    if reference.errors:
        click.echo(f"{len(reference.errors)} pages remark could not parse (left out)")
    for rel_path in found.differing[:20]:
        click.echo(f"differs: {rel_path}")
    for where in found.untitled_examples:
        click.echo(f"no title at the root: {where}")
    sys.exit(1 if found.differing or found.rooted < found.titled_chunks else 0)


if __name__ == "__main__":
    main()
