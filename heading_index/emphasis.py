"""Emphasis delimiters: scanning a `*`/`_` run, pairing openers with closers.

CommonMark's "process emphasis" as markdown-it implements it (the rule of 3,
and the `openers_bottom` / `jumps` bounds that keep it linear). For plain
text only the outcome matters: paired markers vanish, the rest stay.
"""

from __future__ import annotations

from dataclasses import dataclass

from mdchunks.heading_index.inline_syntax import MD_WHITESPACE, is_punctuation


@dataclass(slots=True)
class Delimiter:
    """One `*` or `_` character of a delimiter run."""

    marker: str
    run_length: int  # length of the whole run, for the rule of 3
    piece: int  # index of its one-character piece of output
    can_open: bool
    can_close: bool
    end: int = -1  # index of the matching closer, once matched


def scan_delimiter_run(src: str, start: int, pos_max: int) -> tuple[int, bool, bool]:
    """Length of the `*`/`_` run at `start`, and whether it can open, close emphasis."""
    marker = src[start]
    can_split_word = marker == "*"  # `_` does not open or close inside words
    before = src[start - 1] if start > 0 else " "
    pos = start
    while pos < pos_max and src[pos] == marker:
        pos += 1
    after = src[pos] if pos < pos_max else " "
    before_punct, after_punct = is_punctuation(before), is_punctuation(after)
    before_space, after_space = before in MD_WHITESPACE, after in MD_WHITESPACE
    left_flanking = not (after_space or (after_punct and not (before_space or before_punct)))
    right_flanking = not (before_space or (before_punct and not (after_space or after_punct)))
    can_open = left_flanking and (can_split_word or not right_flanking or before_punct)
    can_close = right_flanking and (can_split_word or not left_flanking or after_punct)
    return pos - start, can_open, can_close


def balance(delimiters: list[Delimiter]) -> None:
    """Pair emphasis openers with closers (CommonMark "process emphasis").

    `jumps` and `openers_bottom` are markdown-it's bounds that keep inputs
    like `*_*_*_...` linear.
    """
    openers_bottom: dict[str, list[int]] = {}
    header = 0  # first delimiter of the closer's run
    last_piece = -2
    jumps: list[int] = []
    for closer_index, closer in enumerate(delimiters):
        jumps.append(0)
        if delimiters[header].marker != closer.marker or last_piece != closer.piece - 1:
            header = closer_index
        last_piece = closer.piece
        if not closer.can_close:
            continue
        bottoms = openers_bottom.setdefault(closer.marker, [-1] * 6)
        bottom_slot = (3 if closer.can_open else 0) + closer.run_length % 3
        opener_index = header - jumps[header] - 1
        new_bottom = opener_index
        while opener_index > bottoms[bottom_slot]:
            opener = delimiters[opener_index]
            if opener.marker == closer.marker and opener.can_open and opener.end < 0:
                odd_match = (
                    (opener.can_close or closer.can_open)
                    and (opener.run_length + closer.run_length) % 3 == 0
                    and (opener.run_length % 3 != 0 or closer.run_length % 3 != 0)
                )
                if not odd_match:
                    last_jump = (
                        jumps[opener_index - 1] + 1
                        if opener_index > 0 and not delimiters[opener_index - 1].can_open
                        else 0
                    )
                    jumps[closer_index] = closer_index - opener_index + last_jump
                    jumps[opener_index] = last_jump
                    closer.can_open = False
                    opener.end = closer_index
                    opener.can_close = False
                    new_bottom = -1
                    last_piece = -2
                    break
            opener_index -= jumps[opener_index] + 1
        if new_bottom != -1:
            bottoms[bottom_slot] = new_bottom
