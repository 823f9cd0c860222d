"""Text as it may be printed to a terminal: escaped, so no name or document can forge output.

A folder is untrusted input: its file names and its documents' text. A name
or a heading can hold a terminal escape (`\\x1b[2J` clears the screen, OSC 0
sets the window title), a newline (forging a line of the failure list or a
second search hit), a bidi override (U+202E prints the rest backwards), a
zero-width character (two names that look the same), or bytes that are not
UTF-8 (Python hands those over as lone surrogates, which cannot even be
encoded for printing). `shown` spells every such character as a Python
escape: control characters as `\\n`, `\\t`, `\\x1b`; bidi and zero-width
characters as `\\u202e`, `\\u200b`; an undecodable byte as `\\xe9` (the byte
it was). Everything else, any script, is printed as it is. Only what is
printed goes through it: `--json` and the database keep the exact text.
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, lone surrogates (undecodable bytes), the line and
# paragraph separators (which terminals and logs treat as line ends), the
# bidi controls (marks, embeddings, overrides, isolates: U+061C, U+200E-F,
# U+202A-E, U+2066-9), the zero-width characters (U+200B-D, U+2060-4 and the
# byte order mark U+FEFF) and the interlinear annotation marks (U+FFF9-B).
_UNPRINTABLE = (
    "\x00-\x1f\x7f-\x9f\u061c\u180e\u200b-\u200f\u2028-\u202e\u2060-\u2064\u2066-\u2069"
    "\ufeff\ufff9-\ufffb\ud800-\udfff"
)
_ANYWHERE = re.compile(f"[{_UNPRINTABLE}]")
# In a block of text (`lines=True`) line breaks and tabs stay what they are.
_IN_LINES = re.compile(f"(?![\n\t])[{_UNPRINTABLE}]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the undecodable byte itself
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def shown(text: str, *, lines: bool = False) -> str:
    """`text` safe for a terminal: control, bidi and zero-width characters and
    undecodable bytes escaped. One line always, unless `lines` (a block of a
    document's text, as `search --expand` prints it), which keeps its line
    breaks and tabs. Idempotent: what it returns is printable."""
    return (_IN_LINES if lines else _ANYWHERE).sub(_escape, text)


def is_utf8(name: str) -> bool:
    """False for a name that came from bytes that are not UTF-8."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
