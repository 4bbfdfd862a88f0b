"""The appliance form's EV charger step: the charging-current setpoint and the charger's limits, checked.

An EV charger that can be split (``contiguous`` off) gets a second step. Without a current setpoint the charger is
switched on and off as before; with one, the plan's power becomes its current
(:class:`~..scheduling.charger.ChargerProfile`). The step's checks:

- the setpoint exists (``charger_entity_missing``), is a number or input_number, is none of this integration's own
  entities nor another device's control or charger setpoint (``control_entity_own``, ``charger_entity_in_use``);
- its ``min``..``max`` holds the minimum current in its unit (``charger_range``), and its ``step`` grid each current
  the charger may be sent: ``min_a`` and the whole ``step_a`` above it, on each phase count (``charger_step_grid``);
- the minimum current's power is at most the appliance's power (``charger_minimum_above_power``);
- each number lies within :data:`CHARGER_LIMITS` (``charger_number_out_of_range``);
- a phase entity (a select or a switch that switches 1/3 phases) exists and is no other device's
  (``charger_phase_entity_missing``, ``charger_entity_in_use``), needs three phases (``charger_phase_needs_three``)
  and two distinct states it has: a select's options, ``on``/``off`` for a switch, where a switch's default is on for
  one phase (``charger_phase_option_missing``);
- a reported power or current sensor exists and is in W, kW, A or mA (``charger_power_entity_invalid``);
- neither is given without a current setpoint (``charger_needs_setpoint``);
- a charger started by a button (the appliance's controlled entity) needs the setpoint and its stop button
  (``charger_buttons_incomplete``); a stop button goes with a start button only (``charger_stop_needs_button``).

A start button as the controlled entity is an EV charger's whose load can be split (:func:`button_errors`,
``button_needs_charger``).
"""

from __future__ import annotations

from collections.abc import Mapping
import math
from typing import TYPE_CHECKING, Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers.selector import (
    EntitySelector,
    EntitySelectorConfig,
    SelectSelector,
    SelectSelectorConfig,
    SelectSelectorMode,
    TextSelector,
)

from ..const import (
    CONF_CONTIGUOUS,
    CONF_DELAY_ENTITY,
    CONF_KIND,
    CONF_POWER_SETPOINT,
    CONF_SG_CONTACT_2,
    CONF_SG_OFFSET_ENTITY,
    CONF_START_ENTITY,
)
from ..gates.capability import value_error
from ..scheduling.appliance import CHARGER_KEYS, CHARGER_OPTIONAL_KEYS, charger_profile
from ..scheduling.charger import ChargerProfile
from ..validation import vol
from .devices import LooseEntitySelector, own_entity_ids
from .schemas import appliance_number

if TYPE_CHECKING:
    from ..runtime import AgenticHemsConfigEntry

CURRENT = "charger_current_entity"
PHASE = "charger_phase_entity"
ONE = "charger_phase_one"
THREE = "charger_phase_three"
INTERVAL = "charger_phase_interval_min"
POWER = "charger_power_entity"
STOP = "charger_stop_entity"
# Other devices' entities a charger's entities must not be: controls, a battery's power, SG Ready's, a "start in" number.
OTHER_KEYS = (
    "entity_id",
    "control_entity",
    CONF_POWER_SETPOINT,
    CONF_SG_CONTACT_2,
    CONF_SG_OFFSET_ENTITY,
    CONF_DELAY_ENTITY,
    CONF_START_ENTITY,
)
PHASE_DOMAINS = ("select", "input_select", "switch", "input_boolean")
BEYOND_KW = 1e6  # more power than any charger draws: its current is the setpoint's max
MAX_STEPS = 10_000  # more steps of a current than any charger has (80 A in 0.1 A steps is 800)
READ_UNITS = ("W", "kW", "A", "mA")  # a reported charging power's or current's unit
# field -> (minimum, maximum, step, unit): a charger's current is 1-80 A (IEC 61851: 6 A the usual minimum), its step
# 0.1-10 A, the phase voltage 100-260 V.
CHARGER_LIMITS: dict[str, tuple[float, float, float, str]] = {
    "charger_min_a": (1, 80, 0.1, "A"),
    "charger_step_a": (0.1, 10, 0.1, "A"),
    "charger_voltage_v": (100, 260, 1, "V"),
    INTERVAL: (0, 120, 1, "min"),
}
DEFAULTS: dict[str, Any] = {
    "charger_unit": "A",
    "charger_min_a": 6,
    "charger_step_a": 1,
    "charger_phases": "3",
    "charger_voltage_v": 230,
    INTERVAL: 15,
}


def button_errors(data: Mapping[str, Any]) -> dict[str, str]:
    """Return the appliance form's error for a start button as the controlled entity of anything but a split EV charge."""
    errors: dict[str, str] = {}
    if str(data.get("entity_id") or "").startswith("button.") and not needs_charger_step(data):
        errors["entity_id"] = "button_needs_charger"
    return errors


def needs_charger_step(data: Mapping[str, Any]) -> bool:
    """Return True for an EV charger whose load can be split: the form asks for its current setpoint next."""
    return data.get(CONF_KIND) == "ev_charger" and not data.get(CONF_CONTIGUOUS, True)


def charger_schema(exclude: list[str]) -> vol.Schema:
    """Return the charger step's form (the defaults are those of a 16 A three-phase box).

    The setpoint picker offers numbers and input_numbers without ``exclude`` (this integration's own entities, other
    devices' controls); the step's checks name any other entity in a translated error.
    """
    return vol.Schema(
        {
            vol.Optional(CURRENT): LooseEntitySelector(
                EntitySelectorConfig(domain=["number", "input_number"], exclude_entities=exclude)
            ),
            vol.Required("charger_unit", default="A"): SelectSelector(
                SelectSelectorConfig(
                    options=["A", "W", "kW"], mode=SelectSelectorMode.DROPDOWN, translation_key="charger_unit"
                )
            ),
            vol.Required("charger_phases", default="3"): SelectSelector(
                SelectSelectorConfig(
                    options=["1", "3"], mode=SelectSelectorMode.DROPDOWN, translation_key="charger_phases"
                )
            ),
            vol.Required("charger_min_a", default=6): appliance_number(*CHARGER_LIMITS["charger_min_a"]),
            vol.Required("charger_step_a", default=1): appliance_number(*CHARGER_LIMITS["charger_step_a"]),
            vol.Required("charger_voltage_v", default=230): appliance_number(*CHARGER_LIMITS["charger_voltage_v"]),
            vol.Optional(PHASE): LooseEntitySelector(
                EntitySelectorConfig(domain=list(PHASE_DOMAINS), exclude_entities=exclude)
            ),
            vol.Optional(ONE): TextSelector(),
            vol.Optional(THREE): TextSelector(),
            vol.Required(INTERVAL, default=15): appliance_number(*CHARGER_LIMITS[INTERVAL]),
            vol.Optional(POWER): EntitySelector(EntitySelectorConfig(domain="sensor")),
            vol.Optional(STOP): LooseEntitySelector(EntitySelectorConfig(domain="button", exclude_entities=exclude)),
        }
    )


def validate_charger(
    hass: HomeAssistant,
    entry: AgenticHemsConfigEntry,
    own_id: str | None,
    appliance: Mapping[str, Any],
    form: Mapping[str, Any],
) -> tuple[dict[str, str], dict[str, Any]]:
    """Return the step's errors and the appliance's data with the charger fields (none without a setpoint)."""
    dropped = (CURRENT, *CHARGER_KEYS, *CHARGER_OPTIONAL_KEYS)
    data = {k: v for k, v in appliance.items() if k not in dropped}
    entity = form.get(CURRENT)
    errors: dict[str, str] = {}
    button = str(appliance.get("entity_id") or "").startswith("button.")
    if button and not (entity and form.get(STOP)):
        errors[STOP if entity else CURRENT] = "charger_buttons_incomplete"
    elif form.get(STOP) and not button:
        errors[STOP] = "charger_stop_needs_button"
    if not entity:  # a phase switch or power sensor alone drives nothing: say so rather than drop it
        for key in (k for k in (PHASE, POWER) if form.get(k)):
            errors[key] = "charger_needs_setpoint"
    if errors or not entity:
        return errors, data
    for key, (low, high, _, _) in CHARGER_LIMITS.items():
        if not low <= float(form.get(key, DEFAULTS[key])) <= high:
            errors[key] = "charger_number_out_of_range"
    data |= {CURRENT: entity, **{key: form[key] for key in CHARGER_KEYS}}
    data["charger_phases"] = int(data["charger_phases"])
    data |= {key: form[key] for key in (POWER, PHASE, STOP) if form.get(key)}
    if form.get(PHASE):
        data |= _phase_states(str(form[PHASE]), form) | {INTERVAL: form.get(INTERVAL, DEFAULTS[INTERVAL])}
    if not errors:
        errors = _phase_errors(hass, data)
    if not errors:
        errors = _entity_errors(hass, entry, own_id, data)
    return errors, data


def _phase_states(entity: str, form: Mapping[str, Any]) -> dict[str, str]:
    """Return the phase entity's 1- and 3-phase states as given (trimmed); a switch's default: on for one phase."""
    switch = entity.split(".", 1)[0] in ("switch", "input_boolean")
    defaults = ("on", "off") if switch else ("", "")
    return {key: str(form.get(key) or default).strip() for key, default in zip((ONE, THREE), defaults, strict=True)}


def _phase_errors(hass: HomeAssistant, data: Mapping[str, Any]) -> dict[str, str]:
    """Return the phase entity's and the power sensor's errors (module docstring)."""
    errors: dict[str, str] = {}
    power = hass.states.get(str(data.get(POWER))) if data.get(POWER) else None
    if data.get(POWER) and (power is None or power.attributes.get("unit_of_measurement") not in READ_UNITS):
        errors[POWER] = "charger_power_entity_invalid"
    if not data.get(PHASE):
        return errors
    entity = str(data[PHASE])
    state = hass.states.get(entity)
    if state is None or entity.split(".", 1)[0] not in PHASE_DOMAINS:
        errors[PHASE] = "charger_phase_entity_missing"
        return errors
    if data["charger_phases"] != 3:
        errors["charger_phases"] = "charger_phase_needs_three"
    select = entity.split(".", 1)[0] in ("select", "input_select")
    offered = [str(o) for o in state.attributes.get("options") or []] if select else ["on", "off"]
    for key in (ONE, THREE):
        if data[key] not in offered or data[ONE] == data[THREE]:
            errors[key] = "charger_phase_option_missing"
    return errors


def _entity_errors(
    hass: HomeAssistant, entry: AgenticHemsConfigEntry, own_id: str | None, data: Mapping[str, Any]
) -> dict[str, str]:
    """Return the setpoint's errors: missing, taken, not holding the minimum current, or a minimum above the power."""
    entity = str(data[CURRENT])
    others: set[Any] = set()
    for sid, sub in entry.subentries.items():
        if sid != own_id:
            others |= {sub.data.get(key) for key in (CURRENT, PHASE, STOP, *OTHER_KEYS)}
    own = own_entity_ids(hass)
    for key in (k for k in (CURRENT, PHASE, STOP) if data.get(k)):
        if data.get(key) in own:
            return {key: "control_entity_own"}
        if data.get(key) in others or data.get(key) == data.get("entity_id") or data.get(PHASE) == entity:
            return {key: "charger_entity_in_use"}
    if data.get(STOP) and hass.states.get(str(data[STOP])) is None:
        return {STOP: "entity_not_found"}
    state = hass.states.get(entity)
    if state is None or entity.split(".", 1)[0] not in ("number", "input_number"):
        return {CURRENT: "charger_entity_missing"}
    try:
        profile = charger_profile("form", data)
    except ValueError:  # the only one the form's fields leave: the minimum current's power above the power
        return {"charger_min_a": "charger_minimum_above_power"}
    assert profile is not None
    least = profile.setpoint(profile.min_kw)
    low, high = state.attributes.get("min"), state.attributes.get("max")
    if not (isinstance(low, (int, float)) and isinstance(high, (int, float)) and low - 1e-9 <= least <= high + 1e-9):
        return {CURRENT: "charger_range"}
    if _off_grid(profile, dict(state.attributes)):
        return {"charger_step_a": "charger_step_grid"}
    return {}


def _off_grid(profile: ChargerProfile, caps: dict[str, Any]) -> bool:
    """Return True when a current the charger may be sent is off the setpoint's ``step`` grid (``caps``: its attributes).

    The currents are ``min_a`` and each whole ``step_a`` above it up to the setpoint's ``max``, on each phase count
    it charges on; the Capability gate would refuse any of them off the grid (:func:`..gates.capability.value_error`).
    """
    high = float(caps["max"])
    for phases in {profile.phases, *((1,) if profile.phase_entity else ())}:
        try:
            top = profile.setpoint(BEYOND_KW, high, phases)  # the setpoint's max, as the charger's steps reach it
        except ValueError:  # its max is below the minimum current on these phases: charger_range's, not the grid's
            continue
        for k in range(math.floor(profile.min_a / profile.step_a), MAX_STEPS):  # the first: min_a
            value = profile.setpoint(profile.kw(max(k * profile.step_a, profile.min_a), phases), high, phases)
            if value_error(caps, value)[0] is not None:
                return True
            if value >= top:
                break
    return False
