"""The layout rules of docs/layout.md, kept by checks rather than by memory."""

from __future__ import annotations

import ast
import os
import re
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    assert found, f"{name} is not installed in the test environment"
    return found


@pytest.fixture(scope="module")
def installed(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The wheel, built from this checkout and unpacked: mdchunks as a user's
    site-packages has it (flow/, heading_index/ and migrations/ under one name)."""
    out = tmp_path_factory.mktemp("wheel")
    # Built from a copy: setuptools writes build/ next to the sources, which
    # two runs in one checkout would share.
    source = out / "source"
    source.mkdir()
    for name in ("pyproject.toml", "README.md"):
        shutil.copy2(ROOT / name, source / name)
    for folder in ("flow", "heading_index", "migrations"):
        shutil.copytree(
            ROOT / folder, source / folder, ignore=shutil.ignore_patterns("__pycache__")
        )
    pip_wheel = [sys.executable, "-m", "pip", "wheel", "-q", "--no-deps", "--no-build-isolation"]
    subprocess.run(
        [*pip_wheel, "-w", str(out), str(source)],
        check=True,
        capture_output=True,
    )
    (wheel,) = out.glob("mdchunks-*.whl")
    site = out / "site"
    with zipfile.ZipFile(wheel) as archive:
        archive.extractall(site)
    return site


def test_the_wheel_adds_one_import_name(installed: Path) -> None:
    top = {p.name for p in installed.iterdir() if not p.name.endswith(".dist-info")}
    assert top == {"mdchunks"}
    assert (installed / "mdchunks" / "heading_index" / "index.py").is_file()
    assert (installed / "mdchunks" / "migrations" / "0001_content_chunks.sql").is_file()
    (info,) = installed.glob("mdchunks-*.dist-info")
    entry_points = (info / "entry_points.txt").read_text()
    assert "mdchunks = mdchunks.__main__:main" in entry_points


def _lint_imports(site: Path) -> subprocess.CompletedProcess[str]:
    """import-linter's contracts (pyproject.toml) over the package installed in `site`."""
    return subprocess.run(
        [_tool("lint-imports"), "--no-cache"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": f"{site}{os.pathsep}{ROOT}"},
    )


def test_import_contracts_hold(installed: Path) -> None:
    # Contracts live in pyproject.toml [tool.importlinter]. They are checked on
    # the installed layout: in the checkout mdchunks.heading_index is a mapped
    # folder, which import-linter cannot follow.
    result = _lint_imports(installed)
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 broken" in result.stdout, result.stdout
    assert "Module 'mdchunks" not in result.stdout  # every contract's modules resolved


@pytest.mark.parametrize(
    ("module", "breach", "contract"),
    [
        ("db/connection.py", "import mdchunks.source.lock", "rooms call downward only"),
        ("plugin/rows.py", "import mdchunks.retrieval.hits", "rooms call downward only"),
        ("source/lock.py", "import mdchunks.source.run", "no cycle inside a room"),
        # The loop the chunkers' settings protocol removed: a chunker importing
        # the options that import the registry.
        (
            "heading_index/recursive.py",
            "import mdchunks.heading_index.options",
            "no cycle inside a room",
        ),
    ],
)
def test_import_contracts_fail_on_a_breach(
    installed: Path, tmp_path: Path, module: str, breach: str, contract: str
) -> None:
    # The contracts above can fail: the same check over a copy of the installed
    # layout with one import added against the rooms' directions.
    site = tmp_path / "site"
    shutil.copytree(installed, site)
    target = site / "mdchunks" / module
    target.write_text(target.read_text() + f"\n{breach}  # the breach\n")
    result = _lint_imports(site)
    assert result.returncode != 0, result.stdout
    assert f"{contract} BROKEN" in result.stdout, result.stdout


def test_every_room_says_what_lives_there_and_what_it_may_use() -> None:
    rooms = [p for p in (ROOT / "flow").iterdir() if (p / "__init__.py").is_file()]
    assert {room.name for room in rooms} >= {"cli", "db", "plugin", "retrieval", "source"}
    for room in rooms:
        doc = ast.get_docstring(ast.parse((room / "__init__.py").read_text()))
        assert doc and "May use" in doc, f"flow/{room.name}/__init__.py: what may it use?"
        assert f"`{room.name}`" in (ROOT / "docs" / "layout.md").read_text(), room.name


_IMPORT_EVERYTHING = """
import importlib, json, logging, os, pkgutil, signal, sys, warnings
def host():  # what a host process owns: environment, logging, signal handlers, warnings
    return {
        **{f"env {k}": v for k, v in os.environ.items()},
        "root logger level": logging.root.level,
        "root logger handlers": repr(logging.root.handlers),
        "SIGINT handler": repr(signal.getsignal(signal.SIGINT)),
        "SIGTERM handler": repr(signal.getsignal(signal.SIGTERM)),
        "warning filters": repr(warnings.filters),
    }
def diff(a, b, only=""):
    return {k for k in set(a) | set(b) if k.startswith(only) and a.get(k) != b.get(k)}
start = host()
import mdchunks.heading_index
light = "cocoindex" not in sys.modules
changed = diff(start, host())
# The engine's own import side effects are not ours (numpy, under cocoindex,
# adds warning filters of its own): the rest is measured from here.
import cocoindex, psycopg
before = host()
import mdchunks
names = [m.name for m in pkgutil.walk_packages(mdchunks.__path__, "mdchunks.")]
index = mdchunks.heading_index
names += [f"mdchunks.heading_index.{m.name}" for m in pkgutil.iter_modules(index.__path__)]
names.append("mdchunks.migrations")
for name in names:
    importlib.import_module(name)
for name in mdchunks.__all__:
    getattr(mdchunks, name)
after = host()
changed |= diff(before, after) | diff(start, after, only="env ")
print(json.dumps({"light": light, "changed": sorted(changed), "modules": len(names)}))
"""


def test_importing_mdchunks_changes_nothing_in_the_host(tmp_path: Path) -> None:
    env = {
        k: v
        for k, v in os.environ.items()
        if k not in {"RUST_LOG", "COCOINDEX_DISABLE_USAGE_TRACKING"}
    }
    env["COCOINDEX_DISABLE_USAGE_TRACKING"] = "1"  # the test's own process: no telemetry
    done = subprocess.run(
        [sys.executable, "-c", _IMPORT_EVERYTHING],
        # Not the checkout, nor its parent (a clone is often a folder named
        # `mdchunks`, which would import as a namespace package from there):
        # what is importable is what is installed.
        cwd=tmp_path,
        capture_output=True,
        text=True,
        env=env,
        check=True,
    )
    import json

    found = json.loads(done.stdout.strip().splitlines()[-1])
    assert found["light"], "import mdchunks.heading_index loaded cocoindex"
    assert found["changed"] == []
    assert found["modules"] > 20


def _imported_modules(folder: Path) -> set[str]:
    """Every absolute module name an import statement below `folder` names."""
    names: set[str] = set()
    for source in folder.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            if isinstance(node, ast.Import):
                names.update(alias.name for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module)
    return names


def _top_levels(modules: set[str]) -> set[str]:
    return {name.split(".")[0] for name in modules}


def test_heading_index_imports_only_tree_sitter_and_the_standard_library() -> None:
    # A second, independent check: import-linter only sees modules it can
    # resolve; this one reads every import statement of the package.
    modules = _imported_modules(ROOT / "heading_index")
    ours = {name for name in modules if name.split(".")[0] == "mdchunks"}
    assert all(name.startswith("mdchunks.heading_index") for name in ours), ours
    third_party = _top_levels(modules) - set(sys.stdlib_module_names) - {"mdchunks"}
    assert third_party <= {"tree_sitter", "tree_sitter_markdown"}, third_party


def test_heading_index_and_migrations_know_no_engine_and_no_database() -> None:
    database_or_engine = {"cocoindex", "asyncpg", "psycopg", "pgserver", "yoyo"}
    assert not _top_levels(_imported_modules(ROOT / "heading_index")) & database_or_engine
    assert not _top_levels(_imported_modules(ROOT / "migrations")) & database_or_engine


def test_everything_imports_the_product_by_its_one_name() -> None:
    # The repository keeps flow/, heading_index/ and migrations/ at its top;
    # installed they exist only as mdchunks.*, so importing them by their
    # folder names would work in a checkout and nowhere else.
    folder_names = {"flow", "heading_index", "migrations"}
    for folder in ("flow", "heading_index", "migrations", "spikes", "benchmarks", "tests"):
        found = _top_levels(_imported_modules(ROOT / folder)) & folder_names
        assert not found, f"{folder}/ imports {sorted(found)} instead of mdchunks.*"
        # Nor by name at run time: importlib.resources.files("migrations"),
        # importlib.import_module("flow.x"), which only a checkout can resolve.
        for source in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(source.read_text(), str(source))):
                if not (isinstance(node, ast.Call) and node.args):
                    continue
                name = getattr(node.func, "attr", getattr(node.func, "id", ""))
                first = node.args[0]
                if name in {"files", "as_file", "import_module"} and isinstance(
                    first, ast.Constant
                ):
                    top = str(first.value).split(".")[0]
                    assert top not in folder_names, f"{source}:{node.lineno} names {first.value}"


def test_ruff_is_clean() -> None:
    # Lint and format, as COMMON practice: `ruff check . && ruff format --check .`.
    for command in (["check", "--no-cache", "."], ["format", "--check", "--no-cache", "."]):
        result = subprocess.run([_tool("ruff"), *command], cwd=ROOT, capture_output=True, text=True)
        assert result.returncode == 0, f"ruff {command[0]}:\n{result.stdout}{result.stderr}"


def _repo_paths(report: str) -> str:
    """mypy's paths of the installed layout as files of the repository."""
    report = re.sub(r"(?m)^mdchunks/heading_index/", "heading_index/", report)
    report = re.sub(r"(?m)^mdchunks/migrations/", "migrations/", report)
    return re.sub(r"(?m)^mdchunks/", "flow/", report)


def test_mypy_strict_finds_no_error(installed: Path) -> None:
    # The configuration is pyproject.toml [tool.mypy]: strict, relaxed only for
    # third-party packages without type information. It is read here, so that
    # no relaxation of our own code slips in unnoticed.
    import tomllib

    config = tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["mypy"]
    assert config["strict"] is True and "ignore_errors" not in config
    for override in config.get("overrides", []):
        modules = override["module"]
        assert not any(m.startswith("mdchunks") for m in modules), override
        assert set(override) - {"module"} <= {
            "ignore_missing_imports",
            "follow_imports",
            "follow_imports_for_stubs",
        }, override
    # On the installed layout (mypy cannot follow the editable install's mapped
    # folders), with the test environment's packages.
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "mypy",
            "--config-file",
            str(ROOT / "pyproject.toml"),
            "--cache-dir",
            str(ROOT / ".mypy_cache"),
            "-p",
            "mdchunks",
        ],
        cwd=installed,
        capture_output=True,
        text=True,
    )
    report = _repo_paths(result.stdout + result.stderr)
    assert result.returncode == 0, report
    # Every module was checked: none fell out of the run unnoticed (mypy counts
    # a folder without __init__.py, migrations/optional, as a namespace package).
    package = installed / "mdchunks"
    folders = [p for p in package.rglob("*") if p.is_dir() and p.name != "__pycache__"]
    namespaces = [f for f in folders if not (f / "__init__.py").exists()]
    modules = len(list(package.rglob("*.py"))) + len(namespaces)
    assert f"Success: no issues found in {modules} source files" in result.stdout, report


def test_dev_py_installs_the_suite_at_the_lowest_cocoindex_we_declare() -> None:
    # pyproject declares a range, so a host keeps its own 1.0.x; dev.py installs
    # the suite with tests/constraints-lowest.txt, pinned to its lower bound.
    import tomllib

    declared = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]["dependencies"]
    (cocoindex,) = [d for d in declared if d.startswith("cocoindex")]
    lower = re.search(r">=([\d.]+)", cocoindex)
    assert lower and ",<1.1" in cocoindex, cocoindex
    pins = (ROOT / "tests" / "constraints-lowest.txt").read_text().split()
    assert f"cocoindex=={lower.group(1)}" in pins
    assert "constraints-lowest.txt" in (ROOT / "dev.py").read_text()


MAX_MODULE_LINES = 500  # docs/layout.md: a module a newcomer can hold in mind


def _long_modules() -> list[str]:
    """Modules of the product (flow/, heading_index/) over the limit, with their length."""
    found = []
    for folder in ("flow", "heading_index"):
        for path in sorted((ROOT / folder).rglob("*.py")):
            lines = len(path.read_text().splitlines())
            if lines > MAX_MODULE_LINES:
                found.append(f"{path.relative_to(ROOT)}: {lines} lines")
    return found


def test_no_module_of_the_product_is_over_500_lines() -> None:
    # Split where concerns part, not by line count: this only says when to look.
    assert _long_modules() == []
