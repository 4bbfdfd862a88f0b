"""SG Ready heat pumps in the whole-home plan: each slot's state, its contact and offset values, and their commands.

:func:`slot_values` reads the plan's heat pump power, PV, prices and temperatures into the per-slot flags of
:func:`..scheduling.sg_ready.sg_states` (the rule is documented there), with the block history the contacts show
now (:func:`block_history`): contacts in state 1 count as blocked since the block began, otherwise the slots since
the last block ended count as free of one. Both times come from the Store that keeps them across restarts
(:mod:`.sg_blocks`) while the contacts still show the state stored, else from the contacts' ``last_changed`` (then
after a restart a block in progress counts from the restart, and a new block waits for the release time).
:func:`async_switch` carries one slot's values out through the gates in
:func:`..scheduling.sg_ready.switching_order`, and stops at the first contact command that is not executed: the trace
of that command says which state the heat pump is left in. The offset number is set only after both contacts are.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from datetime import datetime, timedelta
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import HomeAssistant

from ..const import LOGGER
from ..gates.models import Outcome
from ..scheduling.sg_ready import (
    BLOCK_MARGIN_C,
    BLOCKED,
    CONTACTS,
    FORCED,
    RECOMMENDED,
    sg_states,
    state_of,
    state_text,
    switching_order,
)
from .heat_config import HeatPumpConfig
from .heat_view import EPS_KW, heat_band, heat_kw, import_price, temp_c

if TYPE_CHECKING:
    from .home_manager import HomeResult
    from .sg_blocks import SgTimes

type Evaluate = Callable[[str, float | str], Awaitable[dict[str, Any]]]


def contacts(hass: HomeAssistant, hp: HeatPumpConfig) -> tuple[bool, bool] | None:
    """Return the two contacts' states (True: on), None when one is neither on nor off (unavailable, missing)."""
    found = [hass.states.get(e) for e in (hp.control_entity, hp.sg_contact_2 or "")]
    if any(s is None or s.state not in (STATE_ON, STATE_OFF) for s in found):
        return None
    return (found[0].state == STATE_ON, found[1].state == STATE_ON)  # type: ignore[union-attr]


def block_history(
    hass: HomeAssistant, hp: HeatPumpConfig, start: datetime, slot: timedelta, stored: SgTimes | None = None
) -> tuple[int, int | None]:
    """Return (slots blocked before the slot at ``start``, slots free of a block before it) as the contacts show.

    The times are the ``stored`` ones (:class:`.sg_blocks.SgTimes`, kept across restarts) while the contacts show
    the state stored, else the contacts' ``last_changed``: contacts in state 1 count as blocked since they changed;
    otherwise the slots since contact 1 last changed count as free of a block (none while it is on). A change at or
    after ``start`` belongs to that slot: a block that began in it counts as allowed to begin (free None), a block
    that ended in it leaves no free slot. Unknown contacts count as neither blocked nor free (0, 0): no block starts
    before they are known.
    """
    pair = contacts(hass, hp)
    one, two = hass.states.get(hp.control_entity), hass.states.get(hp.sg_contact_2 or "")
    if pair is None or one is None or two is None:
        return 0, 0
    state = state_of(*pair)
    kept = stored if stored is not None and stored.state == state else None
    LOGGER.debug(
        "SG Ready %s: state %s counted from %s", hp.name, state, "the stored times" if kept else "last_changed"
    )
    if state == BLOCKED:
        since = kept.block_start if kept and kept.block_start else max(one.last_changed, two.last_changed)
        return (0, None) if since >= start else (math.ceil((start - since) / slot), 0)
    if kept and kept.block_end:
        return 0, max(int((start - kept.block_end) / slot), 0)
    return 0, (max(int((start - one.last_changed) / slot), 0) if not pair[0] else 0)


def slot_states(
    hass: HomeAssistant, hp: HeatPumpConfig, result: HomeResult | None, first: int, stored: SgTimes | None = None
) -> list[int]:
    """Return the SG Ready state of each slot of the result's plan from slot ``first`` on ([] without a plan).

    ``stored``: the heat pump's block times kept across restarts (:func:`block_history`).
    """
    plan = result.plan if result is not None else None
    inputs = result.inputs if result is not None else None
    power, temps = heat_kw(plan, hp.subentry_id), temp_c(plan, hp.subentry_id)
    band = heat_band(inputs, hp.subentry_id)
    if plan is None or inputs is None or power is None or temps is None or band is None or first >= power.size:
        return []
    n = power.size
    running = power > EPS_KW
    kept_pv = np.asarray(plan.pv_kw, dtype=np.float64) - np.asarray(plan.curtail_kw, dtype=np.float64)
    surplus = kept_pv >= np.asarray(plan.base_load_kw, dtype=np.float64) + power - EPS_KW
    negative = import_price(inputs)[:n] < 0
    can_block = ~running & (temps[1:] >= np.asarray(band[0], dtype=np.float64)[:n] + BLOCK_MARGIN_C)
    blocked, free = block_history(hass, hp, plan.start + first * plan.resolution, plan.resolution, stored)
    return sg_states(
        running[first:].tolist(),
        surplus[first:].tolist(),
        negative[first:].tolist(),
        can_block[first:].tolist(),
        forced=hp.sg_forced,
        max_block_slots=int(hp.sg_max_block_min * 60 // plan.resolution.total_seconds()),
        blocked_before=blocked,
        free_before=free,
    )


def with_states(
    hass: HomeAssistant,
    hp: HeatPumpConfig,
    result: HomeResult,
    sentences: list[str],
    language: str,
    *,
    stored: SgTimes | None = None,
) -> list[str]:
    """Return the plan's sentences per slot with the slot's SG Ready state in plain words ("... SG Ready 1, blocked.").

    ``sentences`` has one per slot of the result's plan (:func:`.heat_view.explain_heat_pump`); the states are those
    the heat pump is driven to from now on (:func:`slot_states`, with the ``stored`` block times).
    """
    states = slot_states(hass, hp, result, 0, stored)
    return [f"{s} {state_text(state, language)}." for s, state in zip(sentences, states, strict=False)]


def state_values(hp: HeatPumpConfig, state: int) -> dict[str, float | str]:
    """Return what ``state`` sets: each contact "on"/"off", and the offset number its offset (3, 4) or 0."""
    one, two = CONTACTS[state]
    values: dict[str, float | str] = {hp.control_entity: "on" if one else "off"}
    values[hp.sg_contact_2 or ""] = "on" if two else "off"
    if hp.sg_offset_entity:
        values[hp.sg_offset_entity] = hp.sg_offset_k if state in (RECOMMENDED, FORCED) else 0.0
    return values


def values_state(hp: HeatPumpConfig, values: dict[str, float | str]) -> int | None:
    """Return the SG Ready state of a slot's ``values`` (:func:`state_values`), None when a contact is missing."""
    one, two = values.get(hp.control_entity), values.get(hp.sg_contact_2 or "")
    return None if one is None or two is None else state_of(one == "on", two == "on")


async def async_switch(
    hass: HomeAssistant, hp: HeatPumpConfig, values: dict[str, float | str], evaluate: Evaluate
) -> tuple[list[dict[str, Any]], bool]:
    """Take the heat pump to the state of ``values`` through ``evaluate`` (one gated command); return its traces.

    The second element is True when every command was executed or nothing was needed. With a contact in an unknown
    state both contacts are sent their command, in the switching order. A contact command that is not executed stops
    the rest; its trace gets ``sg_ready``: the state asked for and the state left (None: unknown).
    """
    target = values_state(hp, values)
    if target is None:
        return [], False
    # a contact in an unknown state gets its command too (turns off first): the gates refuse an unavailable one
    current = contacts(hass, hp) or (not CONTACTS[target][0], not CONTACTS[target][1])
    records = []
    entities = (hp.control_entity, hp.sg_contact_2 or "")
    for contact, on in switching_order(current, target):
        record = await evaluate(entities[contact], "on" if on else "off")
        records.append(record)
        if record["outcome"] != Outcome.EXECUTED:
            now = contacts(hass, hp)
            left = None if now is None else state_of(*now)
            record["sg_ready"] = {
                "target": target,
                "left": left,
                "text": f"{hp.name}: {state_text(target)} not reached, left in "
                f"{state_text(left) if left is not None else 'an unknown state'}",
            }
            dry = record["outcome"] == Outcome.DRY_RUN  # device control off: nothing was meant to act
            (LOGGER.debug if dry else LOGGER.warning)("%s", record["sg_ready"]["text"])
            return records, False
    offset = hp.sg_offset_entity
    if offset and not _holds(hass, offset, values[offset]):
        record = await evaluate(offset, values[offset])
        records.append(record)
        if record["outcome"] != Outcome.EXECUTED:
            return records, False
    return records, True


def _holds(hass: HomeAssistant, entity_id: str, value: float | str) -> bool:
    """Return True when the number ``entity_id`` already is ``value``."""
    state = hass.states.get(entity_id)
    try:
        return state is not None and abs(float(state.state) - float(value)) <= 1e-6
    except ValueError:
        return False
