"""Figures -> the printed table and the JSON; the run's date, versions, machine."""

from __future__ import annotations

import datetime
import json
import os
import platform
from collections.abc import Callable, Sequence
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


def breakdown_table(found: dict[str, dict[str, Any]]) -> str:
    """Stage 8 as parts x corpora: wall seconds of the phases (share of the whole
    run), then CPU seconds of the steps (share of all the CPU the ingest took,
    ours and the server's)."""
    keys = list(found)
    rows: list[tuple[str, list[str]]] = []

    def wall(label: str, value: Callable[[dict[str, Any]], float]) -> None:
        cells = []
        for key in keys:
            part = found[key]
            whole = part["startup_wall"] + part["ingest_wall"]
            cells.append(f"{value(part):.2f} ({value(part) / whole:.0%})")
        rows.append((label, cells))

    def cpu(label: str, value: Callable[[dict[str, Any]], float]) -> None:
        cells = []
        for key in keys:
            part = found[key]
            total = part["ingest_cpu"] + part["server_cpu"]["ingest"]
            cells.append(f"{value(part):.2f} ({value(part) / total:.0%})")
        rows.append((label, cells))

    wall("wall: start-up (interpreter, imports)", lambda p: p["startup_wall"])
    wall("wall: migrations", lambda p: p["phases_wall"]["migrations"])
    wall("wall: walk", lambda p: p["phases_wall"]["walk"])
    wall("wall: engine run", lambda p: p["phases_wall"]["engine"])
    wall("wall: reconciliation", lambda p: p["phases_wall"]["reconciliation"])
    wall("wall: lock, catalog, state, counts", lambda p: p["other_wall"])
    wall("wall: whole run", lambda p: p["startup_wall"] + p["ingest_wall"])
    for step in ("read", "split", "index", "assign", "rows"):
        cpu(f"CPU: {step}", lambda p, step=step: p["steps_cpu"][step])
    cpu("CPU: engine (cocoindex, event loop, asyncpg)", lambda p: p["engine_cpu"])
    cpu("CPU: PostgreSQL during the engine run", lambda p: p["server_cpu"]["engine"])
    cpu("CPU: PostgreSQL, whole ingest", lambda p: p["server_cpu"]["ingest"])
    cpu("CPU: ours, whole ingest", lambda p: p["ingest_cpu"])
    header = ["s (share)", *(found[key]["corpus"] for key in keys)]
    lines = [
        "| " + " | ".join(header) + " |",
        "|:--|" + "--:|" * len(keys),
        *("| " + " | ".join([label, *cells]) + " |" for label, cells in rows),
    ]
    return "\n".join(lines) + "\n"
