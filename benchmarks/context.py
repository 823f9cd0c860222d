"""What the stages share in one run: the plan, the work folder, the server,
the corpora (made once) and the databases each app ingested (kept for the
no-op and edit stages)."""

from __future__ import annotations

import contextlib
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from benchmarks import corpora
from benchmarks.jobs import run_job
from benchmarks.plan import Plan
from benchmarks.postgres import Server, server

APPS: tuple[str, ...] = ("ours", "bare")
SOURCE = "bench"


def median(values: Sequence[float]) -> float:
    return float(statistics.median(values))


def log(message: str) -> None:
    print(f"[{time.strftime('%H:%M:%S')}] {message}", file=sys.stderr, flush=True)


@dataclass
class Pair:
    """Ours and the bare app on one corpus, each in a database of its own."""

    ctx: Context
    corpus: corpora.Corpus
    tag: str
    trial: int = 0
    urls: dict[str, str] = field(default_factory=dict)
    ingests: dict[str, list[dict[str, Any]]] = field(default_factory=dict)

    def _folder(self) -> Path:
        return self.ctx.work / "apps" / f"{self.tag}-{self.trial}"

    def fresh(self) -> None:
        """New empty databases and engine states for both apps."""
        self.drop()
        self.trial += 1
        for app in APPS:
            self.urls[app] = self.ctx.server().create(f"{app}_{self.tag}_{self.trial}")

    def run(self, app: str, *, written: bool = False) -> dict[str, Any]:
        folder = self._folder()
        spec: dict[str, Any] = {
            "root": self.corpus.root,
            "database_url": self.urls[app],
            "source": SOURCE,
            "written_in": written,
        }
        if app == "ours":
            spec["data_dir"] = folder / "ours-data"
        else:
            spec["state_dir"] = folder / "bare-state"
        result = run_job(app, **spec)
        if result.get("failed"):
            # Reported, not fatal: the figures of the run stay useful.
            failure = {"app": app, "corpus": self.tag, "failures": result.get("failures")}
            self.ctx.raw.setdefault("failures", []).append(failure)
            log(f"FAILED documents: {failure}")
        return result

    def ingest_trials(self, trials: int) -> None:
        """`trials` fresh ingests per app (interleaved); the last one's databases stay."""
        for trial in range(trials):
            self.fresh()
            for app in APPS:
                result = self.run(app)
                self.ingests.setdefault(app, []).append(result)
                log(
                    f"ingest {self.tag} {app} #{trial + 1}: {result['seconds']:.2f} s, "
                    f"{result['processed']} docs, {result['rows_total']} rows, "
                    f"peak {result['peak_rss_mb']:.0f} MB"
                )

    def drop(self) -> None:
        if self.trial:
            for app in APPS:
                self.ctx.server().drop(f"{app}_{self.tag}_{self.trial}")
        self.urls.clear()


@dataclass
class Context:
    plan: Plan
    work: Path
    admin_url: str | None = None
    sources: corpora.Sources = field(default_factory=corpora.Sources)
    raw: dict[str, Any] = field(default_factory=dict)  # samples, for the JSON
    _stack: contextlib.ExitStack = field(default_factory=contextlib.ExitStack)
    _server: Server | None = None
    _corpora: dict[str, corpora.Corpus] = field(default_factory=dict)
    _pairs: dict[str, Pair] = field(default_factory=dict)

    def server(self) -> Server:
        if self._server is None:
            log("starting PostgreSQL")
            self._server = self._stack.enter_context(server(self.work / "server", self.admin_url))
        return self._server

    def has_server(self) -> bool:
        return self._server is not None

    def corpus(self, key: str) -> corpora.Corpus:
        """A corpus by key, made on first use: rust-book, tldr, generated, big,
        index-doc, long, growth-x<k>."""
        if key not in self._corpora:
            self._corpora[key] = self._make(key)
        return self._corpora[key]

    def _make(self, key: str) -> corpora.Corpus:
        folder = self.work / "corpora" / key
        log(f"preparing corpus {key}")
        book, tldr = self.sources.rust_book, self.sources.tldr
        makers: dict[str, Callable[[], corpora.Corpus]] = {
            "rust-book": lambda: corpora.copy_corpus("rust-book", book, folder),
            "tldr": lambda: corpora.copy_corpus("tldr", tldr, folder, self.plan.tldr_files),
            "generated": lambda: corpora.many_files(folder, self.plan.generated_files, tldr),
            "big": lambda: corpora.big_document(folder, self.plan.big_doc_mb, book),
            "index-doc": lambda: corpora.big_document(folder, self.plan.index_doc_mb, book),
            "long": lambda: corpora.long_documents(folder, self.plan.long_mb, book),
        }
        if key.startswith("growth-x"):
            copies = int(key.removeprefix("growth-x"))
            return corpora.book_copies(folder, copies, self.plan.growth_files, book)
        return makers[key]()

    def reruns(self, key: str) -> int:
        return self.plan.generated_reruns if key == "generated" else self.plan.reruns

    def pair(self, key: str, trials: int = 1) -> Pair:
        """Both apps' databases with `key` ingested (`trials` times the first time)."""
        if key not in self._pairs:
            pair = Pair(self, self.corpus(key), key.replace("-", "_"))
            pair.ingest_trials(trials)
            self._pairs[key] = pair
        return self._pairs[key]

    def close(self) -> None:
        self._stack.close()
