"""Plain-language and structured explanations of a dispatch plan (the ``generate_explanation`` tool).

Deterministic: no model, no clock, no locale; the same plan, audience and language give the same text. The plan is
the dict the ``optimize_dispatch`` tool produces (``plan_id``, ``objective``, ``step_min``, ``currency``, ``solver``,
``solver_status``, ``cost``, ``baseline_value``, ``gap``, ``constraints``, ``assets``, ``schedule``, ``conflicts``,
``assumptions``, ...). Times in the plan are ISO 8601; the text prints them as ``HH:MM UTC`` (no time zone is known
here). Powers are kW, energies kWh, prices currency/kWh, money in the plan's currency (EUR by default).

Audiences: ``operator`` (which steps charge or discharge at what power, the SoC path, peak import against the import
limit), ``manager`` (cost, idle-battery baseline, savings; one or two sentences), ``auditor`` (provenance and what can
be checked: plan id, solver, status, gap, objective, the cost recomputed from the schedule, constraints, assumptions,
creation time). Languages: ``en`` (decimal point) and ``de`` (decimal comma, ``1.234,56``).

The rejected alternatives are computed from the plan's own numbers, with grid limits not applied (a breach is named
in the reason): ``idle_battery`` (the plan's ``baseline_value``, or, when it is missing, every battery idle priced from
the schedule) and ``charge_immediately`` (every battery charged at full power from the first step until
``soc_max_kwh``, then idle; the charge efficiency is the asset's or 0.95).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

AUDIENCES = ("operator", "manager", "auditor")
LANGUAGES = ("en", "de")
DEFAULT_EFFICIENCY = 0.95
EPS = 1e-6  # kW or kWh below which a flow counts as zero
MONEY_TOL = 1e-6  # relative tolerance when the auditor's recomputed cost is compared with the plan's

_IDLE, _CHARGE, _DISCHARGE = "idle", "charge", "discharge"

# message id -> (English, German) templates for str.format
_M: dict[str, tuple[str, str]] = {
    "na": ("n/a", "keine Angabe"),
    "obj.cost": ("lowest cost", "geringste Kosten"),
    "obj.self_consumption": ("most self-consumption", "höchster Eigenverbrauch"),
    "obj.peak_shaving": ("lowest import peak", "geringste Bezugsspitze"),
    "status.optimal": ("optimal", "optimal"),
    "status.time_limit": ("time limit reached", "Zeitlimit erreicht"),
    "status.infeasible": ("infeasible", "nicht lösbar"),
    "header": (
        "Plan {plan_id} ({objective}, {steps} steps of {step} min, {start} to {end}).",
        "Plan {plan_id} ({objective}, {steps} Schritte zu je {step} min, {start} bis {end}).",
    ),
    "time_limit": (
        ("The solver stopped at its time limit: this is the best plan found, not proven optimal (relative gap {gap})."),
        (
            "Der Solver hat sein Zeitlimit erreicht: Das ist der beste gefundene Plan, seine Optimalität ist "
            "nicht bewiesen (relative Lücke {gap})."
        ),
    ),
    # operator
    "op.charge": ("charge {range} UTC at {power} ({energy})", "Laden {range} UTC mit {power} ({energy})"),
    "op.discharge": ("discharge {range} UTC at {power} ({energy})", "Entladen {range} UTC mit {power} ({energy})"),
    "op.actions": ("{bat}: {actions}; idle otherwise.", "{bat}: {actions}; sonst Leerlauf."),
    "op.idle": ("{bat}: idle over the whole horizon.", "{bat}: im gesamten Zeitraum im Leerlauf."),
    "op.soc": (
        "{bat} SoC: {start} at the start, {end} at the end, lowest {low}, highest {high} (limits {lo}–{hi}).",
        (
            "{bat} Ladezustand: {start} zu Beginn, {end} am Ende, niedrigster {low}, höchster {high} "
            "(Grenzen {lo}–{hi})."
        ),
    ),
    "op.peak": (
        "Peak grid import {peak} at {time} UTC, {pct} of the {limit} import limit.",
        "Höchster Netzbezug {peak} um {time} UTC, {pct} der Bezugsgrenze von {limit}.",
    ),
    "op.peak_nolimit": (
        "Peak grid import {peak} at {time} UTC (no import limit given).",
        "Höchster Netzbezug {peak} um {time} UTC (keine Bezugsgrenze angegeben).",
    ),
    "op.no_import": ("No grid import.", "Kein Netzbezug."),
    "op.export": (
        "Peak export {peak} at {time} UTC (limit {limit}).",
        "Höchste Einspeisung {peak} um {time} UTC (Grenze {limit}).",
    ),
    "op.energy": (
        "Energy charged {charged}, discharged {discharged}.",
        "Geladene Energie {charged}, entladene Energie {discharged}.",
    ),
    # manager
    "mg.saves": (
        (
            "Over the {h} h horizon the plan's net electricity cost is {cost}, against {baseline} with the "
            "battery idle: savings of {savings}{pct}."
        ),
        (
            "Im Planungszeitraum von {h} h betragen die Netto-Stromkosten mit diesem Plan {cost} statt "
            "{baseline} ohne Batterieeinsatz: Ersparnis {savings}{pct}."
        ),
    ),
    "mg.even": (
        (
            "Over the {h} h horizon the plan's net electricity cost is {cost}, the same as with the battery "
            "idle: no savings."
        ),
        (
            "Im Planungszeitraum von {h} h betragen die Netto-Stromkosten mit diesem Plan {cost}, genauso viel "
            "wie ohne Batterieeinsatz: keine Ersparnis."
        ),
    ),
    "mg.loses": (
        (
            "Over the {h} h horizon the plan's net electricity cost is {cost}, {extra} more than the {baseline} "
            "with the battery idle, because its objective is {objective}, not cost."
        ),
        (
            "Im Planungszeitraum von {h} h betragen die Netto-Stromkosten mit diesem Plan {cost}, {extra} mehr "
            "als die {baseline} ohne Batterieeinsatz, weil das Ziel „{objective}“ ist, nicht die Kosten."
        ),
    ),
    "mg.unknown": (
        (
            "Over the {h} h horizon the plan's net electricity cost is {cost}; savings cannot be stated "
            "because the idle-battery baseline is missing."
        ),
        (
            "Im Planungszeitraum von {h} h betragen die Netto-Stromkosten mit diesem Plan {cost}; eine "
            "Ersparnis lässt sich nicht angeben, weil der Vergleichswert ohne Batterieeinsatz fehlt."
        ),
    ),
    "mg.flow": (
        "The battery charges {charged} at {pc} on average and returns {discharged} at {pd}.",
        "Die Batterie lädt {charged} zu durchschnittlich {pc} und gibt {discharged} zu {pd} wieder ab.",
    ),
    # auditor
    "au.id": (
        "Plan {plan_id}, created {created}, tenant {tenant}.",
        "Plan {plan_id}, erstellt {created}, Mandant {tenant}.",
    ),
    "au.solver": (
        "Solver {solver}, status {status}, relative gap {gap}, objective {objective} with value {value}.",
        (
            "Solver {solver}, Status {status}, relative Optimalitätslücke {gap}, Ziel {objective} mit "
            "Zielfunktionswert {value}."
        ),
    ),
    "au.cost": (
        (
            "Cost {cost}; baseline with every battery idle {baseline} ({source}); cost recomputed from the "
            "schedule {recomputed} ({check})."
        ),
        (
            "Kosten {cost}; Vergleichswert mit allen Batterien im Leerlauf {baseline} ({source}); aus dem "
            "Fahrplan nachgerechnete Kosten {recomputed} ({check})."
        ),
    ),
    "au.matches": ("matches", "stimmt überein"),
    "au.differs": ("differs by {diff}", "weicht um {diff} ab"),
    "au.constraints": (
        "Constraints: import limit {imp}, export limit {exp}; peak import {peak}.",
        ("Nebenbedingungen: Netzbezug höchstens {imp}, Einspeisung höchstens {exp}; höchster Netzbezug {peak}."),
    ),
    "au.assumptions": ("Assumptions: {items}.", "Annahmen: {items}."),
    "au.schedule": (
        "Schedule: {steps} steps of {step} min from {start} to {end}; all times UTC.",
        "Fahrplan: {steps} Schritte zu je {step} min von {start} bis {end}; alle Zeiten in UTC.",
    ),
    "src.plan": ("from the plan", "aus dem Plan"),
    "src.schedule": ("recomputed from the schedule", "aus dem Fahrplan nachgerechnet"),
    # infeasible
    "inf.header": (
        "Plan {plan_id} is infeasible: no schedule meets all constraints, so nothing can be authorized.",
        (
            "Plan {plan_id} ist nicht lösbar: Kein Fahrplan erfüllt alle Nebenbedingungen, daher kann nichts "
            "freigegeben werden."
        ),
    ),
    "inf.conflicts": ("Conflicts ({n}): {items}.", "Konflikte ({n}): {items}."),
    "inf.more": ("and {n} more", "und {n} weitere"),
    "inf.none": (
        "The solver named no conflicting constraint.",
        ("Der Solver hat keine widersprüchliche Nebenbedingung benannt."),
    ),
    "step": ("step {step}", "Schritt {step}"),
    "step_time": ("step {step} ({range} UTC)", "Schritt {step} ({range} UTC)"),
    "c.missing": (
        "site balance at {where}: {x} missing, the import limit and the batteries cannot cover the load",
        "Leistungsbilanz in {where}: {x} fehlen, Bezugsgrenze und Batterien können die Last nicht decken",
    ),
    "c.excess": (
        "site balance at {where}: {x} in excess, the export limit and the batteries cannot absorb the PV",
        (
            "Leistungsbilanz in {where}: {x} Überschuss, Einspeisegrenze und Batterien können die PV-Erzeugung "
            "nicht aufnehmen"
        ),
    ),
    "c.terminal": ("terminal SoC of {bat}: {x} short of the target", "End-Ladezustand von {bat}: {x} unter dem Ziel"),
    "c.other": ("{constraint}{where}: {detail}", "Nebenbedingung {constraint}{where}: {detail}"),
    # assumptions
    "as.load": ("load forecast: {v}", "Lastprognose: {v}"),
    "as.pv": ("PV forecast: {v}", "PV-Prognose: {v}"),
    "as.prices": ("prices: {v}", "Preise: {v}"),
    "as.other": ("{k}: {v}", "{k}: {v}"),
    "as.limits": (
        "grid import limit {imp}, export limit {exp}",
        "Netzbezug höchstens {imp}, Einspeisung höchstens {exp}",
    ),
    "as.battery": (
        (
            "{bat}: capacity {cap}, SoC {lo}–{hi}, charge up to {pc}, discharge up to {pd}, start {start}, "
            "end at least {term}, charge/discharge efficiency {ec}/{ed}{assumed}"
        ),
        (
            "{bat}: Kapazität {cap}, Ladezustand {lo}–{hi}, Laden bis {pc}, Entladen bis {pd}, "
            "Start {start}, "
            "Ende mindestens {term}, Lade-/Entladewirkungsgrad {ec}/{ed}{assumed}"
        ),
    ),
    "as.eff_assumed": (
        " (efficiency assumed, the asset gives none)",
        (" (Wirkungsgrad angenommen, die Anlage nennt keinen)"),
    ),
    "as.steps": (
        "prices, load and PV constant within each {step}-min step; times in UTC",
        "Preise, Last und PV innerhalb jedes {step}-min-Schritts konstant; Zeiten in UTC",
    ),
    # trade-offs
    "to.cycle": (
        (
            "{bat}: a stored kWh comes back at {rt} (round-trip efficiency), so discharging pays only above "
            "{breakeven} after charging at {pc}; the plan charges {charged} at {pc} and discharges {discharged} "
            "at {pd} on average, losing {loss} to efficiency"
        ),
        (
            "{bat}: Von einer gespeicherten kWh kommen {rt} zurück (Speicherwirkungsgrad), daher lohnt sich "
            "Entladen erst über {breakeven}, wenn zu {pc} geladen wurde; der Plan lädt {charged} zu "
            "durchschnittlich {pc} und entlädt {discharged} zu {pd}, Verlust {loss}"
        ),
    ),
    "to.idle": (
        "{bat} stays idle: the solver found no use for it that beats its round-trip losses (efficiency {rt})",
        (
            "{bat} bleibt im Leerlauf: Der Solver fand keinen Einsatz, der die Speicherverluste (Wirkungsgrad "
            "{rt}) aufwiegt"
        ),
    ),
    "to.terminal": (
        (
            "{bat} ends at {end} (target at least {term}, start {start}): energy kept for after the horizon "
            "is neither sold nor used within it"
        ),
        (
            "{bat} endet bei {end} (Ziel mindestens {term}, Start {start}): Energie, die für die Zeit nach "
            "dem Planungszeitraum zurückbehalten wird, wird darin weder verkauft noch genutzt"
        ),
    ),
    "to.cost": (
        (
            "the objective is cost alone: import peaks are bounded only by the import limit, and self-consumption "
            "counts only through prices"
        ),
        (
            "Ziel sind allein die Kosten: Bezugsspitzen begrenzt nur die Bezugsgrenze, Eigenverbrauch zählt nur "
            "über die Preise"
        ),
    ),
    "to.self_consumption": (
        (
            "the objective is the least imported energy; cost only breaks ties, so the plan may cost "
            "more than the cheapest one"
        ),
        (
            "Ziel ist der geringste Netzbezug; die Kosten entscheiden nur bei Gleichstand, daher kann "
            "der Plan teurer sein als der günstigste"
        ),
    ),
    "to.peak_shaving": (
        (
            "the objective is the lowest import peak; cost only breaks ties, so the plan may cost more "
            "than the cheapest one"
        ),
        (
            "Ziel ist die geringste Bezugsspitze; die Kosten entscheiden nur bei Gleichstand, daher kann "
            "der Plan teurer sein als der günstigste"
        ),
    ),
    "to.wear": (
        "battery wear is not priced: cycling counts as free",
        "Batterieverschleiß ist nicht eingepreist: Zyklen gelten als kostenlos",
    ),
    # rejected alternatives
    "alt.idle_battery": ("idle battery", "Batterie im Leerlauf"),
    "alt.charge_immediately": ("charge immediately", "sofort laden"),
    "alt.idle.what": (
        "Leaving every battery idle costs {cost} ({source})",
        "Alle Batterien im Leerlauf kosten {cost} ({source})",
    ),
    "alt.charge.what": (
        (
            "Charging every battery at full power from the first step until it is full, then idling "
            "(charge efficiency {eff}), costs {cost}"
        ),
        (
            "Alle Batterien ab dem ersten Schritt mit voller Leistung bis zum Maximum laden, danach "
            "Leerlauf (Ladewirkungsgrad {eff}), kostet {cost}"
        ),
    ),
    "alt.more": ("{delta} more than the plan", "{delta} mehr als der Plan"),
    "alt.less": (
        "{delta} less than the plan, whose objective is {objective}, not cost",
        "{delta} weniger als der Plan, dessen Ziel „{objective}“ ist, nicht die Kosten",
    ),
    "alt.same": ("as much as the plan", "genauso viel wie der Plan"),
    "alt.infeasible": (
        "the plan is infeasible, so there is nothing to compare with",
        "der Plan ist nicht lösbar, es gibt also keinen Vergleich",
    ),
    "alt.no_cost": ("the plan states no cost to compare with", "der Plan nennt keine Kosten zum Vergleich"),
    "alt.stored": (
        "it ends with {x} more stored than the plan, which is not valued",
        "am Ende sind {x} mehr gespeichert als im Plan, was nicht bewertet wird",
    ),
    "alt.no_limits": ("grid limits not applied", "Netzgrenzen nicht angewandt"),
    "alt.breach_import": (
        "it would exceed the import limit at {time} UTC ({kw} > {limit})",
        "die Bezugsgrenze würde um {time} UTC überschritten ({kw} > {limit})",
    ),
    "alt.breach_export": (
        "it would exceed the export limit at {time} UTC ({kw} > {limit})",
        "die Einspeisegrenze würde um {time} UTC überschritten ({kw} > {limit})",
    ),
    "alt.no_schedule": (
        "Cannot be computed: the plan has no schedule.",
        "Nicht berechenbar: Der Plan enthält keinen Fahrplan.",
    ),
    "alt.no_baseline": (
        "Cannot be computed: the plan has neither a baseline nor a schedule.",
        "Nicht berechenbar: Der Plan enthält weder Vergleichswert noch Fahrplan.",
    ),
}

# known producer wording for the assumptions, in German
_DE_VALUES = {
    "persistence baseline": "Persistenz (die zuletzt gemessene Last wird fortgeschrieben)",
    "profile model": "Profilmodell",
    "day-ahead (ENTSO-E)": "Day-Ahead-Preise (ENTSO-E)",
}


@dataclass(frozen=True)
class _Asset:
    asset_id: str
    capacity_kwh: float | None
    soc_min_kwh: float | None
    soc_max_kwh: float | None
    charge_kw: float | None
    discharge_kw: float | None
    soc_initial_kwh: float | None
    soc_terminal_kwh: float | None
    eta_c: float
    eta_d: float
    eta_given: bool


@dataclass(frozen=True)
class _Slot:
    start: datetime | None
    end: datetime | None
    import_price: float
    export_price: float
    load_kw: float
    pv_kw: float
    import_kw: float | None
    export_kw: float | None
    flows: Mapping[str, tuple[float, float, float | None]]  # battery -> (charge_kw, discharge_kw, soc_kwh)


@dataclass(frozen=True)
class _Alt:
    cost: float | None
    breach: str  # localized, "" when the grid limits hold
    final_soc_kwh: float


def _opt(value: Any) -> float | None:
    return None if value is None else float(value)


def _time(value: Any) -> datetime | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"not an ISO 8601 time: {value!r}")  # noqa: TRY004 - the documented error of a bad plan
    moment = datetime.fromisoformat(value)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


class _Fmt:
    """Numbers, money and times in one language."""

    def __init__(self, lang: str, currency: str) -> None:
        self.lang = lang
        self.de = lang == "de"
        self.currency = currency

    def t(self, key: str, **kw: Any) -> str:
        return _M[key][1 if self.de else 0].format(**kw)

    def num(self, x: float | None, decimals: int = 2) -> str:
        if x is None:
            return self.t("na")
        if round(x, decimals) == 0:
            x = 0.0  # no "-0.00"
        text = f"{x:,.{decimals}f}"
        if self.de:
            text = text.replace(",", "\0").replace(".", ",").replace("\0", ".")
        return text

    def kw(self, x: float | None) -> str:
        return f"{self.num(x)} kW"

    def kwh(self, x: float | None) -> str:
        return f"{self.num(x)} kWh"

    def money(self, x: float | None, decimals: int = 2) -> str:
        return f"{self.num(x, decimals)} {self.currency}" if x is not None else self.t("na")

    def price(self, x: float | None) -> str:
        return f"{self.num(x, 3)} {self.currency}/kWh" if x is not None else self.t("na")

    def pct(self, x: float | None, decimals: int = 1) -> str:
        if x is None:
            return self.t("na")
        return f"{self.num(x, decimals)} %" if self.de else f"{self.num(x, decimals)}%"

    def hm(self, moment: datetime | None) -> str:
        return moment.strftime("%H:%M") if moment is not None else "?"

    def stamp(self, moment: datetime | None) -> str:
        if moment is None:
            return "?"
        return moment.strftime("%d.%m.%Y %H:%M UTC" if self.de else "%Y-%m-%d %H:%M UTC")

    def span(self, start: datetime | None, end: datetime | None) -> str:
        return f"{self.hm(start)}–{self.hm(end)}"

    def value(self, v: Any) -> str:
        """Return an assumption's value, in German where the producer's English wording is known."""
        text = str(v)
        return _DE_VALUES.get(text, text) if self.de else text

    def objective(self, name: str) -> str:
        key = f"obj.{name}"
        return self.t(key) if key in _M else name

    def status(self, name: str) -> str:
        key = f"status.{name}"
        return self.t(key) if key in _M else name


def _assets(plan: Mapping[str, Any], schedule: Sequence[Mapping[str, Any]]) -> list[_Asset]:
    """Return the plan's batteries in their order, then any battery that only the schedule names (sorted)."""
    out: list[_Asset] = []
    for raw in plan.get("assets") or []:
        given = "charge_efficiency" in raw or "discharge_efficiency" in raw
        out.append(
            _Asset(
                asset_id=str(raw.get("asset_id", f"battery{len(out)}")),
                capacity_kwh=_opt(raw.get("capacity_kwh")),
                soc_min_kwh=_opt(raw.get("soc_min_kwh")),
                soc_max_kwh=_opt(raw.get("soc_max_kwh", raw.get("capacity_kwh"))),
                charge_kw=_opt(raw.get("charge_kw")),
                discharge_kw=_opt(raw.get("discharge_kw")),
                soc_initial_kwh=_opt(raw.get("soc_initial_kwh")),
                soc_terminal_kwh=_opt(raw.get("soc_terminal_kwh")),
                eta_c=float(raw.get("charge_efficiency", DEFAULT_EFFICIENCY)),
                eta_d=float(raw.get("discharge_efficiency", DEFAULT_EFFICIENCY)),
                eta_given=given,
            )
        )
    known = {a.asset_id for a in out}
    extra = sorted({str(name) for slot in schedule for name in (slot.get("batteries") or {})} - known)
    out += [
        _Asset(name, None, None, None, None, None, None, None, DEFAULT_EFFICIENCY, DEFAULT_EFFICIENCY, False)
        for name in extra
    ]
    return out


def _slots(schedule: Sequence[Mapping[str, Any]], step: timedelta) -> list[_Slot]:
    out = []
    for raw in schedule:
        start = _time(raw.get("start"))
        end = _time(raw.get("end"))
        if end is None and start is not None:
            end = start + step
        flows = {
            str(name): (float(f.get("charge_kw") or 0.0), float(f.get("discharge_kw") or 0.0), _opt(f.get("soc_kwh")))
            for name, f in (raw.get("batteries") or {}).items()
        }
        out.append(
            _Slot(
                start,
                end,
                float(raw.get("import_price") or 0.0),
                float(raw.get("export_price") or 0.0),
                float(raw.get("load_kw") or 0.0),
                float(raw.get("pv_kw") or 0.0),
                _opt(raw.get("import_kw")),
                _opt(raw.get("export_kw")),
                flows,
            )
        )
    return out


def _step_min(plan: Mapping[str, Any], schedule: Sequence[Mapping[str, Any]]) -> float:
    if plan.get("step_min") is not None:
        return float(plan["step_min"])
    if schedule:
        start, end = _time(schedule[0].get("start")), _time(schedule[0].get("end"))
        if start is not None and end is not None:
            return (end - start).total_seconds() / 60.0
    return 15.0


def _marginal_price(slot: _Slot) -> float:
    """Return what one more kWh is worth in a slot: the export price while the site exports, else the import price."""
    return slot.export_price if (slot.export_kw or 0.0) > EPS else slot.import_price


def _weighted(pairs: list[tuple[float, float]]) -> float | None:
    total = sum(w for w, _ in pairs)
    return sum(w * p for w, p in pairs) / total if total > EPS else None


def _simulate(
    slots: list[_Slot], extra_kw: list[float], h: float, limits: tuple[float | None, float | None], fmt: _Fmt
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


def _charge_immediately(
    slots: list[_Slot], assets: list[_Asset], h: float, limits: tuple[float | None, float | None], fmt: _Fmt
) -> _Alt:
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
    cost, breach = _simulate(slots, extra, h, limits, fmt)
    return _Alt(cost, breach, final)


def _explain_conflict(conflict: Mapping[str, Any], slots: list[_Slot], fmt: _Fmt) -> str:
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
        return fmt.t("c.terminal", bat=conflict.get("battery", "?"), x=fmt.kwh(_opt(conflict.get("missing_kwh"))))
    return fmt.t("c.other", constraint=kind, where=f" ({where})" if where else "", detail=conflict.get("detail", ""))


@dataclass(frozen=True)
class _View:
    """A plan read for explaining: its schedule, batteries and limits, and the figures every audience uses."""

    plan: Mapping[str, Any]
    fmt: _Fmt
    step_min: float
    h: float  # hours per step
    slots: list[_Slot]
    assets: list[_Asset]
    status: str
    objective: str
    limits: tuple[float | None, float | None]  # import, export limit in kW
    cost: float | None
    baseline: float | None
    baseline_from_plan: bool
    idle_breach: str  # localized, "" when the idle battery keeps the grid limits
    has_imports: bool
    peak_slot: _Slot | None  # first slot of the import peak
    per_battery: dict[str, tuple[float, float]]  # battery -> (charged kWh, discharged kWh)

    @property
    def infeasible(self) -> bool:
        return self.status == "infeasible"

    @property
    def savings(self) -> float | None:
        return self.baseline - self.cost if self.baseline is not None and self.cost is not None else None

    @property
    def savings_pct(self) -> float | None:
        savings, baseline = self.savings, self.baseline
        return savings / baseline * 100.0 if savings is not None and baseline is not None and baseline > 0 else None

    @property
    def peak_import(self) -> float | None:
        return self.peak_slot.import_kw if self.peak_slot is not None else None

    @property
    def energy_charged(self) -> float | None:
        return sum(c for c, _ in self.per_battery.values()) if not self.infeasible else None

    @property
    def energy_discharged(self) -> float | None:
        return sum(d for _, d in self.per_battery.values()) if not self.infeasible else None

    @property
    def plan_id(self) -> str:
        return str(self.plan.get("plan_id") or "?")

    @property
    def gap(self) -> float | None:
        return _opt(self.plan.get("gap"))

    @property
    def start(self) -> datetime | None:
        return self.slots[0].start if self.slots else None

    @property
    def end(self) -> datetime | None:
        return self.slots[-1].end if self.slots else None


def _read(plan: Mapping[str, Any], lang: str) -> _View:
    """Parse ``plan`` into a :class:`_View`; raise ValueError for a schedule time that is not ISO 8601."""
    fmt = _Fmt(lang, str(plan.get("currency") or "EUR"))
    raw_schedule: Sequence[Mapping[str, Any]] = plan.get("schedule") or []
    step_min = _step_min(plan, raw_schedule)
    h = step_min / 60.0
    slots = _slots(raw_schedule, timedelta(minutes=step_min))
    assets = _assets(plan, raw_schedule)
    status = str(plan.get("solver_status") or "")
    constraints: Mapping[str, Any] = plan.get("constraints") or {}
    limits = (_opt(constraints.get("import_limit_kw")), _opt(constraints.get("export_limit_kw")))
    baseline = _opt(plan.get("baseline_value"))
    baseline_from_plan = baseline is not None
    idle_breach = ""
    if slots:
        idle_cost, idle_breach = _simulate(slots, [0.0] * len(slots), h, limits, fmt)
        if baseline is None:
            baseline = idle_cost
    # an infeasible plan's schedule carries no authorized flows
    imports = [(s.import_kw, s) for s in slots if s.import_kw is not None] if status != "infeasible" else []
    per_battery = {a.asset_id: _energy(slots, a.asset_id, h) for a in assets}
    return _View(
        plan=plan,
        fmt=fmt,
        step_min=step_min,
        h=h,
        slots=slots,
        assets=assets,
        status=status,
        objective=str(plan.get("objective") or "cost"),
        limits=limits,
        cost=_opt(plan.get("cost")),
        baseline=baseline,
        baseline_from_plan=baseline_from_plan,
        idle_breach=idle_breach,
        has_imports=bool(imports),
        peak_slot=max(imports, key=lambda pair: pair[0])[1] if imports else None,
        per_battery=per_battery,
    )


def _energy(slots: list[_Slot], asset_id: str, h: float) -> tuple[float, float]:
    """Return the energy a battery charges and discharges over the schedule, in kWh."""
    charged = sum(s.flows.get(asset_id, (0.0, 0.0, None))[0] for s in slots) * h
    discharged = sum(s.flows.get(asset_id, (0.0, 0.0, None))[1] for s in slots) * h
    return charged, discharged


def _r6(x: float | None) -> float | None:
    return None if x is None else round(x, 6)


def _avg_prices(slots: list[_Slot], asset_id: str) -> tuple[float | None, float | None]:
    """Return a battery's charge and discharge prices, each weighted by its power (None without flow)."""
    ch = [(s.flows.get(asset_id, (0.0, 0.0, None))[0], _marginal_price(s)) for s in slots]
    dis = [(s.flows.get(asset_id, (0.0, 0.0, None))[1], _marginal_price(s)) for s in slots]
    return _weighted(ch), _weighted(dis)


def _final_soc(slots: list[_Slot], asset: _Asset) -> float | None:
    socs = [s.flows[asset.asset_id][2] for s in slots if asset.asset_id in s.flows]
    return socs[-1] if socs and socs[-1] is not None else None


def explain(plan: Mapping[str, Any], audience: str, lang: str) -> dict[str, Any]:
    """Explain a dispatch plan to ``audience`` in ``lang``.

    ``plan``: the ``optimize_dispatch`` plan dict (see the module docstring; missing keys are tolerated and shown as
    n/a). ``audience``: one of :data:`AUDIENCES`; ``lang``: one of :data:`LANGUAGES`.

    Returns ``{"text": str, "structured": {...}}`` where ``structured`` holds ``assumptions`` and ``trade_offs``
    (lists of strings in ``lang``), ``rejected_alternatives`` (a list of ``{"name", "label", "cost", "delta",
    "reason"}``: ``name`` is the stable id ``idle_battery`` or ``charge_immediately``, ``label`` and ``reason`` are in
    ``lang``, ``cost`` is in the plan's currency over the horizon and ``delta`` = alternative cost - plan cost, positive
    when the plan is cheaper, ``None`` when either is unknown) and ``figures`` (language-independent: ``cost``,
    ``baseline_value``, ``savings`` = baseline - cost, ``savings_pct`` = savings / baseline x 100 (only for a positive
    baseline), ``peak_import_kw``, ``energy_charged_kwh`` and ``energy_discharged_kwh`` summed over the batteries;
    ``None`` when unknown). Deterministic: the same arguments give the same result.

    Raises ValueError for an unknown audience or language, or a schedule time that is not ISO 8601.
    """
    if audience not in AUDIENCES:
        raise ValueError(f"unknown audience {audience!r}; expected one of {', '.join(AUDIENCES)}")
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; expected one of {', '.join(LANGUAGES)}")
    view = _read(plan, lang)
    assumptions = _assumptions(view)
    structured = _structured(assumptions, _trade_offs(view), _rejected(view), _figures(view))
    if audience == "auditor":
        text = "\n".join(_auditor_lines(view, assumptions))
    elif view.infeasible:
        text = "\n".join(_infeasible_lines(view, audience))
    elif audience == "manager":
        text = " ".join(_manager_lines(view))
    else:
        text = "\n".join(_operator_lines(view))
    return {"text": text, "structured": structured}


def _figures(view: _View) -> dict[str, float | None]:
    return {
        "cost": view.cost,
        "baseline_value": _r6(view.baseline),
        "savings": _r6(view.savings),
        "savings_pct": _r6(view.savings_pct),
        "peak_import_kw": _r6(view.peak_import),
        "energy_charged_kwh": _r6(view.energy_charged),
        "energy_discharged_kwh": _r6(view.energy_discharged),
    }


def _assumptions(view: _View) -> list[str]:
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


def _trade_offs(view: _View) -> list[str]:
    """Return what the plan gives up: per battery its cycle or idleness and its kept energy, then the objective's."""
    fmt = view.fmt
    trade_offs: list[str] = []
    if not view.infeasible:
        for asset in view.assets:
            trade_offs += _battery_trade_offs(view, asset)
    if f"to.{view.objective}" in _M:
        trade_offs.append(fmt.t(f"to.{view.objective}"))
    trade_offs.append(fmt.t("to.wear"))
    return trade_offs


def _battery_trade_offs(view: _View, asset: _Asset) -> list[str]:
    fmt = view.fmt
    out: list[str] = []
    charged, discharged = view.per_battery[asset.asset_id]
    rt = asset.eta_c * asset.eta_d
    if charged > EPS or discharged > EPS:
        pc, pd = _avg_prices(view.slots, asset.asset_id)
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
    end_soc = _final_soc(view.slots, asset)
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


def _compare(view: _View, what: str, alt_cost: float | None) -> tuple[float | None, str]:
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


def _rejected(view: _View) -> list[dict[str, Any]]:
    """Return the rejected alternatives: the idle battery, then charging immediately."""
    return [_reject_idle(view), _reject_charge(view)]


def _reject_idle(view: _View) -> dict[str, Any]:
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
        "cost": _r6(baseline),
        "delta": _r6(delta),
        "reason": _sentence([verdict, view.idle_breach]),
    }


def _reject_charge(view: _View) -> dict[str, Any]:
    fmt, slots, assets = view.fmt, view.slots, view.assets
    if not slots:
        return {
            "name": "charge_immediately",
            "label": fmt.t("alt.charge_immediately"),
            "cost": None,
            "delta": None,
            "reason": fmt.t("alt.no_schedule"),
        }
    alt = _charge_immediately(slots, assets, view.h, view.limits, fmt)
    effs = ", ".join(
        f"{a.asset_id} {fmt.pct(a.eta_c * 100, 0)}" + ("" if a.eta_given else fmt.t("as.eff_assumed")) for a in assets
    ) or fmt.t("na")
    plan_final = [_final_soc(slots, a) for a in assets]
    stored = ""
    if not view.infeasible and all(x is not None for x in plan_final):
        more = alt.final_soc_kwh - sum(x for x in plan_final if x is not None)
        if more > 0.005:
            stored = fmt.t("alt.stored", x=fmt.kwh(more))
    delta, verdict = _compare(view, fmt.t("alt.charge.what", eff=effs, cost=fmt.money(alt.cost)), alt.cost)
    return {
        "name": "charge_immediately",
        "label": fmt.t("alt.charge_immediately"),
        "cost": _r6(alt.cost),
        "delta": _r6(delta),
        "reason": _sentence([verdict, stored, fmt.t("alt.no_limits"), alt.breach]),
    }


def _conflict_items(view: _View) -> list[str]:
    conflicts: list[Mapping[str, Any]] = list(view.plan.get("conflicts") or [])
    return [_explain_conflict(c, view.slots, view.fmt) for c in conflicts]


def _cost_check(view: _View) -> tuple[float | None, str]:
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


def _auditor_lines(view: _View, assumptions: list[str]) -> list[str]:
    """Return the auditor's lines: provenance, solver, cost check, constraints, assumptions and schedule."""
    fmt, plan, cost, gap = view.fmt, view.plan, view.cost, view.gap
    recomputed, check = _cost_check(view)
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
            value=fmt.num(_opt(plan.get("objective_value")), 6),
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


def _infeasible_lines(view: _View, audience: str) -> list[str]:
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


def _time_note(view: _View) -> str:
    """Return the note that the solver stopped at its time limit, "" when it did not."""
    if view.status != "time_limit":
        return ""
    gap = view.gap
    return view.fmt.t("time_limit", gap=view.fmt.pct(gap * 100, 4) if gap is not None else view.fmt.t("na"))


def _manager_lines(view: _View) -> list[str]:
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
        ch = [(s.flows.get(a.asset_id, (0.0, 0.0, None))[0], _marginal_price(s)) for a in assets for s in slots]
        dis = [(s.flows.get(a.asset_id, (0.0, 0.0, None))[1], _marginal_price(s)) for a in assets for s in slots]
        lines.append(
            fmt.t(
                "mg.flow",
                charged=fmt.kwh(view.energy_charged),
                pc=fmt.price(_weighted(ch)),
                discharged=fmt.kwh(view.energy_discharged),
                pd=fmt.price(_weighted(dis)),
            )
        )
    if time_note := _time_note(view):
        lines.append(time_note)
    return lines


def _operator_lines(view: _View) -> list[str]:
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


def _action(slot: _Slot, asset_id: str) -> tuple[str, float]:
    """Return what a battery does in a slot (charge, discharge or idle) and at what power in kW."""
    c, d, _ = slot.flows.get(asset_id, (0.0, 0.0, None))
    if c > EPS:
        return _CHARGE, c
    if d > EPS:
        return _DISCHARGE, d
    return _IDLE, d


def _battery_lines(view: _View, asset: _Asset) -> list[str]:
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


def _structured(
    assumptions: list[str], trade_offs: list[str], rejected: list[dict[str, Any]], figures: dict[str, float | None]
) -> dict[str, Any]:
    return {"assumptions": assumptions, "trade_offs": trade_offs, "rejected_alternatives": rejected, "figures": figures}
