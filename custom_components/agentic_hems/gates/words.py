"""Commands and policy rules in words, in English and German (pure core: no ``homeassistant``).

A person reads "Open Garage door" and "a default rule denies unlocking at risk 4 to 5", never an intent constant,
an entity id or a rule's table row ("unlock/*/risk 4-5"). :func:`command_words` names a command by the device's name
as users see it; :func:`rule_words` says which policy rule decided. ``lang`` is ``en`` or ``de`` (anything else is
English).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .tables import MAX_RISK

# intent -> (English, German) with {name}: the command on a device.
ACTIONS: dict[str, tuple[str, str]] = {
    "turn_on": ("Turn on {name}", "{name} einschalten"),
    "turn_off": ("Turn off {name}", "{name} ausschalten"),
    "open": ("Open {name}", "{name} öffnen"),
    "close": ("Close {name}", "{name} schließen"),
    "lock": ("Lock {name}", "{name} verriegeln"),
    "unlock": ("Unlock {name}", "{name} entriegeln"),
    "start": ("Start {name}", "{name} starten"),
    "stop": ("Stop {name}", "{name} stoppen"),
    "press": ("Press {name}", "{name} drücken"),
    "set_temperature": ("Set the temperature of {name}", "Temperatur von {name} einstellen"),
    "set_brightness": ("Set the brightness of {name}", "Helligkeit von {name} einstellen"),
    "set_hvac_mode": ("Set the mode of {name}", "Modus von {name} einstellen"),
    "set_value": ("Set the value of {name}", "Wert von {name} einstellen"),
    "select_option": ("Choose an option of {name}", "Option von {name} wählen"),
    "start_program": ("Start the program of {name}", "Programm von {name} starten"),
    "start_selected_program": ("Start the selected program of {name}", "Gewähltes Programm von {name} starten"),
    # an appliance's plan (a change that waits for an administrator)
    "schedule": ("Plan {name}", "{name} planen"),
    "cancel": ("Cancel the plan of {name}", "Plan von {name} löschen"),
}
# intent -> (English, German) with {name} and {value}: the command with its value.
VALUED: dict[str, tuple[str, str]] = {
    "set_temperature": ("Set {name} to {value}°", "{name} auf {value}° stellen"),  # in the home's unit, °C or °F
    "set_brightness": ("Set {name} to {value} % brightness", "{name} auf {value} % Helligkeit stellen"),
    "set_hvac_mode": ("Set {name} to mode {value}", "{name} auf Modus {value} stellen"),
    "set_value": ("Set {name} to {value}", "{name} auf {value} stellen"),
    "select_option": ("Set {name} to {value}", "{name} auf {value} stellen"),
}
# The parameter that carries an intent's value (gates.schema.PARAMS).
VALUE_PARAMS = {
    "set_temperature": "temperature",
    "set_brightness": "brightness",
    "set_hvac_mode": "hvac_mode",
    "set_value": "value",
    "select_option": "option",
    "start_program": "program",
    "start_selected_program": "start_in_s",
}
# intent -> (English gerund, German noun) for a rule's operation.
OPERATIONS: dict[str, tuple[str, str]] = {
    "*": ("every command", "jeden Befehl"),
    "turn_on": ("turning on", "das Einschalten"),
    "turn_off": ("turning off", "das Ausschalten"),
    "open": ("opening", "das Öffnen"),
    "close": ("closing", "das Schließen"),
    "lock": ("locking", "das Verriegeln"),
    "unlock": ("unlocking", "das Entriegeln"),
    "start": ("starting", "das Starten"),
    "stop": ("stopping", "das Stoppen"),
    "press": ("pressing", "das Drücken"),
    "set_temperature": ("setting the temperature of", "das Einstellen der Temperatur von"),
    "set_brightness": ("setting the brightness of", "das Einstellen der Helligkeit von"),
    "set_hvac_mode": ("setting the mode of", "das Einstellen des Modus von"),
    "set_value": ("setting the value of", "das Setzen des Werts von"),
    "select_option": ("choosing an option of", "das Wählen einer Option von"),
    "start_program": ("starting the program of", "das Starten des Programms von"),
    "start_selected_program": ("starting the selected program of", "das Starten des gewählten Programms von"),
}
# HA domain -> (English plural, German dative plural) for a rule's device type.
DEVICES: dict[str, tuple[str, str]] = {
    "*": ("any device", "allen Geräten"),
    "switch": ("switches", "Schaltern"),
    "input_boolean": ("toggle helpers", "Schalter-Helfern"),
    "fan": ("fans", "Ventilatoren"),
    "light": ("lights", "Lichtern"),
    "climate": ("thermostats", "Thermostaten"),
    "water_heater": ("water heaters", "Warmwasserbereitern"),
    "number": ("number entities", "Zahlenwerten"),
    "input_number": ("number helpers", "Zahlen-Helfern"),
    "select": ("selects", "Auswahlen"),
    "input_select": ("dropdown helpers", "Auswahl-Helfern"),
    "cover": ("covers", "Abdeckungen"),
    "valve": ("valves", "Ventilen"),
    "lock": ("locks", "Schlössern"),
    "button": ("buttons", "Tasten"),
    "vacuum": ("vacuums", "Staubsaugern"),
    "alarm_control_panel": ("alarm panels", "Alarmanlagen"),
}


def _pick(pair: tuple[str, str], lang: str) -> str:
    return pair[1] if lang == "de" else pair[0]


def _value(value: Any, lang: str) -> str:
    text = f"{value:g}" if isinstance(value, float) else str(value)
    return text.replace(".", ",") if lang == "de" and isinstance(value, int | float) else text


def command_words(intent: Any, name: Any, params: Mapping[str, Any] | None = None, lang: str = "en") -> str:
    """Return a command in words: ``("open", "Garage door")`` → "Open Garage door" (German "Garage door öffnen").

    ``name`` is the device's name as users see it; ``params`` the command's parameters (``{"temperature": 21.5}``
    gives "Set Heat pump to 21.5°", in the home's unit). An intent outside the vocabulary is written with spaces
    ("Do x Name").
    """
    key = str(intent)
    value = (params or {}).get(VALUE_PARAMS.get(key, ""))
    if value is not None and key in VALUED:
        return _pick(VALUED[key], lang).format(name=name, value=_value(value, lang))
    if key in ACTIONS:
        return _pick(ACTIONS[key], lang).format(name=name)
    words = key.replace("_", " ")
    return f"{name} {words}" if lang == "de" else f"{words[:1].upper()}{words[1:]} {name}"


def rule_words(rule: Mapping[str, Any] | None, index: int | None, lang: str = "en") -> str:
    """Return which policy rule decided, in words: "a default rule denies unlocking at risk 4 to 5".

    ``rule`` is :meth:`.tables.PolicyRule.as_dict` (``operation``, ``device_type``, ``risk_min``, ``risk_max``,
    ``action``, ``source``) and ``index`` its position in the table (a user's rule counts from 1); None for "no rule
    allows it" (the table denies what no rule matches).
    """
    if rule is None:
        return "keine Regel erlaubt es" if lang == "de" else "no rule allows it"
    operation, device = str(rule.get("operation")), str(rule.get("device_type"))
    if rule.get("source") == "user":
        who = f"deine Regel {(index or 0) + 1}" if lang == "de" else f"your rule {(index or 0) + 1}"
    else:
        who = "eine Standardregel" if lang == "de" else "a default rule"
    verb = {"deny": ("denies", "verbietet"), "confirm": ("asks to confirm", "verlangt eine Bestätigung für")}.get(
        str(rule.get("action")), ("allows", "erlaubt")
    )
    what = _pick(OPERATIONS.get(operation, (operation.replace("_", " "), operation)), lang)
    of = what.endswith((" of", " von"))  # "setting the temperature of" needs its devices
    if device != "*" or of:
        if operation == "*":
            joiner = " an" if lang == "de" else " on"
        else:
            joiner = " von" if lang == "de" and not of else ""
        what = f"{what}{joiner} {_pick(DEVICES.get(device, (device, device)), lang)}"
    low, high = rule.get("risk_min", 0), rule.get("risk_max", MAX_RISK)
    if (low, high) != (0, MAX_RISK):
        what += f" bei Risiko {low} bis {high}" if lang == "de" else f" at risk {low} to {high}"
    return f"{who} {_pick(verb, lang)} {what}"
