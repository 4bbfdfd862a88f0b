"""window_sums and the module boundaries of scheduling/."""

from __future__ import annotations

import ast
from pathlib import Path

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from custom_components.agentic_hems.scheduling import window_sums

from .conftest import any_price

SCHEDULING = Path(__file__).parents[2] / "custom_components" / "agentic_hems" / "scheduling"


def test_window_sums_values() -> None:
    prices = np.array([1.0, 2.0, 3.0, 4.0, 5.0])
    np.testing.assert_array_equal(window_sums(prices, 1), prices)
    np.testing.assert_array_equal(window_sums(prices, 2), [3.0, 5.0, 7.0, 9.0])
    np.testing.assert_array_equal(window_sums(prices, 5), [15.0])
    assert window_sums(prices, 6).shape == (0,)
    assert window_sums(np.array([]), 1).shape == (0,)


def test_window_sums_nan_marks_every_window_touching_it() -> None:
    sums = window_sums(np.array([1.0, np.nan, 3.0, 4.0, 5.0]), 2)
    np.testing.assert_array_equal(np.isnan(sums), [True, True, False, False])
    assert sums[2] == 7.0 and sums[3] == 9.0


def test_window_sums_flat_prices_tie_exactly() -> None:
    """0.1 is not dyadic, so prefix-sum differences would differ by ulps; per-window sums must not."""
    sums = window_sums(np.full(192, 0.1), 8)
    assert np.all(sums == sums[0])
    assert int(np.argmin(sums)) == 0


@pytest.mark.parametrize("width", [0, -1])
def test_window_sums_rejects_non_positive_width(width: int) -> None:
    with pytest.raises(ValueError, match="width"):
        window_sums(np.ones(4), width)


def test_window_sums_rejects_bad_input() -> None:
    with pytest.raises(ValueError, match="one-dimensional"):
        window_sums(np.ones((2, 2)), 1)
    with pytest.raises(TypeError):
        window_sums(np.ones(4), 1.5)  # type: ignore[arg-type]


@settings(derandomize=True, max_examples=150, deadline=None)
@given(st.lists(any_price, min_size=1, max_size=60), st.integers(1, 70))
def test_window_sums_match_naive_sums(prices: list[float], width: int) -> None:
    expected = [sum(prices[j : j + width]) for j in range(len(prices) - width + 1)]
    np.testing.assert_allclose(window_sums(np.array(prices), width), expected, rtol=1e-12, atol=1e-12)


def _imports(path: Path) -> tuple[set[str], set[str]]:
    """(modules imported at module level, modules imported inside functions)."""
    tree = ast.parse(path.read_text())
    top: set[str] = set()
    nested: set[str] = set()
    for node in ast.walk(tree):
        if isinstance(node, (ast.Import, ast.ImportFrom)):
            names = [a.name for a in node.names] if isinstance(node, ast.Import) else [node.module or ""]
            (top if node in tree.body else nested).update(name.split(".")[0] for name in names)
    return top, nested


@pytest.mark.parametrize("name", ["__init__", "windows", "contiguous", "energy", "joint", "plan"])
def test_core_never_imports_home_assistant_and_scipy_only_lazily(name: str) -> None:
    top, nested = _imports(SCHEDULING / f"{name}.py")
    assert "homeassistant" not in top | nested
    assert "scipy" not in top
