"""`mdchunks search`: the query's options, and its hits printed as text or as
JSON Lines."""

from __future__ import annotations

import json
from pathlib import Path

import click
from mdchunks import api
from mdchunks.cli.group import cli, database_options, embed_model_option, table_options
from mdchunks.cli.output import block, highlighted, out, score
from mdchunks.names import shown
from mdchunks.retrieval import hits, rankings
from rich.markup import escape


@cli.command()
@click.argument("query")
@click.option("-k", "k", type=int, default=10, show_default=True, help="How many hits to show.")
@click.option("--source", metavar="NAME", help="Only this source.")
@click.option(
    "--method",
    type=click.Choice(rankings.METHODS),
    default=rankings.DEFAULT_METHOD,
    help="bm25: BM25 in PostgreSQL over heading path and text (English stemming; "
    "accents count, and a run of CJK text is one word: docs/search.md). "
    "semantic: cosine similarity of the chunks' vectors (needs `ingest --embed` "
    "and the embed extra; by the model's HNSW index). hybrid: reciprocal-rank fusion of "
    "the two. Default: hybrid when every searched source has vectors, else bm25 "
    "(a search over sources of which only some have vectors says so).",
)
@click.option(
    "--match",
    type=click.Choice(rankings.MATCHES),
    default=rankings.DEFAULT_MATCH,
    show_default=True,
    help="BM25 side (bm25, hybrid): `any`, chunks with any of the query's words (rare "
    "words weigh more); `all`, only chunks with every word. `any` is the default: on the "
    "rust-book golden set of questions it finds the answer far more often (docs/search.md).",
)
@click.option(
    "--expand",
    type=click.Choice(hits.EXPANSIONS),
    default=hits.DEFAULT_EXPANSION,
    show_default=True,
    help="section: also the whole section the hit names (its matched section), exactly "
    "as in the document, rebuilt from stored rows (no file read); a section two hits "
    "name is printed once. parent: also the parent chunk, the first chunk of the section "
    "one level above the heading the chunk starts under (none when that heading is "
    "top-level).",
)
@click.option(
    "--max-section-chars",
    type=click.IntRange(min=0),
    default=hits.SECTION_SHOWN_CHARS,
    show_default=True,
    metavar="N",
    help="With --expand section, print at most N characters of each section, then how "
    "many more there are (0: all of it). --json always has the whole section.",
)
@click.option(
    "--json",
    "as_json",
    is_flag=True,
    help="One JSON object per hit (JSON Lines): id, source, rel_path, position, char_start, "
    "char_end, start_line, end_line, heading_path, breadcrumb, title, score, text, "
    "matched_section, and section or parent when expanded. heading_path and breadcrumb are "
    "where the chunk starts; title is the document's, from its front matter (null: none), "
    "the root of every breadcrumb; matched_section is the section the match lies in (id, "
    "heading_path, breadcrumb, char_start, char_end, start_line, end_line).",
)
@embed_model_option(
    "The model whose vectors semantic and hybrid compare (vectors of different models are "
    "never compared): a folder or an installed model package, as `ingest --embed-model` "
    "took it [default: the model the searched chunks have vectors of]."
)
@click.option(
    "--path-prefix",
    metavar="PREFIX",
    default=None,
    help="Only documents whose path (relative to the source's root) starts with PREFIX.",
)
@table_options
@database_options
def search(
    query: str,
    k: int,
    source: str | None,
    method: str | None,
    match: str,
    expand: str,
    max_section_chars: int,
    as_json: bool,
    embed_model: str | None,
    path_prefix: str | None,
    table: str | None,
    pg_schema: str | None,
    database_url: str | None,
    data_dir: Path | None,
) -> None:
    """Search the chunks: BM25, semantic or hybrid (--method; default hybrid
    when vectors exist, else BM25). Prints the score (BM25, cosine similarity,
    or the fused RRF score), path, the breadcrumb of the section the match
    lies in (`A > B > C`, `(preamble)` before the first heading; a chunk can
    hold several sections, and the count of the others follows) and a
    snippet with the query's words highlighted. Creates no database: where
    nothing was ingested (no embedded PostgreSQL in the data dir, no schema or
    no chunks) it says so in one line (exit 2)."""
    found = api.search(
        query,
        k=k,
        source=source,
        method=method,
        match=match,
        database_url=database_url,
        data_dir=data_dir,
        expand=expand,
        embed_model=embed_model,
        path_prefix=path_prefix,
        table=table,
        pg_schema=pg_schema,
    )
    if as_json:
        for hit in found:
            # JSON escapes control characters itself; no markup, no highlighting.
            click.echo(json.dumps(hit.to_json(), ensure_ascii=False))
        return
    if not found:
        reason = api.no_match_reason(
            query,
            method=method,
            source=source,
            database_url=database_url,
            data_dir=data_dir,
            table=table,
            pg_schema=pg_schema,
        )
        out.print(escape(shown(f"no match: {reason}")) if reason else "no match")
        return
    printed: dict[tuple[str, str, int, int], int] = {}  # a section -> the hit that printed it
    for number, hit in enumerate(found, start=1):
        # Every printed piece of a document or a name through `shown`, and the
        # expanded text indented: one hit is one block, whatever its text holds.
        location = shown(f"{hit.source}:{hit.rel_path}#{hit.position}")
        out.print(f"[bold]{score(hit.rank)}[/bold]  {escape(location)}")
        others = hit.matched_section.held - 1 if hit.matched_section is not None else 0
        more = f" [dim](+{others} more section{'' if others == 1 else 's'} in this chunk)[/dim]"
        out.print(f"        [cyan]{escape(shown(hit.breadcrumb))}[/cyan]{more if others else ''}")
        out.print(f"        {highlighted(hit.snippet)}")
        if hit.section is not None:
            section = hit.section
            ref = hit.matched_section.section if hit.matched_section is not None else None
            if ref is not None and (ref.char_start, ref.char_end) == (
                section.char_start,
                section.char_end,
            ):  # its lines, as `outline` gives them
                span = f"section L{ref.start_line}-{ref.end_line}"
            else:  # a run of chunks from rows without sections: characters
                span = f"section chars {section.char_start}-{section.char_end}"
            key = (hit.source, hit.rel_path, section.char_start, section.char_end)
            if key in printed:
                out.print(f"        [dim]{span}: printed with hit {printed[key]} above[/dim]")
                continue
            printed[key] = number
            out.print(
                f"        [dim]{span} "
                f"({section.chunks} chunk{'' if section.chunks == 1 else 's'}):[/dim]"
            )
            text = section.text
            if max_section_chars and len(text) > max_section_chars:
                text = text[:max_section_chars]
            out.print(block(text))
            if len(text) < len(section.text):
                left = len(section.text) - len(text)
                out.print(
                    f"        [dim]... {left:,} more characters not shown "
                    "(--max-section-chars 0 prints all; --json has the whole section)[/dim]"
                )
        elif expand == "parent":
            parent = hit.parent
            if parent is None:
                out.print(
                    "        [dim]parent: none (the chunk starts under a top-level heading)[/dim]"
                )
            else:
                out.print(f"        [dim]parent #{parent.position}:[/dim]")
                out.print(block(parent.text))
