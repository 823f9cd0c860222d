"""Inline markdown source -> plain text (docs/heading-index.md).

A small CommonMark inline parser that produces text only. Its rules and their
order follow markdown-it-py's CommonMark preset (MIT), the reference the tests
compare against: text, newline, escape, code span, emphasis, link, image,
autolink, raw HTML, entity; then delimiter balancing (the "rule of 3" and the
openers-bottom bound that keep it linear). Emphasis markers that pair up,
link and image syntax and raw HTML vanish; everything else is kept as text.
"""

from __future__ import annotations

import re
from collections.abc import Container

from mdchunks.heading_index.autolink_text import autolink_text
from mdchunks.heading_index.emphasis import Delimiter, balance, scan_delimiter_run
from mdchunks.heading_index.inline_syntax import (
    ASCII_PUNCTUATION,
    EMAIL,
    ENTITIES,
    HTML_TAG,
    NAMED_ENTITY,
    NUMERIC_ENTITY,
    URI,
    last_backtick_runs,
    link_destination,
    link_title_end,
    normalize_label,
    valid_entity_code,
    valid_link,
)

# Characters at which some rule may fire; runs of anything else are plain text.
_TERMINATOR = re.compile(r"[\n!#$%&*+\-:<=>@\[\\\]^_`{}~]")
_MAX_NESTING = 20  # markdown-it's CommonMark preset; bounds the look-ahead recursion


def plain_text(source: str, references: Container[str] = frozenset()) -> str:
    """Plain text of an inline source: markup reduced, whitespace collapsed, trimmed.

    `references` holds the document's link reference labels, normalised with
    `normalize_label`: `[text][label]` is a link only when its label is defined.
    """
    source = source.replace("\0", "\ufffd")  # as CommonMark prescribes
    if _TERMINATOR.search(source) is None:  # the common case: nothing to reduce
        return " ".join(source.split())
    return " ".join(_InlineReducer(source, references).reduce().split())


class _InlineReducer:
    """One parse of one inline source; not reused (it holds the parse state)."""

    def __init__(self, source: str, references: Container[str]) -> None:
        self.src = source
        self.references = references
        self.pos = 0
        self.pos_max = len(source)
        self.level = 0
        self.pieces: list[str] = []
        self.delimiters: list[Delimiter] = []
        self._outer_delimiters: list[list[Delimiter]] = []
        self._all_delimiter_lists: list[list[Delimiter]] = [self.delimiters]
        self._skip_cache: dict[int, int] = {}
        self._backtick_last_run: dict[int, int] | None = None
        self._last_terminator: dict[str, int] = {}
        self._rules = (
            self._text,
            self._newline,
            self._escape,
            self._code_span,
            self._emphasis,
            self._link,
            self._image,
            self._autolink,
            self._html,
            self._entity,
        )

    # -- driver ------------------------------------------------------------

    def reduce(self) -> str:
        self._tokenize()
        for delimiters in self._all_delimiter_lists:
            balance(delimiters)
            for opener in delimiters:
                if opener.end >= 0:  # paired markers render as tags: no text
                    self.pieces[opener.piece] = ""
                    self.pieces[delimiters[opener.end].piece] = ""
        return "".join(self.pieces)

    def _tokenize(self) -> None:
        end = self.pos_max
        while self.pos < end:
            matched = self.level < _MAX_NESTING and any(rule(False) for rule in self._rules)
            if not matched:
                self.pieces.append(self.src[self.pos])
                self.pos += 1

    def _skip_token(self) -> None:
        """Advance past one token without output (look-ahead for link labels)."""
        start = self.pos
        if start in self._skip_cache:
            self.pos = self._skip_cache[start]
            return
        matched = False
        if self.level < _MAX_NESTING:
            for rule in self._rules:
                self.level += 1
                matched = rule(True)
                self.level -= 1
                if matched:
                    break
        else:
            # markdown-it's workaround for runaway nesting: skip to the end.
            self.pos = self.pos_max
        if not matched:
            self.pos += 1
        self._skip_cache[start] = self.pos

    def _open_scope(self) -> None:
        """Enter a link: emphasis never pairs across its boundary.

        The empty piece stands for the link's opening tag, so that delimiter
        runs on either side of it are not taken for one run.
        """
        self.pieces.append("")
        self.level += 1
        self._outer_delimiters.append(self.delimiters)
        self.delimiters = []
        self._all_delimiter_lists.append(self.delimiters)

    def _close_scope(self) -> None:
        self.delimiters = self._outer_delimiters.pop()
        self.level -= 1
        self.pieces.append("")

    # -- rules: each returns True if it consumed input at self.pos ---------

    def _text(self, silent: bool) -> bool:
        found = _TERMINATOR.search(self.src, self.pos, self.pos_max)
        stop = found.start() if found else self.pos_max
        if stop == self.pos:
            return False
        if not silent:
            self.pieces.append(self.src[self.pos : stop])
        self.pos = stop
        return True

    def _newline(self, silent: bool) -> bool:
        if self.src[self.pos] != "\n":
            return False
        if not silent:
            self.pieces.append(" ")  # soft or hard break: a space in plain text
        pos = self.pos + 1
        while pos < self.pos_max and self.src[pos] in " \t":
            pos += 1
        self.pos = pos
        return True

    def _escape(self, silent: bool) -> bool:
        if self.src[self.pos] != "\\" or self.pos + 1 >= self.pos_max:
            return False
        escaped = self.src[self.pos + 1]
        pos = self.pos + 2
        if escaped == "\n":  # hard line break
            while pos < self.pos_max and self.src[pos] in " \t":
                pos += 1
            if not silent:
                self.pieces.append(" ")
        elif not silent:
            self.pieces.append(escaped if escaped in ASCII_PUNCTUATION else "\\" + escaped)
        self.pos = pos
        return True

    def _code_span(self, silent: bool) -> bool:
        src, start = self.src, self.pos
        if src[start] != "`":
            return False
        pos = start + 1
        while pos < self.pos_max and src[pos] == "`":
            pos += 1
        opener_length = pos - start
        if self._backtick_last_run is None:
            self._backtick_last_run = last_backtick_runs(src)
        if self._backtick_last_run.get(opener_length, -1) >= pos:
            match_end = pos
            while (match_start := src.find("`", match_end)) != -1 and match_start < self.pos_max:
                match_end = match_start + 1
                while match_end < len(src) and src[match_end] == "`":
                    match_end += 1
                if match_end > self.pos_max:
                    break
                if match_end - match_start == opener_length:
                    if not silent:
                        content = src[pos:match_start].replace("\n", " ")
                        if content.startswith(" ") and content.endswith(" ") and content.strip(" "):
                            content = content[1:-1]
                        self.pieces.append(content)
                    self.pos = match_end
                    return True
        if not silent:
            self.pieces.append(src[start:pos])  # an unmatched run is literal
        self.pos = pos
        return True

    def _emphasis(self, silent: bool) -> bool:
        marker = self.src[self.pos]
        if silent or marker not in "*_":
            return False
        length, can_open, can_close = scan_delimiter_run(self.src, self.pos, self.pos_max)
        for _ in range(length):
            self.delimiters.append(Delimiter(marker, length, len(self.pieces), can_open, can_close))
            self.pieces.append(marker)
        self.pos += length
        return True

    def _link(self, silent: bool) -> bool:
        if self.src[self.pos] != "[":
            return False
        return self._link_or_image(silent, label_open=self.pos, image=False)

    def _image(self, silent: bool) -> bool:
        if self.src[self.pos] != "!":
            return False
        if self.pos + 1 < self.pos_max and self.src[self.pos + 1] != "[":
            return False
        return self._link_or_image(silent, label_open=self.pos + 1, image=True)

    def _link_or_image(self, silent: bool, label_open: int, image: bool) -> bool:
        src, pos_max = self.src, self.pos_max
        label_start = label_open + 1
        # Links may not contain links (images may).
        label_end = self._parse_link_label(label_open, disable_nested=not image)
        if label_end < 0:
            return False
        pos = label_end + 1
        parse_reference = True
        if pos < pos_max and src[pos] == "(":
            parse_reference = False
            pos = self._skip_link_space(pos + 1)
            if pos >= pos_max:
                return False
            destination = link_destination(src, pos, pos_max)
            if destination.ok and valid_link(destination.value):
                pos = destination.pos
            # markdown-it's link rule looks for a title only after a destination;
            # its image rule always does.
            if destination.ok or image:
                before_title = pos
                pos = self._skip_link_space(pos)
                title_end = link_title_end(src, pos, pos_max)
                if pos < pos_max and before_title != pos and title_end >= 0:
                    pos = self._skip_link_space(title_end)
            if pos >= pos_max or src[pos] != ")":
                if image:
                    return False
                parse_reference = True  # not an inline link: maybe a reference one
            pos += 1
        if parse_reference:
            label: str | None = None
            if pos < pos_max and src[pos] == "[":
                second_start = pos + 1
                second_end = self._parse_link_label(pos)
                if second_end >= 0:
                    label = src[second_start:second_end]
                    pos = second_end + 1
                else:
                    pos = label_end + 1
            else:
                pos = label_end + 1
            if not label:  # collapsed `[text][]` or shortcut `[text]`
                label = src[label_start:label_end]
            if normalize_label(label) not in self.references:
                return False
        if not silent:
            if image:
                # Alt text: the label parsed on its own, reduced to plain text.
                alt = _InlineReducer(src[label_start:label_end], self.references).reduce()
                self.pieces.append(alt)
            else:
                saved_max = self.pos_max
                self.pos, self.pos_max = label_start, label_end
                self._open_scope()
                self._tokenize()
                self._close_scope()
                self.pos_max = saved_max
        self.pos = pos
        return True

    def _skip_link_space(self, pos: int) -> int:
        while pos < self.pos_max and self.src[pos] in " \t\n":
            pos += 1
        return pos

    def _parse_link_label(self, start: int, disable_nested: bool = False) -> int:
        """Index of the `]` closing the label opened at `start`, or -1."""
        saved = self.pos
        self.pos = start + 1
        level = 1
        found = False
        while self.pos < self.pos_max:
            marker = self.src[self.pos]
            if marker == "]":
                level -= 1
                if level == 0:
                    found = True
                    break
            before = self.pos
            self._skip_token()
            if marker == "[":
                if before == self.pos - 1:
                    level += 1  # a literal `[`, not part of any token
                elif disable_nested:
                    self.pos = saved
                    return -1
        label_end = self.pos if found else -1
        self.pos = saved
        return label_end

    def _autolink(self, silent: bool) -> bool:
        src, start = self.src, self.pos
        if src[start] != "<":
            return False
        pos = start
        while True:
            pos += 1
            if pos >= self.pos_max or src[pos] == "<":
                return False
            if src[pos] == ">":
                break
        url = src[start + 1 : pos]
        if URI.fullmatch(url):
            if not valid_link(url):
                return False
        elif not EMAIL.fullmatch(url):
            return False
        if not silent:
            self._open_scope()
            self.pieces.append(autolink_text(url))
            self._close_scope()
        self.pos = pos + 1
        return True

    def _html(self, silent: bool) -> bool:
        src, pos = self.src, self.pos
        if src[pos] != "<" or pos + 2 >= self.pos_max:
            return False
        second = src[pos + 1]
        if second not in "!?/" and not ("a" <= second.lower() <= "z" and second.isascii()):
            return False
        if not self._terminator_possible(pos, second):
            return False
        match = HTML_TAG.match(src, pos, self.pos_max)
        if match is None:
            return False
        if not silent:
            self.pieces.append("")  # raw HTML contributes no text, but is a token
        self.pos = match.end()
        return True

    def _terminator_possible(self, pos: int, second: str) -> bool:
        """False if the terminator every HTML form at `pos` needs occurs nowhere
        after it: the regex would scan to the end for nothing, and a run of
        such openers (`<?<?<?...`) would be quadratic (markdown-it's guard)."""
        src = self.src
        if src.startswith("<!--", pos):
            if src.startswith(("<!-->", "<!--->"), pos):
                return True
            return self._last("-->") >= pos + 4
        if src.startswith("<![CDATA[", pos):
            return self._last("]]>") >= pos + 9
        if second == "?":
            return self._last("?>") >= pos + 2
        return self._last(">") >= pos + 2

    def _last(self, terminator: str) -> int:
        if terminator not in self._last_terminator:
            self._last_terminator[terminator] = self.src.rfind(terminator)
        return self._last_terminator[terminator]

    def _entity(self, silent: bool) -> bool:
        src, pos = self.src, self.pos
        if src[pos] != "&" or pos + 1 >= self.pos_max:
            return False
        if src[pos + 1] == "#":
            match = NUMERIC_ENTITY.match(src, pos, self.pos_max)
            if match is None:
                return False
            digits = match.group(1)
            code = int(digits[1:], 16) if digits[0] in "xX" else int(digits, 10)
            decoded = chr(code) if valid_entity_code(code) else "\ufffd"
        else:
            match = NAMED_ENTITY.match(src, pos, self.pos_max)
            if match is None or match.group(1) not in ENTITIES:
                return False
            decoded = ENTITIES[match.group(1)]
        if not silent:
            self.pieces.append(decoded)
        self.pos = match.end()
        return True
