"""Search snippets that show the chunk's text as it is, inline HTML and all.

`ts_headline` reads the text with PostgreSQL's default text-search parser,
which takes `<Teleport>`, `<kbd>`, `</kbd>` or `<!-- ... -->` for markup and
prints a space in its place: "`<Teleport>` is a built-in component" came out
as "` ` is a built-in component". Markdown is not HTML, and in docs those
tags are often the very words searched for. So the text goes into
`ts_headline` with every `<` masked (`MASK`, a control character the parser
takes for a separator, so `Teleport` is a plain word and can be highlighted),
and `shown` lifts the mask in Python. Any `MASK`, `HIGHLIGHT_START` or
`HIGHLIGHT_STOP` character already in the text becomes a space first, so
what the snippet marks is only what `ts_headline` marked.
"""

from __future__ import annotations

MASK = "\x01"
HIGHLIGHT_START = "\x02"
HIGHLIGHT_STOP = "\x03"


def _chr(character: str) -> str:
    return f"chr({ord(character)})"


# translate() maps characters one for one, in one pass: `<` -> MASK, and the
# three control characters (MASK itself first) -> spaces.
_MASKED_TEXT = (
    f"translate(c.text, '<' || {_chr(MASK)} || {_chr(HIGHLIGHT_START)} || "
    f"{_chr(HIGHLIGHT_STOP)}, {_chr(MASK)} || '   ')"
)

# The snippet column of `rankings.hits_sql` (placeholder %(headline_options)s;
# `q.query` is the ranking's tsquery): the text's best fragments with the
# query's words between HIGHLIGHT_START and HIGHLIGHT_STOP, or its start when
# ts_headline gives nothing. Read it through `shown`.
SNIPPET_SQL = (
    f"coalesce(ts_headline('english', {_MASKED_TEXT}, q.query, %(headline_options)s), "
    f"left({_MASKED_TEXT}, 300))"
)


def shown(snippet: str) -> str:
    """A snippet of SNIPPET_SQL as text: tags given back their `<`, whitespace
    runs (line breaks included) collapsed to one space for a one-line display."""
    return " ".join(snippet.replace(MASK, "<").split())
