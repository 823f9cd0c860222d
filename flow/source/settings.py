"""A source keeps what it was told: the settings of a run of a known source.

A run of a source that has run before takes that source's last settings (its
recipe and its embedding settings: on or off, the model, the long-input
rule) and changes only what the run is told (docs/cli.md): one forgotten
option must not re-chunk or re-embed a large corpus. `ingest` and `backfill`
both come here, so one option means one change in either of them.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from mdchunks.errors import UsageError
from mdchunks.heading_index.options import options_of
from mdchunks.plugin.recipe import Recipe
from mdchunks.retrieval import embedder

# The recipe's fields a run may be told (the CLI's options), and the
# embedding fields; versions and policies are the code's, never told.
OFFERED = tuple(name for name, _, info in options_of(Recipe) if info.cli)
COMPARED = (*OFFERED, "embed", "embed_long_input")


@dataclass(frozen=True, slots=True)
class Told:
    """What one run is told: recipe options (None: keep) and the embeddings'."""

    options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    embed: bool | None = None  # True on, False off (deletes the vectors), None: keep
    embed_model: str | None = None  # implies embed
    long_input: str | None = None  # the long-input rule; None: keep

    def check(self, function: str) -> None:
        """Refuses, before any work, names no run takes and contradictions."""
        unknown = sorted(set(self.options) - set(OFFERED))
        if unknown:
            raise TypeError(f"{function}() got unknown recipe options: {', '.join(unknown)}")
        if self.embed is False and self.embed_model is not None:
            raise UsageError("--no-embed and --embed-model contradict each other: choose one")
        if self.long_input is not None and self.long_input not in embedder.LONG_INPUTS:
            raise UsageError(
                f"unknown long-input rule {self.long_input!r} "
                f"(known: {', '.join(embedder.LONG_INPUTS)})"
            )


@dataclass(frozen=True, slots=True)
class Settings:
    recipe: Recipe
    remembered: bool  # the source's last settings were the base (a known source)
    changed: tuple[str, ...]  # "chunk_size 2000 -> 1000", of the fields that changed


def resolve(last: Recipe | None, told: Told) -> Settings:
    """The recipe of a run: the source's last (`last`; None: a new source, the
    defaults) with what the run is told. A chunk size given without its
    minimum or overlap takes the ones a new source would take with it, so
    `--chunk-size N` is one recipe whatever the source had before."""
    base = last if last is not None else Recipe()
    options = {name: value for name, value in told.options.items() if value is not None}
    size = options.get("chunk_size")
    try:
        if isinstance(size, int):
            fresh = Recipe().with_options(
                chunk_size=size,
                min_chunk_size=options.get("min_chunk_size"),
                chunk_overlap=options.get("chunk_overlap"),
            )
            options["min_chunk_size"] = fresh.min_chunk_size
            options["chunk_overlap"] = fresh.chunk_overlap
        recipe = base.with_options(**options)
    except ValueError as exc:
        raise UsageError(str(exc)) from None
    if told.embed_model is not None:
        recipe = dataclasses.replace(recipe, embed=embedder.model_key(told.embed_model))
    elif told.embed is not None:
        kept = recipe.embed or embedder.DEFAULT_MODEL
        recipe = dataclasses.replace(recipe, embed=kept if told.embed else None)
    if told.long_input is not None:
        rule = None if told.long_input == embedder.DEFAULT_LONG_INPUT else told.long_input
        recipe = dataclasses.replace(recipe, embed_long_input=rule)
    if last is None:
        return Settings(recipe, remembered=False, changed=())
    return Settings(recipe, remembered=True, changed=_changes(last, recipe))


def _changes(before: Recipe, after: Recipe) -> tuple[str, ...]:
    def shown(name: str, value: object) -> str:
        if name == "embed":
            return "off" if value is None else str(value)
        if name == "embed_long_input" and value is None:
            return embedder.DEFAULT_LONG_INPUT
        return str(value).lower() if isinstance(value, bool) else str(value)

    return tuple(
        f"{name} {shown(name, getattr(before, name))} -> {shown(name, getattr(after, name))}"
        for name in COMPARED
        if getattr(before, name) != getattr(after, name)
    )
