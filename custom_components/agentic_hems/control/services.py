"""Service actions of the gate pipeline: evaluate_command, confirm, reject, get_traces.

``evaluate_command`` is how an outside agent proposes a device command: it calls it through HA's REST API
(``/api/services/agentic_hems/evaluate_command?return_response``). ``confirm`` and ``reject`` need an administrator
user; calls without a user (automations, scripts, the orchestrator) and other users get the translated
``admin_required`` error. A command ``evaluate_command`` proposes with a value that the request (``raw_input``, for
``source_agent: orchestrator``) or the plan does not state is refused with a translated error
(``value_not_requested``, ``value_not_planned``, ``plan_no_value``) naming both values; its trace is kept.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine
import functools
from typing import Any

from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse, SupportsResponse, callback
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv

from ..bounds import MAX_TEXT_CHARS
from ..gates.keeper import PENDING_LIMIT, NotPending, TraceRecord
from ..gates.models import SOURCE_SCHEDULER, Outcome
from ..gates.policy import PLAN_NO_VALUE, VALUE_NOT_PLANNED, VALUE_NOT_REQUESTED
from ..orchestrator.texts import decimal_commas, language
from ..people import async_require_admin, async_viewer
from ..service_helpers import ENTRY_SCHEMA, aware, entry_for_call, invalid, local_text, register
from ..validation import vol

SERVICE_EVALUATE_COMMAND = "evaluate_command"
SERVICE_CONFIRM = "confirm"
SERVICE_REJECT = "reject"
SERVICE_GET_TRACES = "get_traces"
MAX_RAW_INPUT = MAX_TEXT_CHARS


def _strict_int(value: Any) -> int:
    """Return an integer (or its decimal text); booleans and fractions are refused rather than coerced."""
    if isinstance(value, str) and value.strip().lstrip("+").isdigit():
        return int(value)
    if isinstance(value, bool) or not isinstance(value, int):
        raise vol.Invalid("expected a whole number")
    return int(value)


EVALUATE_SCHEMA = vol.Schema(
    {
        **ENTRY_SCHEMA,
        vol.Required("source_agent"): vol.All(cv.string, vol.Length(min=1, max=64)),
        vol.Optional("raw_input", default=""): vol.All(cv.string, vol.Length(max=MAX_RAW_INPUT)),
        vol.Optional("model_candidate"): dict,  # untrusted: the Schema gate checks it
        vol.Optional("dry_run", default=False): cv.boolean,
    }
)
DECIDE_SCHEMA = vol.Schema({**ENTRY_SCHEMA, vol.Required("trace_id"): vol.All(cv.string, vol.Length(min=1, max=64))})
TRACES_SCHEMA = vol.Schema(
    {
        **ENTRY_SCHEMA,
        vol.Optional("outcome"): vol.In([str(o) for o in Outcome]),
        vol.Optional("entity_id"): cv.entity_id,
        vol.Optional("since"): cv.datetime,
        vol.Optional("until"): cv.datetime,
        vol.Optional("limit", default=50): vol.All(_strict_int, vol.Range(min=1, max=500)),
    }
)
STATUS = {Outcome.EXECUTED: "success", Outcome.FAILED: "failure"}
VALUE_REFUSALS = frozenset({VALUE_NOT_REQUESTED, VALUE_NOT_PLANNED, PLAN_NO_VALUE})


def evaluate_response(record: TraceRecord) -> dict[str, Any]:
    """Return the response of ``evaluate_command``, ``confirm`` and ``reject``.

    Its shape is ``{trace_id, outcome, gate_results, result}``.
    """
    execution = record.get("execution_result") or {}
    gates = record.get("gate_results") or []
    outcome = Outcome(record["outcome"])
    return {
        "trace_id": record["trace_id"],
        "outcome": str(outcome),
        "gate_results": gates,
        "result": {
            "status": STATUS.get(outcome, str(outcome)),
            "reason": gates[-1]["reason"] if gates else None,
            "entity_id": record.get("entity_id"),
            "state": execution.get("state_after"),
            "plan": record.get("dry_run_plan"),
            "execution": execution or None,
        },
    }


def pending_refusal(record: TraceRecord) -> dict[str, Any] | None:
    """Return the evidence of a refusal over a pending-confirmation cap (``pending_limit``, ``maximum``), or None."""
    gates = record.get("gate_results") or []
    if record.get("outcome") != Outcome.BLOCKED or not gates:
        return None
    evidence = gates[-1].get("evidence") or {}
    return evidence if PENDING_LIMIT in evidence else None


def value_refusal(record: TraceRecord) -> tuple[str, dict[str, str]] | None:
    """Return (reason key, placeholders) of a command the Policy gate refused for its value, or None.

    The key is one of :data:`VALUE_REFUSALS`; the placeholders are the gate's (``gates.policy``).
    """
    gates = record.get("gate_results") or []
    if record.get("outcome") != Outcome.BLOCKED or not gates:
        return None
    evidence = gates[-1].get("evidence") or {}
    key = evidence.get("reason_key")
    return (key, dict(evidence.get("reason_placeholders") or {})) if key in VALUE_REFUSALS else None


def _value_refused(hass: HomeAssistant, record: TraceRecord, key: str, found: dict[str, str]) -> ServiceValidationError:
    """Return the translated error of a value refusal: the device's name, both values (HA's language), the trace."""
    lang = language(hass.config.language)
    state = hass.states.get(found["entity_id"])
    placeholders = {
        "name": state.name if state is not None else found["entity_id"],
        "asked": decimal_commas(found.get("asked", ""), lang),
        "proposed": decimal_commas(found.get("proposed", ""), lang),
        "trace_id": record["trace_id"],
    }
    if key == VALUE_NOT_PLANNED:
        return invalid("value_not_planned", **placeholders)
    if key == PLAN_NO_VALUE:
        return invalid("plan_no_value", **placeholders)
    return invalid("value_not_requested", **placeholders)


async def _evaluate_command(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Run a proposed command through the gates; a pending limit reached and a value refused are translated errors.

    ``scheduler`` is the source of the integration's own planned commands: a caller may name it for a dry run (a
    preview of a scheduled start) only.
    """
    if call.data["source_agent"] == SOURCE_SCHEDULER and not call.data["dry_run"]:
        raise invalid("source_agent_reserved", source=SOURCE_SCHEDULER)
    entry = entry_for_call(hass, call)
    record = await entry.runtime_data.control.async_evaluate(
        source_agent=call.data["source_agent"],
        raw_input=call.data["raw_input"],
        candidate=call.data.get("model_candidate"),
        context=call.context,
        dry_run=call.data["dry_run"],
    )
    if (refusal := pending_refusal(record)) is not None:
        if refusal[PENDING_LIMIT] == "per_user":
            raise invalid("pending_limit_user", maximum=str(refusal["maximum"]), trace_id=record["trace_id"])
        raise invalid("pending_limit_total", maximum=str(refusal["maximum"]), trace_id=record["trace_id"])
    if (refused := value_refusal(record)) is not None:
        raise _value_refused(hass, record, *refused)
    return evaluate_response(record) if call.return_response else None


async def _admin_id(hass: HomeAssistant, call: ServiceCall) -> str:
    """Return the calling administrator's user id; raise the translated ``admin_required`` error otherwise."""
    return (await async_require_admin(hass, call.context, "admin_required")).id


async def _confirm(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Confirm a pending command as an administrator; a stale confirmation stays pending and is an error."""
    entry = entry_for_call(hass, call)
    user_id = await _admin_id(hass, call)
    try:
        record = await entry.runtime_data.control.async_confirm(call.data["trace_id"], user_id, call.context)
    except NotPending:
        raise invalid("not_pending", trace_id=call.data["trace_id"]) from None
    if record["outcome"] == Outcome.PENDING_CONFIRMATION:  # stale: still pending, the admin may try again
        raise invalid("confirm_stale", reason=str(record["history"][-1].get("reason", "")))
    return evaluate_response(record) if call.return_response else None


async def _reject(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Reject a pending command as an administrator."""
    entry = entry_for_call(hass, call)
    user_id = await _admin_id(hass, call)
    try:
        record = entry.runtime_data.control.async_reject(call.data["trace_id"], user_id, call.context)
    except NotPending:
        raise invalid("not_pending", trace_id=call.data["trace_id"]) from None
    return evaluate_response(record) if call.return_response else None


async def _get_traces(hass: HomeAssistant, call: ServiceCall) -> ServiceResponse:
    """Return the traces the caller may see (filtered), the pending trace ids and whether control is allowed."""
    entry = entry_for_call(hass, call)
    control = entry.runtime_data.control
    since = aware(call.data["since"]) if "since" in call.data else None
    until = aware(call.data["until"]) if "until" in call.data else None
    if since is not None and until is not None and since > until:
        raise invalid("since_after_until", since=local_text(since), until=local_text(until))
    viewer = await async_viewer(hass, call.context)
    traces = control.traces_matching(
        outcome=call.data.get("outcome"),
        entity_id=call.data.get("entity_id"),
        since=since,
        until=until,
        limit=call.data["limit"],
        visible=viewer.may_see_trace,
    )
    pending: list[Any] = [p["trace_id"] for p in control.pending_records() if viewer.may_see_trace(p)]
    return {"traces": list[Any](traces), "pending": pending, "allow_device_control": control.allow_control}


type _Handler = Callable[[HomeAssistant, ServiceCall], Coroutine[Any, Any, ServiceResponse]]
SERVICES: tuple[tuple[str, _Handler, vol.Schema, SupportsResponse], ...] = (
    (SERVICE_EVALUATE_COMMAND, _evaluate_command, EVALUATE_SCHEMA, SupportsResponse.OPTIONAL),
    (SERVICE_CONFIRM, _confirm, DECIDE_SCHEMA, SupportsResponse.OPTIONAL),
    (SERVICE_REJECT, _reject, DECIDE_SCHEMA, SupportsResponse.OPTIONAL),
    (SERVICE_GET_TRACES, _get_traces, TRACES_SCHEMA, SupportsResponse.ONLY),
)


@callback
def async_setup_control_services(hass: HomeAssistant) -> None:
    """Register the gate pipeline's service actions (:data:`SERVICES`: name, handler, schema, response)."""
    for name, handler, schema, response in SERVICES:
        register(hass, name, functools.partial(handler, hass), schema, response)
