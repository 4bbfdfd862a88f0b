"""Heat pumps in the whole-home MILP against brute force, a hand-written LP and hand-worked cases."""

from __future__ import annotations

import itertools
import math

import numpy as np
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from scipy.optimize import linprog

from custom_components.agentic_hems.planning.heat_view import EPS_KW
from custom_components.agentic_hems.scheduling.home import plan_home
from custom_components.agentic_hems.scheduling.home_heat import heat_reasons
from custom_components.agentic_hems.scheduling.home_evaluate import Tariff, evaluate
from custom_components.agentic_hems.scheduling.home_model import HomeHeatPump, HomePlanError, Infeasibility
from custom_components.agentic_hems.scheduling.plan import LoadSpec

from .conftest import SLOT, T0, make_curve

H = 0.25


def pump(n: int, **kw) -> HomeHeatPump:
    base = dict(
        name="hp",
        ua_kw_per_k=0.2,
        capacity_kwh_per_k=2.0,
        min_kw=0.0,
        max_kw=2.0,
        initial_temp_c=20.0,
        ambient_c=np.full(n, 0.0),
        cop=np.full(n, 2.5),
        comfort_low_c=np.full(n, 19.0),
        comfort_high_c=np.full(n, 22.0),
    )
    return HomeHeatPump(**(base | kw))


def simulate(hp: HomeHeatPump, power) -> np.ndarray:
    """Temperatures at the slot boundaries by the model's explicit Euler step, written out."""
    temp = [hp.initial_temp_c]
    for t, p in enumerate(power):
        loss = hp.ua_kw_per_k * (temp[-1] - hp.ambient_c[t])
        temp.append(temp[-1] + H / hp.capacity_kwh_per_k * (hp.cop[t] * p - loss))
    return np.array(temp)


def runs_ok(pattern, hp: HomeHeatPump) -> bool:
    """Minimum run and off times over the pattern, the state before the horizon prefixed; a run cut at the end passes.

    Off before the horizon with ``initial_off_slots == 0`` counts as off long enough.
    """
    on0, off0 = hp.initial_on_slots, hp.initial_off_slots or hp.min_off_slots
    full = [1] * on0 if on0 else [0] * off0
    groups = [(value, len(list(group))) for value, group in itertools.groupby([*full, *pattern])]
    return all(length >= (hp.min_run_slots if value else hp.min_off_slots) for value, length in groups[:-1])


def brute_force(prices, hp: HomeHeatPump, base: float) -> float:
    """Least net cost over every on/off pattern (on = max_kw), the band and minimum times checked directly."""
    value = float(np.median(prices)) / hp.cop[-1]
    best = math.inf
    for pattern in itertools.product((0, 1), repeat=len(prices)):
        power = np.array(pattern, dtype=float) * hp.max_kw
        temp = simulate(hp, power)
        if np.any(temp[1:] < hp.comfort_low_c - 1e-9) or np.any(temp[1:] > hp.comfort_high_c + 1e-9):
            continue
        if not runs_ok(pattern, hp):
            continue
        cost = H * float(np.dot(prices, base + power)) - value * hp.capacity_kwh_per_k * (temp[-1] - temp[0])
        best = min(best, cost)
    return best


dyadic = st.integers(1, 40).map(lambda k: k / 64)


@settings(max_examples=25, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.integers(5, 7))
def test_on_off_heat_pump_matches_brute_force_over_every_pattern(data, n):
    prices = np.array(data.draw(st.lists(dyadic, min_size=n, max_size=n)))
    hp = pump(
        n,
        min_kw=2.0,
        cop=np.full(n, 4.0),
        capacity_kwh_per_k=4.0,
        min_run_slots=data.draw(st.integers(1, 3)),
        min_off_slots=data.draw(st.integers(1, 3)),
        initial_on_slots=data.draw(st.sampled_from([0, 1, 3])),
        comfort_low_c=np.full(n, 19.6),
        comfort_high_c=np.full(n, 20.6),
    )
    expected = brute_force(prices, hp, base=0.5)
    if math.isinf(expected):
        with pytest.raises(HomePlanError) as err:
            plan_home(make_curve(prices), heat_pumps=[hp], base_load_kw=0.5)
        assert Infeasibility.COMFORT in err.value.constraints
        return
    plan = plan_home(make_curve(prices), heat_pumps=[hp], base_load_kw=0.5)
    assert plan.net_cost == pytest.approx(expected, abs=1e-7)
    power = plan.heat_kw["hp"]
    assert np.all((np.abs(power) < 1e-6) | (np.abs(power - 2.0) < 1e-6))
    assert runs_ok(tuple(int(p > 1) for p in power), hp)
    np.testing.assert_allclose(plan.temp_c["hp"], simulate(hp, power), atol=1e-9)


def lp_heat(prices, hp: HomeHeatPump, base: float) -> float:
    """Least net cost of a modulating heat pump as an LP in P alone: T_t+1 = T_0 a^(t+1) + sum of the steps."""
    n = len(prices)
    a = 1 - H * hp.ua_kw_per_k / hp.capacity_kwh_per_k
    gain = np.zeros((n, n))  # gain[t, s]: effect of P_s on T_t+1
    free = np.zeros(n)  # T_t+1 with P = 0
    for t in range(n):
        for s in range(t + 1):
            gain[t, s] = a ** (t - s) * H * hp.cop[s] / hp.capacity_kwh_per_k
        free[t] = hp.initial_temp_c * a ** (t + 1) + sum(
            a ** (t - s) * H * hp.ua_kw_per_k * hp.ambient_c[s] / hp.capacity_kwh_per_k for s in range(t + 1)
        )
    value = float(np.median(prices)) / hp.cop[-1] * hp.capacity_kwh_per_k
    c = H * np.asarray(prices) - value * gain[-1]
    a_ub = np.vstack([gain, -gain])
    b_ub = np.concatenate([hp.comfort_high_c - free, free - hp.comfort_low_c])
    res = linprog(c, A_ub=a_ub, b_ub=b_ub, bounds=[(0, hp.max_kw)] * n, method="highs")
    assert res.status == 0
    return float(res.fun) + H * base * float(np.sum(prices)) - value * (free[-1] - hp.initial_temp_c)


@settings(max_examples=20, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data(), n=st.integers(4, 12))
def test_modulating_heat_pump_matches_a_hand_written_lp(data, n):
    prices = np.array(data.draw(st.lists(dyadic, min_size=n, max_size=n)))
    ambient = np.array(data.draw(st.lists(st.integers(-10, 10), min_size=n, max_size=n)), dtype=float)
    cop = np.array(data.draw(st.lists(st.sampled_from([2.0, 3.0, 4.0]), min_size=n, max_size=n)))
    hp = pump(n, ambient_c=ambient, cop=cop, max_kw=4.0)
    plan = plan_home(make_curve(prices), heat_pumps=[hp], base_load_kw=0.3)
    assert plan.net_cost == pytest.approx(lp_heat(prices, hp, 0.3), abs=1e-7)
    assert plan.net_cost <= plan.baseline_net_cost + 1e-9


def test_preheats_in_the_cheap_slots_before_an_expensive_block():
    prices = np.array([0.1] * 4 + [0.5] * 4 + [0.2] * 8)
    hp = pump(16, comfort_low_c=np.full(16, 19.5), cop=np.full(16, 4.0), capacity_kwh_per_k=4.0)
    plan = plan_home(make_curve(prices), heat_pumps=[hp])
    power, temp = plan.heat_kw["hp"], plan.temp_c["hp"]
    np.testing.assert_allclose(power[4:8], 0.0, atol=1e-9)  # nothing in the dear block
    assert power[:4].sum() > 0 and temp[4] > 19.5 + 0.5  # heat stored ahead of it
    assert np.all(temp[1:] >= 19.5 - 1e-9) and np.all(temp[1:] <= 22.0 + 1e-9)
    reasons = heat_reasons(plan, "hp", heat_pumps=[hp], import_price=prices)
    assert reasons[4:8] == ["off"] * 4
    assert "preheat_before_peak" in reasons[:4]
    # the baseline thermostat only holds the floor, paying the dear block
    assert plan.saving > 0


def test_minimum_run_time_keeps_it_on_and_is_named():
    """The cheap slot is worth a full slot of heat; a start runs 3 slots, the last two at min_kw in dear slots."""
    n = 8
    hp = pump(
        n,
        ua_kw_per_k=0.01,
        cop=np.full(n, 3.0),
        min_kw=1.0,
        max_kw=2.0,
        min_run_slots=3,
        comfort_low_c=np.array([19.5] * 7 + [20.2]),
        comfort_high_c=np.full(n, 25.0),
    )
    prices = np.array([0.3] * 3 + [0.1] + [0.3] * 4)
    plan = plan_home(make_curve(prices), heat_pumps=[hp])
    on = plan.heat_kw["hp"] > 1e-6
    starts = [t for t in range(n) if on[t] and (t == 0 or not on[t - 1])]
    assert starts and all(on[s : s + 3].all() or s + 3 > n for s in starts)
    reasons = heat_reasons(plan, "hp", heat_pumps=[hp], import_price=prices)
    assert "min_run" in reasons


@pytest.mark.parametrize(("min_run", "min_off"), [(3, 1), (1, 3), (3, 2)])
def test_without_a_minimum_power_the_minimum_times_hold_for_the_power_switched(min_run, min_off):
    """With min_kw 0 a run must still draw power in each of its slots: a slot "on" at 0 kW would let one cheap slot
    of heat pass a 3-slot minimum run, or a dear slot pass as a pause between runs."""
    n = 10
    hp = pump(n, ua_kw_per_k=0.01, cop=np.full(n, 3.0), min_run_slots=min_run, min_off_slots=min_off,
              comfort_low_c=np.array([19.5] * 9 + [20.2]), comfort_high_c=np.full(n, 25.0))
    prices = np.array([0.3] * 3 + [0.1, 0.6, 0.1] + [0.3] * 4)
    plan = plan_home(make_curve(prices), heat_pumps=[hp])
    pattern = [int(kw > 1e-6) for kw in plan.heat_kw["hp"]]
    assert sum(pattern) > 0 and runs_ok(pattern, hp), plan.heat_kw["hp"]
    if min_run == 3:  # the cheap slot's run goes on at the floor through two dearer slots
        assert "min_run" in heat_reasons(plan, "hp", heat_pumps=[hp], import_price=prices)


@pytest.mark.parametrize("max_kw", [0.8, 1.0, 2.0])
def test_the_floor_is_running_for_the_executor(max_kw):
    """The executors switch a heat pump on above EPS_KW: every slot the plan runs, they run, so the minimum run time
    holds for what is switched, whatever max_kw."""
    n = 10
    hp = pump(n, max_kw=max_kw, ua_kw_per_k=0.01, cop=np.full(n, 3.0), min_run_slots=3,
              comfort_low_c=np.array([19.5] * 9 + [20.2]), comfort_high_c=np.full(n, 25.0))
    plan = plan_home(make_curve(np.array([0.3] * 3 + [0.1, 0.6, 0.1] + [0.3] * 4)), heat_pumps=[hp])
    switched = [int(kw > EPS_KW) for kw in plan.heat_kw["hp"]]
    assert sum(switched) > 0 and runs_ok(switched, hp), plan.heat_kw["hp"]


@pytest.mark.parametrize(("start_c", "ambient_c", "ua", "gains_kw"), [(22.0, 22.0, 0.2, 0.0), (21.9, 15.0, 0.05, 0.6)])
def test_a_forced_run_at_the_ceiling_widens_the_band_by_the_floor(start_c, ambient_c, ua, gains_kw):
    """One slot into a 3-slot minimum run at the top of the band (no losses, or sun gains warming the house): the
    forced run's floor heat widens the ceiling, as min_kw does, instead of leaving no plan."""
    n = 8
    hp = pump(n, initial_temp_c=start_c, ambient_c=np.full(n, ambient_c), ua_kw_per_k=ua, min_run_slots=3,
              initial_on_slots=1, gains_kw=np.full(n, gains_kw), comfort_high_c=np.full(n, 22.0))
    plan = plan_home(make_curve([0.2] * n), heat_pumps=[hp])
    assert plan.heat_kw["hp"][:2].min() >= hp.on_floor_kw - 1e-9


def test_cold_start_heats_at_full_power_until_it_reaches_the_band():
    n = 12
    hp = pump(n, initial_temp_c=17.0, max_kw=3.0)
    plan = plan_home(make_curve([0.5] * n), heat_pumps=[hp])
    temp = simulate(hp, np.full(n, 3.0))
    first = int(np.argmax(temp[1:] >= 19.0))  # the first slot full power reaches the floor
    np.testing.assert_allclose(plan.heat_kw["hp"][:first], 3.0, atol=1e-9)
    assert np.all(plan.temp_c["hp"][first + 1 :] >= 19.0 - 1e-9)
    reasons = heat_reasons(plan, "hp", heat_pumps=[hp], import_price=[0.5] * n)
    assert reasons[:first] == ["comfort_floor"] * first


def test_too_warm_start_stays_off_until_it_has_cooled_into_the_band():
    n = 8
    hp = pump(n, initial_temp_c=25.0, capacity_kwh_per_k=1.0)
    plan = plan_home(make_curve([0.1] * n), heat_pumps=[hp])
    cooling = simulate(hp, np.zeros(n))
    inside = int(np.argmax(cooling[1:] <= 22.0))
    np.testing.assert_allclose(plan.heat_kw["hp"][:inside], 0.0, atol=1e-9)
    assert np.all(plan.temp_c["hp"][inside + 1 :] <= 22.0 + 1e-9)


def test_a_band_no_on_off_pattern_can_keep_is_named_comfort():
    """On adds 0.4 K per slot, off loses 0.2 K: a 0.1 K band around 20 °C cannot be kept."""
    n = 4
    hp = pump(
        n,
        min_kw=2.0,
        max_kw=2.0,
        capacity_kwh_per_k=5.0,
        cop=np.full(n, 6.0),
        comfort_low_c=np.full(n, 19.95),
        comfort_high_c=np.full(n, 20.05),
    )
    with pytest.raises(HomePlanError) as err:
        plan_home(make_curve([0.2] * n), heat_pumps=[hp])
    assert err.value.constraints == (Infeasibility.COMFORT,)


def test_heat_pump_power_enters_the_grid_and_the_fuse():
    n = 6
    hp = pump(n, initial_temp_c=18.0, max_kw=3.0)
    with pytest.raises(HomePlanError) as err:
        plan_home(make_curve([0.2] * n), heat_pumps=[hp], base_load_kw=1.0, fuse_kw=3.5)
    assert Infeasibility.FUSE in err.value.constraints or Infeasibility.COMFORT in err.value.constraints
    plan = plan_home(make_curve([0.2] * n), heat_pumps=[hp], base_load_kw=1.0, pv_kw=0.5)
    np.testing.assert_allclose(plan.import_kw, 1.0 - 0.5 + plan.heat_kw["hp"], atol=1e-9)


def test_equal_cost_plans_run_the_heat_pump_as_late_as_possible():
    """A hot-water tank without losses (UA tiny, the room at its temperature): any slot costs the same."""
    n = 6
    tank = pump(
        n,
        name="tank",
        ua_kw_per_k=1e-9,
        ambient_c=np.full(n, 50.0),
        initial_temp_c=50.0,
        comfort_low_c=np.array([45.0] * 5 + [50.5]),
        comfort_high_c=np.full(n, 60.0),
        gains_kw=np.zeros(n),
    )
    dw = LoadSpec("dw", power_kw=1.0, duration_min=15, earliest_start=T0, deadline=T0 + SLOT * n)
    plan = plan_home(make_curve([0.2] * n), [dw], heat_pumps=[tank])
    power = plan.heat_kw["tank"]
    assert power[:-1].sum() < 1e-6 and power[-1] > 0  # the 0.5 K before the end, in the last slot
    assert plan.starts["dw"] == T0  # loads still earliest


def test_without_loads_the_equal_cost_plans_still_run_the_heat_pump_as_late_as_possible():
    """A lossless tank at flat prices: one or two 15-minute runs (+0.625 K each) reach 50.5 degC by the end and stay
    under 51.3 degC, and its heat is worth what it costs (terminal value median / COP), so all such patterns cost the
    same. Brute force: the least-cost patterns, and among them the one whose every prefix runs no more than any
    other's (the latest); the plan, with no load in the home, is that one.
    """
    n = 5
    tank = pump(
        n,
        name="tank",
        ua_kw_per_k=1e-9,
        min_kw=2.0,
        ambient_c=np.full(n, 50.0),
        initial_temp_c=50.0,
        comfort_low_c=np.array([45.0] * (n - 1) + [50.5]),
        comfort_high_c=np.full(n, 51.3),
        gains_kw=np.zeros(n),
    )
    prices = np.full(n, 0.2)
    costs = {}
    for pattern in itertools.product((0, 1), repeat=n):
        temp = simulate(tank, np.array(pattern) * tank.max_kw)
        if np.all(temp[1:] >= tank.comfort_low_c - 1e-9) and np.all(temp[1:] <= tank.comfort_high_c + 1e-9):
            heat_value = float(np.median(prices)) / tank.cop[-1] * tank.capacity_kwh_per_k * (temp[-1] - temp[0])
            costs[pattern] = H * float(prices @ (np.array(pattern) * tank.max_kw)) - heat_value
    best = min(costs.values())
    ties = [np.cumsum(p) for p, cost in costs.items() if cost <= best + 1e-9]
    latest = [p for p in ties if all(np.all(p <= q) for q in ties)]
    assert len(ties) > 1 and len(latest) == 1
    plan = plan_home(make_curve(prices), heat_pumps=[tank])
    np.testing.assert_allclose(plan.heat_kw["tank"], np.diff(latest[0], prepend=0) * tank.max_kw, atol=1e-6)
    assert plan.net_cost == pytest.approx(best, abs=1e-9)


def test_heat_pump_validation():
    n = 4
    with pytest.raises(ValueError):
        pump(n, min_kw=3.0)
    with pytest.raises(ValueError):
        pump(n, min_run_slots=0)
    with pytest.raises(TypeError):
        pump(n, min_run_slots=1.5)
    with pytest.raises(ValueError):
        pump(n, initial_on_slots=1, initial_off_slots=2)
    with pytest.raises(ValueError):
        pump(n, cop=np.full(n + 1, 3.0))
    with pytest.raises(ValueError):  # arrays shorter than the curve
        plan_home(make_curve([0.2] * (n + 1)), heat_pumps=[pump(n)])
    with pytest.raises(ValueError):  # a slot longer than C / UA
        plan_home(make_curve([0.2] * n), heat_pumps=[pump(n, capacity_kwh_per_k=0.01)])


RUN_SHORT = "heat pump 'hp' runs shorter than its minimum run time"
OFF_SHORT = "heat pump 'hp' pauses shorter than its minimum off time"


def run_violations(pattern, **kw) -> list[str]:
    """The minimum-time sentences evaluate reports for an on/off pattern (on = 1 kW) of a pump with R = 3, D = 2."""
    n = len(pattern)
    hp = pump(n, min_run_slots=3, min_off_slots=2, comfort_low_c=np.full(n, -30.0), comfort_high_c=np.full(n, 95.0), **kw)
    tariff = Tariff(import_price=np.full(n, 0.2), export_price=np.zeros(n), hours=H, fuse_kw=math.inf,
                    export_limit_kw=math.inf, terminal_price={"hp": 0.0})
    result = evaluate(tariff, house_kw=np.zeros(n), pv_kw=np.zeros(n), battery_kw={}, batteries=(),
                      heat_kw={"hp": np.array(pattern, dtype=float)}, heat_pumps=(hp,))
    return [v for v in result.violations if "minimum" in v]


@pytest.mark.parametrize(
    ("pattern", "state", "expected"),
    [
        ([1, 1, 0, 0, 1, 1, 1, 0], {}, [RUN_SHORT]),  # a 2-slot run ends at slot 2
        ([1, 1, 1, 0, 1, 1, 1, 1], {}, [OFF_SHORT]),  # a 1-slot pause between two runs
        ([1, 1, 1, 0, 0, 1, 1, 0], {}, [RUN_SHORT]),  # the last run ends inside the horizon after 2 slots
        ([1, 0, 1, 1, 1, 1, 1, 1], {}, [RUN_SHORT, OFF_SHORT]),
        ([0, 0, 0, 1, 1, 1, 1, 1], {}, []),  # off before the horizon long enough; the last run goes on
        ([1, 1, 1, 0, 0, 1, 1, 1], {}, []),  # 3 on, 2 off, then a run cut by the horizon's end
        ([1e-7, 1, 1, 1, 0, 0, 1, 1], {}, []),  # 1e-7 kW is off (TOL_KW)
        ([0, 0, 0, 0, 0, 0, 0, 0], {"initial_on_slots": 1}, [RUN_SHORT]),  # a run of 1 slot ends at the start
        ([1, 0, 0, 0, 0, 0, 0, 0], {"initial_on_slots": 2}, []),  # 2 + 1 = 3 slots
        ([1, 1, 1, 1, 1, 1, 1, 1], {"initial_off_slots": 1}, [OFF_SHORT]),  # a pause of 1 slot ends at the start
        ([0, 1, 1, 1, 0, 0, 0, 0], {"initial_off_slots": 1}, []),  # 1 + 1 = 2 slots
    ],
)
def test_evaluate_reports_runs_and_pauses_shorter_than_the_minimum_times(pattern, state, expected):
    assert run_violations(pattern, **state) == expected


@settings(max_examples=60, deadline=None)
@given(
    pattern=st.lists(st.sampled_from([0, 1]), min_size=1, max_size=10),
    before=st.sampled_from([{}, {"initial_on_slots": 1}, {"initial_on_slots": 4}, {"initial_off_slots": 1}]),
)
def test_evaluate_flags_minimum_times_exactly_where_the_pattern_check_does(pattern, before):
    hp = pump(len(pattern), min_run_slots=3, min_off_slots=2, **before)
    assert (run_violations(pattern, **before) == []) == runs_ok(pattern, hp)
