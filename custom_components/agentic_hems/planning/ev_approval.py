"""An EV charger's currents in approval mode: the whole-home plan's request actions and the one approved now.

See :mod:`.ev_exec` (approval mode) and :mod:`.home_approval`.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from typing import TYPE_CHECKING, Any

from homeassistant.core import HomeAssistant

from ..scheduling.charger import EPS_KW, ChargerProfile

if TYPE_CHECKING:
    from ..scheduling.home_model import HomePlan
    from .home_approval import HomeApprovals

ACTION_TYPE = "ev_current"  # an approval request's action: a charger's current in a slot


def approved_action(approvals: HomeApprovals, profile: ChargerProfile, slot: datetime) -> dict[str, Any] | None:
    """Return the approved request's current for ``profile``'s setpoint in ``slot``, None when none is approved."""
    return approvals.action_at(profile.current_entity, slot, frozenset({ACTION_TYPE}))


def plan_actions(
    hass: HomeAssistant, plan: HomePlan, chargers: Mapping[str, ChargerProfile], since: datetime
) -> list[dict[str, Any]]:
    """Return the chargers' current commands from slot ``since`` on, as request actions (equal neighbours merged).

    ``plan`` is the whole-home plan (its ``load_kw`` per appliance id, or ``fixed_kw`` once the charge runs);
    ``chargers`` maps the appliances with a charger profile to it. Each action is ``{"start", "end", "type": "ev_current",
    "entity_id", "value", "unit", "phases"}``: the setpoint's value for the planned power on the phases it needs
    (the setpoint's ``max`` as it is now). Slots the plan leaves off have none.
    """
    actions: list[dict[str, Any]] = []
    for appliance_id, profile in chargers.items():
        series = plan.load_kw.get(appliance_id, plan.fixed_kw.get(appliance_id))  # a running charge is fixed
        state = hass.states.get(profile.current_entity)
        high = state.attributes.get("max") if state is not None else None
        top = float(high) if isinstance(high, (int, float)) else None
        for i, kw in enumerate(() if series is None else series):
            begin, end = plan.start + i * plan.resolution, plan.start + (i + 1) * plan.resolution
            if end <= since or not kw > EPS_KW:
                continue
            phases = profile.phases_for(float(kw))
            try:
                value = {"value": profile.setpoint(float(kw), top, phases), "phases": phases}
            except ValueError:  # its maximum below the minimum: nothing can be asked
                continue
            last = actions[-1] if actions else None
            fixed = {"type": ACTION_TYPE, "entity_id": profile.current_entity, "unit": profile.unit}
            if (
                last
                and last["entity_id"] == fixed["entity_id"]
                and last["end"] == begin.isoformat()
                and all(last[k] == v for k, v in value.items())
            ):
                last["end"] = end.isoformat()
                continue
            actions.append({"start": max(begin, since).isoformat(), "end": end.isoformat(), **fixed, **value})
    return actions
