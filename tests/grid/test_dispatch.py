"""optimize_dispatch: the MILP against an independently written LP, no simultaneous flows under negative prices,
objectives, and infeasibility certificates."""

from __future__ import annotations

import numpy as np
import pytest
from scipy.optimize import linprog

from custom_components.agentic_hems.grid.dispatch import Battery, DispatchProblem, Objective, optimize_dispatch

H = 0.25
RNG = np.random.default_rng(7)
PRICES = np.round(0.1 + 0.08 * np.sin(np.arange(96) / 96 * 4 * np.pi) + RNG.normal(0, 0.01, 96), 4)
LOAD = np.round(0.8 + 0.6 * (np.arange(96) % 96 >= 68) + RNG.uniform(0, 0.3, 96), 3)
BATTERY = Battery("home", 10.0, 1.0, 9.5, 3.0, 3.0, 5.0, 5.0, 0.95, 0.95)


def problem(**kw: object) -> DispatchProblem:
    base = dict(import_price=PRICES, export_price=np.zeros(96), load_kw=LOAD, pv_kw=np.zeros(96),
                batteries=(BATTERY,), import_limit_kw=11.0, export_limit_kw=0.0, step_h=H)
    return DispatchProblem(**{**base, **kw})  # type: ignore[arg-type]


def lp_oracle(price: np.ndarray, load: np.ndarray, bat: Battery) -> float:
    """The same problem written directly as an LP (no binaries): c, d, s, import per step; import only."""
    t = len(price)
    n = 4 * t
    c, d, s, imp = (slice(i * t, (i + 1) * t) for i in range(4))
    cost = np.zeros(n)
    cost[imp] = price * H
    a_eq, b_eq = [], []
    for k in range(t):
        row = np.zeros(n)  # imp - c + d = load
        row[imp.start + k], row[c.start + k], row[d.start + k] = 1, -1, 1
        a_eq.append(row), b_eq.append(load[k])
        row = np.zeros(n)  # s_k - s_{k-1} - eta c h + d h / eta = 0
        row[s.start + k] = 1
        if k:
            row[s.start + k - 1] = -1
        row[c.start + k], row[d.start + k] = -bat.charge_efficiency * H, H / bat.discharge_efficiency
        a_eq.append(row), b_eq.append(bat.soc_initial_kwh if k == 0 else 0.0)
    a_ub = np.zeros((1, n))
    a_ub[0, s.start + t - 1] = -1  # s_T >= terminal
    bounds = [(0, bat.charge_kw)] * t + [(0, bat.discharge_kw)] * t + [(bat.soc_min_kwh, bat.soc_max_kwh)] * t + [(0, 11.0)] * t
    res = linprog(cost, A_ub=a_ub, b_ub=[-bat.soc_terminal_kwh], A_eq=np.array(a_eq), b_eq=b_eq, bounds=bounds,
                  method="highs")
    assert res.status == 0
    return float(res.fun)


def test_cost_matches_an_independent_lp() -> None:
    result = optimize_dispatch(problem())
    assert result.status == "optimal"
    assert result.cost == pytest.approx(lp_oracle(PRICES, LOAD, BATTERY), rel=1e-6, abs=1e-6)
    soc = result.soc_kwh[0]
    assert soc.min() >= BATTERY.soc_min_kwh - 1e-9 and soc.max() <= BATTERY.soc_max_kwh + 1e-9
    assert soc[-1] >= BATTERY.soc_terminal_kwh - 1e-6
    balance = result.import_kw - result.export_kw - (result.charge_kw[0] - result.discharge_kw[0])
    np.testing.assert_allclose(balance, LOAD, atol=1e-6)
    assert result.cost < float(np.dot(PRICES, LOAD)) * H  # the battery saves money


def test_negative_prices_never_charge_and_discharge_at_once() -> None:
    prices = PRICES.copy()
    prices[10:20] = -0.5  # paid to import: an LP would charge and discharge together to burn energy
    result = optimize_dispatch(problem(import_price=prices, export_price=np.full(96, -0.6), export_limit_kw=5.0))
    assert result.status == "optimal"
    assert np.all(np.minimum(result.charge_kw[0], result.discharge_kw[0]) < 1e-9)
    assert np.all(np.minimum(result.import_kw, result.export_kw) < 1e-9)


def test_peak_shaving_lowers_the_peak() -> None:
    by_cost = optimize_dispatch(problem())
    shaved = optimize_dispatch(problem(objective=Objective.PEAK_SHAVING))
    assert shaved.import_kw.max() < by_cost.import_kw.max() - 0.1
    assert shaved.import_kw.max() >= LOAD.max() - BATTERY.discharge_kw - 1e-6  # the battery's limit


def test_infeasible_returns_a_certificate() -> None:
    load = LOAD.copy()
    load[40] = 20.0  # more than 11 kW import plus 3 kW discharge
    result = optimize_dispatch(problem(load_kw=load))
    assert result.status == "infeasible"
    assert result.conflicts == [{"constraint": "site_balance", "step": 40, "missing_kw": 6.0,
                                 "detail": "import limit and batteries cannot cover the load"}]
    unreachable = Battery("home", 10.0, 1.0, 9.5, 0.1, 3.0, 1.0, 9.5)  # charges 0.1 kW: never reaches 9.5 kWh
    terminal = optimize_dispatch(problem(batteries=(unreachable,)))
    assert terminal.status == "infeasible" and terminal.conflicts[0]["constraint"] == "terminal_soc"


def test_bad_lengths_are_refused() -> None:
    with pytest.raises(ValueError):
        optimize_dispatch(problem(load_kw=LOAD[:10]))
