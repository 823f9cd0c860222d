"""File names as they may be printed: escaped, so no name can forge output.

A folder is untrusted input, and so are its file names: a name can hold a
terminal escape (`\\x1b[31m`), a newline (forging a line of the failure
list), or bytes that are not UTF-8 (Python hands those over as lone
surrogates, which cannot even be encoded for printing). `shown` spells every
such character as a Python escape: control characters as `\\n`, `\\t`,
`\\x1b`; an undecodable byte as `\\xe9` (the byte it was). Everything else,
any script, is printed as it is.
"""

from __future__ import annotations

import re

# C0 and C1 controls, DEL, lone surrogates (undecodable bytes), and the
# line and paragraph separators (which terminals and logs treat as line ends).
_UNPRINTABLE = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
_NAMED = {"\n": "\\n", "\r": "\\r", "\t": "\\t"}


def _escape(found: re.Match[str]) -> str:
    char = found.group()
    code = ord(char)
    if char in _NAMED:
        return _NAMED[char]
    if 0xDC80 <= code <= 0xDCFF:  # surrogateescape: the undecodable byte itself
        return f"\\x{code - 0xDC00:02x}"
    return f"\\x{code:02x}" if code <= 0xFF else f"\\u{code:04x}"


def shown(name: str) -> str:
    """`name` with control characters and undecodable bytes escaped."""
    return _UNPRINTABLE.sub(_escape, name)


def is_utf8(name: str) -> bool:
    """False for a name that came from bytes that are not UTF-8."""
    try:
        name.encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True
