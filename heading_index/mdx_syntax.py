"""MDX's JavaScript and JSX as a line of text holds them: where they end.

What the block scan (heading_index/mdx.py) needs to know of MDX's inline
syntax: the expressions (`{...}`) and JSX tags a line holds, past code spans
and escapes (a construct may run over line endings and take the lines it
covers); where the JavaScript of an expression or an ESM block ends (every
bracket, string, template and comment closed); where a tag ends. Each scan
moves forward only, and a tag is bounded (`_MAX_TAG`): a stray `<` costs at
most that much of the text.
"""

from __future__ import annotations

import re

# What may start a construct inside a line (a code span, an escape, an
# expression, a tag): lines with none of these are skipped at C speed.
_INTERESTING = re.compile(r"[`\\{<]")
_TAG_NAME = re.compile(r"(?:[^\W\d]|\$)[\w$.:-]*")
_SPACE = re.compile(r"[ \t\r\n]*")
# A tag longer than this is no tag (MDX would have refused the page): the scan
# of a stray `<` stays bounded.
_MAX_TAG = 20_000


def constructs_in_line(
    text: str, start: int, eol: int, broken: bool
) -> tuple[list[tuple[int, int]], int, bool]:
    """The expressions and tags of the line `[start, eol)`, and where that line
    ends: a construct that runs over line endings takes the lines it covers."""
    found: list[tuple[int, int]] = []
    i = start
    while not broken:
        match = _INTERESTING.search(text, i, eol)
        if match is None:
            break
        i = match.start()
        char = text[i]
        if char == "\\":
            i += 2
        elif char == "`":
            run = _run_length(text, i, "`")
            close = text.find("`" * run, i + run, eol)
            while close != -1 and _run_length(text, close, "`") != run:
                close = text.find("`" * run, close + _run_length(text, close, "`"), eol)
            i = i + run if close == -1 else close + run
        elif char == "{":
            end = script_end(text, i, esm=False)
            if end < 0:
                broken = True
                break
            found.append((i, end))
            i = end
        else:  # "<"
            end = _tag_end(text, i)
            if end < 0:
                i += 1
                continue
            found.append((i, end))
            i = end
        if i > eol:
            eol = end_of_line(text, i)
    return found, eol, broken


def script_end(text: str, start: int, *, esm: bool) -> int:
    """End of the JavaScript at `start`: for an expression (`{` at `start`) just
    past its matching `}`, -1 if the text ends first; for ESM the end of the
    line before the first blank line (or the end of the text) reached with
    every bracket, string, template and comment closed."""
    n = len(text)
    stack: list[str] = []
    i = start
    while i < n:
        char = text[i]
        top = stack[-1] if stack else ""
        if top == "`":
            if char == "\\":
                i += 2
            elif char == "`":
                stack.pop()
                i += 1
            elif char == "$" and text.startswith("{", i + 1):
                stack.append("${")
                i += 2
            else:
                i += 1
            continue
        if char in "\"'":
            i = _string_end(text, i)
        elif char == "/" and text.startswith("/", i + 1):
            i = end_of_line(text, i)
        elif char == "/" and text.startswith("*", i + 1):
            close = text.find("*/", i + 2)
            if close < 0:
                return n if esm else -1
            i = close + 2
        elif char == "`":
            stack.append("`")
            i += 1
        elif char in "{([":
            stack.append(char)
            i += 1
        elif char in "})]":
            if stack:
                stack.pop()
            i += 1
            if not esm and not stack:
                return i
        elif esm and char in "\r\n" and not stack:
            after = start_of_next_line(text, i)
            following = text[after : end_of_line(text, after)]
            if after >= n or not following.strip(" \t"):
                return i
            i = after
        else:
            i += 1
    return n if esm else -1


def _string_end(text: str, start: int) -> int:
    """Past the closing quote of the JavaScript string at `start` (a string
    ends at its line's end if unclosed)."""
    quote = text[start]
    i = start + 1
    n = len(text)
    while i < n:
        char = text[i]
        if char == "\\":
            i += 2
        elif char == quote:
            return i + 1
        elif char in "\r\n":
            return i
        else:
            i += 1
    return n


def _tag_end(text: str, start: int) -> int:
    """Just past the JSX tag at `start` (`<Name ...>`, `</Name>`, `<Name />`,
    `<>`, `</>`), -1 if there is none."""
    limit = min(len(text), start + _MAX_TAG)
    i = start + 1
    if i < limit and text[i] == "/":
        i += 1
    i = _SPACE.match(text, i, limit).end()  # type: ignore[union-attr]
    if i < limit and text[i] == ">":
        return i + 1
    name = _TAG_NAME.match(text, i, limit)
    if name is None or name.start() != start + 1 + (text[start + 1] == "/"):
        return -1
    i = name.end()
    while i < limit:
        i = _SPACE.match(text, i, limit).end()  # type: ignore[union-attr]
        if i >= limit:
            return -1
        char = text[i]
        if char == ">":
            return i + 1
        if text.startswith("/>", i):
            return i + 2
        if char == "{":
            i = script_end(text, i, esm=False)
            if i < 0 or i > limit:
                return -1
            continue
        attribute = _TAG_NAME.match(text, i, limit)
        if attribute is None:
            return -1
        i = _SPACE.match(text, attribute.end(), limit).end()  # type: ignore[union-attr]
        if i < limit and text[i] == "=":
            i = _SPACE.match(text, i + 1, limit).end()  # type: ignore[union-attr]
            if i >= limit:
                return -1
            if text[i] in "\"'":
                close = text.find(text[i], i + 1, limit)
                if close < 0:
                    return -1
                i = close + 1
            elif text[i] == "{":
                i = script_end(text, i, esm=False)
                if i < 0 or i > limit:
                    return -1
            else:
                return -1
    return -1


def _run_length(text: str, start: int, char: str) -> int:
    end = start
    while end < len(text) and text[end] == char:
        end += 1
    return end - start


def end_of_line(text: str, start: int) -> int:
    newline = text.find("\n", start)
    end = len(text) if newline < 0 else newline
    carriage = text.find("\r", start, end)
    return end if carriage < 0 else carriage


def start_of_next_line(text: str, eol: int) -> int:
    if text.startswith("\r\n", eol):
        return eol + 2
    return eol + 1 if eol < len(text) else eol
