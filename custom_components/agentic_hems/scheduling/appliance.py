"""Appliances from config subentries, their daily windows, and their plans.

An appliance has a default window given as local times of day (``earliest_start``, ``deadline``); a deadline at or
before the earliest start means the next day. Nothing here imports Home Assistant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, fields
from datetime import date, datetime, time, timedelta, tzinfo
import math
from typing import Any

from ..prices import SLOT, ceil_slot, ensure_utc, floor_slot
from .charger import ChargerProfile
from .plan import LoadSpec


@dataclass(frozen=True, kw_only=True)
class Appliance:
    """One appliance subentry.

    Attributes:
        appliance_id: the subentry id.
        name: display name.
        kind: dishwasher | washing_machine | ev_charger | heat_pump | battery | generic.
        entity_id: the HA entity it controls.
        power_kw: kW while running (contiguous) or maximum charge power (energy).
        duration_min: run time in minutes (contiguous loads) or None.
        energy_kwh: energy to deliver (non-contiguous loads) or None.
        contiguous: True when a run cannot be interrupted.
        earliest_start, deadline: local times of day of the default window.
        program: the program option to select when ``entity_id`` is a program ``select`` (the program profile,
            :mod:`.program`), else None.
        start_entity: the ``button`` pressed after the program is selected, or None (selecting starts it, as
            HA's ``home_connect`` active program select does).
        remote_start_entity: the ``binary_sensor`` that is on while the appliance allows a remote start, or None.
        operation_entity: the ``sensor`` whose state shows the program running (``run``, ``delayedstart``), or None.
        program_start: ``button`` (the select, then the start button) or ``home_connect`` (HA core's
            ``home_connect.set_program_and_options`` on the select's device, :mod:`..gates.actions`).
        delayed_start: True when the appliance's own delayed start is set once ahead of the planned start
            (:mod:`.program`): home_connect's "start in" option, or ``delay_entity``.
        delay_entity: a "start in" ``number`` (s, min or h) set before the start button is pressed, or None.
        charger: an EV charger's control profile (its current setpoint, minimum and step), None for none; the
            whole-home plan then keeps its power at 0 or between the minimum current's and ``power_kw``.

    """

    appliance_id: str
    name: str
    kind: str
    entity_id: str
    power_kw: float
    duration_min: float | None
    energy_kwh: float | None
    contiguous: bool
    earliest_start: time
    deadline: time
    # How it is started, not what is planned: left out of :meth:`plan_settings`.
    program: str | None = field(default=None, metadata={"plan": False})
    start_entity: str | None = field(default=None, metadata={"plan": False})
    remote_start_entity: str | None = field(default=None, metadata={"plan": False})
    operation_entity: str | None = field(default=None, metadata={"plan": False})
    program_start: str = field(default="button", metadata={"plan": False})
    delayed_start: bool = field(default=False, metadata={"plan": False})
    delay_entity: str | None = field(default=None, metadata={"plan": False})
    charger: ChargerProfile | None = field(default=None, metadata={"plan": False})  # its minimum power is one

    @classmethod
    def from_config(cls, appliance_id: str, data: Mapping[str, Any]) -> Appliance:
        """Build from subentry data (times as ``HH:MM[:SS]`` strings).

        Raises:
            KeyError, ValueError: malformed data.

        """
        contiguous = bool(data.get("contiguous", True))
        if data.get("duration_min" if contiguous else "energy_kwh") is None:
            raise ValueError(
                f"appliance {appliance_id}: a {'contiguous' if contiguous else 'split'} load needs "
                f"{'duration_min' if contiguous else 'energy_kwh'}"
            )
        return cls(
            appliance_id=appliance_id,
            name=str(data["name"]),
            kind=str(data["kind"]),
            entity_id=str(data["entity_id"]),
            power_kw=float(data["power_kw"]),
            duration_min=None if data.get("duration_min") is None else float(data["duration_min"]),
            energy_kwh=None if data.get("energy_kwh") is None else float(data["energy_kwh"]),
            contiguous=contiguous,
            earliest_start=time.fromisoformat(str(data["earliest_start"])),
            deadline=time.fromisoformat(str(data["deadline"])),
            program=_text(data.get("program")),
            start_entity=_text(data.get("start_entity")),
            remote_start_entity=_text(data.get("remote_start_entity")),
            operation_entity=_text(data.get("operation_entity")),
            program_start=str(data.get("program_start") or "button"),
            delayed_start=bool(data.get("delayed_start", False)),
            delay_entity=_text(data.get("delay_entity")),
            charger=charger_profile(appliance_id, data),
        )

    def plan_settings(self) -> tuple[Any, ...]:
        """Return the settings a plan depends on: fields in order (no control profile), then a charger's minimum kW."""
        settings = tuple(getattr(self, f.name) for f in fields(self) if f.metadata.get("plan", True))
        return settings + ((self.charger.min_kw,) if self.charger is not None else ())

    @property
    def run_time(self) -> timedelta:
        """Shortest time the load needs at full power, rounded up to whole 15-minute slots."""
        if self.contiguous and self.duration_min is not None:
            minutes = self.duration_min
        else:
            minutes = 60.0 * (self.energy_kwh or 0.0) / self.power_kw
        return SLOT * math.ceil(minutes / 15.0 - 1e-9)


def _or(value: Any, default: float) -> Any:
    """``value``, or ``default`` when it is None or empty (0 stays 0)."""
    return default if value in (None, "") else value


def _text(value: Any) -> str | None:
    """``value`` as a non-empty string, or None."""
    return str(value) if value not in (None, "") else None


CHARGER_KEYS = ("charger_unit", "charger_min_a", "charger_step_a", "charger_phases", "charger_voltage_v")
# optional: the phase entity, its 1- and 3-phase states, the least minutes between switches, the reported power sensor
CHARGER_OPTIONAL_KEYS = (
    "charger_phase_entity",
    "charger_phase_one",
    "charger_phase_three",
    "charger_phase_interval_min",
    "charger_power_entity",
    "charger_stop_entity",
)


def charger_profile(appliance_id: str, data: Mapping[str, Any]) -> ChargerProfile | None:
    """Return an EV charger's profile from subentry data, None without a ``charger_current_entity``.

    The profile's fields come from ``charger_unit`` (A, W, kW), ``charger_min_a``, ``charger_step_a``,
    ``charger_phases`` and ``charger_voltage_v`` (A, 6 A, 1 A, 3 and 230 V where missing), and the optional
    :data:`CHARGER_OPTIONAL_KEYS` (a switch's 1-phase state ``on``, 3-phase ``off``, 15 min between switches; a stop
    button when the controlled entity is a start button).

    Raises:
        ValueError: a malformed profile, one on a contiguous load, or a minimum current's power above ``power_kw``.

    """
    entity = data.get("charger_current_entity")
    if not entity:
        return None
    if bool(data.get("contiguous", True)):
        raise ValueError(f"appliance {appliance_id}: a charger profile needs an energy load (contiguous off)")
    profile = ChargerProfile(
        current_entity=str(entity),
        unit=str(data.get("charger_unit") or "A"),
        min_a=float(data.get("charger_min_a") or 6.0),
        step_a=float(data.get("charger_step_a") or 1.0),
        phases=int(data.get("charger_phases") or 3),
        voltage_v=float(data.get("charger_voltage_v") or 230.0),
        phase_entity=_text(data.get("charger_phase_entity")),
        phase_one=str(data.get("charger_phase_one") or "on"),
        phase_three=str(data.get("charger_phase_three") or "off"),
        phase_interval_min=float(_or(data.get("charger_phase_interval_min"), 15.0)),
        power_entity=_text(data.get("charger_power_entity")),
        stop_entity=_text(data.get("charger_stop_entity")),
    )
    if profile.min_kw > float(data["power_kw"]) + 1e-9:
        raise ValueError(f"appliance {appliance_id}: the minimum current's {profile.min_kw:.2f} kW exceeds power_kw")
    return profile


def _local(day: date, at: time, tz: tzinfo) -> datetime:
    return datetime.combine(day, at, tzinfo=tz)


def window_length(earliest_start: time, deadline: time) -> timedelta:
    """Nominal length of the daily window (a deadline at or before the earliest start is the next day).

    DST days make the real window an hour shorter or longer.
    """
    day = date(2001, 1, 1)  # any date: naive arithmetic is the nominal wall-clock length
    end_day = day + timedelta(days=1) if deadline <= earliest_start else day
    return datetime.combine(end_day, deadline) - datetime.combine(day, earliest_start)


def next_window(
    earliest_start: time, deadline: time, *, now: datetime, tz: tzinfo, run_time: timedelta = timedelta(0)
) -> tuple[datetime, datetime]:
    """Return the next daily window ``[start, end)`` that can still hold ``run_time``.

    Args:
        earliest_start: local time of day the window opens.
        deadline: local time of day it closes; at or before ``earliest_start`` it is the next day's.
        now: aware datetime; the window never starts before it.
        tz: the home's time zone.
        run_time: the load's shortest run; windows that can no longer hold it are skipped.

    Returns:
        Aware UTC datetimes (start, end); start is ``max(now, local earliest start)``. When no window can hold
        ``run_time`` at all (it is longer than the window), the current or next window, so that the planner
        reports it as too short instead of silently moving on.

    """
    now = ensure_utc(now)
    today = now.astimezone(tz).date()
    windows = []
    for offset in (-1, 0, 1, 2):
        day = today + timedelta(days=offset)
        end_day = day + timedelta(days=1) if deadline <= earliest_start else day
        start = ensure_utc(max(_local(day, earliest_start, tz), now))
        end = ensure_utc(_local(end_day, deadline, tz))
        if end > start:
            windows.append((start, end))
    for start, end in windows:  # compared as the planner will round them: start up, deadline down
        if floor_slot(end) - ceil_slot(start) >= max(run_time, SLOT):
            return start, end
    return windows[0]


def appliance_load(appliance: Appliance, *, now: datetime, tz: tzinfo, deadline: time | None = None) -> LoadSpec:
    """Return the appliance's next window as a :class:`LoadSpec` for :func:`plan_joint`.

    ``deadline`` overrides the appliance's default (the "ready by" time entity).
    """
    start, end = next_window(
        appliance.earliest_start, deadline or appliance.deadline, now=now, tz=tz, run_time=appliance.run_time
    )
    return LoadSpec(
        appliance.name,
        power_kw=appliance.power_kw,
        duration_min=appliance.duration_min if appliance.contiguous else None,
        energy_kwh=None if appliance.contiguous else appliance.energy_kwh,
        earliest_start=start,
        deadline=end,
        contiguous=appliance.contiguous,
        min_power_kw=appliance.charger.min_kw if appliance.charger else 0.0,
    )
