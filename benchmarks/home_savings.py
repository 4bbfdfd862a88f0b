"""What the whole-home plan saves over the bundled real price days, with generated PV and load and forecast errors.

Run: ``.venv/bin/python benchmarks/home_savings.py [DAYS]`` (or with ``.venv-bench/bin/python``). The home of
:mod:`home_inputs` (10 kWh battery, 6 kWp PV, 5 kW export limit, 11.5 kW fuse) gets, every day, a dishwasher
(2 kW, 2 h, 08:00-24:00) and an EV (20 kWh at up to 11 kW, 00:00-07:00). Actual PV and load are generated per day;
forecasts are the actuals times (1 + e), e normal with sd 30 % (PV) and 15 % (load), except the current slot, which
is known. Prices of day d+1 are known from 12:00 UTC of day d (day-ahead auction), so a plan never sees more.

Strategies, all costed on the actuals by the common evaluator over the whole period (terminal value of the battery's
energy gain at the median import price x discharge efficiency):

(a) no optimisation: appliances and EV at their earliest, battery self-consumption on the actual surplus;
(b) day-ahead: one plan per day at 00:00 on that morning's forecasts, executed as planned (battery power clipped to
    what its SoC allows, the grid absorbs the forecast errors);
(c) rolling: a new plan every 15-minute slot on fresh forecasts up to the last known price, its first slot executed;
(d) perfect foresight: one plan over the whole period on the actual PV and load.

Prints one row per strategy and the gap of (c) to (d).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from pathlib import Path
import sys
import time

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))

from home_inputs import DAY, EXPORT_LIMIT_KW, FUSE_KW, SLOT, battery, home, price_days  # noqa: E402

from custom_components.agentic_hems.prices.curve import PriceCurve  # noqa: E402
from custom_components.agentic_hems.scheduling.home import plan_home  # noqa: E402
from custom_components.agentic_hems.scheduling.home_model import HomeBattery, Tariff, evaluate  # noqa: E402
from custom_components.agentic_hems.scheduling.plan import LoadSpec  # noqa: E402

PV_SD, LOAD_SD = 0.30, 0.15
PUBLISH_SLOT = 48  # 12:00 UTC: the next day's prices are known from here


@dataclass
class Period:
    """The simulated days: prices, actual PV and load, the loads with their windows (slot indices)."""

    curve: PriceCurve
    export_price: np.ndarray
    pv: np.ndarray
    base: np.ndarray
    runs: list[tuple[str, float, int, int, int]]  # name, kW, slots, first, stop
    charges: list[tuple[str, float, float, int, int]]  # name, max kW, kWh, first, stop


def period(days: int) -> Period:
    """The first ``days`` bundled price days with generated actuals and daily loads."""
    spots = price_days()[:days]
    case = home(np.concatenate(spots), seed=7)
    runs = [(f"dishwasher{d}", 2.0, 8, d * DAY + 32, (d + 1) * DAY) for d in range(days)]
    charges = [(f"ev{d}", 11.0, 20.0, d * DAY, d * DAY + 28) for d in range(days)]
    return Period(case.curve, case.export_price, case.pv_kw, case.base_kw, runs, charges)


def known_until(p: Period, now: int) -> int:
    """One past the last slot with a known price at slot ``now``."""
    day, slot = divmod(now, DAY)
    return min((day + (2 if slot >= PUBLISH_SLOT else 1)) * DAY, len(p.curve))


def forecast(actual: np.ndarray, sd: float, rng: np.random.Generator) -> np.ndarray:
    """``actual`` with multiplicative errors from the second slot on (the first is known), never below 0."""
    noisy = actual * (1 + sd * rng.standard_normal(actual.size))
    noisy[0] = actual[0]
    return np.clip(noisy, 0.0, None)


def tariff(p: Period, bat: HomeBattery) -> Tariff:
    """The common tariff of the whole period."""
    return Tariff(
        import_price=p.curve.prices,
        export_price=p.export_price,
        hours=0.25,
        fuse_kw=FUSE_KW,
        export_limit_kw=EXPORT_LIMIT_KW,
        terminal_price={bat.name: float(np.median(p.curve.prices)) * 0.95},
    )


@dataclass
class State:
    """What has happened up to the current slot."""

    soc_kwh: float
    house: np.ndarray  # kW drawn by the EVs as they charged
    battery: np.ndarray
    started: dict[str, int]
    delivered: dict[str, float]


def _specs(p: Period, state: State, now: int, stop: int) -> tuple[list[LoadSpec], np.ndarray]:
    """The loads still to place at ``now`` and the kW of runs already going (aligned with now..stop)."""
    at = lambda i: p.curve.start + SLOT * i  # noqa: E731
    specs, fixed = [], np.zeros(stop - now)
    for name, kw, slots, first, end in p.runs:
        if name in state.started:
            s = state.started[name]
            lo, hi = max(s, now), min(s + slots, stop)
            fixed[lo - now : max(hi - now, 0)] += kw if hi > lo else 0.0
        elif end > now and first < stop:
            specs.append(
                LoadSpec(
                    name, power_kw=kw, duration_min=15 * slots, earliest_start=at(max(first, now)), deadline=at(end)
                )
            )
    for name, kw, kwh, first, end in p.charges:
        rest = kwh - state.delivered.get(name, 0.0)
        if rest > 1e-6 and end > now and first < stop:
            specs.append(
                LoadSpec(
                    name,
                    power_kw=kw,
                    energy_kwh=rest,
                    contiguous=False,
                    earliest_start=at(max(first, now)),
                    deadline=at(end),
                )
            )
    return specs, fixed


def _plan(p: Period, state: State, now: int, stop: int, pv: np.ndarray, base: np.ndarray, bat: HomeBattery):  # noqa: ANN202
    """plan_home from ``now`` to ``stop`` on the given forecasts, from the current SoC."""
    specs, fixed = _specs(p, state, now, stop)
    curve = PriceCurve(start=p.curve.start + SLOT * now, resolution=SLOT, prices=p.curve.prices[now:stop], source="s")
    current = replace(bat, initial_soc_pct=100 * state.soc_kwh / bat.capacity_kwh)
    return plan_home(
        curve,
        specs,
        batteries=[current],
        pv_kw=pv,
        base_load_kw=base + fixed,
        export_price=p.export_price[now:stop],
        fuse_kw=FUSE_KW,
        export_limit_kw=EXPORT_LIMIT_KW,
        terminal_price=float(np.median(p.curve.prices)) * 0.95,
    )


def _execute(p: Period, state: State, plan, now: int, slots: int, bat: HomeBattery) -> None:  # noqa: ANN001
    """Carry out the first ``slots`` slots of ``plan`` on the actuals: loads as planned, battery within its SoC."""
    for name, power in plan.load_kw.items():
        for k in range(slots):
            if power[k] > 0 and name.startswith("dishwasher") and name not in state.started:
                state.started[name] = now + k
            if name.startswith("ev"):
                state.delivered[name] = state.delivered.get(name, 0.0) + 0.25 * power[k]
                state.house[now + k] += power[k]
    for k in range(slots):
        want = float(plan.battery_kw[bat.name][k])
        if want >= 0:
            power = min(want, (bat.ceiling_kwh - state.soc_kwh) / (0.25 * bat.charge_efficiency))
            state.soc_kwh += 0.25 * bat.charge_efficiency * power
        else:
            power = -min(-want, (state.soc_kwh - bat.floor_kwh) * bat.discharge_efficiency / 0.25)
            state.soc_kwh += 0.25 * power / bat.discharge_efficiency
        state.battery[now + k] = power


def _new_state(p: Period, bat: HomeBattery) -> State:
    return State(bat.initial_kwh, np.zeros(len(p.curve)), np.zeros(len(p.curve)), {}, {})


def _house(p: Period, state: State) -> np.ndarray:
    """KW of every planned load as it ran: the EVs' executed power plus each run from its start."""
    house = state.house.copy()
    for name, kw, slots, _, _ in p.runs:
        if name in state.started:
            house[state.started[name] : state.started[name] + slots] += kw
    return house


def simulate(p: Period, bat: HomeBattery, *, step: int, rng: np.random.Generator) -> State:
    """Plan every ``step`` slots (96: day-ahead at midnight; 1: rolling), execute until the next plan."""
    state = _new_state(p, bat)
    for now in range(0, len(p.curve), step):
        stop = known_until(p, now) if step == 1 else min(now + DAY, len(p.curve))
        pv = forecast(p.pv[now:stop], PV_SD, rng)
        base = forecast(p.base[now:stop], LOAD_SD, rng)
        plan = _plan(p, state, now, stop, pv, base, bat)
        _execute(p, state, plan, now, min(step, stop - now), bat)
    return state


def cost(p: Period, bat: HomeBattery, state: State) -> float:
    """Net cost of what happened, on the actuals; PV beyond the export limit is curtailed."""
    house = p.base + _house(p, state)
    over = np.clip(p.pv - house - state.battery - EXPORT_LIMIT_KW, 0.0, p.pv)
    result = evaluate(
        tariff(p, bat), house_kw=house, pv_kw=p.pv - over, battery_kw={bat.name: state.battery}, batteries=(bat,)
    )
    return result.net_cost


def no_optimisation(p: Period, bat: HomeBattery) -> float:
    """(a): the plan's baseline on the actuals, costed by the evaluator."""
    state = _new_state(p, bat)
    plan = _plan(p, state, 0, len(p.curve), p.pv, p.base, bat)
    return plan.baseline_net_cost


def main() -> int:
    days = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    p = period(days)
    bat = battery(50.0)
    rows: list[tuple[str, float, float | None]] = [("(a) no optimisation", no_optimisation(p, bat), None)]
    for label, step in (("(b) day-ahead plan once a day", DAY), ("(c) rolling plan every slot", 1)):
        started = time.perf_counter()
        state = simulate(p, bat, step=step, rng=np.random.default_rng(11))
        rows.append((label, cost(p, bat, state), time.perf_counter() - started))
    started = time.perf_counter()
    perfect = _plan(p, _new_state(p, bat), 0, len(p.curve), p.pv, p.base, bat)
    rows.append(("(d) perfect foresight", perfect.net_cost, time.perf_counter() - started))
    print(f"{days} real price days (Belgium, Oct 2024), {len(p.curve)} slots; net cost in EUR")
    for label, value, seconds in rows:
        print(f"{label:34} {value:9.3f}" + ("" if seconds is None else f"   ({seconds:6.1f} s)"))
    gap = rows[2][1] - rows[3][1]
    print(
        f"gap (c) - (d): {gap:.3f} EUR ({100 * gap / abs(rows[3][1]):.1f} % of (d)); saving (a) - (c): "
        f"{rows[0][1] - rows[2][1]:.3f} EUR"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
