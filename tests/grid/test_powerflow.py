"""AC and DC power flow against reference results of MATPOWER case9, 14, 30 and 118 (PYPOWER 5.1.21, cross-checked
with pandapower; tests/fixtures/grid/README.md), and case14 outage by outage."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import pytest

from custom_components.agentic_hems.grid.network import BR_STATUS, NetworkError, load_matpower
from custom_components.agentic_hems.grid.powerflow import MethodNotAvailable, run_power_flow

GRID = Path(__file__).resolve().parents[1] / "fixtures" / "grid"
CASES = ["case9", "case14", "case30", "case118"]


def reference(case: str) -> dict[str, Any]:
    return json.loads((GRID / f"{case}.json").read_text())


@pytest.mark.parametrize("case", CASES)
def test_the_m_file_and_the_json_form_agree(case: str) -> None:
    from_m = load_matpower(GRID / f"{case}.m")
    from_json = load_matpower(GRID / f"{case}.json")
    assert from_m.base_mva == from_json.base_mva and from_m.name == case
    for part in ("bus", "gen", "branch"):
        np.testing.assert_array_equal(getattr(from_m, part)[:, :13], getattr(from_json, part)[:, :13])


@pytest.mark.parametrize("case", CASES)
def test_ac_matches_the_reference(case: str) -> None:
    ref = reference(case)["ac_pf"]
    result = run_power_flow(load_matpower(GRID / f"{case}.m"), "ac")
    assert result.converged and result.iterations <= 10
    np.testing.assert_allclose(result.vm_pu, ref["Vm_pu"], atol=1e-6)
    np.testing.assert_allclose(result.va_deg, ref["Va_deg"], atol=1e-4)
    np.testing.assert_allclose(result.pf_mw, ref["branch_Pf_MW"], atol=1e-4)
    np.testing.assert_allclose(result.qf_mvar, ref["branch_Qf_MVAr"], atol=1e-4)
    np.testing.assert_allclose(result.pt_mw, ref["branch_Pt_MW"], atol=1e-4)
    np.testing.assert_allclose(result.qt_mvar, ref["branch_Qt_MVAr"], atol=1e-4)
    assert result.losses_mw == pytest.approx(ref["total_P_losses_MW"], abs=1e-4)


@pytest.mark.parametrize("case", CASES)
def test_dc_matches_the_reference(case: str) -> None:
    ref = reference(case)["dc_pf"]
    result = run_power_flow(load_matpower(GRID / f"{case}.m"), "dc")
    np.testing.assert_allclose(result.va_deg, ref["Va_deg"], atol=1e-4)
    np.testing.assert_allclose(result.pf_mw, ref["branch_Pf_MW"], atol=1e-4)


def test_case14_outage_by_outage() -> None:
    """Every single-branch outage of case14 that keeps one island: DC and AC against the reference."""
    base = load_matpower(GRID / "case14.m")
    outages = json.loads((GRID / "case14_n1.json").read_text())["outages"]
    checked = 0
    for outage in outages:
        if outage["islands_after"] != 1:
            continue
        net = base.copy()
        net.branch[outage["outage_branch_index"], BR_STATUS] = 0
        dc = run_power_flow(net, "dc")
        np.testing.assert_allclose(dc.pf_mw, outage["dc_Pf_MW"], atol=1e-4)
        np.testing.assert_allclose(dc.va_deg, outage["dc_Va_deg"], atol=1e-4)
        ac = run_power_flow(net, "ac")
        assert ac.converged is outage["ac_converged"]
        np.testing.assert_allclose(ac.vm_pu, outage["ac_Vm_pu"], atol=1e-6)
        np.testing.assert_allclose(ac.va_deg, outage["ac_Va_deg"], atol=1e-4)
        np.testing.assert_allclose(ac.pf_mw, outage["ac_Pf_MW"], atol=1e-4)
        assert ac.losses_mw == pytest.approx(outage["ac_total_P_losses_MW"], abs=1e-4)
        checked += 1
    assert checked == sum(o["islands_after"] == 1 for o in outages) and checked >= 19


def test_pinn_is_a_typed_error() -> None:
    with pytest.raises(MethodNotAvailable):
        run_power_flow(load_matpower(GRID / "case9.m"), "pinn")


def test_non_convergence_is_a_result() -> None:
    net = load_matpower(GRID / "case9.m")
    net.bus[:, 2] *= 12  # twelve times the load: no solution
    result = run_power_flow(net, "ac")
    assert result.converged is False


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("mpc.version = '1';", "only MATPOWER case format version 2"),
        ("mpc.baseMVA = 100;\nmpc.bus = [1 3 0 0 0 0 1 1 0 345 1 1.1 0.9];", "mpc.gen is missing"),
        ("mpc.baseMVA = 100;\nmpc.bus = [1 1 0 0 0 0 1 1 0 345 1 1.1 0.9];\nmpc.gen = [];\nmpc.branch = [];",
         "no slack"),
    ],
)
def test_bad_cases_are_typed_errors(text: str, message: str) -> None:
    with pytest.raises(NetworkError) as err:
        load_matpower(text + "\n")
    assert message in str(err.value)
