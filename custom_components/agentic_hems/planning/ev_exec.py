"""An EV charger's slot commands: the charging current for the slot's planned power, then its start or stop.

At each slot boundary an appliance with a charger profile (:class:`~..scheduling.charger.ChargerProfile`) gets, in
this order and each through the gates (``source_agent="scheduler"``):

1. while its plan charges in the slot: ``set_value`` on the current setpoint to the slot's planned power (the
   whole-home plan's, or the appliance planner's without one), raised by the PV surplus the grid meter shows as
   export (:func:`~..scheduling.charger.follow_surplus`), as whole steps of current within the charger's minimum
   and its setpoint's ``max`` (:meth:`~..scheduling.charger.ChargerProfile.setpoint`). The Execution gate reads the
   setpoint back and fails a command the charger does not take;
2. the plan's ``start`` or ``stop`` on its switch (or button), as for every appliance.

A start in a slot whose planned power is not above :data:`~..scheduling.charger.EPS_KW` (a solver's remainder) is
not issued. Nothing is half-done: when the current is not set (the setpoint is unavailable, the gates refuse it, it waits for a
person's confirmation, the charger does not take it, or its ``max`` lies below the minimum current) the start is not
issued; with device control off both end as dry runs; the current's trace says
why and a warning is logged. A stop is always issued.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from homeassistant.core import Context, HomeAssistant

from ..const import LOGGER
from ..gates.models import SOURCE_SCHEDULER, Outcome
from ..gates.values import plan_text
from ..grid_ha.site import to_kw
from ..scheduling.charger import follow_surplus
from ..scheduling.plan import Plan

if TYPE_CHECKING:
    from ..control.manager import ControlManager
    from ..scheduling.appliance import Appliance

DONE = (Outcome.EXECUTED, Outcome.DRY_RUN)  # set, or nothing acts (device control off): the start may follow


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


async def async_charger_slot(
    hass: HomeAssistant,
    control: ControlManager,
    appliance: Appliance,
    *,
    plan: Plan | None,
    moment: datetime,
    intent: str | None,
    grid_entity: str | None = None,
) -> list[dict[str, Any]]:
    """Carry out the slot at ``moment`` for a charger appliance (module docstring); returns the gates' traces.

    ``intent`` is the plan's transition at ``moment`` (``start``, ``stop`` or None); ``grid_entity`` the signed grid
    power sensor whose export the current follows (None for none).
    """
    assert appliance.charger is not None
    records: list[dict[str, Any]] = []
    kw = follow_surplus(planned_kw(plan, moment), export_kw(hass, grid_entity), appliance.power_kw)
    if kw > 0 and intent != "stop":
        record, why = await _async_current(hass, control, appliance, kw, moment=moment, intent=intent)
        if record is not None:
            records.append(record)
        if why is not None:
            LOGGER.warning("%s: not charging in slot %s: %s", appliance.name, moment.isoformat(), why)
            return records
    if intent == "start" and kw == 0:
        LOGGER.debug("%s: no start in slot %s, the plan charges nothing there", appliance.name, moment.isoformat())
        return records
    if intent is not None:
        records.append(
            await _evaluate(control, intent, appliance.entity_id, {}, text=f"{intent} {appliance.name}", moment=moment)
        )
    return records


async def _async_current(
    hass: HomeAssistant,
    control: ControlManager,
    appliance: Appliance,
    kw: float,
    *,
    moment: datetime,
    intent: str | None,
) -> tuple[dict[str, Any] | None, str | None]:
    """Set the charger's current for ``kw``; return its trace (None when nothing was sent) and why it failed.

    Between transitions (``intent`` None) a setpoint already at the value is left alone.
    """
    profile = appliance.charger
    assert profile is not None
    state = hass.states.get(profile.current_entity)
    high = state.attributes.get("max") if state is not None else None
    try:
        value = profile.setpoint(kw, float(high) if isinstance(high, (int, float)) else None)
    except ValueError as err:
        return None, str(err)
    if intent is None and state is not None and _equal(state.state, value):
        return None, None  # charging at it already
    # The plan's statement first: the Policy gate binds a scheduler's value to it (gates.values.planned_value).
    text = f"{plan_text(profile.current_entity, value)}: {appliance.name} charging current {value:g} {profile.unit}"
    text += f" ({kw:.2f} kW planned)"
    record = await _evaluate(control, "set_value", profile.current_entity, {"value": value}, text=text, moment=moment)
    if record["outcome"] in DONE:
        return record, None
    failed = [r.get("reason") for r in record.get("gate_results", []) if not r.get("passed")]
    why = failed[-1] if failed else record["outcome"]
    return record, f"the current {value:g} {profile.unit} was not set ({record['outcome']}: {why})"


async def _evaluate(
    control: ControlManager, intent: str, entity_id: str, params: dict[str, Any], *, text: str, moment: datetime
) -> dict[str, Any]:
    """Run one scheduler command through the gates; return its trace as a dict."""
    candidate: dict[str, Any] = {"intent": intent, "device_alias": entity_id}
    if params:
        candidate["params"] = params
    return dict(
        await control.async_evaluate(
            source_agent=SOURCE_SCHEDULER,
            raw_input=f"{text} (plan slot {moment.isoformat()})",
            candidate=candidate,
            context=Context(),
            slot_start=moment,
        )
    )


def _equal(state: str, value: float) -> bool:
    """Return True when the state ``state`` is the number ``value``."""
    try:
        return abs(float(state) - value) <= 1e-6
    except ValueError:
        return False
