"""The layout rules of DESIGN section 1, kept by checks rather than by memory."""

from __future__ import annotations

import ast
import shutil
import subprocess
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _tool(name: str) -> str:
    found = shutil.which(name, path=str(Path(sys.executable).parent))
    assert found, f"{name} is not installed in the test environment"
    return found


def test_import_contracts_hold() -> None:
    # Contracts live in pyproject.toml [tool.importlinter].
    result = subprocess.run(
        [_tool("lint-imports"), "--no-cache"], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert " 0 broken" in result.stdout, result.stdout


def _imported_top_levels(package: Path) -> set[str]:
    names: set[str] = set()
    for source in package.rglob("*.py"):
        for node in ast.walk(ast.parse(source.read_text(), str(source))):
            if isinstance(node, ast.Import):
                names.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names.add(node.module.split(".")[0])
    return names


def test_heading_index_imports_only_tree_sitter_and_the_standard_library() -> None:
    # A second, independent check: import-linter only sees modules it can
    # resolve; this one reads every import statement of the package.
    third_party = _imported_top_levels(ROOT / "heading_index") - set(sys.stdlib_module_names)
    assert third_party <= {"heading_index", "tree_sitter", "tree_sitter_markdown"}, third_party


def test_only_flow_and_spikes_know_cocoindex_and_postgres() -> None:
    database_or_engine = {"cocoindex", "asyncpg", "psycopg", "pgserver", "yoyo"}
    assert not _imported_top_levels(ROOT / "heading_index") & database_or_engine
    assert not _imported_top_levels(ROOT / "migrations") & database_or_engine


def test_ruff_is_clean() -> None:
    result = subprocess.run(
        [_tool("ruff"), "check", "--no-cache", "."], cwd=ROOT, capture_output=True, text=True
    )
    assert result.returncode == 0, result.stdout + result.stderr
