"""The matched-section variants spike (`spikes.label_variants`): its own BM25
is the product's at the defaults (so every variant is compared on the same
footing), tsvector positions parse, and the counting of found / labelled /
decisions, on slices made by hand."""

from __future__ import annotations

import uuid
from collections import Counter

from mdchunks.retrieval import lexical_terms, sections

from spikes.label_variants import (
    Decision,
    Question,
    SectionDoc,
    Stats,
    measure,
    no_heading,
    path_heading,
    product,
    sentences,
    slice_bm25,
    with_vector,
    word_positions,
)


def _slice(
    ordinal: int,
    path: tuple[str, ...],
    text_vector: str,
    heading: str | None,
    *,
    governing: bool = False,
) -> sections.Slice:
    ref = sections.SectionRef(
        id=uuid.UUID(int=ordinal),
        ordinal=ordinal,
        heading_text=path[-1],
        heading_level=len(path),
        heading_path=path,
        breadcrumb=" > ".join(path),
        char_start=0,
        char_end=1,
        start_line=1,
        end_line=1,
    )
    return sections.Slice(ref, governing, "", text_vector, heading)


TERMS = lexical_terms.QueryTerms(
    terms=(lexical_terms.Term("bug", 3, 2.0), lexical_terms.Term("client", 9, 0.5, occurrences=2)),
    chunks=100,
    avgdl=20.0,
    stored=True,
)
PARENT = _slice(1, ("Restarts",), "'client':4 'restart':2", "'restart':1", governing=True)
CHILD = _slice(2, ("Restarts", "We Make Mistakes"), "'bug':3,7,9 'mistak':1", "'mistak':2")
ANSWER = _slice(3, ("Restarts", "Small Errors"), "'client':5 'error':2", "'error':1")


def _decision(vectors: tuple[float, ...] | None = None) -> Decision:
    stats = {"own": Stats(Counter(), 1, 1.0), "whole": Stats(Counter(), 1, 1.0)}
    return Decision("q", TERMS, (PARENT, CHILD, ANSWER), {}, stats, vectors)


def test_the_spikes_bm25_is_the_products_at_the_defaults() -> None:
    d = _decision()
    assert slice_bm25(d) == sections.lexical_scores(d.slices, TERMS)
    assert product(d) == slice_bm25(d)
    # "bug" (weight 2, tf 3) outweighs "client" (weight 1, tf 1): the child wins.
    assert max(range(3), key=lambda i: product(d)[i]) == 1


def test_positions_parse_with_weights_and_quotes() -> None:
    assert word_positions("'bug':3,7B,9A 'it''s':1") == {"bug": [3, 7, 9], "it's": [1]}
    assert word_positions(None) == {}


def test_a_vector_can_move_the_pick_and_the_counts_follow() -> None:
    gold = ANSWER.section.heading_path
    # Rank 1 holds the fact and must be decided; rank 2 has no fact; rank 3
    # holds it in a chunk of one section, the answer's.
    lexical_only = Question(gold, ((None, _decision()), (None, None), (gold, None)))
    assert measure([lexical_only], product) == "0/1 1/1 0/1"
    nearer = Question(gold, ((None, _decision((0.1, 0.2, 0.9))), (None, None)))
    assert measure([nearer], with_vector(0.5)) == "1/1 1/1 1/1"
    assert measure([nearer], product) == "0/1 0/1 0/1"


def test_the_path_heading_variant_reads_the_whole_path_as_the_heading() -> None:
    # The children's paths hold "restart" (their parent's heading), which the
    # query asks for: read as their heading, the path adds it to their slices.
    terms = lexical_terms.QueryTerms(
        terms=(lexical_terms.Term("restart", 5, 1.5), lexical_terms.Term("client", 9, 0.5)),
        chunks=100,
        avgdl=20.0,
        stored=True,
    )
    paths = {
        PARENT.section.id: {"restart": 1},
        CHILD.section.id: {"restart": 1, "mistak": 1},
        ANSWER.section.id: {"restart": 1, "error": 1},
    }
    docs = {id_: SectionDoc((), ({}, {}), ({}, {}), counts) for id_, counts in paths.items()}
    stats = {"own": Stats(Counter(), 1, 1.0), "whole": Stats(Counter(), 1, 1.0)}
    d = Decision("q", terms, (PARENT, CHILD, ANSWER), docs, stats, None)
    own = product(d)
    whole = path_heading(d)
    assert own[1] == 0 and own[2] > 0  # "client" in the answer's text only
    assert whole[1] > 0 and whole[2] > own[2]  # "restart" from the path, in both
    assert whole[0] == own[0]  # a top-level section's path is its own heading
    # No heading at all: the text alone, the parent's "restart" and "client" win.
    assert max(range(3), key=lambda i: no_heading(d)[i]) == 0


def test_a_slice_is_cut_into_sentences_paragraphs_and_list_items() -> None:
    text = (
        "When building web APIs, FastAPI will contain it. The client will get a 500.\n\n"
        "For example, this could be handled by:\n\n"
        "* Docker in Swarm Mode\n* Kubernetes, or a cloud\nprovider's own service\n"
        "ok\n"
    )
    assert sentences(text) == [
        "When building web APIs, FastAPI will contain it.",
        "The client will get a 500.",
        "For example, this could be handled by:",
        "* Docker in Swarm Mode",
        "* Kubernetes, or a cloud provider's own service ok",
    ]
    assert sentences("tiny") == ["tiny"]  # nothing long enough: the slice whole
