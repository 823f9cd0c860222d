"""A document's title, from its front matter (docs/heading-index.md, "The page title").

YAML (`---`) front matter's top-level `title:` and TOML (`+++`) front
matter's `title =`, quoted or not, read by real parsers (PyYAML's safe
loader, the standard library's tomllib). Front matter is the author's and
often sloppy: whatever it holds, a document never fails for it. Malformed
YAML or TOML falls back to the line `title: ...` / `title = ...` read alone;
a title that is not text (a list, a mapping), or is blank, is no title.
"""

from __future__ import annotations

import re
import tomllib
from typing import Any

import yaml
from mdchunks.heading_index.breadcrumb import sanitize_part
from mdchunks.heading_index.searchable import front_matter

try:  # libyaml's loader when PyYAML was built with it: ten times the pure one
    _LOADER: Any = yaml.CSafeLoader
except AttributeError:  # pragma: no cover - a PyYAML without libyaml
    _LOADER = yaml.SafeLoader

# A title line alone, for front matter its parser refuses: the key at the
# start of a line, then the value to the end of it.
_YAML_LINE = re.compile(r"^title[ \t]*:[ \t]*(.*?)[ \t]*$", re.MULTILINE)
_TOML_LINE = re.compile(r"^title[ \t]*=[ \t]*(.*?)[ \t]*$", re.MULTILINE)
_MAY_HOLD_TITLE = re.compile(r"^[ \t]*[\"']?title", re.MULTILINE)


def document_title(text: str) -> str | None:
    """The title in `text`'s front matter, sanitised to one line; None without.
    A leading BOM is skipped (text read without `decode_document`)."""
    text = text.removeprefix("\ufeff")
    found = front_matter(text)
    if found is None:
        return None
    body = text[found[0] : found[1]]
    if _MAY_HOLD_TITLE.search(body) is None:  # most front matter: no parse at all
        return None
    toml = text.startswith("+++")
    value = _toml_title(body) if toml else _yaml_title(body)
    if not isinstance(value, str | int | float) or isinstance(value, bool):
        return None
    return sanitize_part(str(value)) or None


def _yaml_title(body: str) -> object:
    try:
        data = yaml.load(body, Loader=_LOADER)  # a safe loader (C or Python)
    except (yaml.YAMLError, ValueError, RecursionError):
        return _line_title(_YAML_LINE, body)
    return data.get("title") if isinstance(data, dict) else None


def _toml_title(body: str) -> object:
    try:
        data = tomllib.loads(body)
    except (tomllib.TOMLDecodeError, ValueError, RecursionError):
        return _line_title(_TOML_LINE, body)
    return data.get("title")


def _line_title(line: re.Pattern[str], body: str) -> str | None:
    """The value of the first `title` line, unquoted when quoted."""
    found = line.search(body)
    if found is None:
        return None
    value = found.group(1)
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "\"'":
        value = value[1:-1]
    return value or None
