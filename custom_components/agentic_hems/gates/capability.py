"""Gate 4, Capability: the resolved entity supports the intent and its params.

- The intent has a service in the entity's domain (``tables.service_for``), or is an allow-listed action of the
  entity's integration (:mod:`.actions`), and HA has that service registered.
- Lights check brightness through ``supported_color_modes`` (not ``supported_features``); other domains check the
  feature bits in ``tables.REQUIRED_FEATURES``.
- Params fit the entity's own ranges: brightness 0..100 %, climate and water_heater ``min_temp``..``max_temp``
  (HA's defaults of the domain without them), climate ``hvac_modes``,
  number/input_number ``min``..``max`` on the ``step`` grid from ``min``, select/input_select one of ``options``
  (a ``start_program`` action's program too: one of its program select's options).
- Each of the entity's ``requires_on`` entities is ``on`` now (an appliance's remote start is allowed).
"""

from __future__ import annotations

from collections.abc import Mapping
import math
from typing import Any

from .models import GateContext, GateResult
from .tables import BRIGHTNESS_COLOR_MODES, DEFAULT_TEMP_RANGES, INTENT_SERVICES, REQUIRED_FEATURES
from .view import EntityInfo

NAME = "capability"
STEP_TOLERANCE = 1e-6  # relative, in steps


def _float(value: Any, default: float) -> float:
    return float(value) if isinstance(value, (int, float)) and not isinstance(value, bool) else default


def check_params(entity: EntityInfo, intent: str, params: dict[str, Any]) -> tuple[str | None, dict[str, Any]]:
    """(None or a failure reason, the ranges checked) for ``params`` on ``entity``."""
    caps = entity.capabilities
    if intent == "set_brightness":
        modes = sorted(entity.supported_color_modes)
        if not entity.supported_color_modes & BRIGHTNESS_COLOR_MODES:
            return f"{entity.entity_id} does not support brightness (color modes {modes})", {"color_modes": modes}
        value = params["brightness"]
        ok = 0 <= value <= 100
        return (None if ok else f"brightness {value} % outside 0..100"), {"min": 0, "max": 100, "unit": "%"}
    if intent == "set_temperature":
        default_low, default_high = DEFAULT_TEMP_RANGES[entity.domain]  # only climate and water_heater have it
        low, high = _float(caps.get("min_temp"), default_low), _float(caps.get("max_temp"), default_high)
        value = params["temperature"]
        ok = low <= value <= high
        return (None if ok else f"temperature {value} outside {low}..{high}"), {"min": low, "max": high}
    if intent == "set_hvac_mode":
        modes = [str(m) for m in caps.get("hvac_modes") or []]
        ok = params["hvac_mode"] in modes
        return (None if ok else f"hvac_mode {params['hvac_mode']} not in {modes}"), {"hvac_modes": modes}
    if intent in ("select_option", "start_program"):  # an option, or a program of the appliance's program select
        options = [str(o) for o in caps.get("options") or []]
        option = params["option" if intent == "select_option" else "program"]
        ok = option in options
        return (None if ok else f"option {option!r} is not one of {entity.entity_id}'s {options}"), {"options": options}
    if intent == "set_value":
        return value_error(caps, params["value"])
    return None, {}


def value_error(caps: Mapping[str, Any], value: float) -> tuple[str | None, dict[str, Any]]:
    """(None or why a number cannot take ``value``, its range) by its ``min``..``max`` (0..100) and ``step`` (1) grid.

    ``caps`` are the number's attributes; the ``max`` itself passes even off the grid.
    """
    low, high = _float(caps.get("min"), 0.0), _float(caps.get("max"), 100.0)
    step = _float(caps.get("step"), 1.0)
    ranges = {"min": low, "max": high, "step": step}
    if not low <= value <= high:
        return f"value {value} outside {low}..{high}", ranges
    steps = (value - low) / step if step > 0 else 0.0
    if abs(steps - round(steps)) > STEP_TOLERANCE * max(1.0, abs(steps)) and not math.isclose(value, high):
        return f"value {value} not on the step {step} from {low}", ranges
    return None, ranges


def evaluate(ctx: GateContext) -> GateResult:
    """Pass when the service exists and the entity supports the request.

    Evidence: ``entity_id``, ``intent``, ``service`` (``domain.service`` or None), ``supported_intents`` (of the
    domain), ``supported_features``, ``supported_color_modes``, ``required_features``, ``params`` and ``ranges``.
    """
    assert ctx.command is not None and ctx.entity is not None  # device_resolved ran
    command, entity = ctx.command, ctx.entity
    required = REQUIRED_FEATURES.get((command.domain, command.intent), 0)
    evidence: dict[str, Any] = {
        "entity_id": command.entity_id,
        "intent": command.intent,
        "service": f"{command.service_domain}.{command.service}" if command.service else None,
        "supported_intents": sorted(INTENT_SERVICES.get(command.domain, {})),
        "supported_features": entity.supported_features,
        "supported_color_modes": sorted(entity.supported_color_modes),
        "required_features": required,
        "params": dict(command.params),
        "ranges": {},
    }
    if command.service is None:
        return GateResult(NAME, False, f"{command.entity_id} does not support {command.intent}", evidence)
    if not ctx.view.has_service(command.service_domain, command.service):
        return GateResult(
            NAME, False, f"service {command.service_domain}.{command.service} is not registered", evidence
        )
    if required and entity.supported_features & required != required:
        return GateResult(
            NAME, False, f"{command.entity_id} does not support {command.intent} (supported_features)", evidence
        )
    problem, evidence["ranges"] = check_params(entity, command.intent, dict(command.params))
    if entity.requires_on:
        states = {e: (s.state if (s := ctx.view.state(e)) is not None else None) for e in entity.requires_on}
        evidence["requires_on"] = states
        off = [f"{e} is {state or 'missing'}" for e, state in states.items() if state != "on"]
        problem = problem or (
            f"{command.entity_id} does not allow a remote start now: {', '.join(off)}" if off else None
        )
    if problem:
        return GateResult(NAME, False, problem, evidence)
    return GateResult(NAME, True, f"{command.entity_id} supports {command.intent}", evidence)
