"""The visible text of an autolink `<url>`: percent-escapes and punycode decoded.

Mirrors markdown-it's `normalizeLinkText` (via mdurl) closely enough for
heading text, without depending on either.
"""

from __future__ import annotations

import re

_PERCENT_RUN = re.compile(r"(?:%[a-fA-F0-9]{2})+")
# Reserved characters stay percent-encoded when decoding (mdurl's default + "%").
_KEEP_ENCODED = frozenset(";/?:@&=+$,#%")
_HTTP_AUTHORITY = re.compile(r"(https?://)([^/?#]*)")


def autolink_text(url: str) -> str:
    return _decode_percent(_decode_punycode_host(url))


def _decode_punycode_host(url: str) -> str:
    match = _HTTP_AUTHORITY.match(url)
    if match is None or "xn--" not in match.group(2).lower():
        return url
    authority = match.group(2)
    userinfo, at, hostport = authority.rpartition("@")
    host, colon, port = hostport.partition(":")
    labels = []
    for label in host.split("."):
        if label.lower().startswith("xn--"):
            try:
                label = label[4:].encode("ascii").decode("punycode")
            except (UnicodeError, ValueError):
                return url
        labels.append(label)
    return f"{match.group(1)}{userinfo}{at}{'.'.join(labels)}{colon}{port}{url[match.end() :]}"


def _decode_percent(text: str) -> str:
    return _PERCENT_RUN.sub(_decode_run, text)


def _decode_run(match: re.Match[str]) -> str:
    run = match.group(0)
    data = [int(run[i + 1 : i + 3], 16) for i in range(0, len(run), 3)]
    out: list[str] = []
    i = 0
    while i < len(data):
        first = data[i]
        if first < 0x80:
            char = chr(first)
            out.append(f"%{first:02X}" if char in _KEEP_ENCODED else char)
            i += 1
            continue
        if first & 0xE0 == 0xC0:
            size = 2
        elif first & 0xF0 == 0xE0:
            size = 3
        elif first & 0xF8 == 0xF0:
            size = 4
        else:
            size = 0  # a stray continuation byte or an invalid lead byte
        if i + size > len(data):
            size = 0
        sequence = data[i : i + size]
        if size and all(byte & 0xC0 == 0x80 for byte in sequence[1:]):
            try:
                out.append(bytes(sequence).decode("utf-8"))
            except UnicodeDecodeError:
                out.append("\ufffd" * size)
            i += size
            continue
        out.append("\ufffd")
        i += 1
    return "".join(out)
