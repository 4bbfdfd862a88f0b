"""The values a person's request names: "to 50 degrees", "auf 21,5 Grad", "at 10 A", "to 40 %", "2 kW".

Pure core, read by intent binding (:mod:`.intent`) from the person's own text, in English and German:

- a number in digits, with a decimal point or a decimal comma ("21.5", "21,5": a comma is never a thousands
  separator), negative with a leading "-" or the word "minus". Number words ("twenty", "zwanzig") are not read: such
  a request names no value, so a model's value waits for a person where its words still ask for the action ("set the
  temperature to twenty", ``gates.policy``), and is refused where they do not ("set the thermostat to twenty");
- a unit after it: a temperature ("°", "°C", "°F", "degrees", "Grad", "Celsius", "Fahrenheit"), percent ("%",
  "percent", "Prozent"), amperes ("A", "amps", "Ampere") or power ("W", "kW", "watts", "Kilowatt"); or none, after
  "to", "auf", "at", "bei", "mit" or "=" (a bare number: the entity's own unit).

Each becomes a ``(value, unit)`` pair in ``gates.values``' units: a temperature in the home's unit (°C or °F, as HA's
unit system says; "degrees" and "Grad" are in it, an explicit °C or °F is converted and rounded to a tenth), a power
in W.
"""

from __future__ import annotations

import re

_VALUE = re.compile(
    r"(?:(?P<lead>\bto|\bauf|\bat|\bbei|\bmit|=)\s+)?(?<![\w.,])(?P<minus>-|minus\s+)?(?P<number>\d+(?:[.,]\d+)?)"
    r"(?:\s*(?P<unit>°\s*[cf]|℃|℉|°|(?:degrees?|grad)(?:\s+(?:celsius|fahrenheit))?|celsius|fahrenheit"
    r"|%|percent|per cent|prozent|amperes?|amps?|a|kilowatts?|kw|watts?|w)(?![\w°]))?(?![\w.,])"
)
_FAHRENHEIT = ("f", "℉", "fahrenheit")
_CELSIUS = ("c", "℃", "celsius")

# which value units each value-carrying action takes (``gates.values``); other actions take none
UNITS_OF: dict[str, frozenset[str]] = {
    "set_brightness": frozenset({"", "%"}),
    "set_temperature": frozenset({"", "°"}),
    "set_value": frozenset({"", "%", "°", "A", "W"}),
}


def _unit(unit: str, value: float, home_unit: str) -> tuple[float, str]:
    """(value, unit) in ``gates.values``' units for a matched ``unit`` word."""
    unit = re.sub(r"\s+", "", unit)
    if unit in ("%", "percent", "prozent"):  # "per cent" without its space
        return value, "%"
    if unit.startswith("a"):
        return value, "A"
    if unit.startswith(("kw", "kilowatt")):
        return value * 1000.0, "W"
    if unit.startswith("w"):
        return value, "W"
    fahrenheit = home_unit.endswith("F")
    if unit.endswith(_FAHRENHEIT) and not fahrenheit:
        return round((value - 32.0) * 5.0 / 9.0, 1), "°"
    if unit.endswith(_CELSIUS) and fahrenheit:
        return round(value * 9.0 / 5.0 + 32.0, 1), "°"
    return value, "°"


def asked_values(clause: str, home_unit: str = "°C") -> tuple[tuple[float, str], ...]:
    """Return the ``(value, unit)`` pairs ``clause`` (case-folded) names, in order (see the module docstring).

    ``home_unit`` is HA's temperature unit ("°C" or "°F").
    """
    found = []
    for match in _VALUE.finditer(clause):
        if match["unit"] is None and match["lead"] is None:  # "lamp 2": a number, no value
            continue
        value = float(match["number"].replace(",", ".")) * (-1.0 if match["minus"] else 1.0)
        found.append(_unit(match["unit"], value, home_unit) if match["unit"] else (value, ""))
    return tuple(found)


def values_for(action: str, values: tuple[tuple[float, str], ...]) -> tuple[tuple[float, str], ...]:
    """Return the ``values`` that ``action`` takes (none for an action that carries no value)."""
    units = UNITS_OF.get(action, frozenset())
    return tuple(v for v in values if v[1] in units)
