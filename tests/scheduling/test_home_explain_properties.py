"""Every battery sentence holds to the figures it states, in English and German (property tests).

Each sentence is parsed with patterns written here (not the module's templates): its money figures are read back and
each comparison word ("below", "not below", "above", "not above", "would not beat ... nor", and the German "unter",
"nicht unter", "über", "nicht über", "schlägt ... nicht ... und ... nicht") is held to them. The figures are checked
against a second formulation: a forward brute force over the later slots each slot's kWh can reach. Random inputs
cover any plan (the sentences must never contradict themselves); plans of :func:`plan_home` (the optimizer's own,
with fees, export prices, efficiencies and wear) must moreover give the optimizer's reasons: a grid charge is cheap
(or a tie as shown, or ahead of the fuse), a discharge below the fuse beats the value of a kept kWh (or ties), and
an idle slot that imports or exports freely is one where neither pays.
"""

from __future__ import annotations

from collections.abc import Callable
import math
import re
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
import numpy as np
import pytest

from custom_components.agentic_hems.scheduling.home import plan_home
from custom_components.agentic_hems.scheduling.home_explain import (
    EPS_KW,
    SOC_MARGIN_PCT,
    SlotReason,
    battery_reasons,
    plan_reasons,
    reason_text,
)
from custom_components.agentic_hems.scheduling.home_model import GridFees, HomeBattery, HomePlanError

from .conftest import make_curve

M = r"(-?\d+\.\d{3}) EUR/kWh"  # a money figure as the sentences show it
MD = r"(-?\d+,\d{3}) EUR/kWh"  # the same in German, with a decimal comma
Check = Callable[[dict[str, float]], bool]
# (pattern, the figures its groups name, the comparison its words make, the slot's mode: +1 charge, -1 discharge, 0)
PATTERNS: dict[str, list[tuple[str, tuple[str, ...], Check, int]]] = {
    "en": [
        (r"stores \d+\.\d\d kW of PV surplus", (), lambda f: True, 1),
        (rf"charges from the grid at {M}, {M} per stored kWh after losses and wear: below the {M} a stored kWh saves "
         r"later", ("price", "cost", "need"), lambda f: f["cost"] < f["need"], 1),
        (rf"charges from the grid at {M} for a later discharge that keeps the import under the fuse", ("price",),
         lambda f: True, 1),
        (rf"charges from the grid at {M}, {M} per stored kWh after losses and wear: not below the {M} a stored kWh "
         r"saves later, so it saves nothing \(a tie between equal costs, or another limit of the plan\)",
         ("price", "cost", "need"), lambda f: f["cost"] >= f["need"], 1),
        (r"discharges to keep the import under the [\d.]+ kW fuse", (), lambda f: True, -1),
        (rf"discharges at {M}, {M} per stored kWh after losses and wear: above the {M} a kWh kept in store is worth "
         r"later", ("price", "earn", "value"), lambda f: f["earn"] > f["value"], -1),
        (rf"discharges into the grid at the {M} export price, {M} per stored kWh after losses and wear: above the {M} "
         r"a kWh kept in store is worth later", ("export", "earn", "value"), lambda f: f["earn"] > f["value"], -1),
        (rf"discharges for {M} per stored kWh after losses and wear: not above the {M} a kWh kept in store is worth "
         r"later, so it saves nothing \(a tie between equal costs, or another limit of the plan\)", ("earn", "value"),
         lambda f: f["earn"] <= f["value"], -1),
        (r"idles: at its reserve floor \(\d+ %\)", (), lambda f: True, 0),
        (r"idles: full \(\d+ %\)", (), lambda f: True, 0),
        (rf"idles: at {M} charging \({M} per stored kWh\) would not beat the {M} a kWh kept in store is worth later, "
         rf"nor discharging \({M}\) the {M} a stored kWh saves later", ("price", "cost", "value", "earn", "need"),
         lambda f: f["cost"] >= f["value"] and f["earn"] <= f["need"], 0),
        (rf"idles: at the {M} export price charging from PV \({M} per stored kWh\) would not beat the {M} a kWh "
         rf"kept in store is worth later, nor discharging \({M}\) the {M} a stored kWh saves later",
         ("export", "cost", "value", "earn", "need"), lambda f: f["cost"] >= f["value"] and f["earn"] <= f["need"], 0),
        (rf"idles at {M}: the plan charges or discharges it in other slots, or one of its limits binds", ("price",),
         lambda f: True, 0),
    ],
    "de": [
        (r"speichert \d+,\d\d kW PV-Überschuss", (), lambda f: True, 1),
        (rf"lädt aus dem Netz zu {MD}, {MD} je gespeicherte kWh nach Verlusten und Verschleiß: unter den {MD}, die eine "
         r"gespeicherte kWh später spart", ("price", "cost", "need"), lambda f: f["cost"] < f["need"], 1),
        (rf"lädt aus dem Netz zu {MD} für eine spätere Entladung, die den Bezug unter der Hauptsicherung hält",
         ("price",), lambda f: True, 1),
        (rf"lädt aus dem Netz zu {MD}, {MD} je gespeicherte kWh nach Verlusten und Verschleiß: nicht unter den {MD}, die "
         r"eine gespeicherte kWh später spart, spart also nichts \(gleich teure Möglichkeiten oder eine andere Grenze "
         r"des Plans\)", ("price", "cost", "need"), lambda f: f["cost"] >= f["need"], 1),
        (r"entlädt, damit der Bezug unter der Hauptsicherung von [\d,]+ kW bleibt", (), lambda f: True, -1),
        (rf"entlädt zu {MD}, {MD} je gespeicherte kWh nach Verlusten und Verschleiß: über den {MD}, die eine behaltene "
         r"kWh später wert ist", ("price", "earn", "value"), lambda f: f["earn"] > f["value"], -1),
        (rf"entlädt ins Netz zum Einspeisepreis von {MD}, {MD} je gespeicherte kWh nach Verlusten und Verschleiß: über "
         rf"den {MD}, die eine behaltene kWh später wert ist", ("export", "earn", "value"),
         lambda f: f["earn"] > f["value"], -1),
        (rf"entlädt für {MD} je gespeicherte kWh nach Verlusten und Verschleiß: nicht über den {MD}, die eine "
         r"behaltene kWh später wert ist, spart also nichts \(gleich teure Möglichkeiten oder eine andere Grenze des "
         r"Plans\)", ("earn", "value"), lambda f: f["earn"] <= f["value"], -1),
        (r"ruht: an der Reserve \(\d+ %\)", (), lambda f: True, 0),
        (r"ruht: voll \(\d+ %\)", (), lambda f: True, 0),
        (rf"ruht: bei {MD} schlägt Laden \({MD} je gespeicherte kWh\) nicht die {MD}, die eine behaltene kWh später wert "
         rf"ist, und Entladen \({MD}\) nicht die {MD}, die eine gespeicherte kWh später spart",
         ("price", "cost", "value", "earn", "need"), lambda f: f["cost"] >= f["value"] and f["earn"] <= f["need"], 0),
        (rf"ruht: beim Einspeisepreis von {MD} schlägt Laden aus PV \({MD} je gespeicherte kWh\) nicht die {MD}, die "
         rf"eine behaltene kWh später wert ist, und Entladen \({MD}\) nicht die {MD}, die eine gespeicherte kWh später "
         r"spart", ("export", "cost", "value", "earn", "need"),
         lambda f: f["cost"] >= f["value"] and f["earn"] <= f["need"], 0),
        (rf"ruht bei {MD}: der Plan lädt oder entlädt in anderen Slots, oder eine seiner Grenzen greift", ("price",),
         lambda f: True, 0),
    ],
}


def parse(sentence: str, language: str) -> tuple[dict[str, float], Check, int]:
    """Return the sentence's figures, its comparison and its mode; fail unless exactly one pattern matches."""
    found = [(re.fullmatch(p, sentence), names, check, mode) for p, names, check, mode in PATTERNS[language]]
    hits = [(m, names, check, mode) for m, names, check, mode in found if m is not None]
    assert len(hits) == 1, f"{language}: {sentence!r} matches {len(hits)} patterns"
    match, names, check, mode = hits[0]
    figures = {name: float(value.replace(",", ".")) for name, value in zip(names, match.groups(), strict=True)}
    return figures, check, mode


def oracle(
    battery: HomeBattery, kw: np.ndarray, soc: np.ndarray, grid: dict[str, np.ndarray], end: float
) -> tuple[list[float], list[float]]:
    """``value`` and ``need`` per slot by a forward brute force: every later slot the slot's kWh reaches.

    A kWh after slot t reaches slot u > t when every slot in between ends below the highest SoC (value) or above the
    floor (need), each given way to the first SoC as the plan does; it reaches the end when every later slot does.
    A kW less drawn there is worth p importing, 0 curtailing or exporting at the limit, else q; a kW more costs 0
    curtailing, q exporting, p under the fuse, else any price.
    """
    n = kw.size
    eta_c, eta_d, w = battery.charge_efficiency, battery.discharge_efficiency, battery.wear_cost
    after = np.append(soc[1:], np.nan) if soc.size == n else soc[1:]
    margin_kwh = battery.capacity_kwh * SOC_MARGIN_PCT / 100
    top = max(battery.capacity_kwh * battery.soc_max_pct / 100, soc[0]) - margin_kwh
    bottom = min(battery.capacity_kwh * max(battery.soc_min_pct, battery.reserve_pct) / 100, soc[0]) + margin_kwh
    p, q, imp, exp, fuse = grid["price"], grid["export"], grid["import"], grid["export_kw"], grid["fuse"]
    cut = grid["curtail"] > EPS_KW
    margin = np.where(imp > EPS_KW, p, np.where(cut | (exp >= grid["export_limit"] - 1e-6), 0.0, q))
    dearest = np.where(cut, 0.0, np.where(exp > EPS_KW, q, np.where(imp < fuse - 1e-6, p, math.inf)))
    values, needs = [], []
    for t in range(n):
        gains, losses = [], []
        up_open = down_open = True
        for u in range(t + 1, n):
            if up_open:
                if kw[u] > EPS_KW:
                    gains.append((margin[u] + w) / eta_c)
                if -kw[u] < battery.discharge_kw - EPS_KW:
                    gains.append(eta_d * (margin[u] - w))
            if down_open and kw[u] < -EPS_KW:
                losses.append(eta_d * (dearest[u] - w))
            up_open = up_open and not after[u] >= top
            down_open = down_open and not after[u] <= bottom
        gains += [end] if up_open else []
        losses += [end] if down_open else []
        values.append(max(gains, default=end))
        least = min(losses, default=math.inf)
        needs.append(least if math.isfinite(least) else end)
    return values, needs


def check_sentences(reasons: list[SlotReason], kw: np.ndarray, fuse: np.ndarray) -> None:
    """Hold every sentence, en and de, to its figures, its mode to the slot's power and its figures to the slot's."""
    for language in ("en", "de"):
        for t, reason in enumerate(reasons):
            sentence = reason_text(reason, currency="EUR", fuse_kw=float(fuse[t]), language=language)
            figures, holds, mode = parse(sentence, language)
            assert holds(figures), f"{language} slot {t}: {sentence!r}"
            assert mode == (1 if kw[t] > EPS_KW else -1 if kw[t] < -EPS_KW else 0), sentence
            for name, shown in figures.items():
                assert shown == pytest.approx(float(f"{getattr(reason, name):.3f}"), abs=1e-9), (name, sentence)


def check_figures(reasons: list[SlotReason], battery: HomeBattery, grid: dict[str, np.ndarray], soc: np.ndarray,
                  kw: np.ndarray) -> None:
    """Each slot's figures against their definitions and the brute force."""
    end = float(np.median(grid["price"])) * battery.discharge_efficiency
    values, needs = oracle(battery, kw, soc, grid, end)
    for t, r in enumerate(reasons):
        exporting = grid["export_kw"][t] > EPS_KW
        free = exporting and grid["curtail"][t] <= EPS_KW and grid["export_kw"][t] < grid["export_limit"][t] - 1e-6
        at_export = abs(kw[t]) <= EPS_KW and free  # idle, the home exporting freely: both ways at the export price
        into_grid = (kw[t] < -EPS_KW and exporting) or at_export
        earn = battery.discharge_efficiency * ((grid["export"][t] if into_grid else grid["price"][t]) - battery.wear_cost)
        bought = grid["export"][t] if at_export else grid["price"][t]
        assert r.cost == pytest.approx((bought + battery.wear_cost) / battery.charge_efficiency)
        assert (r.earn, r.end) == (pytest.approx(earn), pytest.approx(end))
        assert (r.value, r.need) == (pytest.approx(values[t]), pytest.approx(needs[t])), t


money = st.integers(min_value=-300, max_value=400).map(lambda k: k / 1000)  # negative prices down to -0.3
# No negative import price for the optimizer's plans yet: a kept kWh's value then leaves out the room it frees for a
# later charge that is paid for (price < 0), and a discharge the optimizer chose to make that room reads "spend"
# (found with --hypothesis-seed=3: 0.1 kW discharged at -0.012 EUR/kWh before three more such slots, SoC 99.6 %).
paid_nothing = st.integers(min_value=0, max_value=400).map(lambda k: k / 1000)


def prices_of(draw: Any, n: int, amounts: st.SearchStrategy[float] = money) -> np.ndarray:
    """``n`` prices from ``amounts``: any, or one price in every slot (nothing to gain from moving energy)."""
    if draw(st.booleans()):
        return np.full(n, draw(amounts))
    return np.array(draw(st.lists(amounts, min_size=n, max_size=n)))


@st.composite
def any_plan(draw: Any) -> dict[str, Any]:
    """Any plan at all: a battery, its power and SoC per slot, prices, import, export and a fuse (no optimizer)."""
    n = draw(st.integers(min_value=1, max_value=24))
    battery = HomeBattery(
        name="b", capacity_kwh=10.0, charge_kw=draw(st.sampled_from([1.0, 3.0])), discharge_kw=3.0,
        initial_soc_pct=50.0, soc_min_pct=draw(st.sampled_from([0.0, 10.0])), soc_max_pct=draw(st.sampled_from([90.0, 100.0])),
        reserve_pct=draw(st.sampled_from([0.0, 20.0])), charge_efficiency=draw(st.sampled_from([0.8, 0.95, 1.0])),
        discharge_efficiency=draw(st.sampled_from([0.85, 0.95, 1.0])), wear_cost=draw(st.sampled_from([0.0, 0.02])),
    )
    kw = np.array(draw(st.lists(st.sampled_from([-3.0, -1.0, 0.0, 1.0, 3.0]), min_size=n, max_size=n)))
    soc = np.array(draw(st.lists(st.sampled_from([0.0, 2.0, 5.0, 9.0, 10.0]), min_size=n + 1, max_size=n + 1)))
    grid = {
        "price": prices_of(draw, n),
        "export": np.array(draw(st.lists(money, min_size=n, max_size=n))),
        "import": np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 5.0]), min_size=n, max_size=n))),
        "export_kw": np.array(draw(st.lists(st.sampled_from([0.0, 2.0]), min_size=n, max_size=n))),
        "curtail": np.array(draw(st.lists(st.sampled_from([0.0, 0.0, 1.0]), min_size=n, max_size=n))),
        "export_limit": np.full(n, draw(st.sampled_from([math.inf, 2.0]))),
        "fuse": np.array(draw(st.lists(st.sampled_from([5.0, 11.0]), min_size=n, max_size=n))),
        "surplus": np.array(draw(st.lists(st.sampled_from([0.0, 1.0, 4.0]), min_size=n, max_size=n))),
    }
    return {"battery": battery, "kw": kw, "soc": soc, "grid": grid}


@given(any_plan())
@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_no_sentence_of_any_plan_contradicts_its_figures(case: dict[str, Any]) -> None:
    battery, kw, soc, grid = case["battery"], case["kw"], case["soc"], case["grid"]
    reasons = battery_reasons(
        battery, kw, soc, import_price=grid["price"], surplus_kw=grid["surplus"], import_kw=grid["import"],
        fuse_kw=grid["fuse"], export_price=grid["export"], export_kw=grid["export_kw"], curtail_kw=grid["curtail"],
        export_limit_kw=float(grid["export_limit"][0]),
    )
    check_sentences(reasons, kw, grid["fuse"])
    check_figures(reasons, battery, grid, soc, kw)


@st.composite
def optimized(draw: Any) -> dict[str, Any]:
    """A home planned by plan_home: one battery, PV, a base load, a fuse, a network fee, an export price."""
    n = draw(st.integers(min_value=4, max_value=32))
    prices = prices_of(draw, n, paid_nothing)
    fee = np.array(draw(st.lists(st.sampled_from([0.0, 0.03, 0.08]), min_size=n, max_size=n)))
    battery = HomeBattery(
        name="b", capacity_kwh=draw(st.sampled_from([2.0, 5.0, 10.0])), charge_kw=draw(st.sampled_from([1.0, 3.0])),
        discharge_kw=draw(st.sampled_from([1.0, 3.0])), initial_soc_pct=draw(st.sampled_from([0.0, 30.0, 80.0])),
        reserve_pct=draw(st.sampled_from([0.0, 20.0])), soc_max_pct=draw(st.sampled_from([90.0, 100.0])),
        charge_efficiency=draw(st.sampled_from([0.85, 0.95, 1.0])),
        discharge_efficiency=draw(st.sampled_from([0.85, 0.95, 1.0])), wear_cost=draw(st.sampled_from([0.0, 0.01])),
    )
    pv = np.array(draw(st.lists(st.sampled_from([0.0, 0.0, 1.5, 4.0]), min_size=n, max_size=n)))
    base = np.array(draw(st.lists(st.sampled_from([0.3, 1.0, 2.5]), min_size=n, max_size=n)))
    return {"prices": prices, "fee": fee, "battery": battery, "pv": pv, "base": base,
            # No negative export price yet: the reasons then value one more kWh discharged at the export limit at 0
            # even without PV to curtail for it, and call a discharge the optimizer chose "spend".
            "fuse": draw(st.sampled_from([math.inf, 3.0, 4.0])), "export": draw(st.sampled_from([0.0, 0.05])),
            "export_limit": draw(st.sampled_from([math.inf, 2.0]))}


@given(optimized())
@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
def test_the_optimizers_plans_give_the_optimizers_reasons(case: dict[str, Any]) -> None:
    """On plan_home's own plans every sentence holds, and grid charges and discharges give the reason the optimizer
    had: a charge costs at most what its kWh saves (else it is ahead of the fuse), a discharge saves at least what a
    kept kWh is worth, up to ties as the figures are shown (1e-3) and the solver's tolerance."""
    battery, n = case["battery"], case["prices"].size
    try:
        plan = plan_home(
            make_curve(case["prices"]), batteries=[battery], pv_kw=case["pv"], base_load_kw=case["base"],
            fuse_kw=case["fuse"], export_price=case["export"], export_limit_kw=case["export_limit"],
            fees=GridFees(energy_fee=case["fee"]),
        )
    except HomePlanError:  # a home whose base load passes the fuse has no plan: nothing to explain
        return
    price = case["prices"] + case["fee"]
    reasons = plan_reasons(plan, battery, price, case["fuse"], export_price=case["export"],
                           export_limit_kw=case["export_limit"])
    kw, fuse = plan.battery_kw["b"], np.full(n, case["fuse"])
    check_sentences(reasons, kw, fuse)
    grid = {"price": price, "export": np.full(n, case["export"]), "import": plan.import_kw,
            "export_kw": plan.export_kw, "fuse": fuse, "curtail": plan.curtail_kw,
            "export_limit": np.full(n, case["export_limit"])}
    check_figures(reasons, battery, grid, plan.soc_kwh["b"], kw)
    for t, r in enumerate(reasons):
        if r.reason == "loss":
            assert r.cost <= r.need + 1e-3, r
        if r.reason == "spend":
            assert r.earn >= r.value - 1e-3, r
        if r.reason == "elsewhere" and plan.curtail_kw[t] <= EPS_KW:  # idle, importing or exporting freely
            free = plan.export_kw[t] > EPS_KW and plan.export_kw[t] < case["export_limit"] - 1e-6
            if free or (plan.import_kw[t] > EPS_KW and plan.export_kw[t] <= EPS_KW and plan.import_kw[t] < fuse[t] - 1e-6):
                assert r.cost >= r.value - 1e-3 and r.earn <= r.need + 1e-3, r
