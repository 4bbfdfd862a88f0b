"""MilpModel's LP lower bound against the LP optimum and a brute-force enumeration of an LP's vertices."""

from __future__ import annotations

import itertools
import math

from hypothesis import HealthCheck, given, settings, strategies as st
import numpy as np
import pytest

from custom_components.agentic_hems.scheduling.milp import MilpModel

small = st.integers(-4, 4).map(float)


def vertex_optimum(cost, rows, lo, hi, upper) -> float:
    """Least cost over the box [0, upper]^2 cut by the rows: every vertex from two active constraints, checked."""
    lines = [(np.eye(2)[k], 0.0) for k in range(2)] + [(np.eye(2)[k], upper[k]) for k in range(2)]
    lines += [(np.array(r), b) for r, *bs in zip(rows, lo, hi, strict=True) for b in bs if math.isfinite(b)]
    best = math.inf
    for (a1, b1), (a2, b2) in itertools.combinations(lines, 2):
        matrix = np.vstack([a1, a2])
        if abs(np.linalg.det(matrix)) < 1e-9:
            continue
        x = np.linalg.solve(matrix, [b1, b2])
        inside = np.all(x >= -1e-9) and np.all(x <= np.asarray(upper) + 1e-9)
        inside = inside and all(a - 1e-9 <= np.dot(r, x) <= b + 1e-9 for r, a, b in zip(rows, lo, hi, strict=True))
        if inside:
            best = min(best, float(np.dot(cost, x)))
    return best


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_lower_bound_is_the_lp_optimum_or_inf(data):
    """Two columns in a box, two rows with a finite side each: the bound equals the best vertex (inf: none)."""
    cost = np.array([data.draw(small), data.draw(small)])
    upper = np.array([data.draw(st.integers(1, 3)), data.draw(st.integers(1, 3))], dtype=float)
    rows = [[data.draw(small), data.draw(small)] for _ in range(2)]
    lo = [data.draw(st.sampled_from([-math.inf, -1.0, 0.0, 1.0])) for _ in range(2)]
    hi = [b + data.draw(st.sampled_from([0.0, 2.0, math.inf])) if math.isfinite(b) else 2.0 for b in lo]
    model = MilpModel()
    x = model.add(2, upper)
    for k in range(2):
        model.row([(0, x, np.array(rows[k]))], lo[k], hi[k], 1)
    expected = vertex_optimum(cost, rows, lo, hi, upper)
    bound = model.lower_bound(cost, model.upper_bounds())
    if math.isinf(expected):
        assert bound == math.inf
    else:
        assert bound <= expected + 1e-12
        assert bound == pytest.approx(expected, abs=1e-7)


def test_lower_bound_of_an_unbounded_column_with_a_negative_cost_is_minus_infinity():
    """x0 >= 0 unbounded above at cost -1: no finite bound exists."""
    model = MilpModel()
    model.add(1, math.inf)
    model.add(1, 1.0)
    model.row([(0, np.arange(2), 1.0)], 0.0, math.inf, 1)
    assert model.lower_bound(np.array([-1.0, 0.0]), model.upper_bounds()) == -math.inf
