"""Reading a dispatch plan: its batteries, its schedule's slots and its step length, parsed and typed.

Times are ISO 8601 (UTC when no offset is given), powers kW, energies kWh, prices currency/kWh.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime, timedelta
from typing import Any

DEFAULT_EFFICIENCY = 0.95
EPS = 1e-6  # kW or kWh below which a flow counts as zero


@dataclass(frozen=True)
class Asset:
    """A battery as the plan gives it: capacities kWh, powers kW, efficiencies as fractions (0.95 when not given)."""

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
class Slot:
    """One schedule step: its times (UTC), prices currency/kWh, powers kW, and each battery's flows."""

    start: datetime | None
    end: datetime | None
    import_price: float
    export_price: float
    load_kw: float
    pv_kw: float
    import_kw: float | None
    export_kw: float | None
    flows: Mapping[str, tuple[float, float, float | None]]  # battery -> (charge_kw, discharge_kw, soc_kwh)


def opt(value: Any) -> float | None:
    """Return ``value`` as a float, None for None."""
    return None if value is None else float(value)


def parse_time(value: Any) -> datetime | None:
    """Return an ISO 8601 time in UTC (naive is UTC), None for None; ValueError for anything else."""
    if value is None:
        return None
    if not isinstance(value, str):
        raise ValueError(f"not an ISO 8601 time: {value!r}")  # noqa: TRY004 - the documented error of a bad plan
    moment = datetime.fromisoformat(value)
    return moment.replace(tzinfo=UTC) if moment.tzinfo is None else moment.astimezone(UTC)


def read_assets(plan: Mapping[str, Any], schedule: Sequence[Mapping[str, Any]]) -> list[Asset]:
    """Return the plan's batteries in their order, then any battery that only the schedule names (sorted)."""
    out: list[Asset] = []
    for raw in plan.get("assets") or []:
        given = "charge_efficiency" in raw or "discharge_efficiency" in raw
        out.append(
            Asset(
                asset_id=str(raw.get("asset_id", f"battery{len(out)}")),
                capacity_kwh=opt(raw.get("capacity_kwh")),
                soc_min_kwh=opt(raw.get("soc_min_kwh")),
                soc_max_kwh=opt(raw.get("soc_max_kwh", raw.get("capacity_kwh"))),
                charge_kw=opt(raw.get("charge_kw")),
                discharge_kw=opt(raw.get("discharge_kw")),
                soc_initial_kwh=opt(raw.get("soc_initial_kwh")),
                soc_terminal_kwh=opt(raw.get("soc_terminal_kwh")),
                eta_c=float(raw.get("charge_efficiency", DEFAULT_EFFICIENCY)),
                eta_d=float(raw.get("discharge_efficiency", DEFAULT_EFFICIENCY)),
                eta_given=given,
            )
        )
    known = {a.asset_id for a in out}
    extra = sorted({str(name) for slot in schedule for name in (slot.get("batteries") or {})} - known)
    out += [
        Asset(name, None, None, None, None, None, None, None, DEFAULT_EFFICIENCY, DEFAULT_EFFICIENCY, False)
        for name in extra
    ]
    return out


def read_slots(schedule: Sequence[Mapping[str, Any]], step: timedelta) -> list[Slot]:
    """Return the schedule's slots; a slot without an end ends ``step`` after its start."""
    out = []
    for raw in schedule:
        start = parse_time(raw.get("start"))
        end = parse_time(raw.get("end"))
        if end is None and start is not None:
            end = start + step
        flows = {
            str(name): (float(f.get("charge_kw") or 0.0), float(f.get("discharge_kw") or 0.0), opt(f.get("soc_kwh")))
            for name, f in (raw.get("batteries") or {}).items()
        }
        out.append(
            Slot(
                start,
                end,
                float(raw.get("import_price") or 0.0),
                float(raw.get("export_price") or 0.0),
                float(raw.get("load_kw") or 0.0),
                float(raw.get("pv_kw") or 0.0),
                opt(raw.get("import_kw")),
                opt(raw.get("export_kw")),
                flows,
            )
        )
    return out


def read_step_min(plan: Mapping[str, Any], schedule: Sequence[Mapping[str, Any]]) -> float:
    """Return the step in minutes: the plan's ``step_min``, else the first slot's length, else 15."""
    if plan.get("step_min") is not None:
        return float(plan["step_min"])
    if schedule:
        start, end = parse_time(schedule[0].get("start")), parse_time(schedule[0].get("end"))
        if start is not None and end is not None:
            return (end - start).total_seconds() / 60.0
    return 15.0
