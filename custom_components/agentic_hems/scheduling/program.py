"""The appliance program profile: how a planned run starts an appliance that runs programs.

An appliance whose controlled entity is a ``select`` with a ``program`` (:class:`.appliance.Appliance`) is started at
its planned slot in steps, each a gated command:

1. ``select_option`` of the program on the select (read back: the select shows the option);
2. ``press`` of the start ``button`` when there is one (read back: the operation sensor shows the program running),
   else selecting the program starts it (HA's ``home_connect`` "active program" select).

With ``program_start: home_connect`` the start is one allow-listed action instead (:mod:`..gates.actions`):
``start_program`` on the select, which the gates send as HA core's ``home_connect.set_program_and_options`` with the
select's device, ``affects_to: active_program`` and the program (read back: the operation sensor shows it running).

The appliance's own delayed start (``delayed_start``) is set once, ahead of the planned start, so the appliance starts
by itself at the planned time even when Home Assistant is down then: the action with home_connect's "start in" option
(``start_in_s``), or the select, the ``delay_entity`` "start in" number (its unit: s, min or h) and the start button.
The read-back is ``delayedstart`` (then ``run`` at the planned start).

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
DELAY_UNITS: dict[str, float] = {"s": 1.0, "min": 60.0, "h": 3600.0}  # a "start in" number's unit, in s
MAX_ACTION_DELAY_S = 86_400  # home_connect's "start in" option: at most a day (the Schema gate's limit)


def is_program(appliance: Appliance) -> bool:
    """Return True when the appliance is started through a program select (the program profile)."""
    return appliance.entity_id.startswith("select.") and appliance.program is not None


def uses_action(appliance: Appliance) -> bool:
    """Return True when the program appliance starts through home_connect's action (not its start button)."""
    return is_program(appliance) and appliance.program_start == "home_connect"


def start_steps(appliance: Appliance) -> list[dict[str, Any]]:
    """Return the gated commands (model candidates) that start a program appliance's run now, in order.

    With the action: ``[{"intent": "start_program", "device_alias": select, "params": {"program": program}}]``.
    Else ``[{"intent": "select_option", "device_alias": select, "params": {"option": program}}]``, then
    ``{"intent": "press", "device_alias": button}`` when it has a start button. Empty for any other appliance.
    """
    if not is_program(appliance):
        return []
    if uses_action(appliance):
        return [
            {"intent": "start_program", "device_alias": appliance.entity_id, "params": {"program": appliance.program}}
        ]
    steps: list[dict[str, Any]] = [
        {"intent": "select_option", "device_alias": appliance.entity_id, "params": {"option": appliance.program}}
    ]
    if appliance.start_entity:
        steps.append({"intent": "press", "device_alias": appliance.start_entity})
    return steps


def has_delayed_start(appliance: Appliance) -> bool:
    """Return True when the appliance's own delayed start is set ahead: the action, or a delay number and button.

    It needs an operation sensor, which shows the start as set (``delayedstart``) and read back.
    """
    if not (is_program(appliance) and appliance.delayed_start and appliance.operation_entity):
        return False
    return uses_action(appliance) or bool(appliance.delay_entity and appliance.start_entity)


def delay_in(delay_s: float, unit: str | None) -> float | None:
    """Return ``delay_s`` seconds in a "start in" number's ``unit`` (s, min, h; None means s), or None for others."""
    factor = DELAY_UNITS.get(unit or "s")
    return None if factor is None else delay_s / factor


def delayed_steps(appliance: Appliance, delay_s: int, unit: str | None = None) -> list[dict[str, Any]]:
    """Return the gated commands that set the appliance's own delayed start ``delay_s`` seconds ahead, in order.

    With the action: ``start_program`` with ``start_in_s``; with a "start in" number in ``unit``: select the program,
    ``set_value`` of the number, press start. Empty when the appliance has no delayed start or ``delay_s`` does not
    convert to ``unit``. A value's command must state its planned value (``gates.values.plan_text``).
    """
    if not has_delayed_start(appliance):
        return []
    select, program = appliance.entity_id, appliance.program
    if uses_action(appliance):
        return [
            {"intent": "start_program", "device_alias": select, "params": {"program": program, "start_in_s": delay_s}}
        ]
    value = delay_in(delay_s, unit)
    if value is None or appliance.delay_entity is None or appliance.start_entity is None:
        return []
    return [
        {"intent": "select_option", "device_alias": select, "params": {"option": program}},
        {"intent": "set_value", "device_alias": appliance.delay_entity, "params": {"value": value}},
        {"intent": "press", "device_alias": appliance.start_entity},
    ]


def controlled_entities(appliance: Appliance) -> frozenset[str]:
    """Return the entities the gates act on for the appliance: its controlled entity, start button, delay number."""
    if not is_program(appliance):
        return frozenset({appliance.entity_id})
    return frozenset(filter(None, (appliance.entity_id, appliance.start_entity, appliance.delay_entity)))


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
    """Return start button or action select -> (the operation sensor, its states that show the program started).

    Execution waits for these after a press or a home_connect start (neither has a state of its own to read back).
    """
    found: dict[str, tuple[str, tuple[str, ...]]] = {}
    for appliance in appliances:
        if not (is_program(appliance) and appliance.operation_entity):
            continue
        starter = appliance.entity_id if uses_action(appliance) else appliance.start_entity
        if starter:
            found[starter] = (appliance.operation_entity, RUNNING_STATES)
    return found
