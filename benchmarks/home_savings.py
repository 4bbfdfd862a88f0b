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

Three homes: the battery home above; the same with a heat pump heating the house (modulating 0-3 kW electrical,
UA 0.15 kW/K, C 8 kWh/K, comfort 19.5-22 °C, COP 3 + 0.08 x outdoor °C; outdoor temperature generated per day and
forecast with an additive error of sd 1 K, executed with a thermostat guard that keeps the floor on the actual
weather); and the battery home on a capacity tariff (4 EUR per kW of the month's highest 15-minute import above a
2.5 kW minimum; the rolling plan is told the month's peak so far). The heat is valued at the end at the median
import price / COP per kWh of heat, like the battery's energy.

Prints, per home, one row per strategy (net cost, the capacity charge in it, comfort shortfall in K·h below the
floor) and the gap of (c) to (d).
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
from custom_components.agentic_hems.scheduling.home_evaluate import Tariff, evaluate  # noqa: E402
from custom_components.agentic_hems.scheduling.home_model import GridFees, HomeBattery, HomeHeatPump, HomePlan  # noqa: E402
from custom_components.agentic_hems.scheduling.plan import LoadSpec  # noqa: E402

PV_SD, LOAD_SD, OUTDOOR_SD = 0.30, 0.15, 1.0
CAPACITY_PRICE, CAPACITY_MIN_KW = 4.0, 2.5  # EUR per kW of the month's peak above the minimum
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
    outdoor: np.ndarray  # actual outdoor °C
    heat_pump: bool = False
    capacity: bool = False


def period(days: int, *, heat_pump: bool = False, capacity: bool = False) -> Period:
    """The first ``days`` bundled price days with generated actuals and daily loads."""
    spots = price_days()[:days]
    case = home(np.concatenate(spots), seed=7)
    runs = [(f"dishwasher{d}", 2.0, 8, d * DAY + 32, (d + 1) * DAY) for d in range(days)]
    charges = [(f"ev{d}", 11.0, 20.0, d * DAY, d * DAY + 28) for d in range(days)]
    rng = np.random.default_rng(5)
    hours = np.arange(days * DAY) / 4
    outdoor = 4.0 + 4.0 * np.sin((hours - 9) / 24 * 2 * np.pi) + np.repeat(rng.normal(0, 2, days), DAY)
    return Period(case.curve, case.export_price, case.pv_kw, case.base_kw, runs, charges, outdoor, heat_pump, capacity)


def house_pump(outdoor: np.ndarray, temp: float) -> HomeHeatPump:
    """The heat pump of the house over ``outdoor`` (°C per slot), starting at ``temp`` °C."""
    n = outdoor.size
    return HomeHeatPump(
        name="heat_pump",
        ua_kw_per_k=0.15,
        capacity_kwh_per_k=8.0,
        min_kw=0.0,
        max_kw=3.0,
        initial_temp_c=temp,
        ambient_c=outdoor,
        cop=3.0 + 0.08 * outdoor,
        comfort_low_c=np.full(n, 19.5),
        comfort_high_c=np.full(n, 22.0),
    )


def fees(p: Period, n: int, peak_kw: float) -> GridFees | None:
    """The capacity tariff over n slots with the month's peak so far, None for the homes without it."""
    if not p.capacity:
        return None
    return GridFees(
        energy_fee=np.zeros(n), capacity_price=CAPACITY_PRICE, peak_floor_kw=(max(peak_kw, CAPACITY_MIN_KW),)
    )


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
        terminal_price={bat.name: float(np.median(p.curve.prices)) * 0.95}
        | {"heat_pump": float(np.median(p.curve.prices)) / float(3.0 + 0.08 * p.outdoor[-1])},
        fees=fees(p, len(p.curve), 0.0),
    )


@dataclass
class State:
    """What has happened up to the current slot."""

    soc_kwh: float
    house: np.ndarray  # kW drawn by the EVs as they charged
    battery: np.ndarray
    started: dict[str, int]
    delivered: dict[str, float]
    heat: np.ndarray
    temp: float = 20.5
    peak: float = 0.0


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


def _plan(
    p: Period, state: State, now: int, stop: int, forecasts: tuple[np.ndarray, np.ndarray, np.ndarray], bat: HomeBattery
) -> HomePlan:
    """plan_home from ``now`` to ``stop`` on the given forecasts (PV, load, outdoor), from the current state."""
    specs, fixed = _specs(p, state, now, stop)
    pv, base, outdoor = forecasts
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
        heat_pumps=[house_pump(outdoor, state.temp)] if p.heat_pump else [],
        fees=fees(p, stop - now, state.peak),
    )


def _execute(p: Period, state: State, plan: HomePlan, now: int, slots: int, bat: HomeBattery) -> None:
    """Carry out the first ``slots`` slots of ``plan`` on the actuals: loads as planned, battery within its SoC.

    The heat pump runs as planned, raised where the actual weather needs more to hold the floor and lowered where
    the plan would pass the ceiling; the month's peak follows the actual import.
    """
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
        if p.heat_pump:
            _heat(p, state, float(plan.heat_kw["heat_pump"][k]), now + k)
    house = p.base[now : now + slots] + _house(p, state)[now : now + slots] + state.heat[now : now + slots]
    net = house + state.battery[now : now + slots] - p.pv[now : now + slots]
    state.peak = max(state.peak, float(np.max(net, initial=0.0)))


def _heat(p: Period, state: State, want: float, t: int) -> None:
    """Run the heat pump in slot t at ``want`` kW, within what holds the actual temperature inside the band."""
    pump = house_pump(p.outdoor[t : t + 1], state.temp)
    a, b, k = pump.coefficients(0.25, 1)
    floor, ceiling = ((edge - a * state.temp - b[0]) / k[0] for edge in (19.5, 22.0))
    lowest = min(max(floor, 0.0), pump.max_kw)
    state.heat[t] = power = min(max(want, lowest), max(ceiling, lowest))
    state.temp = a * state.temp + b[0] + k[0] * power


def _new_state(p: Period, bat: HomeBattery) -> State:
    n = len(p.curve)
    return State(bat.initial_kwh, np.zeros(n), np.zeros(n), {}, {}, np.zeros(n))


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
        outdoor = p.outdoor[now:stop].copy()
        if p.heat_pump:  # only here, so the other homes draw the same PV and load errors as without a heat pump
            outdoor[1:] += OUTDOOR_SD * rng.standard_normal(stop - now - 1)
        plan = _plan(p, state, now, stop, (pv, base, outdoor), bat)
        _execute(p, state, plan, now, min(step, stop - now), bat)
    return state


def cost(p: Period, bat: HomeBattery, state: State) -> tuple[float, float, float]:
    """Net cost, capacity charge and comfort shortfall (K·h below the floor) of what happened, on the actuals.

    PV beyond the export limit is curtailed.
    """
    house = p.base + _house(p, state)
    over = np.clip(p.pv - house - state.heat - state.battery - EXPORT_LIMIT_KW, 0.0, p.pv)
    pumps = (house_pump(p.outdoor, 20.5),) if p.heat_pump else ()
    result = evaluate(
        tariff(p, bat),
        house_kw=house,
        pv_kw=p.pv - over,
        battery_kw={bat.name: state.battery},
        batteries=(bat,),
        heat_kw={"heat_pump": state.heat},
        heat_pumps=pumps,
    )
    short = 0.25 * float(np.sum(np.clip(19.5 - result.temp_c["heat_pump"][1:], 0.0, None))) if pumps else 0.0
    return result.net_cost, result.capacity_cost, short


def no_optimisation(p: Period, bat: HomeBattery) -> tuple[float, float, float]:
    """(a): the plan's baseline on the actuals, costed by the evaluator (a thermostat holds the floor)."""
    state = _new_state(p, bat)
    plan = _plan(p, state, 0, len(p.curve), (p.pv, p.base, p.outdoor), bat)
    return plan.baseline_net_cost, plan.baseline_capacity_cost, 0.0


def study(p: Period, bat: HomeBattery) -> list[tuple[str, tuple[float, float, float], float | None]]:
    """The four strategies on one home: (label, (net cost, capacity charge, shortfall), seconds)."""
    rows: list[tuple[str, tuple[float, float, float], float | None]] = [
        ("(a) no optimisation", no_optimisation(p, bat), None)
    ]
    for label, step in (("(b) day-ahead plan once a day", DAY), ("(c) rolling plan every slot", 1)):
        started = time.perf_counter()
        state = simulate(p, bat, step=step, rng=np.random.default_rng(11))
        rows.append((label, cost(p, bat, state), time.perf_counter() - started))
    started = time.perf_counter()
    perfect = _plan(p, _new_state(p, bat), 0, len(p.curve), (p.pv, p.base, p.outdoor), bat)
    rows.append(
        ("(d) perfect foresight", (perfect.net_cost, perfect.capacity_cost, 0.0), time.perf_counter() - started)
    )
    return rows


def main() -> int:
    days = int(sys.argv[1]) if len(sys.argv) > 1 else 3
    bat = battery(50.0)
    homes = (
        ("battery home", period(days)),
        ("heat-pump home", period(days, heat_pump=True)),
        ("capacity-tariff home", period(days, capacity=True)),
    )
    print(f"{days} real price days (Belgium, Oct 2024), {days * DAY} slots; net cost in EUR")
    for name, p in homes:
        rows = study(p, bat)
        print(f"{name + ':':34} {'net cost':>9} {'capacity':>9} {'K·h short':>10}")
        for label, (value, capacity, short), seconds in rows:
            timing = "" if seconds is None else f"   ({seconds:6.1f} s)"
            print(f"  {label:32} {value:9.3f} {capacity:9.3f} {short:10.2f}{timing}")
        gap = rows[2][1][0] - rows[3][1][0]
        print(
            f"  gap (c) - (d): {gap:.3f} EUR ({100 * gap / abs(rows[3][1][0]):.1f} % of (d)); saving (a) - (c): "
            f"{rows[0][1][0] - rows[2][1][0]:.3f} EUR"
        )
    return 0


if __name__ == "__main__":
    sys.exit(main())
