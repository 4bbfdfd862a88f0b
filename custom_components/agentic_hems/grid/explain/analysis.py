"""The numbers behind an explanation: the plan's view (cost, baseline, peak, energies) and the alternatives' costs.

Grid limits are not applied to the alternatives; the first breach is named (in the view's language) instead.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import Any

from .inputs import EPS, Asset, Slot, opt, read_assets, read_slots, read_step_min
from .text import Fmt

MONEY_TOL = 1e-6  # relative tolerance when the auditor's recomputed cost is compared with the plan's


@dataclass(frozen=True)
class Alt:
    """An alternative's cost over the horizon, its first grid-limit breach and the energy it leaves stored (kWh)."""

    cost: float | None
    breach: str  # localized, "" when the grid limits hold
    final_soc_kwh: float


def marginal_price(slot: Slot) -> float:
    """Return what one more kWh is worth in a slot: the export price while the site exports, else the import price."""
    return slot.export_price if (slot.export_kw or 0.0) > EPS else slot.import_price


def weighted(pairs: list[tuple[float, float]]) -> float | None:
    """Return the mean of ``(weight, value)`` pairs weighted by weight, None when the weights sum to zero."""
    total = sum(w for w, _ in pairs)
    return sum(w * p for w, p in pairs) / total if total > EPS else None


def simulate(
    slots: list[Slot], extra_kw: list[float], h: float, limits: tuple[float | None, float | None], fmt: Fmt
) -> tuple[float, str]:
    """Return the site's cost with ``extra_kw`` battery charge per slot and the first limit breach.

    Import is paid at the import price, export at the export price, no grid limits; the breach is localized, ""
    when none.
    """
    cost = 0.0
    breach = ""
    imp_limit, exp_limit = limits
    for slot, extra in zip(slots, extra_kw, strict=True):
        net = slot.load_kw - slot.pv_kw + extra
        if net > 0:
            cost += net * slot.import_price * h
            if not breach and imp_limit is not None and net > imp_limit + EPS:
                breach = fmt.t("alt.breach_import", time=fmt.hm(slot.start), kw=fmt.kw(net), limit=fmt.kw(imp_limit))
        else:
            cost += net * slot.export_price * h  # net < 0: export earns
            if not breach and exp_limit is not None and -net > exp_limit + EPS:
                breach = fmt.t("alt.breach_export", time=fmt.hm(slot.start), kw=fmt.kw(-net), limit=fmt.kw(exp_limit))
    return cost, breach


def charge_immediately(
    slots: list[Slot], assets: list[Asset], h: float, limits: tuple[float | None, float | None], fmt: Fmt
) -> Alt:
    """Return the cost of charging every battery at full power from the first step until full, then idling."""
    extra = [0.0] * len(slots)
    final = 0.0
    for asset in assets:
        soc = asset.soc_initial_kwh if asset.soc_initial_kwh is not None else 0.0
        top = asset.soc_max_kwh
        power = asset.charge_kw or 0.0
        for i in range(len(slots)):
            if top is None or asset.eta_c <= 0:
                break
            charge = min(power, max(top - soc, 0.0) / (asset.eta_c * h))
            if charge <= EPS:
                break
            extra[i] += charge
            soc += asset.eta_c * charge * h
        final += soc
    cost, breach = simulate(slots, extra, h, limits, fmt)
    return Alt(cost, breach, final)


@dataclass(frozen=True)
class View:
    """A plan read for explaining: its schedule, batteries and limits, and the figures every audience uses."""

    plan: Mapping[str, Any]
    fmt: Fmt
    step_min: float
    h: float  # hours per step
    slots: list[Slot]
    assets: list[Asset]
    status: str
    objective: str
    limits: tuple[float | None, float | None]  # import, export limit in kW
    cost: float | None
    baseline: float | None
    baseline_from_plan: bool
    idle_breach: str  # localized, "" when the idle battery keeps the grid limits
    has_imports: bool
    peak_slot: Slot | None  # first slot of the import peak
    per_battery: dict[str, tuple[float, float]]  # battery -> (charged kWh, discharged kWh)

    @property
    def infeasible(self) -> bool:
        """Whether the solver found no feasible schedule."""
        return self.status == "infeasible"

    @property
    def savings(self) -> float | None:
        """Baseline minus cost in the currency, None when either is unknown."""
        return self.baseline - self.cost if self.baseline is not None and self.cost is not None else None

    @property
    def savings_pct(self) -> float | None:
        """Savings as a percentage of a positive baseline, else None."""
        savings, baseline = self.savings, self.baseline
        return savings / baseline * 100.0 if savings is not None and baseline is not None and baseline > 0 else None

    @property
    def peak_import(self) -> float | None:
        """The highest grid import in kW, None without imports."""
        return self.peak_slot.import_kw if self.peak_slot is not None else None

    @property
    def energy_charged(self) -> float | None:
        """The energy charged into all batteries in kWh, None for an infeasible plan."""
        return sum(c for c, _ in self.per_battery.values()) if not self.infeasible else None

    @property
    def energy_discharged(self) -> float | None:
        """The energy discharged from all batteries in kWh, None for an infeasible plan."""
        return sum(d for _, d in self.per_battery.values()) if not self.infeasible else None

    @property
    def plan_id(self) -> str:
        """The plan's id, ``?`` when it has none."""
        return str(self.plan.get("plan_id") or "?")

    @property
    def gap(self) -> float | None:
        """The solver's relative gap (a fraction), None when not given."""
        return opt(self.plan.get("gap"))

    @property
    def start(self) -> datetime | None:
        """The first slot's start (UTC), None without a schedule."""
        return self.slots[0].start if self.slots else None

    @property
    def end(self) -> datetime | None:
        """The last slot's end (UTC), None without a schedule."""
        return self.slots[-1].end if self.slots else None


def read_plan(plan: Mapping[str, Any], lang: str) -> View:
    """Parse ``plan`` into a :class:`View`; raise ValueError for a schedule time that is not ISO 8601."""
    fmt = Fmt(lang, str(plan.get("currency") or "EUR"))
    raw_schedule: Sequence[Mapping[str, Any]] = plan.get("schedule") or []
    step_min = read_step_min(plan, raw_schedule)
    h = step_min / 60.0
    slots = read_slots(raw_schedule, timedelta(minutes=step_min))
    assets = read_assets(plan, raw_schedule)
    status = str(plan.get("solver_status") or "")
    constraints: Mapping[str, Any] = plan.get("constraints") or {}
    limits = (opt(constraints.get("import_limit_kw")), opt(constraints.get("export_limit_kw")))
    baseline = opt(plan.get("baseline_value"))
    baseline_from_plan = baseline is not None
    idle_breach = ""
    if slots:
        idle_cost, idle_breach = simulate(slots, [0.0] * len(slots), h, limits, fmt)
        if baseline is None:
            baseline = idle_cost
    # an infeasible plan's schedule carries no authorized flows
    imports = [(s.import_kw, s) for s in slots if s.import_kw is not None] if status != "infeasible" else []
    per_battery = {a.asset_id: energy(slots, a.asset_id, h) for a in assets}
    return View(
        plan=plan,
        fmt=fmt,
        step_min=step_min,
        h=h,
        slots=slots,
        assets=assets,
        status=status,
        objective=str(plan.get("objective") or "cost"),
        limits=limits,
        cost=opt(plan.get("cost")),
        baseline=baseline,
        baseline_from_plan=baseline_from_plan,
        idle_breach=idle_breach,
        has_imports=bool(imports),
        peak_slot=max(imports, key=lambda pair: pair[0])[1] if imports else None,
        per_battery=per_battery,
    )


def energy(slots: list[Slot], asset_id: str, h: float) -> tuple[float, float]:
    """Return the energy a battery charges and discharges over the schedule, in kWh."""
    charged = sum(s.flows.get(asset_id, (0.0, 0.0, None))[0] for s in slots) * h
    discharged = sum(s.flows.get(asset_id, (0.0, 0.0, None))[1] for s in slots) * h
    return charged, discharged


def r6(x: float | None) -> float | None:
    """Return ``x`` rounded to 6 decimals, None for None."""
    return None if x is None else round(x, 6)


def avg_prices(slots: list[Slot], asset_id: str) -> tuple[float | None, float | None]:
    """Return a battery's charge and discharge prices, each weighted by its power (None without flow)."""
    ch = [(s.flows.get(asset_id, (0.0, 0.0, None))[0], marginal_price(s)) for s in slots]
    dis = [(s.flows.get(asset_id, (0.0, 0.0, None))[1], marginal_price(s)) for s in slots]
    return weighted(ch), weighted(dis)


def final_soc(slots: list[Slot], asset: Asset) -> float | None:
    """Return a battery's last SoC in the schedule in kWh, None when unknown."""
    socs = [s.flows[asset.asset_id][2] for s in slots if asset.asset_id in s.flows]
    return socs[-1] if socs and socs[-1] is not None else None


def figures(view: View) -> dict[str, float | None]:
    """Return the language-independent figures (see :func:`..explain`), rounded to 6 decimals."""
    return {
        "cost": view.cost,
        "baseline_value": r6(view.baseline),
        "savings": r6(view.savings),
        "savings_pct": r6(view.savings_pct),
        "peak_import_kw": r6(view.peak_import),
        "energy_charged_kwh": r6(view.energy_charged),
        "energy_discharged_kwh": r6(view.energy_discharged),
    }


def cost_check(view: View) -> tuple[float | None, str]:
    """Return the cost recomputed from the schedule's grid flows (None without them) and the localized verdict."""
    fmt, cost = view.fmt, view.cost
    recomputed = (
        sum(
            ((s.import_kw or 0.0) * s.import_price - (s.export_kw or 0.0) * s.export_price) * view.h for s in view.slots
        )
        if view.has_imports
        else None
    )
    if recomputed is None or cost is None:
        return recomputed, fmt.t("na")
    if abs(recomputed - cost) <= MONEY_TOL * max(1.0, abs(cost)):
        return recomputed, fmt.t("au.matches")
    return recomputed, fmt.t("au.differs", diff=fmt.money(recomputed - cost, 6))
