"""Readable snippets (flow/retrieval/snippets.py): whole words at both ends,
markup shown as text, highlights kept; pure functions over ts_headline's
output and the chunk's text."""

from __future__ import annotations

from mdchunks.retrieval.snippets import FRAGMENT_DELIMITER, HIGHLIGHT_START, HIGHLIGHT_STOP, shown

S, E = HIGHLIGHT_START, HIGHLIGHT_STOP
TEXT = (
    "## Conditional\n\nThe `v-if` vs. `v-show` {#v-if-vs-v-show}\n\n"
    "here   is _Ownership_ text about **rendering**. Many more words follow; `__init__` "
    "and snake_case stay. The chunk ends where rendering again shows."
)


def test_fragments_start_and_end_at_word_boundaries() -> None:
    # What ts_headline gave for "show rendering": fragments cut inside the
    # anchor `{#v-if-vs-v-show}` (which then goes) and inside `shows.`.
    headline = (
        f"{S}show{E}}}\n\nhere   is _Ownership_ text about **{S}rendering{E}**. Many"
        f"{FRAGMENT_DELIMITER}chunk ends where {S}rendering{E} again {S}show{E}"
    )
    # Words of the chunk before it: a `…` says the snippet starts inside.
    assert shown(headline, TEXT) == (
        f"… here is Ownership text about {S}rendering{E}. Many"
        f"{FRAGMENT_DELIMITER}chunk ends where {S}rendering{E} again {S}show{E}s."
    )
    cut = f"-{S}show{E}` {{#v-if"
    assert shown(cut, TEXT) == f"… `v-{S}show{E}` …"


def test_a_cut_is_marked_and_markup_left_out_is_no_cut() -> None:
    # A snippet that starts after words, or ends before some, says so with
    # `…`; one that leaves out only an anchor tag and heading marks does not.
    text = '<a id="rules"></a>\n\n## Ownership Rules\n\nFirst, the rules. Then more words.'
    assert shown(f"Ownership {S}Rules{E}\n\nFirst, the rules.", text) == (
        f"Ownership {S}Rules{E} First, the rules. …"
    )
    assert shown("the rules. Then more words.", text) == "… the rules. Then more words."
    # A comment over two lines is markup too; an autolink before is text.
    commented = "<!-- a note\nover lines -->\n\nFirst words. More."
    assert shown("First words.", commented) == "First words. …"
    linked = "<https://example.com/a>\n\nFirst words."
    assert shown("First words.", linked) == "… First words."


def test_anchors_heading_marks_and_emphasis_go_and_code_spans_stay() -> None:
    assert shown(TEXT, TEXT) == (
        "Conditional The `v-if` vs. `v-show` here is Ownership text about rendering. "
        "Many more words follow; `__init__` and snake_case stay. The chunk ends where "
        "rendering again shows."
    )
    assert shown("a **_both_** and *one* {#x .cls}", "a **_both_** and *one* {#x .cls}") == (
        "a both and one"
    )


def test_a_token_longer_than_the_widening_stays_cut_and_says_so() -> None:
    url = "https://example.com/" + "a" * 80 + "/end"
    text = f"see {url} here"
    assert shown("end here", text) == "…" + "a" * 39 + "/end here"


def test_a_fragment_not_found_in_the_text_is_kept_as_it_came() -> None:
    assert shown(f"{S}zebra{E} tail", "other text") == f"{S}zebra{E} tail"
