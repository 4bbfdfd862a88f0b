"""Fixed loads on their own phases, and which phase and devices a phase limit names, with per-phase sums by hand."""

from __future__ import annotations

import numpy as np
import pytest

from custom_components.agentic_hems.scheduling.home import plan_home
from custom_components.agentic_hems.scheduling.home_evaluate import Tariff, evaluate
from custom_components.agentic_hems.scheduling.home_model import HomePlanError, Infeasibility, PhaseLimits, PhaseOver
from custom_components.agentic_hems.scheduling.plan import LoadSpec

from .conftest import SLOT, T0, make_curve


def run(name: str, power: float, first: int, last: int) -> LoadSpec:
    """A one-slot run of ``power`` kW that may start in slots ``first``..``last``."""
    return LoadSpec(
        name, power_kw=power, duration_min=15, earliest_start=T0 + SLOT * first, deadline=T0 + SLOT * (last + 1)
    )


def test_fixed_loads_count_on_their_own_phase():
    """Base 0.9 kW (0.3 per phase), a washer on L2 (2, 2, 0, 0), an EV three-phase (3, 3, 3, 0) and an oven with no
    phase, spread (0, 0, 1.5, 1.5). By hand: L1 = L3 = 0.3 + EV / 3 + oven / 3 = (1.3, 1.3, 1.8, 0.8), L2 = L1 +
    washer = (3.3, 3.3, 1.8, 0.8); the plan's base load is everything it cannot move."""
    fixed = {"washer": [2.0, 2.0, 0.0, 0.0], "ev": [3.0, 3.0, 3.0, 0.0], "oven": [0.0, 0.0, 1.5, 1.5]}
    phases = PhaseLimits(limit_kw=5.0, assignment={"washer": "L2", "ev": "3"})
    plan = plan_home(make_curve([0.2] * 4), base_load_kw=0.9, fixed_kw=fixed, phases=phases)
    np.testing.assert_allclose(plan.phase_kw["L1"], [1.3, 1.3, 1.8, 0.8], atol=1e-9)
    np.testing.assert_allclose(plan.phase_kw["L2"], [3.3, 3.3, 1.8, 0.8], atol=1e-9)
    np.testing.assert_allclose(plan.phase_kw["L3"], [1.3, 1.3, 1.8, 0.8], atol=1e-9)
    np.testing.assert_allclose(plan.base_load_kw, [5.9, 5.9, 5.4, 2.4], atol=1e-12)
    np.testing.assert_allclose(plan.import_kw, [5.9, 5.9, 5.4, 2.4], atol=1e-9)
    assert set(plan.fixed_kw) == {"washer", "ev", "oven"} and plan.load_kw == {}
    np.testing.assert_allclose(plan.fixed_kw["washer"], fixed["washer"])


def test_a_single_phase_fixed_load_moves_a_run_off_its_phase():
    """A dishwasher (2 kW on L2) would take the cheap first slot, where a washer on L2 draws 2 kW: L2 would be
    0.3 + 2 + 2 = 4.3 kW, over the 4 kW limit, so it moves to the next cheapest slot 3 (L2: 0.3 + 2 = 2.3). With the
    washer spread, L2 in slot 0 is 0.3 + 2 / 3 + 2 = 2.97 kW and the dishwasher stays there."""
    curve = make_curve([0.1, 0.3, 0.4, 0.2])
    fixed = {"washer": [2.0, 2.0, 0.0, 0.0]}
    on_l2 = PhaseLimits(limit_kw=4.0, assignment={"washer": "L2", "dw": "L2"})
    plan = plan_home(curve, [run("dw", 2.0, 0, 3)], base_load_kw=0.9, fixed_kw=fixed, phases=on_l2)
    assert plan.starts["dw"] == T0 + SLOT * 3
    np.testing.assert_allclose(plan.phase_kw["L2"], [2.3, 2.3, 0.3, 2.3], atol=1e-9)
    spread = PhaseLimits(limit_kw=4.0, assignment={"dw": "L2"})
    plan = plan_home(curve, [run("dw", 2.0, 0, 3)], base_load_kw=0.9, fixed_kw=fixed, phases=spread)
    assert plan.starts["dw"] == T0
    np.testing.assert_allclose(plan.phase_kw["L2"], [0.3 + 2 / 3 + 2, 0.3 + 2 / 3, 0.3, 0.3], atol=1e-9)


def test_a_phase_conflict_names_the_phase_and_the_devices_on_it():
    """Slot 1 on L3: base 0.2 (0.6 spread) + washer 2 (fixed) + dishwasher 1.5 (can only run then) = 3.7 kW over
    3 kW. The dryer (fixed, 1 kW on L1) is not on that phase."""
    phases = PhaseLimits(limit_kw=3.0, assignment={"washer": "L3", "dw": "L3", "dryer": "L1"})
    fixed = {"washer": [0.0, 2.0, 0.0, 0.0], "dryer": [0.0, 1.0, 0.0, 0.0]}
    with pytest.raises(HomePlanError) as err:
        plan_home(make_curve([0.2] * 4), [run("dw", 1.5, 1, 1)], base_load_kw=0.6, fixed_kw=fixed, phases=phases)
    over = err.value.phase_over
    assert err.value.constraints == (Infeasibility.PHASE,)
    assert over is not None and (over.phase, over.start, over.limit_kw) == ("L3", T0 + SLOT, 3.0)
    assert over.power_kw == pytest.approx(3.7)
    assert [name for name, _ in over.devices] == ["washer", "dw", "base"]
    np.testing.assert_allclose([kw for _, kw in over.devices], [2.0, 1.5, 0.2], atol=1e-9)
    assert str(err.value).endswith(
        "conflicting: phase: phase L3 would carry 3.70 kW at 2026-01-05T00:15Z, above its 3 kW limit; on it draw: "
        "washer 2.00 kW, dw 1.50 kW, base load 0.20 kW"
    )
    assert err.value.text({"dw": "Dishwasher"}).endswith(
        "on it draw: washer 2.00 kW, Dishwasher 1.50 kW, base load 0.20 kW"
    )


def test_pv_feeding_past_a_phase_limit_is_named():
    """5 kW of PV on L1 that cannot be curtailed, 0.3 kW of base load: L1 = 0.1 - 5 = -4.9 kW, below -3 kW."""
    phases = PhaseLimits(limit_kw=3.0, assignment={"pv": "L1"})
    with pytest.raises(HomePlanError) as err:
        plan_home(make_curve([0.2]), pv_kw=5.0, base_load_kw=0.3, export_price=0.1, curtailment=False, phases=phases)
    over = err.value.phase_over
    assert over is not None and over.phase == "L1" and over.power_kw == pytest.approx(-4.9)
    assert over.devices == (("pv", pytest.approx(5.0)),)
    assert "phase L1 would carry 4.90 kW" in str(err.value) and "on it feed in: PV 5.00 kW" in str(err.value)


def test_a_raised_phase_limit_holds_on_its_phase_only():
    """L2 raised to 4.3 kW: the washer's 4 kW plus 0.3 of base load fit there in slot 1; a 1 kW run on L2 then goes
    to the other slot (0.3 + 1 on L2), and evaluate flags a phase past its own limit by name."""
    phases = PhaseLimits(limit_kw=3.0, assignment={"washer": "L2", "dw": "L2"}, raised_kw={"L2": 4.3})
    assert (phases.limit("L1"), phases.limit("L2")) == (3.0, 4.3)
    curve = make_curve([0.4, 0.1])
    plan = plan_home(curve, [run("dw", 1.0, 0, 1)], base_load_kw=0.9, fixed_kw={"washer": [0.0, 4.0]}, phases=phases)
    assert plan.starts["dw"] == T0
    np.testing.assert_allclose(plan.phase_kw["L2"], [1.3, 4.3], atol=1e-9)
    tariff = Tariff(
        import_price=np.full(2, 0.2),
        export_price=np.zeros(2),
        hours=0.25,
        fuse_kw=np.inf,
        export_limit_kw=np.inf,
        terminal_price={},
        phases=phases,
    )
    result = evaluate(
        tariff,
        house_kw=np.array([3.6, 4.6]),
        pv_kw=np.zeros(2),
        battery_kw={},
        batteries=(),
        load_kw={"washer": np.array([3.3, 4.3])},
    )  # L2: 0.1 + 3.3, then 0.1 + 4.3 > 4.3
    assert result.violations == ["phase L2 above its limit in 1 of 2 slots, first slot 1: 4.40 kW > 4.3 kW"]
    with pytest.raises(ValueError, match="raised_kw"):
        PhaseLimits(limit_kw=3.0, raised_kw={"L2": 2.0})
    with pytest.raises(ValueError, match="raised_kw"):
        PhaseLimits(limit_kw=3.0, raised_kw={"L4": 4.0})


def test_fixed_loads_are_checked():
    curve = make_curve([0.2] * 2)
    with pytest.raises(ValueError, match="fixed_kw"):
        plan_home(curve, fixed_kw={"washer": [1.0, -1.0]})
    with pytest.raises(ValueError, match="distinct names"):
        plan_home(curve, [run("washer", 1.0, 0, 1)], fixed_kw={"washer": 1.0})
    with pytest.raises(ValueError, match="distinct names"):
        plan_home(curve, fixed_kw={"base": 1.0})
    text = PhaseOver(phase="L2", start=T0, limit_kw=3.0, power_kw=3.5, devices=()).text()
    assert text == "phase L2 would carry 3.50 kW at 2026-01-05T00:00Z, above its 3 kW limit; on it draw: nothing"
