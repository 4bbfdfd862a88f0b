"""Strict typing of the whole integration (HA quality scale: strict-typing): mypy --strict, with missing imports an
error except for the untyped third-party packages pyproject.toml names."""

from __future__ import annotations

from pathlib import Path
import subprocess
import sys
import tomllib

ROOT = Path(__file__).parent.parent


def test_mypy_strict(tmp_path: Path) -> None:
    """mypy --strict finds nothing in custom_components/agentic_hems."""
    result = subprocess.run(
        [
            sys.executable, "-m", "mypy", "--strict", "--follow-imports=silent",
            "--cache-dir", str(tmp_path / "mypy"), "custom_components/agentic_hems",
        ],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found")


def test_only_named_untyped_packages_may_be_missing() -> None:
    """mypy's configuration keeps --strict and ignores missing imports only for scipy and PyYAML, by name."""
    mypy = tomllib.loads((ROOT / "pyproject.toml").read_text(encoding="utf-8"))["tool"]["mypy"]
    assert mypy["strict"] is True and "ignore_missing_imports" not in mypy
    ignored = [
        module for override in mypy.get("overrides", []) if override.get("ignore_missing_imports")
        for module in override["module"]
    ]
    assert sorted(ignored) == ["scipy", "scipy.*", "yaml"]
