"""Gate 2, Schema: the candidate must match the :class:`ModelCandidate` schema exactly.

A schema (:mod:`..validation`) checks it: extra keys are forbidden at every level, the intent must be in the
vocabulary (an unknown intent is a schema failure), ``device_type`` must be a vocabulary domain, and params
are typed per intent (:data:`PARAMS`). Numbers are real ints or floats (no bools, strings, NaN or infinities).
"""

from __future__ import annotations

from collections.abc import Mapping
import math
from typing import Any

from ..validation import closed, vol
from .models import GateContext, GateResult, ModelCandidate
from .tables import DOMAINS, INTENTS

NAME = "schema"
MAX_NAME_CHARS = 255
HVAC_MODES = ("off", "heat", "cool", "heat_cool", "auto", "dry", "fan_only")


def _number(value: Any) -> float | int:
    if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
        raise vol.Invalid("expected a finite number")
    number: float | int = value
    return number


_NAME_MSG = f"expected a non-empty string of at most {MAX_NAME_CHARS} characters"


def _name(value: Any) -> str:
    if not isinstance(value, str) or not value.strip() or len(value) > MAX_NAME_CHARS:
        raise vol.Invalid(_NAME_MSG)
    return value


MAX_DELAY_S = 86_400  # an appliance's own delayed start: at most a day ahead (home_connect: seconds)


def _delay(value: Any) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_DELAY_S:
        raise vol.Invalid(f"expected whole seconds 0..{MAX_DELAY_S}")
    return value


# intent -> params schema (keys and types); intents without an entry take no params.
PARAMS: dict[str, dict[Any, Any]] = {
    "set_brightness": {vol.Required("brightness"): vol.All(_number, vol.Range(min=0, max=100))},  # percent
    "set_temperature": {vol.Required("temperature"): _number},  # the entity's unit; range checked by capability
    "set_hvac_mode": {vol.Required("hvac_mode"): vol.In(HVAC_MODES)},
    "set_value": {vol.Required("value"): _number},  # range and step checked by capability
    "select_option": {vol.Required("option"): _name},  # one of the entity's options: checked by capability
    # allow-listed actions (.actions): a program (one of the select's options) and the appliance's own delay, s
    "start_program": {vol.Required("program"): _name, vol.Optional("start_in_s"): _delay},
    "start_selected_program": {vol.Optional("start_in_s"): _delay},
}

CANDIDATE_SCHEMA = closed(
    {
        vol.Required("intent"): vol.In(sorted(INTENTS)),
        vol.Optional("room", default=None): vol.Any(None, _name, msg=_NAME_MSG),
        vol.Optional("device_alias", default=None): vol.Any(None, _name, msg=_NAME_MSG),
        vol.Optional("device_type", default=None): vol.Any(
            None, vol.In(sorted(DOMAINS)), msg=f"value must be one of {sorted(DOMAINS)} (HA domains)"
        ),
        vol.Optional("params", default=dict): dict,
    }
)


def expected_schema() -> dict[str, Any]:
    """Return a JSON-safe description of the accepted shape, returned to callers on failure."""
    return {
        "keys": ["intent", "room", "device_alias", "device_type", "params"],
        "required": ["intent", "room or device_alias"],
        "intents": sorted(INTENTS),
        "device_types": sorted(DOMAINS),
        "params": {intent: sorted(str(k) for k in spec) for intent, spec in PARAMS.items()},
    }


def parse_candidate(data: Any) -> ModelCandidate:
    """Validate and build a :class:`ModelCandidate`.

    Raises:
        vol.Invalid: with ``path`` and ``msg`` (a ``vol.MultipleInvalid`` lists every error).

    """
    if not isinstance(data, Mapping):
        raise vol.Invalid("expected a mapping")
    valid = CANDIDATE_SCHEMA(dict(data))
    try:
        params = closed(PARAMS.get(valid["intent"], {}))(valid["params"])
    except vol.MultipleInvalid as err:
        raise vol.MultipleInvalid([vol.Invalid(e.msg, ["params", *e.path]) for e in err.errors]) from err
    if valid["room"] is None and valid["device_alias"] is None:
        raise vol.Invalid("room or device_alias is required")
    return ModelCandidate.from_dict({**valid, "params": params})


def evaluate(ctx: GateContext) -> GateResult:
    """Pass when ``ctx.raw_candidate`` parses; sets ``ctx.candidate``.

    Evidence: on success the parsed candidate; on failure ``errors`` (``[{"path", "message"}]``), ``expected``
    (:func:`expected_schema`) and ``actual_keys``.
    """
    raw = ctx.raw_candidate
    if raw is None:
        return GateResult(
            NAME,
            False,
            "invalid command format: no model_candidate (raw text is parsed by the caller)",
            {"errors": [{"path": "", "message": "missing"}], "expected": expected_schema(), "actual_keys": []},
        )
    try:
        ctx.candidate = parse_candidate(raw)
    except vol.Invalid as err:
        errors = err.errors if isinstance(err, vol.MultipleInvalid) else [err]
        listed = [{"path": ".".join(map(str, e.path)), "message": e.msg} for e in errors]
        keys = sorted(map(str, raw)) if isinstance(raw, Mapping) else []
        summary = "; ".join(f"{e['path'] or 'candidate'}: {e['message']}" for e in listed)
        return GateResult(
            NAME,
            False,
            f"invalid command format: {summary}",
            {"errors": listed, "expected": expected_schema(), "actual_keys": keys},
        )
    return GateResult(NAME, True, "candidate matches the schema", {"candidate": ctx.candidate.as_dict()})
