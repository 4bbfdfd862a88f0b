"""Twenty replans of a home, one per 15-minute slot, as the integration replans (MPC): the time of each plan.

Run from the repository root: ``scripts/py314-root .venv/bin/python benchmarks/home_replans.py [CASES...]`` (the
case numbers of :func:`home_vs_emhass.cases`, 1-based; default the heat-pump homes 4, 6, 8 and 10). Replan k plans
from slot k to the horizon's end from the state the previous plan left after its first slot: the battery's SoC and
the heat pump's temperature and on/off time as planned, a run that has started fixed (``fixed_kw``) for its remaining
slots, the EV's energy still due. Each replan is solved twice from the same state: cold, and warm-started from the
previous replan's plan (``plan_home(previous=...)``, the plan then carried out). Each row gives the median and the
worst wall-clock and CPU (``time.process_time``) seconds of the twenty plans. Exit status 1 when a heat-pump home's
worst warm replan takes more than ``HEAT_PUMP_CPU_S`` of CPU, or when a warm and a cold plan that both finished
differ in net cost. A Raspberry Pi is simulated by running the script in a cgroup limited to a quarter of one core (README).
"""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path
import statistics
import sys
import time
from typing import Any

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from home_inputs import SLOT, Home  # noqa: E402
from home_vs_emhass import HEAT_PUMP_CPU_S, cases  # noqa: E402

from custom_components.agentic_hems.prices.curve import PriceCurve  # noqa: E402
from custom_components.agentic_hems.scheduling.home import plan_home  # noqa: E402
from custom_components.agentic_hems.scheduling.home_build import cost_scale  # noqa: E402
from custom_components.agentic_hems.scheduling.home_inputs import Extras, prepare  # noqa: E402
from custom_components.agentic_hems.scheduling.home_model import HomePlan  # noqa: E402
from custom_components.agentic_hems.scheduling.home_solve import COST_SCALE, PLAN_GAP  # noqa: E402
from custom_components.agentic_hems.scheduling.plan import LoadSpec  # noqa: E402

REPLANS = 20
ON_KW = 1e-3  # a heat pump draws more than this when it runs


class State:
    """What the plans so far have done: SoC, store temperature, the pump's on/off slots, runs started, EV energy."""

    def __init__(self, case: Home) -> None:
        """Start from the home's initial state."""
        self.soc_kwh = case.battery.initial_kwh
        self.temp_c = None if case.heat_pump is None else case.heat_pump.initial_temp_c
        self.on, self.off = 0, 0
        self.started: dict[str, int] = {}
        self.delivered: dict[str, float] = {}


def _loads(case: Home, state: State, now: int) -> tuple[list[LoadSpec], dict[str, np.ndarray]]:
    """The loads still to place from slot ``now`` and the kW of the runs already going (fixed loads)."""
    n = len(case.curve) - now
    specs: list[LoadSpec] = []
    fixed: dict[str, np.ndarray] = {}
    now_at = case.curve.start + SLOT * now
    for spec in case.loads:
        if spec.contiguous and spec.name in state.started:
            end = state.started[spec.name] + int(spec.duration_min / 15) - now
            if end > 0:
                fixed[spec.name] = np.where(np.arange(n) < end, spec.power_kw, 0.0)
        elif spec.contiguous:
            specs.append(replace(spec, earliest_start=max(spec.earliest_start, now_at)))
        elif spec.energy_kwh - state.delivered.get(spec.name, 0.0) > 1e-6:
            rest = spec.energy_kwh - state.delivered.get(spec.name, 0.0)
            specs.append(replace(spec, energy_kwh=rest, earliest_start=max(spec.earliest_start, now_at)))
    return specs, fixed


def _plan(case: Home, state: State, now: int, previous: HomePlan | None = None) -> HomePlan:
    """plan_home from slot ``now`` on, from ``state``, warm-started from ``previous`` when given."""
    return plan_home(**_arguments(case, state, now), previous=previous)


def _gap(case: Home, state: State, now: int) -> float:
    """Return the plan gap in currency of the replan at ``now``: how far from the least cost a plan may stop."""
    args = _arguments(case, state, now)
    extras = Extras(
        tuple(args["heat_pumps"]), args["fees"], None, None, args["fixed_kw"] or {}, args["export_limit_kw"], True
    )
    inputs, _, _ = prepare(
        args["curve"],
        args["loads"],
        batteries=args["batteries"],
        pv_kw=args["pv_kw"],
        base_load_kw=args["base_load_kw"],
        export_price=args["export_price"],
        fuse_kw=args["fuse_kw"],
        extras=extras,
    )
    return PLAN_GAP / COST_SCALE * cost_scale(inputs)


def _arguments(case: Home, state: State, now: int) -> dict[str, Any]:
    """plan_home's arguments for the replan at slot ``now`` from ``state``."""
    specs, fixed = _loads(case, state, now)
    curve = PriceCurve(start=case.curve.start + SLOT * now, resolution=SLOT, prices=case.curve.prices[now:], source="r")
    bat = replace(case.battery, initial_soc_pct=100 * state.soc_kwh / case.battery.capacity_kwh)
    pumps = []
    if case.heat_pump is not None:
        p = case.heat_pump
        pumps = [
            replace(
                p,
                initial_temp_c=state.temp_c,
                ambient_c=p.ambient_c[now:],
                cop=p.cop[now:],
                comfort_low_c=p.comfort_low_c[now:],
                comfort_high_c=p.comfort_high_c[now:],
                initial_on_slots=state.on,
                initial_off_slots=state.off,
            )
        ]
    return {
        "curve": curve,
        "loads": specs,
        "batteries": [bat],
        "pv_kw": case.pv_kw[now:],
        "base_load_kw": case.base_kw[now:],
        "export_price": case.export_price[now:],
        "fuse_kw": case.fuse_kw,
        "export_limit_kw": case.export_limit_kw,
        "heat_pumps": pumps,
        "fees": None if case.fees is None else replace(case.fees, energy_fee=case.fees.energy_fee[now:]),
        "fixed_kw": fixed or None,
    }


def _step(case: Home, state: State, plan: HomePlan, now: int) -> None:
    """Carry out the plan's first slot."""
    state.soc_kwh = float(plan.soc_kwh[case.battery.name][1])
    for spec in case.loads:
        power = plan.load_kw.get(spec.name)
        if power is None:
            continue
        if spec.contiguous and power[0] > 0 and spec.name not in state.started:
            state.started[spec.name] = now
        if not spec.contiguous:
            state.delivered[spec.name] = state.delivered.get(spec.name, 0.0) + 0.25 * float(power[0])
    if case.heat_pump is not None:
        state.temp_c = float(plan.temp_c[case.heat_pump.name][1])
        running = plan.heat_kw[case.heat_pump.name][0] > ON_KW
        state.on, state.off = (state.on + 1, 0) if running else (0, state.off + 1)


def _timed(case: Home, state: State, now: int, previous: HomePlan | None) -> tuple[HomePlan, float, float]:
    """The plan and its wall and CPU seconds."""
    started, cpu = time.perf_counter(), time.process_time()
    plan = _plan(case, state, now, previous)
    return plan, time.perf_counter() - started, time.process_time() - cpu


def replans(case: Home) -> tuple[list[tuple[float, float]], list[tuple[float, float]], list[float], int]:
    """Time ``REPLANS`` consecutive replans (after one untimed warm-up plan), each twice from the same state: cold
    and warm-started from the previous replan's plan, which is then carried out.

    Returns the (wall, CPU) seconds of the cold and of the warm plans, for each replan where either plan reached its
    time bound the warm plan's net cost minus the cold one's, and the replans where neither did and their net costs
    differ by more than the plan gap (``home_solve.PLAN_GAP`` in currency, plus 1e-6 for HiGHS's tolerances): both
    are within that gap of the least cost, so a larger difference is a defect.
    """
    _plan(case, State(case), 0)
    state, cold, warm, limited, differ = State(case), [], [], [], 0
    previous: HomePlan | None = None
    for now in range(REPLANS):
        plain, *cold_s = _timed(case, state, now, None)
        plan, *warm_s = _timed(case, state, now, previous)
        cold.append((cold_s[0], cold_s[1]))
        warm.append((warm_s[0], warm_s[1]))
        if plain.time_limited or plan.time_limited:
            limited.append(plan.net_cost - plain.net_cost)
        elif abs(plan.net_cost - plain.net_cost) > _gap(case, state, now) + 1e-6:
            differ += 1
        _step(case, state, plan, now)
        previous = plan
    return cold, warm, limited, differ


def main() -> int:
    """Print a row per home and return 1 when a heat-pump home's worst replan passes the CPU target."""
    every = cases()
    chosen = [int(a) for a in sys.argv[1:]] or [4, 6, 8, 10]
    print(f"{'case':40} {'start':5} {'wall median':>11} {'wall worst':>10} {'cpu median':>10} {'cpu worst':>9}  result")
    ok = True
    for number in chosen:
        name, case = every[number - 1]
        cold, warm, limited, differ = replans(case)
        for label, times in (("cold", cold), ("warm", warm)):
            wall, cpu = [t[0] for t in times], [t[1] for t in times]
            passed = case.heat_pump is None or max(cpu) <= HEAT_PUMP_CPU_S
            ok &= passed or label == "cold"
            print(
                f"{number:2} {name:37} {label:5} {statistics.median(wall):11.3f} {max(wall):10.3f} "
                f"{statistics.median(cpu):10.3f} {max(cpu):9.3f}  "
                f"{'pass' if passed else f'FAIL: worst > {HEAT_PUMP_CPU_S:g} s CPU'}",
                flush=True,
            )
        ok &= differ == 0
        gain = (
            f", warm - cold net cost there: mean {statistics.mean(limited):+.4f}, most {max(limited):+.4f}"
            if limited
            else ""
        )
        print(
            f"   replans at the time bound: {len(limited)}{gain}; other replans whose net cost differs: {differ}",
            flush=True,
        )
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
