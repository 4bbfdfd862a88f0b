"""The appliance program profile: how a planned run starts an appliance that runs programs.

An appliance whose controlled entity is a ``select`` with a ``program`` (:class:`.appliance.Appliance`) is started at
its planned slot in steps, each a gated command:

1. ``select_option`` of the program on the select (read back: the select shows the option);
2. ``press`` of the start ``button`` when there is one (read back: the operation sensor shows the program running),
   else selecting the program starts it (HA's ``home_connect`` "active program" select).

The program ends by itself, so a plan's stop issues nothing. A remote-start ``binary_sensor`` (``home_connect``'s
"Remote start": on while the appliance allows it) interlocks both steps: the Capability gate refuses them while it is
not on. The shapes follow HA core's ``home_connect``: program options such as ``dishcare_dishwasher_program_eco_50``,
an enum operation state sensor with ``inactive``, ``ready``, ``delayedstart``, ``run``, ``pause``, ``actionrequired``,
``finished``, ``error``, ``aborting``. Nothing here imports Home Assistant.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .appliance import Appliance

# home_connect's operation states of a started program (a delayed start counts: the appliance starts by itself).
RUNNING_STATES: tuple[str, ...] = ("run", "delayedstart")


def is_program(appliance: Appliance) -> bool:
    """Return True when the appliance is started through a program select (the program profile)."""
    return appliance.entity_id.startswith("select.") and appliance.program is not None


def start_steps(appliance: Appliance) -> list[dict[str, Any]]:
    """Return the gated commands (model candidates) that start a program appliance's run, in order.

    ``[{"intent": "select_option", "device_alias": select, "params": {"option": program}}]``, then
    ``{"intent": "press", "device_alias": button}`` when it has a start button; empty for any other appliance.
    """
    if not is_program(appliance):
        return []
    steps: list[dict[str, Any]] = [
        {"intent": "select_option", "device_alias": appliance.entity_id, "params": {"option": appliance.program}}
    ]
    if appliance.start_entity:
        steps.append({"intent": "press", "device_alias": appliance.start_entity})
    return steps


def controlled_entities(appliance: Appliance) -> frozenset[str]:
    """Return the entities the gates act on for the appliance: its controlled entity and its start button."""
    return frozenset(filter(None, (appliance.entity_id, appliance.start_entity if is_program(appliance) else None)))


def interlocks(appliances: Iterable[Appliance]) -> dict[str, tuple[str, ...]]:
    """Return entity -> the binary sensors that must be on for a command to it (the program steps' remote start)."""
    locks: dict[str, tuple[str, ...]] = {}
    for appliance in appliances:
        if is_program(appliance) and appliance.remote_start_entity:
            for entity_id in controlled_entities(appliance):
                locks[entity_id] = (appliance.remote_start_entity,)
    return locks


def program_selects(appliances: Iterable[Appliance]) -> frozenset[str]:
    """Return the program selects, whose ``unknown`` state means no program is chosen (``EntityInfo.idle_unknown``)."""
    return frozenset(a.entity_id for a in appliances if is_program(a))


def readbacks(appliances: Iterable[Appliance]) -> dict[str, tuple[str, tuple[str, ...]]]:
    """Return start button -> (the operation sensor, its states that show the program started).

    Execution waits for these after a press (a button has no state of its own to read back).
    """
    return {
        appliance.start_entity: (appliance.operation_entity, RUNNING_STATES)
        for appliance in appliances
        if is_program(appliance) and appliance.start_entity and appliance.operation_entity
    }
