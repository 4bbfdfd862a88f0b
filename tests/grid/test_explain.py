"""generate_explanation: figures, merged ranges and rejected alternatives against numbers worked out
by hand for an 8-step plan, the three audiences in English and German, determinism, infeasible plans, bad arguments."""

from __future__ import annotations

import copy
import re
from typing import Any

import pytest

from custom_components.agentic_hems.grid.explain import AUDIENCES, LANGUAGES, explain

# 8 one-hour steps from 2026-11-29 00:00 UTC; load 1 kW throughout, 3 kW PV in the last step.
IMPORT_PRICE = [0.10, 0.10, 0.20, 0.30, 0.40, 0.40, 0.20, 0.10]
EXPORT_PRICE = 0.04
PV = [0.0] * 7 + [3.0]
# The plan: charge 2 kW in steps 0-1, idle in step 2, discharge 1 kW in steps 3-6, idle in step 7.
CHARGE = [2.0, 2.0, 0.0, 0.0, 0.0, 0.0, 0.0, 0.0]
DISCHARGE = [0.0, 0.0, 0.0, 1.0, 1.0, 1.0, 1.0, 0.0]
# By hand: imports 3, 3, 1, 0, 0, 0, 0 kW and 2 kW export in step 7.
#   cost     = 3*0.1 + 3*0.1 + 1*0.2 - 2*0.04                               = 0.72
#   baseline = 0.1+0.1+0.2+0.3+0.4+0.4+0.2 - 2*0.04                         = 1.62
#   savings  = 0.90 EUR = 55.56 % of the baseline
#   charge immediately (efficiency 1): 2 kW in steps 0-1 fills 4 kWh, then idle:
#              3*0.1 + 3*0.1 + 0.2 + 0.3 + 0.4 + 0.4 + 0.2 - 0.08           = 2.02 (delta 1.30)
COST, BASELINE, CHARGE_NOW = 0.72, 1.62, 2.02


def hour(i: int) -> str:
    return f"2026-11-29T{i:02d}:00:00+00:00"


def build(charge: list[float] = CHARGE, discharge: list[float] = DISCHARGE, *, efficiency: float | None = 1.0,
          **override: Any) -> dict[str, Any]:
    schedule = []
    soc = 0.0
    for i in range(8):
        soc += charge[i] * (efficiency or 1.0) - discharge[i] / (efficiency or 1.0)
        net = 1.0 - PV[i] + charge[i] - discharge[i]
        schedule.append({
            "start": hour(i), "end": hour(i + 1), "import_price": IMPORT_PRICE[i], "export_price": EXPORT_PRICE,
            "load_kw": 1.0, "pv_kw": PV[i], "import_kw": max(net, 0.0), "export_kw": max(-net, 0.0),
            "batteries": {"battery": {"charge_kw": charge[i], "discharge_kw": discharge[i], "soc_kwh": soc}},
        })
    asset: dict[str, Any] = {"asset_id": "battery", "capacity_kwh": 4.0, "soc_min_kwh": 0.0, "soc_max_kwh": 4.0,
                             "charge_kw": 2.0, "discharge_kw": 2.0, "soc_initial_kwh": 0.0, "soc_terminal_kwh": 0.0}
    if efficiency is not None:
        asset |= {"charge_efficiency": efficiency, "discharge_efficiency": efficiency}
    plan: dict[str, Any] = {
        "plan_id": "plan_0f3a9c", "tenant": "entry_1", "created_at": "2026-11-28T23:05:00+00:00",
        "objective": "cost", "horizon_h": 8.0, "step_min": 60, "currency": "EUR",
        "solver": "scipy.optimize.milp (HiGHS)", "solver_status": "optimal", "objective_value": COST, "cost": COST,
        "baseline_value": BASELINE, "gap": 0.0, "constraints": {"import_limit_kw": 5.0, "export_limit_kw": 5.0},
        "assets": [asset], "schedule": schedule,
        "assumptions": {"load": "persistence baseline", "pv": "profile model", "prices": "day-ahead (ENTSO-E)"},
    }
    return plan | override


def alternatives(result: dict[str, Any]) -> dict[str, dict[str, Any]]:
    return {alt["name"]: alt for alt in result["structured"]["rejected_alternatives"]}


def test_figures_match_the_hand_computation() -> None:
    figures = explain(build(), "operator", "en")["structured"]["figures"]
    assert figures["cost"] == pytest.approx(COST)
    assert figures["baseline_value"] == pytest.approx(BASELINE)
    assert figures["savings"] == pytest.approx(0.90)
    assert figures["savings_pct"] == pytest.approx(0.90 / 1.62 * 100, abs=1e-5)
    assert figures["peak_import_kw"] == pytest.approx(3.0)
    assert figures["energy_charged_kwh"] == pytest.approx(4.0)
    assert figures["energy_discharged_kwh"] == pytest.approx(4.0)
    # figures do not depend on the language
    assert explain(build(), "manager", "de")["structured"]["figures"] == figures


def test_rejected_alternatives_match_the_hand_computation() -> None:
    alts = alternatives(explain(build(), "manager", "en"))
    assert alts["idle_battery"]["cost"] == pytest.approx(BASELINE)
    assert alts["idle_battery"]["delta"] == pytest.approx(BASELINE - COST)
    assert alts["charge_immediately"]["cost"] == pytest.approx(CHARGE_NOW)
    assert alts["charge_immediately"]["delta"] == pytest.approx(CHARGE_NOW - COST)
    reason = alts["charge_immediately"]["reason"]
    assert "2.02 EUR" in reason and "1.30 EUR more than the plan" in reason
    assert "100%" in reason  # the asset's own charge efficiency
    assert "grid limits not applied" in reason
    # ends full (4 kWh) where the plan ends empty
    assert "4.00 kWh more stored" in reason
    de = alternatives(explain(build(), "manager", "de"))
    assert de["charge_immediately"]["cost"] == alts["charge_immediately"]["cost"]
    assert "2,02 EUR" in de["charge_immediately"]["reason"] and "1,30 EUR mehr" in de["charge_immediately"]["reason"]


def test_charge_immediately_uses_095_when_the_asset_gives_no_efficiency() -> None:
    # 2 kW x 0.95 stores 1.9 kWh per step: 1.9, 3.8, then 0.2 kWh need 0.2/0.95 kW in step 2.
    expected = 0.3 + 0.3 + (1.0 + 0.2 / 0.95) * 0.2 + 0.3 + 0.4 + 0.4 + 0.2 - 0.08
    result = explain(build(efficiency=None), "operator", "en")
    alt = alternatives(result)["charge_immediately"]
    assert alt["cost"] == pytest.approx(expected, abs=1e-6)
    assert "95%" in alt["reason"] and "assumed" in alt["reason"]
    assert any("assumed" in a for a in result["structured"]["assumptions"])
    # the round trip 0.95 x 0.95 = 90.25 % is named among the trade-offs
    assert any("90.25%" in t for t in result["structured"]["trade_offs"])


def test_baseline_is_recomputed_from_the_schedule_when_missing() -> None:
    result = explain(build(baseline_value=None), "auditor", "en")
    assert result["structured"]["figures"]["baseline_value"] == pytest.approx(BASELINE)
    assert result["structured"]["figures"]["savings"] == pytest.approx(0.90)
    assert "recomputed from the schedule" in alternatives(result)["idle_battery"]["reason"]


def test_operator_merges_steps_into_ranges() -> None:
    text = explain(build(), "operator", "en")["text"]
    assert "charge 00:00–02:00 UTC at 2.00 kW (4.00 kWh)" in text
    assert "discharge 03:00–07:00 UTC at 1.00 kW (4.00 kWh)" in text
    assert text.count("charge ") == 2  # one charge range, one discharge range: nothing per step
    assert "lowest 0.00 kWh, highest 4.00 kWh" in text
    assert "Peak grid import 3.00 kW at 00:00 UTC, 60% of the 5.00 kW import limit" in text
    assert "Energy charged 4.00 kWh, discharged 4.00 kWh" in text
    de = explain(build(), "operator", "de")["text"]
    assert "Laden 00:00–02:00 UTC mit 2,00 kW (4,00 kWh)" in de
    assert "Entladen 03:00–07:00 UTC mit 1,00 kW (4,00 kWh)" in de
    assert "Höchster Netzbezug 3,00 kW um 00:00 UTC, 60 % der Bezugsgrenze von 5,00 kW" in de


def test_operator_ranges_split_at_idle_steps_and_show_varying_power() -> None:
    # charge in steps 0 and 2 (idle between), discharge 2, 1, 1 kW in steps 3-5
    plan = build([2.0, 0.0, 2.0, 0, 0, 0, 0, 0], [0, 0, 0, 2.0, 1.0, 1.0, 0, 0])
    text = explain(plan, "operator", "en")["text"]
    assert "charge 00:00–01:00 UTC at 2.00 kW (2.00 kWh)" in text
    assert "charge 02:00–03:00 UTC at 2.00 kW (2.00 kWh)" in text
    assert "discharge 03:00–06:00 UTC at 1.00–2.00 kW (4.00 kWh)" in text


def test_times_are_printed_in_utc() -> None:
    plan = build()
    for i, slot in enumerate(plan["schedule"]):  # the same instants written at +01:00
        slot["start"] = f"2026-11-29T{i + 1:02d}:00:00+01:00"
        slot["end"] = f"2026-11-29T{i + 2:02d}:00:00+01:00"
    assert "charge 00:00–02:00 UTC" in explain(plan, "operator", "en")["text"]


def test_manager_states_cost_baseline_and_savings() -> None:
    en = explain(build(), "manager", "en")["text"]
    assert "0.72 EUR" in en and "1.62 EUR" in en and "savings of 0.90 EUR (55.6%)" in en
    assert len(re.findall(r"\.(?:\s|$)", en)) <= 2  # one or two sentences
    de = explain(build(), "manager", "de")["text"]
    assert "0,72 EUR" in de and "1,62 EUR" in de and "Ersparnis 0,90 EUR (55,6 %)" in de


def test_manager_when_the_plan_costs_more_than_idling() -> None:
    plan = build(objective="self_consumption", cost=1.80, objective_value=3.0)
    result = explain(plan, "manager", "en")
    assert result["structured"]["figures"]["savings"] == pytest.approx(1.62 - 1.80)
    assert "0.18 EUR more than the 1.62 EUR with the battery idle" in result["text"]
    idle = alternatives(result)["idle_battery"]
    assert idle["delta"] == pytest.approx(-0.18)
    assert "0.18 EUR less than the plan" in idle["reason"]


def test_auditor_gives_provenance_and_checks_the_cost() -> None:
    text = explain(build(), "auditor", "en")["text"]
    for fact in ("plan_0f3a9c", "2026-11-28T23:05:00+00:00", "entry_1", "scipy.optimize.milp (HiGHS)", "optimal",
                 "relative gap 0.0000%", "objective cost", "import limit 5.00 kW", "export limit 5.00 kW",
                 "persistence baseline", "profile model", "day-ahead (ENTSO-E)", "0.7200 EUR", "1.6200 EUR",
                 "(matches)"):
        assert fact in text, fact
    # a cost that the schedule does not support is flagged
    assert "differs by -0.080000 EUR" in explain(build(cost=0.80), "auditor", "en")["text"]
    de = explain(build(), "auditor", "de")["text"]
    assert "stimmt überein" in de and "Netzbezug höchstens 5,00 kW" in de and "Day-Ahead-Preise (ENTSO-E)" in de


def test_time_limit_is_disclosed() -> None:
    plan = build(solver_status="time_limit", gap=0.0123)
    assert "not proven optimal (relative gap 1.2300%)" in explain(plan, "manager", "en")["text"]
    assert "Zeitlimit" in explain(plan, "operator", "de")["text"]


def test_languages_differ_and_german_uses_decimal_commas() -> None:
    for audience in AUDIENCES:
        en = explain(build(), audience, "en")["text"]
        de = explain(build(), audience, "de")["text"]
        assert en != de
        assert re.search(r"\d\.\d\d (EUR|kW)", en) and not re.search(r"\d,\d\d (EUR|kW)", en)
        assert re.search(r"\d,\d\d (EUR|kW)", de) and not re.search(r"\d\.\d\d (EUR|kW)", de)
    assert "Laden" in explain(build(), "operator", "de")["text"]
    assert "Ersparnis" in explain(build(), "manager", "de")["text"]
    structured_de = explain(build(), "operator", "de")["structured"]
    assert any("Lastprognose" in a for a in structured_de["assumptions"])
    assert any("Batterieverschleiß" in t for t in structured_de["trade_offs"])


def test_large_amounts_group_thousands_per_language() -> None:
    plan = build(cost=1234.5, baseline_value=2469.0)
    assert "1,234.50 EUR" in explain(plan, "manager", "en")["text"]
    assert "1.234,50 EUR" in explain(plan, "manager", "de")["text"]


def test_trade_offs_name_prices_and_terminal_soc() -> None:
    trade_offs = explain(build(), "operator", "en")["structured"]["trade_offs"]
    cycle = next(t for t in trade_offs if "round-trip" in t)
    # charging at 0.10 (steps 0-1), discharging against (0.3 + 0.4 + 0.4 + 0.2) / 4 = 0.325
    assert "4.00 kWh at 0.100 EUR/kWh" in cycle and "4.00 kWh at 0.325 EUR/kWh" in cycle
    # a terminal target above the SoC floor is a trade-off of its own
    plan = build([2.0, 2.0, 0, 0, 0, 0, 0, 0], [0, 0, 0, 1.0, 1.0, 0, 0, 0])
    plan["assets"][0]["soc_terminal_kwh"] = 2.0
    terminal = explain(plan, "operator", "en")["structured"]["trade_offs"]
    assert any("ends at 2.00 kWh (target at least 2.00 kWh" in t for t in terminal)


def test_grid_limit_breach_of_an_alternative_is_named() -> None:
    plan = build(constraints={"import_limit_kw": 2.5, "export_limit_kw": 5.0})
    reason = alternatives(explain(plan, "operator", "en"))["charge_immediately"]["reason"]
    assert "import limit at 00:00 UTC (3.00 kW > 2.50 kW)" in reason


def test_deterministic_and_does_not_modify_the_plan() -> None:
    plan = build()
    before = copy.deepcopy(plan)
    for audience in AUDIENCES:
        for lang in LANGUAGES:
            first = explain(plan, audience, lang)
            assert explain(copy.deepcopy(plan), audience, lang) == first
    assert plan == before


def infeasible_plan() -> dict[str, Any]:
    return build(solver_status="infeasible", cost=None, objective_value=None, gap=None, conflicts=[
        {"constraint": "site_balance", "step": 3, "missing_kw": 1.2,
         "detail": "import limit and batteries cannot cover the load"},
        {"constraint": "terminal_soc", "battery": "battery", "missing_kwh": 2.0},
    ])


@pytest.mark.parametrize("audience", AUDIENCES)
def test_infeasible_plan_names_the_conflicts_and_authorizes_nothing(audience: str) -> None:
    en = explain(infeasible_plan(), audience, "en")
    assert "infeasible" in en["text"] and "nothing can be authorized" in en["text"]
    assert "step 3 (03:00–04:00 UTC): 1.20 kW missing" in en["text"]
    assert "terminal SoC of battery: 2.00 kWh short" in en["text"]
    de = explain(infeasible_plan(), audience, "de")["text"]
    assert "nichts freigegeben" in de and "Schritt 3 (03:00–04:00 UTC): 1,20 kW fehlen" in de
    figures = en["structured"]["figures"]
    assert figures["cost"] is None and figures["savings"] is None and figures["energy_charged_kwh"] is None
    assert all(alt["delta"] is None for alt in en["structured"]["rejected_alternatives"])


def test_infeasible_without_schedule() -> None:
    plan = infeasible_plan() | {"schedule": [], "baseline_value": None}
    result = explain(plan, "operator", "en")
    assert "step 3: 1.20 kW missing" in result["text"]
    assert all(alt["cost"] is None for alt in result["structured"]["rejected_alternatives"])


@pytest.mark.parametrize(("audience", "lang"), [("ceo", "en"), ("operator", "fr"), ("Operator", "en"), ("manager", "")])
def test_unknown_audience_or_language(audience: str, lang: str) -> None:
    with pytest.raises(ValueError, match="unknown"):
        explain(build(), audience, lang)
