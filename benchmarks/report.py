"""Figures -> the printed table and the JSON; the run's date, versions, machine."""

from __future__ import annotations

import datetime
import json
import os
import platform
from collections.abc import Sequence
from dataclasses import asdict, dataclass
from importlib import metadata
from pathlib import Path
from typing import Any


@dataclass(frozen=True, slots=True)
class Figure:
    """One line of the table: ours next to a baseline measured in the same run."""

    stage: str  # "1 index", "2 ingest", ...
    case: str  # the corpus
    measure: str  # what `ours` and `baseline` are, and what the ratio is
    ours: float | None
    baseline: float | None
    baseline_name: str = ""  # "splitter", "bare app"
    ratio: float | None = None
    target: str = ""  # "<= 1.0x", "" when the issue sets none
    met: bool | None = None  # None: no target
    note: str = ""


HEADER = ("stage", "case", "measure", "ours", "baseline", "ratio", "target", "result", "note")


def _number(value: float | None) -> str:
    if value is None:
        return ""
    if abs(value) >= 100:
        return f"{value:,.0f}"
    if abs(value) >= 10:
        return f"{value:.1f}"
    return f"{value:.3g}" if abs(value) < 1 else f"{value:.2f}"


def _cells(figure: Figure) -> tuple[str, ...]:
    baseline = _number(figure.baseline)
    if baseline and figure.baseline_name:
        baseline = f"{baseline} ({figure.baseline_name})"
    ratio = "" if figure.ratio is None else f"{figure.ratio:.2f}x"
    result = {True: "met", False: "MISSED", None: ""}[figure.met]
    return (
        figure.stage,
        figure.case,
        figure.measure,
        _number(figure.ours),
        baseline,
        ratio,
        figure.target,
        result,
        figure.note,
    )


def table(figures: Sequence[Figure]) -> str:
    """A fixed-width table that is also a Markdown table (pastes into a README)."""
    rows = [_cells(figure) for figure in figures]
    widths = [max(len(row[i]) for row in [HEADER, *rows]) for i in range(len(HEADER))]
    numeric = {"ours", "baseline", "ratio"}

    def line(cells: Sequence[str]) -> str:
        padded = (
            cell.rjust(width) if name in numeric else cell.ljust(width)
            for name, cell, width in zip(HEADER, cells, widths, strict=True)
        )
        return "| " + " | ".join(padded) + " |"

    rule = (
        "|"
        + "|".join(
            "-" * (width + 1) + ":" if name in numeric else ":" + "-" * (width + 1)
            for name, width in zip(HEADER, widths, strict=True)
        )
        + "|"
    )
    return "\n".join([line(HEADER), rule, *(line(row) for row in rows)]) + "\n"


def _version(distribution: str) -> str:
    try:
        return metadata.version(distribution)
    except metadata.PackageNotFoundError:
        return "not installed"


def _cpu_model() -> str:
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def _memory_gb() -> float | None:
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                return round(int(line.split()[1]) / 1024 / 1024, 1)
    except OSError:
        pass
    return None


def environment(postgres_version: str | None) -> dict[str, Any]:
    """Date, versions and machine of this run."""
    return {
        "date": datetime.datetime.now(datetime.UTC).strftime("%Y-%m-%d %H:%M UTC"),
        "versions": {
            "mdchunks": _version("mdchunks"),
            "cocoindex": _version("cocoindex"),
            "tree-sitter": _version("tree-sitter"),
            "tree-sitter-markdown": _version("tree-sitter-markdown"),
            "python": platform.python_version(),
            "postgresql": postgres_version or "not started",
        },
        "machine": {
            "cpu": _cpu_model(),
            "cores": os.cpu_count(),
            "memory_gb": _memory_gb(),
            "os": f"{platform.system()} {platform.release()}",
            "load_average_at_start": [round(load, 2) for load in os.getloadavg()],
        },
    }


def header_text(env: dict[str, Any], plan_name: str, seconds: float) -> str:
    versions = ", ".join(f"{name} {version}" for name, version in env["versions"].items())
    machine = env["machine"]
    load = " / ".join(str(value) for value in machine["load_average_at_start"])
    return (
        f"mdchunks benchmarks ({plan_name} plan), {env['date']}, {seconds / 60:.1f} min\n"
        f"versions: {versions}\n"
        f"machine: {machine['cpu']}, {machine['cores']} cores, {machine['memory_gb']} GB, "
        f"{machine['os']}; load average at start {load}\n"
    )


def to_json(
    env: dict[str, Any], plan: dict[str, Any], figures: Sequence[Figure], raw: dict[str, Any]
) -> str:
    payload = {
        "environment": env,
        "plan": plan,
        "figures": [asdict(figure) for figure in figures],
        "raw": raw,
    }
    return json.dumps(payload, indent=2, ensure_ascii=False) + "\n"
