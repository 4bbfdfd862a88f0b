"""A program appliance's planned start: its steps through the gates, and a repair when it does not start.

At the plan's start the steps of :func:`..scheduling.program.start_steps` run one after the other, each a gated command
as ``source_agent="scheduler"``; the first that does not execute stops the rest. What the gates read back decides
(the select shows the program, the operation sensor shows it running). A run that did not start raises the repair
issue ``program_not_started_<appliance_id>``, which names the step that stopped and why, and says whether the program
was left selected; a remote start that is not allowed gets its own text (``program_remote_start_off``). A run that
starts removes both.

An appliance with its own delayed start (:func:`..scheduling.program.has_delayed_start`) gets it as soon as it is
planned, when the delay from that minute lies on its "start in" number's step (seconds always do), else at the first
slot boundary before its planned start; either way only while its remote start is allowed and its operation sensor
shows no program started (:func:`async_delayed_start`): the delay is the time to the planned start. From then on the appliance starts
by itself, whatever happens to Home Assistant. At the planned start nothing is sent again: the operation sensor is
read back (:func:`async_planned_start`), and an appliance that does not show ``run`` raises the repair
``program_delayed_not_started``. A delayed start never set (remote start off until the planned start) is a start at
the planned slot as without one. Once set, automatic planning keeps that start (the scheduler tells
:meth:`.manager.PlanManager.async_keeping`). When a plan a person set moves it anyway, the appliance keeps the start it
was given: nothing is re-sent (the person loaded and armed it for that time) and the repair
``program_delay_kept_<appliance_id>`` says which start it keeps and what the plan now says.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from datetime import datetime
from typing import TYPE_CHECKING, Any

from homeassistant.core import Context, HomeAssistant, State
from homeassistant.helpers import issue_registry as ir
from homeassistant.util import dt as dt_util

from ..const import DOMAIN, LOGGER
from ..control.ha_view import HassActuator
from ..gates.models import SOURCE_SCHEDULER, Outcome
from ..gates.values import plan_text, proposed_value
from ..scheduling.appliance import Appliance
from ..scheduling.program import (
    MAX_ACTION_DELAY_S,
    RUNNING_STATES,
    delay_in,
    delayed_steps,
    has_delayed_start,
    start_steps,
    uses_action,
)
from .config_issues import device_warning

if TYPE_CHECKING:
    from ..control.manager import ControlManager

ISSUE_PREFIX = "program_not_started_"
KEPT_PREFIX = "program_delay_kept_"


@dataclass
class DelayedStarts:
    """The delayed starts this run of Home Assistant sent (after a restart the operation sensor tells).

    Attributes:
        set_for: appliance_id -> the planned start (aware UTC) its delayed start was set for.
        tried: (appliance_id, planned start) pairs sent once: one that did not execute (refused, waiting for a
            confirmation, a dry run) is not sent again; the planned start then starts the program as without one.

    """

    set_for: dict[str, datetime] = field(default_factory=dict)
    tried: set[tuple[str, datetime]] = field(default_factory=set)


def issue_id(appliance: Appliance) -> str:
    """Return the repair issue id of the appliance's program that did not start."""
    return f"{ISSUE_PREFIX}{appliance.appliance_id}"


async def async_start_program(
    hass: HomeAssistant, control: ControlManager, appliance: Appliance, slot: datetime
) -> list[dict[str, Any]]:
    """Start the appliance's program for the plan slot ``slot`` (aware UTC); returns the gates' traces in order.

    A step that is blocked, fails, waits for a confirmation or only ran as a dry run stops the rest.
    """
    records = await _run_steps(control, appliance, start_steps(appliance), slot, "start of the plan")
    _report(hass, appliance, records)
    return records


async def _run_steps(
    control: ControlManager,
    appliance: Appliance,
    steps: list[dict[str, Any]],
    slot: datetime,
    what: str,
    *,
    unit: str = "s",
) -> list[dict[str, Any]]:
    """Run ``steps`` through the gates as the scheduler until one does not execute; returns their traces.

    A step with a value states it first (``plan_text``, in ``unit``), which the Policy gate binds it to.
    """
    records: list[dict[str, Any]] = []
    for step in steps:
        value = proposed_value(step["intent"], step.get("params") or {})
        if value is None:
            head = f"{step['intent']} {appliance.name}"
        else:
            head = f"{plan_text(step['device_alias'], value, unit)}: {appliance.name}"
        record = dict(
            await control.async_evaluate(
                source_agent=SOURCE_SCHEDULER,
                raw_input=f"{head}: {what} (slot {slot.isoformat()})",
                candidate=step,
                context=Context(),
                slot_start=slot,
            )
        )
        records.append(record)
        if record.get("outcome") != Outcome.EXECUTED:
            break
    return records


def _on_step(number: State | None, value: float) -> bool:
    """Return True when ``value`` lies on the number's ``step`` from its ``min`` (no step: any value does)."""
    if number is None:
        return False
    step, low = float(number.attributes.get("step") or 0.0), float(number.attributes.get("min") or 0.0)
    return step <= 0 or abs((value - low) / step - round((value - low) / step)) < 1e-9


def _state(hass: HomeAssistant, entity_id: str | None) -> str | None:
    state = hass.states.get(entity_id) if entity_id else None
    return state.state if state is not None else None


async def async_delayed_start(
    hass: HomeAssistant,
    control: ControlManager,
    appliance: Appliance,
    *,
    planned: datetime,
    moment: datetime,
    delayed: DelayedStarts,
    on_step_only: bool = False,
) -> list[dict[str, Any]]:
    """Set the appliance's own delayed start for the planned start ``planned`` at ``moment`` (aware UTC).

    ``moment`` is a slot boundary, or with ``on_step_only`` the whole minute a new plan was made in: then the delay is
    set only when it lies on the "start in" number's ``step`` (an action's seconds always do), so the appliance starts
    at most a minute after the planned start; otherwise the next boundary sets it.

    Nothing is sent when the appliance has no delayed start, ``planned`` is not ahead, a program is already started
    (its operation sensor shows ``delayedstart`` or ``run``), the remote start is not on, or the delay is beyond what
    the appliance takes (a day for home_connect's option, the "start in" number's ``max``), or it was tried for
    ``planned`` already (``delayed.tried``). ``delayed.set_for`` gains the appliance once every step executed.
    Returns the gates' traces (empty when nothing was sent).
    """
    key = (appliance.appliance_id, planned)
    if not has_delayed_start(appliance) or planned <= moment or key in delayed.tried:
        return []
    if _state(hass, appliance.operation_entity) in RUNNING_STATES:
        _kept(hass, appliance, delayed.set_for.get(appliance.appliance_id), planned)
        return []
    if appliance.remote_start_entity and _state(hass, appliance.remote_start_entity) != "on":
        return []  # set once the person allows the remote start; else it starts at the planned slot
    delay_s = round((planned - moment).total_seconds())
    unit, limit = "s", float(MAX_ACTION_DELAY_S)
    if not uses_action(appliance) and (number := hass.states.get(str(appliance.delay_entity))) is not None:
        unit = str(number.attributes.get("unit_of_measurement") or "s")
        limit = float(number.attributes.get("max") or 0.0)
    value = delay_in(delay_s, unit)
    if value is None or value > limit:
        return []
    if (
        on_step_only
        and not uses_action(appliance)
        and not _on_step(hass.states.get(str(appliance.delay_entity)), value)
    ):
        return []
    steps = delayed_steps(appliance, delay_s, unit)
    delayed.tried.add(key)
    records = await _run_steps(control, appliance, steps, moment, f"delayed start for {planned.isoformat()}", unit=unit)
    if records and all(r.get("outcome") == Outcome.EXECUTED for r in records) and len(records) == len(steps):
        delayed.set_for[appliance.appliance_id] = planned
        ir.async_delete_issue(hass, DOMAIN, f"{KEPT_PREFIX}{appliance.appliance_id}")
    _report(hass, appliance, records)
    return records


async def async_planned_start(
    hass: HomeAssistant, control: ControlManager, appliance: Appliance, slot: datetime, delayed: DelayedStarts
) -> list[dict[str, Any]]:
    """At the planned start ``slot``: read back a delayed start that was set, else start the program now.

    A delayed start counts as set when ``delayed.set_for`` has the appliance or the operation sensor shows ``delayedstart``
    (after a restart). Then nothing is sent (one kept for another start is not read back here): the operation sensor must show ``run`` within the gates' wait, else the
    repair ``program_delayed_not_started`` says so. Returns the gates' traces (empty for a read-back).
    """
    set_for = delayed.set_for.pop(appliance.appliance_id, None)
    operation = _state(hass, appliance.operation_entity)
    if not has_delayed_start(appliance) or (set_for is None and operation != "delayedstart"):
        return await async_start_program(hass, control, appliance, slot)
    if set_for is not None and set_for != slot:  # the plan moved: it kept its own start (program_delay_kept)
        LOGGER.info("%s keeps its delayed start for %s; nothing sent", appliance.name, set_for.isoformat())
        return []
    assert appliance.operation_entity is not None  # has_delayed_start
    wait_s = control.keeper.settings.wait_s
    running = await HassActuator(hass, Context()).async_wait_for(
        appliance.operation_entity, {"states": ["run"]}, wait_s
    )
    if running is not None:
        LOGGER.info("%s started by itself at its planned slot %s (delayed start)", appliance.name, slot.isoformat())
        ir.async_delete_issue(hass, DOMAIN, issue_id(appliance))
        return []
    state = _state(hass, appliance.operation_entity) or "missing"
    LOGGER.warning("%s did not start by itself at its planned slot (operation state %s)", appliance.name, state)
    device_warning(
        hass,
        issue_id(appliance),
        "program_delayed_not_started",
        {
            "appliance": appliance.name,
            "program": str(appliance.program),
            "entity": appliance.operation_entity,
            "state": state,
        },
    )
    return []


def _kept(hass: HomeAssistant, appliance: Appliance, set_for: datetime | None, planned: datetime) -> None:
    """Say (a repair) that the appliance keeps the delayed start it was given for ``set_for`` while the plan moved."""
    if set_for is None or set_for == planned:
        return
    moments = {"set_for": set_for, "planned": planned}
    placeholders = {k: dt_util.as_local(v).strftime("%Y-%m-%d %H:%M") for k, v in moments.items()}
    device_warning(
        hass,
        f"{KEPT_PREFIX}{appliance.appliance_id}",
        "program_delay_kept",
        {"appliance": appliance.name, **placeholders},
        persistent=False,
    )


def _report(hass: HomeAssistant, appliance: Appliance, records: list[dict[str, Any]]) -> None:
    """Raise or remove the appliance's repair issue after its start steps ``records``."""
    last = records[-1] if records else None
    if last is None or last.get("outcome") in (Outcome.EXECUTED, Outcome.PENDING_CONFIRMATION, Outcome.DRY_RUN):
        ir.async_delete_issue(hass, DOMAIN, issue_id(appliance))
        return
    failed = next((r for r in last.get("gate_results") or [] if not r.get("passed")), None)
    reason = str(failed["reason"]) if failed else str(last.get("outcome"))
    interlock = (failed or {}).get("evidence", {}).get("requires_on") or {}
    off = [entity for entity, state in interlock.items() if state != "on"]
    selected = any(r.get("outcome") == Outcome.EXECUTED for r in records[:-1])
    LOGGER.warning(
        "%s did not start at its planned slot (%s)%s", appliance.name, reason, ": program left selected" * selected
    )
    entity = last.get("entity_id") or (last.get("candidate") or {}).get("device_alias")
    placeholders = {"appliance": appliance.name, "program": str(appliance.program), "entity": str(entity)}
    if off:
        key, placeholders = "program_remote_start_off", placeholders | {"sensor": ", ".join(off)}
    else:
        key = "program_selected_not_started" if selected else "program_not_started"
        placeholders |= {"reason": reason}
    device_warning(hass, issue_id(appliance), key, placeholders)
