"""The structured part of an explanation: assumptions, trade-offs and rejected alternatives, in the view's language."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .analysis import View, avg_prices, charge_immediately, final_soc, r6
from .inputs import EPS, Asset


def assumption_texts(view: View) -> list[str]:
    """Return what the plan assumes: its forecasts, grid limits, batteries and step length, in the view's language."""
    fmt = view.fmt
    given: Mapping[str, Any] = view.plan.get("assumptions") or {}
    assumptions = [fmt.t(f"as.{key}", v=fmt.value(given[key])) for key in ("load", "pv", "prices") if key in given]
    known = ("load", "pv", "prices")
    assumptions += [fmt.t("as.other", k=k, v=fmt.value(given[k])) for k in sorted(given) if k not in known]
    assumptions.append(fmt.t("as.limits", imp=fmt.kw(view.limits[0]), exp=fmt.kw(view.limits[1])))
    assumptions += [
        fmt.t(
            "as.battery",
            bat=asset.asset_id,
            cap=fmt.kwh(asset.capacity_kwh),
            lo=fmt.num(asset.soc_min_kwh),
            hi=fmt.kwh(asset.soc_max_kwh),
            pc=fmt.kw(asset.charge_kw),
            pd=fmt.kw(asset.discharge_kw),
            start=fmt.kwh(asset.soc_initial_kwh),
            term=fmt.kwh(asset.soc_terminal_kwh),
            ec=fmt.pct(asset.eta_c * 100, 0),
            ed=fmt.pct(asset.eta_d * 100, 0),
            assumed="" if asset.eta_given else fmt.t("as.eff_assumed"),
        )
        for asset in view.assets
    ]
    assumptions.append(fmt.t("as.steps", step=fmt.num(view.step_min, 0)))
    return assumptions


def trade_off_texts(view: View) -> list[str]:
    """Return what the plan gives up: per battery its cycle or idleness and its kept energy, then the objective's."""
    fmt = view.fmt
    trade_offs: list[str] = []
    if not view.infeasible:
        for asset in view.assets:
            trade_offs += _battery_trade_offs(view, asset)
    if fmt.has(f"to.{view.objective}"):
        trade_offs.append(fmt.t(f"to.{view.objective}"))
    trade_offs.append(fmt.t("to.wear"))
    return trade_offs


def _battery_trade_offs(view: View, asset: Asset) -> list[str]:
    fmt = view.fmt
    out: list[str] = []
    charged, discharged = view.per_battery[asset.asset_id]
    rt = asset.eta_c * asset.eta_d
    if charged > EPS or discharged > EPS:
        pc, pd = avg_prices(view.slots, asset.asset_id)
        loss = charged * (1 - asset.eta_c) + discharged * (1 / asset.eta_d - 1)
        out.append(
            fmt.t(
                "to.cycle",
                bat=asset.asset_id,
                rt=fmt.pct(rt * 100, 2),
                pc=fmt.price(pc),
                breakeven=fmt.price(pc / rt if pc is not None else None),
                charged=fmt.kwh(charged),
                discharged=fmt.kwh(discharged),
                pd=fmt.price(pd),
                loss=fmt.kwh(loss),
            )
        )
    else:
        out.append(fmt.t("to.idle", bat=asset.asset_id, rt=fmt.pct(rt * 100, 2)))
    end_soc = final_soc(view.slots, asset)
    floor = asset.soc_min_kwh or 0.0
    term = asset.soc_terminal_kwh
    if term is not None and end_soc is not None and max(term, end_soc) > floor + EPS:
        out.append(
            fmt.t(
                "to.terminal",
                bat=asset.asset_id,
                end=fmt.kwh(end_soc),
                term=fmt.kwh(asset.soc_terminal_kwh),
                start=fmt.kwh(asset.soc_initial_kwh),
            )
        )
    return out


def _compare(view: View, what: str, alt_cost: float | None) -> tuple[float | None, str]:
    """Return the alternative's delta to the plan and the sentence start that says so."""
    fmt, cost = view.fmt, view.cost
    if view.infeasible:
        return None, f"{what}; {fmt.t('alt.infeasible')}"
    if alt_cost is None or cost is None:
        return None, f"{what}; {fmt.t('alt.no_cost')}"
    delta = alt_cost - cost
    if abs(delta) < 0.005:
        return delta, f"{what}, {fmt.t('alt.same')}"
    if delta > 0:
        return delta, f"{what}, {fmt.t('alt.more', delta=fmt.money(delta))}"
    return delta, f"{what}, {fmt.t('alt.less', delta=fmt.money(-delta), objective=fmt.objective(view.objective))}"


def _sentence(parts: list[str]) -> str:
    text = "; ".join(p for p in parts if p)
    return text[0].upper() + text[1:] + "."


def rejected_alternatives(view: View) -> list[dict[str, Any]]:
    """Return the rejected alternatives: the idle battery, then charging immediately."""
    return [_reject_idle(view), _reject_charge(view)]


def _reject_idle(view: View) -> dict[str, Any]:
    fmt, baseline = view.fmt, view.baseline
    if baseline is None:
        return {
            "name": "idle_battery",
            "label": fmt.t("alt.idle_battery"),
            "cost": None,
            "delta": None,
            "reason": fmt.t("alt.no_baseline"),
        }
    source = fmt.t("src.plan" if view.baseline_from_plan else "src.schedule")
    delta, verdict = _compare(view, fmt.t("alt.idle.what", cost=fmt.money(baseline), source=source), baseline)
    return {
        "name": "idle_battery",
        "label": fmt.t("alt.idle_battery"),
        "cost": r6(baseline),
        "delta": r6(delta),
        "reason": _sentence([verdict, view.idle_breach]),
    }


def _reject_charge(view: View) -> dict[str, Any]:
    fmt, slots, assets = view.fmt, view.slots, view.assets
    if not slots:
        return {
            "name": "charge_immediately",
            "label": fmt.t("alt.charge_immediately"),
            "cost": None,
            "delta": None,
            "reason": fmt.t("alt.no_schedule"),
        }
    alt = charge_immediately(slots, assets, view.h, view.limits, fmt)
    effs = ", ".join(
        f"{a.asset_id} {fmt.pct(a.eta_c * 100, 0)}" + ("" if a.eta_given else fmt.t("as.eff_assumed")) for a in assets
    ) or fmt.t("na")
    plan_final = [final_soc(slots, a) for a in assets]
    stored = ""
    if not view.infeasible and all(x is not None for x in plan_final):
        more = alt.final_soc_kwh - sum(x for x in plan_final if x is not None)
        if more > 0.005:
            stored = fmt.t("alt.stored", x=fmt.kwh(more))
    delta, verdict = _compare(view, fmt.t("alt.charge.what", eff=effs, cost=fmt.money(alt.cost)), alt.cost)
    return {
        "name": "charge_immediately",
        "label": fmt.t("alt.charge_immediately"),
        "cost": r6(alt.cost),
        "delta": r6(delta),
        "reason": _sentence([verdict, stored, fmt.t("alt.no_limits"), alt.breach]),
    }


def structured_result(
    assumptions: list[str], trade_offs: list[str], rejected: list[dict[str, Any]], figures: dict[str, float | None]
) -> dict[str, Any]:
    """Return the ``structured`` part of :func:`..explain`'s answer."""
    return {"assumptions": assumptions, "trade_offs": trade_offs, "rejected_alternatives": rejected, "figures": figures}
