"""N-1 over branch outages: islanding detected from the graph, results against case14_n1, margins, partial runs;
the fast path against the plain one-by-one N-1 and its bridges against a connectivity search."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest
import scipy.sparse as sp
from scipy.sparse.csgraph import connected_components

from custom_components.agentic_hems.grid import contingency
from custom_components.agentic_hems.grid.contingency import run_contingency
from custom_components.agentic_hems.grid.network import BR_STATUS, PD, PG, QD, RATE_A, Network, load_matpower
from custom_components.agentic_hems.grid.outages import bridges
from custom_components.agentic_hems.grid.powerflow import run_power_flow

GRID = Path(__file__).resolve().parents[1] / "fixtures" / "grid"


def test_case14_islanding_and_minimum_voltage() -> None:
    reference = json.loads((GRID / "case14_n1.json").read_text())["outages"]
    result = run_contingency(load_matpower(GRID / "case14.m"))
    assert result.completed and len(result.outages) == len(reference) == 20
    for outage, ref in zip(result.outages, reference, strict=True):
        assert (outage.branch, outage.f_bus, outage.t_bus) == (ref["outage_branch_index"], ref["f_bus"], ref["t_bus"])
        assert outage.islands == ref["islands_after"]
        if outage.islanded:  # reported, not solved
            assert outage.converged is None
        else:
            assert outage.converged and outage.min_vm_pu == pytest.approx(ref["ac_min_Vm"], abs=1e-6)
            assert outage.max_loading_pct is None  # case14 has no ratings: nothing to overload
    assert [o.branch for o in result.outages if o.islanded] == [
        r["outage_branch_index"] for r in reference if r["islands_after"] > 1]


def test_case30_overloads_with_margin() -> None:
    """case30 has ratings; branch 6-8 runs at about 109 % of RATE_A already (AC), so every outage lists it; loadings
    are the larger end's apparent power over RATE_A from an independent AC solve of the same outage."""
    net = load_matpower(GRID / "case30.m")
    six_eight = next(i for i, b in enumerate(net.branch) if (b[0], b[1]) == (6, 8))
    result = run_contingency(net, branches=[0, 1, 2], method="ac", limit_margin_pct=10)
    assert result.completed
    for outage in result.outages:
        alone = net.copy()
        alone.branch[outage.branch, BR_STATUS] = 0
        pf = run_power_flow(alone, "ac")
        rated = [i for i in range(net.n_branch) if net.branch[i, RATE_A] > 0 and i != outage.branch]
        expected = {i: 100 * max(abs(complex(pf.pf_mw[i], pf.qf_mvar[i])), abs(complex(pf.pt_mw[i], pf.qt_mvar[i])))
                    / net.branch[i, RATE_A] for i in rated}
        assert outage.max_loading_pct == pytest.approx(max(expected.values()), abs=1e-3)
        assert {o["branch"] for o in outage.overloaded} == {i for i, pct in expected.items() if pct > 90}
        assert six_eight in {o["branch"] for o in outage.overloaded}
    loose = run_contingency(net, branches=[0, 1, 2], method="ac", limit_margin_pct=-1000)
    assert all(o.overloaded == [] for o in loose.outages)


def test_a_deadline_makes_the_result_partial() -> None:
    ticks = iter([0.0, 0.0, 0.1, 5.0, 5.0])
    result = run_contingency(load_matpower(GRID / "case14.m"), branches=[0, 1, 2, 3], deadline_s=1.0,
                             clock=lambda: next(ticks))
    assert not result.completed and [o.branch for o in result.outages] == [0, 1] and result.unevaluated == [2, 3]


def test_bridges_match_a_connectivity_search_on_random_graphs() -> None:
    """A branch is a bridge exactly when taking it out adds a connected component (brute force over every branch),
    with parallel branches, self-loops, branches out of service and graphs that are already split."""
    rng = np.random.default_rng(25)
    seen = 0
    for _ in range(200):
        n = int(rng.integers(1, 16))
        m = int(rng.integers(0, 2 * n + 2))
        f, t = rng.integers(0, n, m), rng.integers(0, n, m)
        on = rng.random(m) < 0.85
        found = bridges(n, f, t, on)

        def components(mask: np.ndarray) -> int:
            graph = sp.coo_matrix((np.ones(int(mask.sum())), (f[mask], t[mask])), shape=(n, n))
            return int(connected_components(graph, directed=False)[0])

        base = components(on)
        for edge in range(m):
            without = on.copy()
            without[edge] = False
            assert found[edge] == (components(without) > base), (n, f.tolist(), t.tolist(), on.tolist(), edge)
        seen += int(found.sum())
    assert seen > 100  # the graphs do have bridges


def _stressed(case: str, scale: float, rng: np.random.Generator) -> Network:
    """``case`` with loads and generation scaled by ``scale`` and RATE_A set near the base flows on 60 % of branches,
    so that some outages overload, some do not converge and some island."""
    net = load_matpower(GRID / f"{case}.m")
    net.bus[:, [PD, QD]] *= scale
    net.gen[:, PG] *= scale
    base = run_power_flow(net, "ac")
    flow = np.maximum(np.hypot(base.pf_mw, base.qf_mvar), np.hypot(base.pt_mw, base.qt_mvar))
    rated = rng.random(net.n_branch) < 0.6
    net.branch[:, RATE_A] = np.where(rated, np.round(flow * rng.uniform(0.9, 2.0, net.n_branch), 2), 0)
    return net


@pytest.mark.parametrize(("case", "seed"), [("case9", 1), ("case14", 2), ("case30", 3), ("case118", 4), ("case118", 5)])
def test_the_fast_n1_is_the_plain_one_by_one_n1(case: str, seed: int, monkeypatch: pytest.MonkeyPatch) -> None:
    """On stressed cases with random ratings, the fast path (bridges, one base factorization, low-rank updates) gives
    the plain one-by-one AC N-1's islands, non-converged outages, overloads, loadings and lowest voltages; it solves
    most outages itself (the plain fallback runs only where the fast path cannot settle an outage)."""
    rng = np.random.default_rng(seed)
    scale = {"case9": 2.0, "case14": 3.0, "case30": 3.0, "case118": 2.5}[case]
    net = _stressed(case, float(rng.uniform(1.0, scale)), rng)
    listed = sorted(rng.choice(net.n_branch, size=min(net.n_branch, 60), replace=False).tolist())
    for branches in (None, listed):
        plain = run_contingency(net, branches=branches, fast=False, limit_margin_pct=5)
        calls: list[int] = []
        original = contingency.run_power_flow
        monkeypatch.setattr(contingency, "run_power_flow", lambda n, m: calls.append(1) or original(n, m))
        fast = run_contingency(net, branches=branches, limit_margin_pct=5)
        monkeypatch.undo()
        assert [o.branch for o in fast.outages] == [o.branch for o in plain.outages]
        for mine, theirs in zip(fast.outages, plain.outages, strict=True):
            assert (mine.islands, mine.converged) == (theirs.islands, theirs.converged), mine.branch
            assert [o["branch"] for o in mine.overloaded] == [o["branch"] for o in theirs.overloaded], mine.branch
            assert mine.max_loading_pct == pytest.approx(theirs.max_loading_pct, abs=2e-3)
            assert mine.min_vm_pu == pytest.approx(theirs.min_vm_pu, abs=2e-6)
        solved = [o for o in plain.outages if not o.islanded]
        failed = sum(o.converged is False for o in solved)
        assert len(calls) <= failed + len(solved) // 4  # the fast path did the work
    assert any(o.islanded for o in plain.outages) and any(o.overloaded for o in plain.outages)


def test_the_fast_n1_finds_the_plain_non_converged_outages() -> None:
    """case118 at 3x its loads: about 20 outages do not converge; the fast path names the same ones."""
    net = load_matpower(GRID / "case118.m")
    net.bus[:, [PD, QD]] *= 3.0
    net.gen[:, PG] *= 3.0
    plain = run_contingency(net, fast=False)
    fast = run_contingency(net)
    failed = [o.branch for o in plain.outages if o.converged is False]
    assert len(failed) >= 10
    assert [o.branch for o in fast.outages if o.converged is False] == failed
    assert [o.branch for o in fast.outages if o.islanded] == [o.branch for o in plain.outages if o.islanded]


def test_a_listed_branch_already_out_of_service_is_the_base_case() -> None:
    """An outage of a branch that is already out changes nothing: the fast path gives the base flows, as the plain."""
    net = load_matpower(GRID / "case30.m")
    net.branch[5, BR_STATUS] = 0
    plain = run_contingency(net, branches=[5, 6], fast=False)
    fast = run_contingency(net, branches=[5, 6])
    for mine, theirs in zip(fast.outages, plain.outages, strict=True):
        assert (mine.islands, mine.converged, mine.overloaded) == (theirs.islands, theirs.converged, theirs.overloaded)
        assert mine.min_vm_pu == pytest.approx(theirs.min_vm_pu, abs=1e-6)
