"""An EV charger's slot commands: its phases, the charging current for the slot's planned power, then its start or stop.

At each slot boundary an appliance with a charger profile (:class:`~..scheduling.charger.ChargerProfile`) gets, in
this order and each through the gates (``source_agent="scheduler"``):

1. while its plan charges in the slot and the charger switches phases: when the slot's power needs the other phase
   count (:meth:`~..scheduling.charger.ChargerProfile.next_phases`: one phase below the 3-phase minimum, at most one
   switch per ``phase_interval_min``, counted from the phase entity's ``last_changed``), a charger that charges is
   stopped first, then the phase entity is switched (``select_option``, or ``turn_on``/``turn_off`` of a switch), and
   the charger is started again after its current (stop, switch, set the current, start). A stop that does not go
   through leaves everything as it was; a switch that does not go through leaves the charger on its phases; a charge
   is not stopped for a phase entity that is unavailable or unknown (its refused command is the trace, the charge goes
   on as it was);
2. while its plan charges in the slot: ``set_value`` on the current setpoint to the slot's planned power (the
   whole-home plan's, or the appliance planner's without one), raised by the PV surplus the grid meter shows as
   export (:func:`~..scheduling.charger.follow_surplus`), as whole steps of current on the slot's phases within the
   charger's minimum and its setpoint's ``max`` (:meth:`~..scheduling.charger.ChargerProfile.setpoint`). The
   Execution gate reads the setpoint back and fails a command the charger does not take;
3. the plan's ``start`` or ``stop`` on its switch, as for every appliance, or a ``press`` of its start or stop
   button when a start button is its controlled entity (chargers whose integrations expose buttons, such as HA
   core's ``blue_current`` "stop charge session"). A charger started by a button has no on/off state: while its
   plan charges it is taken to charge (a phase switch then presses stop first).

A start in a slot whose planned power is not above :data:`~..scheduling.charger.EPS_KW` (a solver's remainder) is
not issued. Nothing is half-done: when the current is not set (the setpoint is unavailable, the gates refuse it, it waits for a
person's confirmation, the charger does not take it, or its ``max`` lies below the minimum current) the start is not
issued; with device control off every step ends as a dry run; the current's trace says
why and a warning is logged. A stop is always issued.

Approval mode (the whole-home plan's ``battery_control`` is ``approval``): the charging current of each slot the
whole-home plan charges in is an action of the plan's authorization request (:func:`.ev_approval.plan_actions`, type
``ev_current``: the setpoint's value for the planned power on the phases it needs, without the PV surplus, which
is not known ahead). The current setpoint is then reserved to an approved request: the slot's command carries its
grant (``source_agent="grid"``) and sends exactly the approved value; a slot without an approved current, or whose
phases could not be those approved, sets nothing and issues no start (a warning says why). A charger found off in a
slot with an approved current is started (an approval that came after the plan's start). The start, the stop and
the phase switch stay the scheduler's.

Read-back of the charge: with a power (W, kW) or current (A, mA) sensor, a slot that set the current or started the
charger waits up to the gates' ``execution_wait_s`` for the reading to reach half the asked power or current
(:func:`~..scheduling.charger.drawing`). When it does not (the car is full or not plugged in, the charger is in
error), the command itself stands (the setpoint was taken), a warning is logged and the repair issue
``charger_not_drawing_<appliance_id>`` says so; a slot in which it draws removes the issue. The plan is not changed:
the car's state of charge is unknown here, so the planner keeps the energy it was given; a person reads the repair.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from homeassistant.const import STATE_UNAVAILABLE, STATE_UNKNOWN
from homeassistant.core import Context, HomeAssistant, State
from homeassistant.helpers import issue_registry as ir
from homeassistant.util import dt as dt_util

from ..const import DOMAIN, LOGGER
from ..control.ha_view import async_wait_state
from ..gates.models import SOURCE_GRID, SOURCE_SCHEDULER, GridGrant, Outcome
from ..gates.values import plan_text
from ..grid_ha.site import to_kw
from ..scheduling.charger import drawing, follow_surplus
from ..scheduling.plan import Plan
from .config_issues import device_warning
from .ev_approval import approved_action

if TYPE_CHECKING:
    from ..control.manager import ControlManager
    from ..scheduling.appliance import Appliance
    from .home_approval import HomeApprovals

DONE = (Outcome.EXECUTED, Outcome.DRY_RUN)  # set, or nothing acts (device control off): the start may follow
NOT_DRAWING_PREFIX = "charger_not_drawing_"
_AMPS = {"A": 1.0, "mA": 1e-3}  # a reported current's unit in A


def planned_kw(plan: Plan | None, moment: datetime) -> float:
    """Return the plan's kW in the slot starting at ``moment`` (0 outside it or without a feasible plan)."""
    if plan is None or not plan.feasible:
        return 0.0
    index = (moment - plan.curve_start) // plan.resolution
    return float(plan.power_kw[index]) if 0 <= index < plan.power_kw.size else 0.0


def export_kw(hass: HomeAssistant, grid_entity: str | None) -> float:
    """Return the export a signed grid power sensor shows (negative = exporting), kW; 0 without one or unreadable."""
    state = hass.states.get(grid_entity) if grid_entity else None
    try:
        return max(-to_kw(state), 0.0) if state is not None else 0.0
    except ValueError:
        return 0.0


def phase_command(entity_id: str, state: str) -> tuple[str, dict[str, Any]]:
    """Return the intent and params that put the phase entity ``entity_id`` into ``state`` (an option, on or off)."""
    if entity_id.split(".", 1)[0] in ("select", "input_select"):
        return "select_option", {"option": state}
    return ("turn_on" if state == "on" else "turn_off"), {}


async def async_charger_slot(
    hass: HomeAssistant,
    control: ControlManager,
    appliance: Appliance,
    *,
    plan: Plan | None,
    moment: datetime,
    intent: str | None,
    grid_entity: str | None = None,
    approvals: HomeApprovals | None = None,
) -> list[dict[str, Any]]:
    """Carry out the slot at ``moment`` for a charger appliance (module docstring); returns the gates' traces.

    ``intent`` is the plan's transition at ``moment`` (``start``, ``stop`` or None); ``grid_entity`` the signed grid
    power sensor whose export the current follows (None for none); ``approvals`` the whole-home plan's requests
    (None without a whole-home plan).
    """
    profile = appliance.charger
    assert profile is not None
    records: list[dict[str, Any]] = []
    approved, kw = None, follow_surplus(planned_kw(plan, moment), export_kw(hass, grid_entity), appliance.power_kw)
    if approvals is not None and approvals.active:
        kw, approved = planned_kw(plan, moment), approved_action(approvals, profile, moment)  # no surplus ahead
        if kw > 0 and intent != "stop" and approved is None:
            LOGGER.warning("%s: not charging in slot %s: no approved current", appliance.name, moment.isoformat())
            return records
        intent = "start" if approved is not None and intent is None and not _charging(hass, appliance) else intent
    asked: tuple[float, int] | None = None  # the kW and phases the charger is asked to draw this slot
    if kw > 0 and intent != "stop":
        phases, restart = await _async_phases(hass, control, appliance, kw, moment=moment, intent=intent, out=records)
        why = "the phases could not be switched" if phases is None else None
        if approved is not None and phases != approved["phases"]:
            phases, why = None, f"it charges on {phases} phase(s), the approved current is for {approved['phases']}"
        if phases is not None:
            grant = approvals.grant(moment) if approved is not None and approvals is not None else None
            record, why = await _async_current(
                hass,
                control,
                appliance,
                kw,
                moment=moment,
                intent="start" if restart else intent,
                phases=phases,
                approved=(approved, grant) if approved is not None else None,
            )
            records.extend([record] if record is not None else [])
            asked = (kw, phases) if record is not None or intent == "start" or restart else None
        if why is not None:
            LOGGER.warning("%s: not charging in slot %s: %s", appliance.name, moment.isoformat(), why)
            return records
        intent = "start" if restart else intent
    if intent == "start" and kw == 0:
        LOGGER.debug("%s: no start in slot %s, the plan charges nothing there", appliance.name, moment.isoformat())
        return records
    if intent is not None:
        records.append(await _switch(control, appliance, intent, text=f"{intent} {appliance.name}", moment=moment))
    if asked is not None and profile.power_entity and records and records[-1]["outcome"] == Outcome.EXECUTED:
        await _async_read_back(hass, control, appliance, *asked)
    return records


async def _async_phases(
    hass: HomeAssistant,
    control: ControlManager,
    appliance: Appliance,
    kw: float,
    *,
    moment: datetime,
    intent: str | None,
    out: list[dict[str, Any]],
) -> tuple[int | None, bool]:
    """Switch the charger's phases for ``kw`` when it must (module docstring, step 1); traces go to ``out``.

    Returns the phases it charges on (None when unknown: its phase entity shows neither state and could not be
    switched) and whether it was stopped for the switch (it is then started again after its current).
    """
    profile = appliance.charger
    assert profile is not None
    if not profile.phase_entity:
        return profile.phases, False
    state = hass.states.get(profile.phase_entity)
    have = profile.phases_of(state.state if state is not None else None)
    since = None if state is None else (dt_util.utcnow() - state.last_changed).total_seconds() / 60
    want = profile.next_phases(kw, have, since)
    if want == have:
        return have, False
    # a phase entity HA cannot reach refuses its command (the gates): a charge is not stopped for such a switch
    reachable = state is not None and state.state not in (STATE_UNAVAILABLE, STATE_UNKNOWN)
    stopped = intent is None and reachable and _charging(hass, appliance)
    if stopped:
        text = f"stop {appliance.name} to switch it to {want} phase(s)"
        out.append(await _switch(control, appliance, "stop", text=text, moment=moment))
        if out[-1]["outcome"] not in DONE:
            LOGGER.warning("%s: phases not switched in slot %s: %s", appliance.name, moment.isoformat(), _why(out[-1]))
            return have, False
    service, params = phase_command(profile.phase_entity, profile.phase_one if want == 1 else profile.phase_three)
    text = f"switch {appliance.name} to {want} phase(s) ({kw:.2f} kW planned)"
    out.append(await _evaluate(control, service, profile.phase_entity, params, text=text, moment=moment))
    if out[-1]["outcome"] in DONE:
        return want, stopped
    LOGGER.warning(
        "%s: not switched to %s phase(s) in slot %s (%s); it stays on %s",
        appliance.name,
        want,
        moment.isoformat(),
        _why(out[-1]),
        have or "unknown phases",
    )
    return have, stopped


async def _async_current(
    hass: HomeAssistant,
    control: ControlManager,
    appliance: Appliance,
    kw: float,
    *,
    moment: datetime,
    intent: str | None,
    phases: int,
    approved: tuple[dict[str, Any], GridGrant | None] | None = None,
) -> tuple[dict[str, Any] | None, str | None]:
    """Set the charger's current for ``kw`` on ``phases``; return its trace (None when nothing was sent) and why it failed.

    Between transitions (``intent`` None) a setpoint already at the value is left alone. ``approved`` is the
    approved action and its grant in approval mode: its value is sent, with the grant.
    """
    profile = appliance.charger
    assert profile is not None
    state = hass.states.get(profile.current_entity)
    high = state.attributes.get("max") if state is not None else None
    try:
        value = profile.setpoint(kw, float(high) if isinstance(high, (int, float)) else None, phases)
    except ValueError as err:
        return None, str(err)
    action, grant = approved if approved is not None else (None, None)
    value = float(action["value"]) if action is not None else value
    if intent is None and state is not None and _equal(state.state, value):
        return None, None  # charging at it already
    # The plan's statement first: the Policy gate binds a scheduler's value to it (gates.values.planned_value).
    text = f"{plan_text(profile.current_entity, value)}: {appliance.name} charging current {value:g} {profile.unit}"
    text += f" on {phases} phase(s) ({kw:.2f} kW planned)"
    params = {"value": value}
    record = await _evaluate(
        control, "set_value", profile.current_entity, params, text=text, moment=moment, grant=grant
    )
    if record["outcome"] in DONE:
        return record, None
    return record, f"the current {value:g} {profile.unit} was not set ({record['outcome']}: {_why(record)})"


async def _async_read_back(
    hass: HomeAssistant, control: ControlManager, appliance: Appliance, kw: float, phases: int
) -> None:
    """Wait for the charger's reported power or current to show it draws; say so when it does not (module docstring)."""
    profile = appliance.charger
    assert profile is not None and profile.power_entity is not None
    state = hass.states.get(profile.current_entity)
    high = state.attributes.get("max") if state is not None else None
    amps = profile.current_a(
        kw, profile.amps_of(float(high), phases) if isinstance(high, (int, float)) else None, phases
    )
    asked_kw = profile.kw(amps, phases)
    wait_s = control.keeper.settings.wait_s
    found = await async_wait_state(hass, profile.power_entity, lambda s: _draws(s, asked_kw, amps), wait_s)
    issue = f"{NOT_DRAWING_PREFIX}{appliance.appliance_id}"
    if found is not None:
        ir.async_delete_issue(hass, DOMAIN, issue)
        return
    last = hass.states.get(profile.power_entity)
    reading = "unavailable" if last is None else f"{last.state} {last.attributes.get('unit_of_measurement') or ''}"
    LOGGER.warning(
        "%s draws %s, not the %.2f kW (%g A) it was set to, %g s after the command: the car may be full or not "
        "plugged in, or the charger in error",
        appliance.name,
        reading.strip(),
        asked_kw,
        amps,
        wait_s,
    )
    device_warning(
        hass,
        issue,
        "charger_not_drawing",
        {
            "appliance": appliance.name,
            "sensor": profile.power_entity,
            "reading": reading.strip(),
            "asked": f"{asked_kw:.2f} kW ({amps:g} A)",
        },
    )


def _draws(state: State, asked_kw: float, amps: float) -> bool:
    """Return True when the reading ``state`` shows the charger drawing ``asked_kw`` (``amps`` A per phase)."""
    unit = state.attributes.get("unit_of_measurement")
    try:
        if unit in _AMPS:
            return drawing(float(state.state) * _AMPS[unit], "A", asked_kw, amps)
        return drawing(to_kw(state), "kW", asked_kw, amps)
    except ValueError:
        return False


def _why(record: dict[str, Any]) -> str:
    """Return the last failed gate's reason of a trace, else its outcome."""
    failed = [r.get("reason") for r in record.get("gate_results", []) if not r.get("passed")]
    return str(failed[-1] if failed else record["outcome"])


def _charging(hass: HomeAssistant, appliance: Appliance) -> bool:
    """Return True when the charger's switch is on; a charger started by a button is taken to charge (module docstring)."""
    if appliance.entity_id.startswith("button."):
        return True
    state = hass.states.get(appliance.entity_id)
    return state is not None and state.state == "on"


async def _switch(
    control: ControlManager, appliance: Appliance, intent: str, *, text: str, moment: datetime
) -> dict[str, Any]:
    """Start or stop the charger: its switch's ``start``/``stop``, or a press of its start or stop button."""
    profile = appliance.charger
    assert profile is not None
    if not appliance.entity_id.startswith("button."):
        return await _evaluate(control, intent, appliance.entity_id, {}, text=text, moment=moment)
    button = appliance.entity_id if intent == "start" else profile.stop_entity
    assert button is not None  # the charger step stores a stop button with a start button
    return await _evaluate(control, "press", button, {}, text=text, moment=moment)


async def _evaluate(
    control: ControlManager,
    intent: str,
    entity_id: str,
    params: dict[str, Any],
    *,
    text: str,
    moment: datetime,
    grant: GridGrant | None = None,
) -> dict[str, Any]:
    """Run one scheduler command (an approved one with its ``grant``) through the gates; return its trace as a dict."""
    candidate: dict[str, Any] = {"intent": intent, "device_alias": entity_id}
    if params:
        candidate["params"] = params
    return dict(
        await control.async_evaluate(
            source_agent=SOURCE_GRID if grant else SOURCE_SCHEDULER,
            raw_input=f"{text} (plan slot {moment.isoformat()})",
            candidate=candidate,
            context=Context(),
            slot_start=moment,
            grant=grant,
        )
    )


def _equal(state: str, value: float) -> bool:
    """Return True when the state ``state`` is the number ``value``."""
    try:
        return abs(float(state) - value) <= 1e-6
    except ValueError:
        return False
