"""The text of an explanation for each audience: the operator's actions, the manager's sentences, the auditor's lines."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .analysis import View, cost_check, marginal_price, weighted
from .inputs import EPS, Asset, Slot, opt
from .text import Fmt

_IDLE, _CHARGE, _DISCHARGE = "idle", "charge", "discharge"


def _explain_conflict(conflict: Mapping[str, Any], slots: list[Slot], fmt: Fmt) -> str:
    where = ""
    step = conflict.get("step")
    if step is not None:
        idx = int(step)
        if 0 <= idx < len(slots) and slots[idx].start is not None:
            where = fmt.t("step_time", step=idx, range=fmt.span(slots[idx].start, slots[idx].end))
        else:
            where = fmt.t("step", step=idx)
    kind = conflict.get("constraint")
    if kind == "site_balance" and conflict.get("missing_kw") is not None:
        return fmt.t("c.missing", where=where, x=fmt.kw(float(conflict["missing_kw"])))
    if kind == "site_balance" and conflict.get("excess_kw") is not None:
        return fmt.t("c.excess", where=where, x=fmt.kw(float(conflict["excess_kw"])))
    if kind == "terminal_soc":
        return fmt.t("c.terminal", bat=conflict.get("battery", "?"), x=fmt.kwh(opt(conflict.get("missing_kwh"))))
    return fmt.t("c.other", constraint=kind, where=f" ({where})" if where else "", detail=conflict.get("detail", ""))


def _conflict_items(view: View) -> list[str]:
    conflicts: list[Mapping[str, Any]] = list(view.plan.get("conflicts") or [])
    return [_explain_conflict(c, view.slots, view.fmt) for c in conflicts]


def auditor_lines(view: View, assumptions: list[str]) -> list[str]:
    """Return the auditor's lines: provenance, solver, cost check, constraints, assumptions and schedule."""
    fmt, plan, cost, gap = view.fmt, view.plan, view.cost, view.gap
    recomputed, check = cost_check(view)
    lines = [
        fmt.t(
            "au.id",
            plan_id=view.plan_id,
            created=plan.get("created_at") or fmt.t("na"),
            tenant=plan.get("tenant") or fmt.t("na"),
        ),
        fmt.t(
            "au.solver",
            solver=plan.get("solver") or fmt.t("na"),
            status=fmt.status(view.status),
            gap=fmt.pct(gap * 100, 4) if gap is not None else fmt.t("na"),
            objective=f"{view.objective} ({fmt.objective(view.objective)})",
            value=fmt.num(opt(plan.get("objective_value")), 6),
        ),
    ]
    if view.infeasible:
        lines.append(fmt.t("inf.header", plan_id=view.plan_id))
        items = _conflict_items(view)
        lines.append(fmt.t("inf.conflicts", n=len(items), items="; ".join(items)) if items else fmt.t("inf.none"))
    else:
        lines.append(
            fmt.t(
                "au.cost",
                cost=fmt.money(cost, 4),
                baseline=fmt.money(view.baseline, 4),
                source=fmt.t("src.plan" if view.baseline_from_plan else "src.schedule"),
                recomputed=fmt.money(recomputed, 4),
                check=check,
            )
        )
    lines.append(
        fmt.t("au.constraints", imp=fmt.kw(view.limits[0]), exp=fmt.kw(view.limits[1]), peak=fmt.kw(view.peak_import))
    )
    lines.append(fmt.t("au.assumptions", items="; ".join(assumptions)))
    lines.append(
        fmt.t(
            "au.schedule",
            steps=len(view.slots),
            step=fmt.num(view.step_min, 0),
            start=fmt.stamp(view.start),
            end=fmt.stamp(view.end),
        )
    )
    return lines


def infeasible_lines(view: View, audience: str) -> list[str]:
    """Return why the plan is infeasible; the manager sees the first three conflicts only."""
    fmt = view.fmt
    n_conflicts = len(view.plan.get("conflicts") or [])
    items = _conflict_items(view)
    if audience == "manager" and len(items) > 3:
        items = [*items[:3], fmt.t("inf.more", n=len(items) - 3)]
    return [
        fmt.t("inf.header", plan_id=view.plan_id),
        fmt.t("inf.conflicts", n=n_conflicts, items="; ".join(items)) if items else fmt.t("inf.none"),
    ]


def _time_note(view: View) -> str:
    """Return the note that the solver stopped at its time limit, "" when it did not."""
    if view.status != "time_limit":
        return ""
    gap = view.gap
    return view.fmt.t("time_limit", gap=view.fmt.pct(gap * 100, 4) if gap is not None else view.fmt.t("na"))


def manager_lines(view: View) -> list[str]:
    """Return the manager's sentences: cost against the idle battery, the average prices, the time-limit note."""
    fmt, cost, baseline, savings, objective = view.fmt, view.cost, view.baseline, view.savings, view.objective
    lines: list[str] = []
    horizon = fmt.num(float(view.plan.get("horizon_h") or len(view.slots) * view.h), 0)
    if baseline is None or savings is None:
        lines.append(fmt.t("mg.unknown", h=horizon, cost=fmt.money(cost)))
    elif abs(savings) < 0.005:
        lines.append(fmt.t("mg.even", h=horizon, cost=fmt.money(cost)))
    elif savings > 0:
        pct = f" ({fmt.pct(view.savings_pct)})" if view.savings_pct is not None else ""
        lines.append(
            fmt.t(
                "mg.saves",
                h=horizon,
                cost=fmt.money(cost),
                baseline=fmt.money(baseline),
                savings=fmt.money(savings),
                pct=pct,
            )
        )
    else:
        lines.append(
            fmt.t(
                "mg.loses",
                h=horizon,
                cost=fmt.money(cost),
                extra=fmt.money(-savings),
                baseline=fmt.money(baseline),
                objective=fmt.objective(objective),
            )
        )
    if view.energy_charged is not None and view.energy_charged > EPS:
        slots, assets = view.slots, view.assets
        ch = [(s.flows.get(a.asset_id, (0.0, 0.0, None))[0], marginal_price(s)) for a in assets for s in slots]
        dis = [(s.flows.get(a.asset_id, (0.0, 0.0, None))[1], marginal_price(s)) for a in assets for s in slots]
        lines.append(
            fmt.t(
                "mg.flow",
                charged=fmt.kwh(view.energy_charged),
                pc=fmt.price(weighted(ch)),
                discharged=fmt.kwh(view.energy_discharged),
                pd=fmt.price(weighted(dis)),
            )
        )
    if time_note := _time_note(view):
        lines.append(time_note)
    return lines


def operator_lines(view: View) -> list[str]:
    """Return the operator's lines: header, each battery's actions and SoC path, grid peaks and energy."""
    fmt, limits = view.fmt, view.limits
    lines = [
        fmt.t(
            "header",
            plan_id=view.plan_id,
            objective=fmt.objective(view.objective),
            steps=len(view.slots),
            step=fmt.num(view.step_min, 0),
            start=fmt.stamp(view.start),
            end=fmt.stamp(view.end),
        )
    ]
    if time_note := _time_note(view):
        lines.append(time_note)
    for asset in view.assets:
        lines += _battery_lines(view, asset)
    peak_slot, peak_import = view.peak_slot, view.peak_import
    if peak_slot is None or peak_import is None:
        pass
    elif peak_import <= EPS:
        lines.append(fmt.t("op.no_import"))
    elif limits[0]:
        lines.append(
            fmt.t(
                "op.peak",
                peak=fmt.kw(peak_import),
                time=fmt.hm(peak_slot.start),
                pct=fmt.pct(peak_import / limits[0] * 100, 0),
                limit=fmt.kw(limits[0]),
            )
        )
    else:
        lines.append(fmt.t("op.peak_nolimit", peak=fmt.kw(peak_import), time=fmt.hm(peak_slot.start)))
    exports = [(s.export_kw, s) for s in view.slots if s.export_kw is not None and s.export_kw > EPS]
    if exports:
        peak_exp, exp_slot = max(exports, key=lambda pair: pair[0])
        lines.append(fmt.t("op.export", peak=fmt.kw(peak_exp), time=fmt.hm(exp_slot.start), limit=fmt.kw(limits[1])))
    lines.append(fmt.t("op.energy", charged=fmt.kwh(view.energy_charged), discharged=fmt.kwh(view.energy_discharged)))
    return lines


def _action(slot: Slot, asset_id: str) -> tuple[str, float]:
    """Return what a battery does in a slot (charge, discharge or idle) and at what power in kW."""
    c, d, _ = slot.flows.get(asset_id, (0.0, 0.0, None))
    if c > EPS:
        return _CHARGE, c
    if d > EPS:
        return _DISCHARGE, d
    return _IDLE, d


def _battery_lines(view: View, asset: Asset) -> list[str]:
    """Return a battery's runs of equal action (time range, power, energy) and its SoC path."""
    fmt, slots = view.fmt, view.slots
    ranges: list[str] = []
    i = 0
    while i < len(slots):
        action, _ = _action(slots[i], asset.asset_id)
        j = i
        powers: list[float] = []
        while j < len(slots) and (step := _action(slots[j], asset.asset_id))[0] == action:
            powers.append(step[1])
            j += 1
        if action != _IDLE:
            lo, hi = min(powers), max(powers)
            power = fmt.kw(hi) if hi - lo < 0.005 else f"{fmt.num(lo)}–{fmt.kw(hi)}"
            ranges.append(
                fmt.t(
                    f"op.{action}",
                    range=fmt.span(slots[i].start, slots[j - 1].end),
                    power=power,
                    energy=fmt.kwh(sum(powers) * view.h),
                )
            )
        i = j
    if ranges:
        lines = [fmt.t("op.actions", bat=asset.asset_id, actions="; ".join(ranges))]
    else:
        lines = [fmt.t("op.idle", bat=asset.asset_id)]
    socs = [s.flows[asset.asset_id][2] for s in slots if asset.asset_id in s.flows]
    path = [x for x in socs if x is not None]
    if path:
        lines.append(
            fmt.t(
                "op.soc",
                bat=asset.asset_id,
                start=fmt.kwh(asset.soc_initial_kwh),
                end=fmt.kwh(path[-1]),
                low=fmt.kwh(min(path)),
                high=fmt.kwh(max(path)),
                lo=fmt.num(asset.soc_min_kwh),
                hi=fmt.kwh(asset.soc_max_kwh),
            )
        )
    return lines
