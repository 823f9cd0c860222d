"""The lexical pieces of CommonMark inline syntax, as markdown-it reads them.

Character classes, entities and escapes, link destinations and titles, raw
HTML and autolink shapes, label normalisation: pure functions and constants
shared by the inline reducer and the link reference definition parser.
"""

from __future__ import annotations

import html.entities
import re
import unicodedata
from dataclasses import dataclass

ASCII_PUNCTUATION = frozenset("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~")

ENTITIES = {name.rstrip(";"): chars for name, chars in html.entities.html5.items()}
NUMERIC_ENTITY = re.compile(r"&#((?:x[a-f0-9]{1,6}|[0-9]{1,7}));", re.IGNORECASE)
NAMED_ENTITY = re.compile(r"&([a-z][a-z0-9]{1,31});", re.IGNORECASE)
_UNESCAPE = re.compile(
    r'\\([!"#$%&\'()*+,\-./:;<=>?@\[\\\]^_`{|}~])|&([a-z#][a-z0-9]{1,31});', re.IGNORECASE
)

EMAIL = re.compile(
    r"[a-zA-Z0-9.!#$%&'*+/=?^_`{|}~-]+@[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?"
    r"(?:\.[a-zA-Z0-9](?:[a-zA-Z0-9-]{0,61}[a-zA-Z0-9])?)*"
)
URI = re.compile(r"[a-zA-Z][a-zA-Z0-9+.\-]{1,31}:[^<>\x00-\x20]*")
_BAD_PROTOCOL = re.compile(r"(?:vbscript|javascript|file|data):")
_GOOD_DATA = re.compile(r"data:image/(?:gif|png|jpeg|webp);")

_ATTRIBUTE = (
    r"(?:\s+[a-zA-Z_:][a-zA-Z0-9:._-]*(?:\s*=\s*(?:[^\"'=<>`\x00-\x20]+|'[^']*'|\"[^\"]*\"))?)"
)
HTML_TAG = re.compile(
    r"<[A-Za-z][A-Za-z0-9\-]*" + _ATTRIBUTE + r"*\s*/?>"  # open tag
    r"|</[A-Za-z][A-Za-z0-9\-]*\s*>"  # closing tag
    r"|<!---?>|<!--(?:[^-]|-[^-]|--[^>])*-->"  # comment
    r"|<[?][\s\S]*?[?]>"  # processing instruction
    r"|<![A-Za-z][^>]*>"  # declaration
    r"|<!\[CDATA\[[\s\S]*?\]\]>"  # CDATA
)

# Whitespace and trimming as markdown-it uses them for flanking and labels.
MD_WHITESPACE = frozenset("\t\n\v\f\r \xa0\u1680\u202f\u205f\u3000") | frozenset(
    chr(c) for c in range(0x2000, 0x200B)
)
_MD_TRIM_CHARS = "".join(sorted(MD_WHITESPACE | {"\u2028", "\u2029"}))
_MD_TRIM_RUN = re.compile("[" + re.escape(_MD_TRIM_CHARS) + "]+")


def normalize_label(label: str) -> str:
    """Link label matching key: trimmed, inner whitespace collapsed, case-folded."""
    return _MD_TRIM_RUN.sub(" ", label.strip(_MD_TRIM_CHARS)).lower().upper()


def unescape(text: str) -> str:
    """Backslash escapes and entity references resolved (link destinations, titles)."""
    if "\\" not in text and "&" not in text:
        return text
    return _UNESCAPE.sub(_unescape_match, text)


def _unescape_match(match: re.Match[str]) -> str:
    if match.group(1):
        return match.group(1)
    name = match.group(2)
    if name in ENTITIES:
        return ENTITIES[name]
    code: int | None = None
    if re.fullmatch(r"#[0-9]{1,8}", name):
        code = int(name[1:], 10)
    elif re.fullmatch(r"#x[a-f0-9]{1,8}", name, re.IGNORECASE):
        code = int(name[2:], 16)
    return chr(code) if code is not None and valid_entity_code(code) else match.group(0)


def valid_entity_code(code: int) -> bool:
    return not (
        0xD800 <= code <= 0xDFFF
        or 0xFDD0 <= code <= 0xFDEF
        or (code & 0xFFFF) in (0xFFFE, 0xFFFF)
        or code <= 0x08
        or code == 0x0B
        or 0x0E <= code <= 0x1F
        or 0x7F <= code <= 0x9F
        or code > 0x10FFFF
    )


def valid_link(destination: str) -> bool:
    """False for the protocols CommonMark renderers refuse (javascript:, ...)."""
    url = destination.strip().lower()
    return _GOOD_DATA.match(url) is not None if _BAD_PROTOCOL.match(url) else True


def is_punctuation(char: str) -> bool:
    return char in ASCII_PUNCTUATION or unicodedata.category(char)[0] in "PS"


@dataclass(frozen=True, slots=True)
class Destination:
    ok: bool
    pos: int = 0
    value: str = ""


def link_destination(src: str, pos: int, pos_max: int) -> Destination:
    start = pos
    if pos < pos_max and src[pos] == "<":
        pos += 1
        while pos < pos_max:
            char = src[pos]
            if char in "\n<":
                return Destination(ok=False)
            if char == ">":
                return Destination(ok=True, pos=pos + 1, value=unescape(src[start + 1 : pos]))
            pos += 2 if char == "\\" and pos + 1 < pos_max else 1
        return Destination(ok=False)
    depth = 0
    while pos < pos_max:
        char = src[pos]
        if char == " " or char < " " or char == "\x7f":
            break
        if char == "\\" and pos + 1 < pos_max:
            if src[pos + 1] == " ":
                break
            pos += 2
            continue
        if char == "(":
            depth += 1
            if depth > 32:
                return Destination(ok=False)
        if char == ")":
            if depth == 0:
                break
            depth -= 1
        pos += 1
    if start == pos or depth != 0:
        return Destination(ok=False)
    return Destination(ok=True, pos=pos, value=unescape(src[start:pos]))


def link_title_end(src: str, pos: int, pos_max: int) -> int:
    """End (just past the closing quote) of a link title starting at `pos`, or -1."""
    if pos >= pos_max or src[pos] not in "\"'(":
        return -1
    closer = ")" if src[pos] == "(" else src[pos]
    pos += 1
    while pos < pos_max:
        char = src[pos]
        if char == closer:
            return pos + 1
        if char == "(" and closer == ")":
            return -1
        if char == "\\" and pos + 1 < pos_max:
            pos += 1
        pos += 1
    return -1


def last_backtick_runs(src: str) -> dict[int, int]:
    """Backtick run length -> start of the last run of that length."""
    last: dict[int, int] = {}
    pos = 0
    while (start := src.find("`", pos)) != -1:
        pos = start + 1
        while pos < len(src) and src[pos] == "`":
            pos += 1
        last[pos - start] = start
    return last
