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
what the snippet marks is only what `ts_headline` marked. Front matter and
MDX's ESM and comments (a chunk's `unsearched` spans) are spaces to it, so a
snippet never opens there; `shown` is given the same searchable text.

`ts_headline` cuts its fragments at the parser's token boundaries, which
are not a reader's (`show]}` of `` `v-show` {#v-if-vs-v-show} ``), and keeps
the markdown's markup; `shown` widens each fragment to whole words of the
chunk's text and takes heading marks, heading anchors and emphasis markers
out (code spans stay as written). `--json` prints the chunk's exact `text`.
"""

from __future__ import annotations

import re

MASK = "\x01"
HIGHLIGHT_START = "\x02"
HIGHLIGHT_STOP = "\x03"


def _chr(character: str) -> str:
    return f"chr({ord(character)})"


# The chunk's searchable text (heading_index/searchable.py): its unsearched
# spans (front matter, MDX's ESM and comments) as spaces, so that no snippet
# opens in them; the text itself for the usual chunk, which has none.
_SEARCHABLE_TEXT = (
    "CASE WHEN cardinality(c.unsearched) = 0 THEN c.text ELSE ("
    "SELECT string_agg(substr(c.text, coalesce(c.unsearched[2 * g - 2], 0) + 1, "
    "c.unsearched[2 * g - 1] - coalesce(c.unsearched[2 * g - 2], 0)) "
    "|| repeat(' ', c.unsearched[2 * g] - c.unsearched[2 * g - 1]), '' ORDER BY g) "
    "FROM generate_series(1, cardinality(c.unsearched) / 2) AS g"
    ") || substr(c.text, c.unsearched[cardinality(c.unsearched)] + 1) END"
)
# translate() maps characters one for one, in one pass: `<` -> MASK, and the
# three control characters (MASK itself first) -> spaces.
_MASKED_TEXT = (
    f"translate({_SEARCHABLE_TEXT}, '<' || {_chr(MASK)} || {_chr(HIGHLIGHT_START)} || "
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


# Between ts_headline's fragments (`FragmentDelimiter` of the API's options).
FRAGMENT_DELIMITER = " … "
# How far a fragment is widened to a whole word at each end; a longer token
# (a URL) stays cut, marked with `…`.
MAX_WIDENING = 40

_CONTROL_TO_SPACE = str.maketrans({MASK: " ", HIGHLIGHT_START: " ", HIGHLIGHT_STOP: " "})
_CODE_SPAN = re.compile(r"(`+)(?:(?!\1).)+?\1", re.DOTALL)
# A heading's attribute block (`{#id}`, `{#id .class}`: VitePress, Pandoc).
_ANCHOR = re.compile(r"[ \t]*\{#[^{}\n]*\}")
# Emphasis and strong markers around a run of text, not inside a word
# (`snake_case` stays); the highlight marks are neither space nor marker.
_EMPHASIS = re.compile(r"(?<![\w*])(\*\*\*|\*\*|\*|___|__|_)(?=\S)(.+?)(?<=\S)\1(?![\w*])")
_HEADING_MARKS = re.compile(r"(?m)^[ \t]{0,3}#{1,6}[ \t]+")


def shown(snippet: str, text: str) -> str:
    """A snippet of SNIPPET_SQL as text to read (docs/search.md): tags given
    back their `<`; each fragment widened to whole words of `text` (the
    chunk's text, which ts_headline cut at its own token boundaries:
    `show]}` of `` `v-show` {#v-if-vs-v-show} ``); heading marks, heading
    anchors and emphasis markers out (code spans kept as written);
    whitespace runs collapsed to one space for a one-line display; `…` before
    a snippet that starts after words of the chunk, and after one that ends
    before some, so no cut is hidden (markup alone left out is no cut)."""
    plain_text = text.translate(_CONTROL_TO_SPACE)
    fragments = snippet.replace(MASK, "<").split(FRAGMENT_DELIMITER)
    pieces = [_whole_words(f, plain_text) for f in fragments]
    widened = FRAGMENT_DELIMITER.join(piece for piece, _, _ in pieces)
    first_start, last_end = pieces[0][1], pieces[-1][2]
    if first_start > 0 and _has_words(plain_text[:first_start]) and not widened.startswith("…"):
        widened = "… " + widened
    ends_early = 0 <= last_end < len(plain_text) and _has_words(plain_text[last_end:])
    if ends_early and not widened.endswith("…"):
        widened += " …"
    return " ".join(_without_markup(widened).split())


# A tag or comment (over lines too), not an autolink (`<https://...>`: text).
_TAG = re.compile(r"<(?![a-zA-Z][a-zA-Z0-9+.-]*:)[^<>]*>")


def _has_words(text: str) -> bool:
    """Whether `text` holds a word a reader would miss: not only whitespace,
    tags, heading marks and anchors."""
    return any(ch.isalnum() for ch in _ANCHOR.sub("", _TAG.sub("", _HEADING_MARKS.sub("", text))))


def _whole_words(fragment: str, text: str) -> tuple[str, int, int]:
    """The fragment with the rest of the words it cuts at either end, and
    where it starts and ends in `text` (-1, -1: not found there)."""
    bare = fragment.replace(HIGHLIGHT_START, "").replace(HIGHLIGHT_STOP, "")
    at = text.find(bare) if bare.strip() else -1
    if at < 0:
        return fragment, -1, -1
    start, end = at, at + len(bare)
    while start > 0 and not text[start - 1].isspace() and at - start < MAX_WIDENING:
        start -= 1
    while end < len(text) and not text[end].isspace() and end - at - len(bare) < MAX_WIDENING:
        end += 1
    head = ("…" if start > 0 and not text[start - 1].isspace() else "") + text[start:at]
    tail = text[at + len(bare) : end] + ("…" if end < len(text) and not text[end].isspace() else "")
    return head + fragment + tail, start, end


def _without_markup(snippet: str) -> str:
    """Heading marks, anchors and emphasis markers out, outside code spans."""
    pieces, last = [], 0
    for code in _CODE_SPAN.finditer(snippet):
        pieces.append(_plain(snippet[last : code.start()]))
        pieces.append(code.group(0))
        last = code.end()
    pieces.append(_plain(snippet[last:]))
    return "".join(pieces)


def _plain(part: str) -> str:
    part = _ANCHOR.sub("", _HEADING_MARKS.sub("", part))
    previous = None
    while previous != part:  # nested emphasis: `**_both_**`
        previous, part = part, _EMPHASIS.sub(r"\2", part)
    return part
