"""The home twin rolled forward: the sim reproduces a dispatch plan's SoC path, and flexibility against hand values."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta

import numpy as np
import pytest

from custom_components.agentic_hems.grid.dispatch import Battery, DispatchProblem, optimize_dispatch
from custom_components.agentic_hems.grid.simulate import STEP, PowerChange, Window, flexibility, parse_actions, simulate
from custom_components.agentic_hems.grid.tools_plan import battery_actions
from custom_components.agentic_hems.grid.twin import HomeSite, home_twin

START = datetime(2026, 11, 30, 0, 0, tzinfo=UTC)
TWIN = home_twin(HomeSite(fuse_kw=11.0, pv_peak_kw=8.0, battery_kwh=10.0, battery_kw=5.0))


@pytest.mark.parametrize("seed", range(12))
def test_the_sim_follows_the_plan_to_its_soc_limits(seed: int) -> None:
    """Plans that run the battery into its SoC limits (partial slots at odd powers) simulate without a violation,
    on the same SoC path; the fuse is never exceeded."""
    rng = np.random.default_rng(seed)
    steps = 96
    prices = rng.uniform(-0.05, 0.4, steps)
    soc0 = float(rng.uniform(15, 95))
    battery = Battery("battery", 10.0, 1.0, 10.0, 5.0, 5.0, soc0 / 10, soc0 / 10)
    result = optimize_dispatch(DispatchProblem(prices, prices * 0.5, np.full(steps, 4.0), np.full(steps, 3.0),
                                               (battery,), 11.0, 11.0))
    assert result.status == "optimal" and result.charge_kw is not None and result.discharge_kw is not None
    slots = [START + i * STEP for i in range(steps)]
    actions = battery_actions("battery", slots, result.charge_kw[0] - result.discharge_kw[0])
    sim = simulate(TWIN, {"house": 4.0, "pv": -3.0, "battery": 0.0}, {"battery": soc0}, parse_actions(actions),
                   start=START, horizon=timedelta(hours=24))
    assert sim.valid and sim.violations == []
    assert [row["soc_pct"]["battery"] for row in sim.trajectory] == pytest.approx(
        list(result.soc_kwh[0] * 10), abs=1e-6)


def test_a_violation_and_an_unevaluable_step() -> None:
    """Charging past full is a violation with its step; a load the fuse cannot carry makes the sim invalid."""
    full = simulate(TWIN, {"house": 1.0, "battery": 0.0}, {"battery": 95.0},
                    [PowerChange("battery", Window(START, START + timedelta(hours=1)), 5.0)], start=START, horizon=timedelta(hours=1))
    # SoC at the end of each step, as in the dispatch: 5 kW x 0.25 h x 95 % = 1.1875 kWh = 11.875 % of 10 kWh.
    assert full.valid and full.violations[0] == {"constraint": "battery.soc_max_pct", "step": 0,
                                                 "margin": pytest.approx(100 - (95 + 11.875), abs=1e-6)}
    collapse = simulate(TWIN, {"house": 5000.0}, {}, [], start=START, horizon=timedelta(minutes=15))
    assert not collapse.valid and "did not converge" in collapse.errors[0]
    assert collapse.report()["ok"] is False


def test_flexibility_by_hand() -> None:
    """Battery at 50 % charging 1 kW over 2 h; PV producing 3 kW; a heat pump without a measurement is excluded."""
    twin = home_twin(HomeSite(fuse_kw=11.0, pv_peak_kw=8.0, battery_kwh=10.0, battery_kw=5.0,
                              appliances=(("heat_pump", "heat_pump", 3.0),)))
    result = flexibility(twin, {"battery": 1.0, "pv": -3.0, "grid": 2.0}, {"battery": 50.0},
                         ["battery", "pv", "heat_pump"], 2.0)
    battery, pv = result["per_asset"]
    assert battery["up_kw"] == pytest.approx(1.0 + 4.0 * 0.95 / 2)  # down to -1.9 kW: 4 kWh above 10 % lasts 2 h
    assert battery["down_kw"] == pytest.approx(5.0 / (0.95 * 2) - 1.0)  # up to 2.63 kW fills the 5 kWh room in 2 h
    assert (pv["up_kw"], pv["down_kw"]) == (pytest.approx(5.0), pytest.approx(3.0))
    assert result["excluded"] == [{"asset_id": "heat_pump", "reason": "no current power measured"}]
    assert result["aggregate"]["down_kw"] == pytest.approx(min(battery["down_kw"] + 3.0, 11.0 - 2.0))
