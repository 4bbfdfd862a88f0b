"""Lint as Home Assistant core does: ruff with core's rule selection and ``ruff format`` on the integration.

The rule selection, the line length (120) and the files (``custom_components/agentic_hems``) are in
``pyproject.toml``; ruff comes from ``requirements_tools.txt``.
"""

from __future__ import annotations

import ast
from pathlib import Path
import subprocess
import sys

ROOT = Path(__file__).parent.parent
RUFF = Path(sys.executable).with_name("ruff")


def _ruff(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([str(RUFF), *args], cwd=ROOT, capture_output=True, text=True, check=False)


def test_ruff_check_is_clean() -> None:
    """``ruff check`` finds nothing in the integration."""
    result = _ruff("check", "--no-cache", "--output-format", "concise")
    assert result.returncode == 0, result.stdout + result.stderr


def test_ruff_format_is_clean() -> None:
    """``ruff format --check`` would reformat no file of the integration."""
    result = _ruff("format", "--no-cache", "--check")
    assert result.returncode == 0, result.stdout + result.stderr
    assert "already formatted" in result.stdout


PACKAGE = ROOT / "custom_components" / "agentic_hems"
CORE = ("prices", "scheduling", "gates", "orchestrator", "grid", "security")
MAX_FUNCTION_LINES = 60
MAX_SHELL_MODULE_LINES = 400
MAX_INIT_LINES = 100


def _modules() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "node_modules" not in p.parts)


def test_no_function_is_longer_than_60_lines() -> None:
    """Every function and method of the integration, core and shell, spans at most 60 lines."""
    long = [
        f"{path.relative_to(PACKAGE)}:{node.lineno} {node.name} ({node.end_lineno - node.lineno + 1} lines)"
        for path in _modules()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef)
        and node.end_lineno is not None
        and node.end_lineno - node.lineno + 1 > MAX_FUNCTION_LINES
    ]
    assert long == []


def test_the_shell_stays_thin() -> None:
    """``__init__.py`` holds at most 100 lines and no module of the HA shell (outside the core packages) over 400."""
    assert len((PACKAGE / "__init__.py").read_text(encoding="utf-8").splitlines()) <= MAX_INIT_LINES
    shell = [p for p in _modules() if p.relative_to(PACKAGE).parts[0] not in CORE]
    sizes = {str(p.relative_to(PACKAGE)): len(p.read_text(encoding="utf-8").splitlines()) for p in shell}
    assert {name: n for name, n in sizes.items() if n > MAX_SHELL_MODULE_LINES} == {}
    assert len(sizes) > 40  # the walk found the shell
