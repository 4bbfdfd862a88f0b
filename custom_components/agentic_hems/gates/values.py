"""Value binding: a command's value against the value a person asked for or a plan planned.

Pure core. The value of a command is its one numeric param (:data:`VALUE_PARAMS`: ``brightness`` in percent,
``temperature`` in the home's unit, ``value`` in the number entity's unit, ``start_in_s``, an appliance's own
delayed start, in seconds); a mode, an option or a program is bound by the action alone. A :class:`.models.RequestedAction` carries the asked value (``value``) and its unit (``unit``):

- ``""``: a bare number ("set the living room to 21.5"): the entity's own unit, whatever it is;
- ``"%"``: percent; ``"°"``: a temperature in the home's unit (the reader converts °F and °C to it and rounds to a
  tenth); ``"A"``: amperes; ``"W"``: watts (the reader converts kW to W).

:func:`fits` says whether a proposed value is an asked one: a brightness takes ``""`` or ``"%"``, a temperature
``""`` or ``"°"``, a number's value any unit that its ``unit_of_measurement`` is (W also as kW or MW); a temperature
matches to half a tenth of a degree, any other value to 1e-6. Amperes never match watts: nobody's voltage is
guessed.

The scheduler's command states its planned value in its ``raw_input`` (:func:`plan_text`, "set number.x to 2500.0
W: ..."), which a pending confirmation keeps; :func:`planned_value` reads it back for the Policy gate.
"""

from __future__ import annotations

from collections.abc import Mapping
import math
import re
from typing import Any

from .models import RequestedAction

VALUE_PARAMS = {
    "set_brightness": "brightness",
    "set_temperature": "temperature",
    "set_value": "value",
    "start_program": "start_in_s",  # an appliance's own delayed start (gates.actions), s
    "start_selected_program": "start_in_s",
}
_DELAY = frozenset({"", "s"})
_UNITS = {
    "set_brightness": frozenset({"", "%"}),
    "set_temperature": frozenset({"", "°"}),
    "start_program": _DELAY,
    "start_selected_program": _DELAY,
}
_WATTS = {"W": 1.0, "kW": 1e3, "MW": 1e6}  # one unit_of_measurement in W
_TEMPERATURES = frozenset({"°C", "°F", "K"})
TEMPERATURE_TOLERANCE = 0.05  # degrees: an asked temperature is kept to a tenth
_PLANNED = re.compile(r"^set (\S+) to (-?\d+(?:\.\d+)?(?:e[-+]?\d+)?)(?![\w.])")


def proposed_value(intent: str, params: Mapping[str, Any]) -> float | None:
    """Return the command's value (see the module docstring), or None when ``intent`` carries none."""
    value = params.get(VALUE_PARAMS.get(intent, ""))
    return float(value) if isinstance(value, int | float) and not isinstance(value, bool) else None


def in_entity_unit(asked: RequestedAction, intent: str, entity_unit: str | None) -> float | None:
    """Return ``asked``'s value in the command's unit, or None when it has none or the units do not compare.

    ``entity_unit`` is the number entity's ``unit_of_measurement`` (``set_value`` only).
    """
    if asked.value is None:
        return None
    if intent in _UNITS:
        return asked.value if asked.unit in _UNITS[intent] else None
    unit = (entity_unit or "").strip()
    if asked.unit == "":
        return asked.value
    if asked.unit == "W":
        return asked.value / _WATTS[unit] if unit in _WATTS else None
    if asked.unit == "°":
        return asked.value if unit in _TEMPERATURES else None
    return asked.value if asked.unit == unit else None


def fits(asked: RequestedAction, intent: str, proposed: float, entity_unit: str | None) -> bool:
    """Return True when ``proposed`` (in the command's unit) is ``asked``'s value (see the module docstring)."""
    wanted = in_entity_unit(asked, intent, entity_unit)
    if wanted is None:
        return False
    temperature = intent == "set_temperature" or asked.unit == "°"
    return math.isclose(proposed, wanted, rel_tol=0.0, abs_tol=TEMPERATURE_TOLERANCE if temperature else 1e-6)


def words(value: float, unit: str) -> str:
    """Return a value in words for a reason: "50°", "40 %", "10 A", "21.5"."""
    number = f"{value:g}"
    if unit in ("", "°"):
        return f"{number}{unit}"
    return f"{number} {unit}"


def asked_words(asked: RequestedAction) -> str:
    """Return the asked value of ``asked`` in words ("" when it has none)."""
    return "" if asked.value is None else words(asked.value, asked.unit)


def proposed_words(intent: str, value: float, entity_unit: str | None) -> str:
    """Return the proposed value in words, in the command's unit ("90°", "40 %", "2300 W")."""
    unit = {"set_brightness": "%", "set_temperature": "°", "start_program": "s", "start_selected_program": "s"}.get(
        intent, (entity_unit or "").strip()
    )
    return words(value, unit)


def plan_text(entity_id: str, value: float | str, unit: str = "") -> str:
    """Return the plan's statement of one command ("set number.x to 2500.0 W"), which :func:`planned_value` reads.

    ``value`` is the planned value in the command's unit (a float is written exactly), or an option or mode.
    """
    shown = repr(float(value)) if isinstance(value, int | float) else value
    return f"set {entity_id} to {shown}{f' {unit}' if unit else ''}"


def planned_value(raw_input: str) -> tuple[str, float] | None:
    """Return (entity_id, value) from a plan's statement (:func:`plan_text`), or None when it states no number."""
    match = _PLANNED.match(raw_input)
    return (match[1], float(match[2])) if match else None
