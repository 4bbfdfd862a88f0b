"""N-1 over branch outages: islanding detected from the graph, results against case14_n1, margins, partial runs."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from custom_components.agentic_hems.grid.contingency import run_contingency
from custom_components.agentic_hems.grid.network import BR_STATUS, RATE_A, load_matpower
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
