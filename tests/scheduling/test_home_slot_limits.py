"""Fuse and phase limits raised per slot (where loads the plan cannot move alone pass them), against sums by hand.

Slots are 15 minutes (0.25 h) from T0; a raised slot's limit is what the fixed loads draw there, every other slot
keeps the real limit.
"""

from __future__ import annotations

from itertools import product

import numpy as np
import pytest

from custom_components.agentic_hems.scheduling.home import plan_home
from custom_components.agentic_hems.scheduling.home_grid import cut_phases, phases_over_fixed
from custom_components.agentic_hems.scheduling.home_evaluate import Tariff, evaluate
from custom_components.agentic_hems.scheduling.home_model import HomePlanError, PhaseLimits
from custom_components.agentic_hems.scheduling.plan import LoadSpec

from .conftest import SLOT, T0, make_curve


def run(name: str, power: float, slots: int, n: int) -> LoadSpec:
    """A run of ``slots`` slots at ``power`` kW that may start anywhere in the n slots."""
    return LoadSpec(name, power_kw=power, duration_min=15 * slots, earliest_start=T0, deadline=T0 + SLOT * n)


def test_a_fuse_raised_in_one_slot_holds_in_the_others():
    """A 10 kW fuse; a pinned 12 kW load in slot 0; an 11 kW run, cheapest in slot 1; 2 kW of PV in slot 3. The
    fuse per slot is (12, 10, 10, 10). By hand the run adds 11 kW: slot 0 12 + 11 > 12, slots 1 and 2 11 > 10,
    slot 3 11 - 2 = 9 <= 10: it runs in slot 3. Under 12 kW for every slot (the whole-horizon raise) it would run in
    slot 1 at 11 kW."""
    curve = make_curve([0.30, 0.10, 0.20, 0.40])
    args = {"pv_kw": [0.0, 0.0, 0.0, 2.0], "fixed_kw": {"pinned": [12.0, 0.0, 0.0, 0.0]}, "curtailment": False}
    plan = plan_home(curve, [run("oven", 11.0, 1, 4)], fuse_kw=[12.0, 10.0, 10.0, 10.0], **args)
    assert plan.starts["oven"] == T0 + 3 * SLOT
    np.testing.assert_allclose(plan.import_kw, [12.0, 0.0, 0.0, 9.0], atol=1e-9)
    np.testing.assert_array_equal(plan.fuse_kw, [12.0, 10.0, 10.0, 10.0])
    whole = plan_home(curve, [run("oven", 11.0, 1, 4)], fuse_kw=12.0, **args)
    assert whole.starts["oven"] == T0 + SLOT and whole.import_kw[1] == pytest.approx(11.0)


def test_a_phase_raised_in_one_slot_holds_in_the_others():
    """3.68 kW per phase; a washer pinned on L2 draws 4 kW in slot 0; a 4 kW dryer on L2, cheapest in slot 1; 1 kW
    of PV on L2 in slot 3. L2's limit per slot is (4, 3.68, 3.68, 3.68). By hand on L2: slot 0 4 + 4 > 4, slots 1 and
    2 4 > 3.68, slot 3 4 - 1 = 3 <= 3.68: the dryer runs in slot 3. Under 4 kW for every slot it would run in slot 1."""
    curve = make_curve([0.30, 0.10, 0.20, 0.40])
    washer = np.array([4.0, 0.0, 0.0, 0.0])
    phases = PhaseLimits(limit_kw=3.68, assignment={"washer": "L2", "dryer": "L2", "pv": "L2"})
    notes: list[str] = []
    kept = phases_over_fixed(phases, {"base": np.zeros(4), "washer": washer}, notes, {}, curve)
    assert kept is not None and set(kept.raised_kw) == {"L2"}
    np.testing.assert_allclose(kept.limit("L2"), [4.0, 3.68, 3.68, 3.68])
    assert notes == ["loads the plan cannot move draw up to 4.00 kW on L2, above its 3.68 kW limit, at "
                     "2026-01-05T00:00-00:15Z: washer 4.00 kW"]
    args = {"pv_kw": [0.0, 0.0, 0.0, 1.0], "fixed_kw": {"washer": washer}, "curtailment": False}
    plan = plan_home(curve, [run("dryer", 4.0, 1, 4)], phases=kept, **args)
    assert plan.starts["dryer"] == T0 + 3 * SLOT
    np.testing.assert_allclose(plan.phase_kw["L2"], [4.0, 0.0, 0.0, 3.0], atol=1e-9)
    whole = plan_home(curve, [run("dryer", 4.0, 1, 4)], phases=PhaseLimits(
        limit_kw=3.68, assignment=phases.assignment, raised_kw={"L2": 4.0}), **args)
    assert whole.starts["dryer"] == T0 + SLOT


def test_the_slots_named_in_the_note_come_as_spans():
    """A fixed load above the limit in slots 1-2 and 5: two spans, each from its first slot's start to its last's
    end; the phases it does not pass keep their number."""
    curve = make_curve([0.2] * 6)
    fixed = {"base": np.zeros(6), "pump": np.array([0.0, 5.0, 5.0, 0.0, 0.0, 4.0])}
    notes: list[str] = []
    kept = phases_over_fixed(PhaseLimits(limit_kw=3.0, assignment={"pump": "L3"}), fixed, notes, {"pump": "Pump"},
                             curve)
    assert kept is not None and kept.limit("L1") == 3.0
    np.testing.assert_allclose(kept.limit("L3"), [3.0, 5.0, 5.0, 3.0, 3.0, 4.0])
    assert notes == ["loads the plan cannot move draw up to 5.00 kW on L3, above its 3 kW limit, at "
                     "2026-01-05T00:15-00:45Z, 2026-01-05T01:15-01:30Z: Pump 5.00 kW"]


def test_evaluate_checks_each_slot_against_its_own_limit():
    """Import (12, 9, 10.5) under a fuse of (12, 10, 10): only slot 2 passes; L1 carries the load a alone (4, 1, 3.9)
    under (4, 3.68, 3.68): only slot 2 too (the base load, 8, 8, 6.6 kW, is on L2, raised to 20 kW)."""
    raised = {"L1": np.array([4.0, 3.68, 3.68]), "L2": 20.0}
    phases = PhaseLimits(limit_kw=3.68, assignment={"a": "L1", "base": "L2"}, raised_kw=raised)
    tariff = Tariff(import_price=np.full(3, 0.2), export_price=np.zeros(3), hours=0.25,
                    fuse_kw=np.array([12.0, 10.0, 10.0]), export_limit_kw=np.inf, terminal_price={}, phases=phases)
    result = evaluate(tariff, house_kw=np.array([12.0, 9.0, 10.5]), pv_kw=np.zeros(3), battery_kw={}, batteries=(),
                      load_kw={"a": np.array([4.0, 1.0, 3.9])})
    assert result.violations == [
        "import above the fuse in 1 of 3 slots, first slot 2: 10.50 kW > 10 kW",
        "phase L1 above its limit in 1 of 3 slots, first slot 2: 3.90 kW > 3.68 kW",
    ]


def test_malformed_per_slot_limits_are_refused():
    curve = make_curve([0.2] * 4)
    with pytest.raises(ValueError, match="fuse_kw"):
        plan_home(curve, fuse_kw=[5.0, 5.0, 5.0])
    with pytest.raises(ValueError, match="fuse_kw must be > 0"):
        plan_home(curve, fuse_kw=[5.0, 0.0, 5.0, 5.0])
    with pytest.raises(ValueError, match="raised_kw"):
        PhaseLimits(limit_kw=3.0, raised_kw={"L1": np.array([3.0, 2.0])})
    with pytest.raises(ValueError, match="raised_kw"):
        PhaseLimits(limit_kw=3.0, raised_kw={"L1": np.array([3.0, np.nan])})
    phases = PhaseLimits(limit_kw=3.0, raised_kw={"L1": np.array([3.0, 4.0, 3.0])})
    with pytest.raises(ValueError, match="needs 4 values"):
        cut_phases(phases, length=4, horizon=4)
    cut = cut_phases(phases, length=3, horizon=2)
    assert cut is not None and cut.limit("L1").tolist() == [3.0, 4.0]


# The oracle's instance: 6 slots; runs (name, kW, slots, phase); fixed loads (name, phase); PV on L1.
RUNS = (("dryer", 2.5, 2, "L2"), ("kettle", 3.0, 1, "L1"), ("ev", 4.5, 1, "3"))
FIXED = (("washer", "L2"), ("heater", "3"))
FUSE, PHASE = 7.0, 3.68


def _hand_limits(base, fixed):
    """The per-slot fuse and phase limits written out: max(real limit, what the fixed loads draw there)."""
    n = len(base)
    draw = [base[t] + sum(fixed[name][t] for name, _ in FIXED) for t in range(n)]
    fuse = [max(FUSE, draw[t]) for t in range(n)]
    phase = {}
    for p in ("L1", "L2", "L3"):
        on = [base[t] / 3 + sum(fixed[name][t] * _share(ph, p) for name, ph in FIXED) for t in range(n)]
        phase[p] = [max(PHASE, on[t]) for t in range(n)]
    return fuse, phase


def _share(assigned, phase):
    return 1 / 3 if assigned == "3" else float(assigned == phase)


def _oracle(prices, base, pv, fixed, fuse, phase):
    """Every start combination by hand: the least import cost among those within every slot's limits, and its set."""
    n = len(prices)
    costs = {}
    for starts in product(*(range(n - slots + 1) for _, _, slots, _ in RUNS)):
        run_kw = {name: [kw if s <= t < s + slots else 0.0 for t in range(n)]
                  for (name, kw, slots, _), s in zip(RUNS, starts, strict=True)}
        ok, cost = True, 0.0
        for t in range(n):
            net = base[t] + sum(fixed[f][t] for f, _ in FIXED) + sum(r[t] for r in run_kw.values()) - pv[t]
            for p in ("L1", "L2", "L3"):
                on = base[t] / 3 + sum(fixed[f][t] * _share(ph, p) for f, ph in FIXED)
                on += sum(run_kw[name][t] * _share(ph, p) for name, _, _, ph in RUNS) - pv[t] * (p == "L1")
                ok &= abs(on) <= phase[p][t] + 1e-9
            ok &= net <= fuse[t] + 1e-9
            cost += 0.25 * prices[t] * max(net, 0.0)
        if ok:
            costs[starts] = cost
    if not costs:
        return None, set()
    best = min(costs.values())
    return best, {s for s, c in costs.items() if c <= best + 1e-9}


@pytest.mark.parametrize("case", range(12))
def test_the_plan_matches_a_brute_force_over_every_start(case):
    """Random prices, base load, PV and fixed loads that pass the fuse or a phase in some slots: the plan costs what
    the cheapest start combination within each slot's own limits costs (by hand), and takes one of them; none
    within them means no plan."""
    rng = np.random.default_rng(case)
    n = 6
    prices = rng.uniform(0.05, 0.5, n).round(3)
    base = rng.uniform(0.0, 1.5, n).round(2)
    pv = np.where(rng.random(n) < 0.4, rng.uniform(0.0, 3.0, n), 0.0).round(2)
    fixed = {"washer": np.where(rng.random(n) < 0.3, 4.5, 0.0), "heater": np.where(rng.random(n) < 0.3, 6.5, 0.0)}
    fuse, phase = _hand_limits(base.tolist(), {k: v.tolist() for k, v in fixed.items()})
    assignment = {name: ph for name, _, _, ph in RUNS} | dict(FIXED) | {"pv": "L1"}
    kept = phases_over_fixed(PhaseLimits(limit_kw=PHASE, assignment=assignment), {"base": base, **fixed}, [], {},
                             make_curve(prices))
    for p in ("L1", "L2", "L3"):
        np.testing.assert_allclose(np.broadcast_to(kept.limit(p), (n,)), phase[p], rtol=0, atol=1e-12)
    best, optimal = _oracle(prices, base, pv, fixed, fuse, phase)
    loads = [run(name, kw, slots, n) for name, kw, slots, _ in RUNS]
    args = {"pv_kw": pv, "base_load_kw": base, "fixed_kw": fixed, "fuse_kw": fuse, "phases": kept}
    if best is None:
        with pytest.raises(HomePlanError):
            plan_home(make_curve(prices), loads, curtailment=False, **args)
        return
    plan = plan_home(make_curve(prices), loads, curtailment=False, **args)
    starts = tuple(int((plan.starts[name] - T0) / SLOT) for name, _, _, _ in RUNS)
    assert starts in optimal
    assert plan.cost == pytest.approx(best, abs=1e-9)
