"""Strict typing of the whole integration (HA quality scale: strict-typing)."""

from __future__ import annotations

from pathlib import Path
import subprocess
import sys

ROOT = Path(__file__).parent.parent


def test_mypy_strict(tmp_path: Path) -> None:
    """mypy --strict finds nothing in custom_components/agentic_hems."""
    result = subprocess.run(
        [
            sys.executable, "-m", "mypy", "--strict", "--ignore-missing-imports", "--follow-imports=silent",
            "--cache-dir", str(tmp_path / "mypy"), "custom_components/agentic_hems",
        ],
        cwd=ROOT, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr
    assert result.stdout.startswith("Success: no issues found")
