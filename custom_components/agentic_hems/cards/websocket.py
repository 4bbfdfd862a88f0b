"""Websocket commands for the Lovelace cards.

Non-admin users cannot subscribe to custom events, so the cards use these commands, which work for every logged-in
user:

- ``agentic_hems/schedule``: today's and tomorrow's prices (with each slot's trust) and every appliance's stored plan
  with its slots;
- ``agentic_hems/subscribe_schedule``: the same, sent at once and again after each change of a plan, the prices, a
  gate decision or a run (the managers' change listeners; nothing polls);
- ``agentic_hems/subscribe_decisions``: the latest gate decisions, then each new one as it is taken, each message with
  the friendly names of their devices and the names of the people in them (``labels``);
- ``agentic_hems/subscribe_run``: the calling user's own assistant runs, iteration by iteration, then the end (for
  administrators too: it feeds the ask card, which shows the run its user started);
- ``agentic_hems/runs``: the stored runs and their statistics.

Decisions and runs follow :mod:`.people`: administrators see all, other users only the ones they asked for; likewise
a non-admin's ``labels`` name only that user (the cards say "an administrator" or "someone" for other ids).

Each takes an optional ``entry_id`` (at most ``MAX_ID_CHARS`` characters, checked first; nothing else); without it
the only loaded entry is used. When an entry unloads (a reload after an options change, say), its subscribers get
``{"type": "unloaded"}`` and subscribe again.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import timedelta
from typing import TYPE_CHECKING, Any

from homeassistant.components import websocket_api
from homeassistant.components.websocket_api.connection import ActiveConnection
from homeassistant.components.websocket_api.decorators import async_response, websocket_command
from homeassistant.components.websocket_api.messages import event_message
from homeassistant.core import Event, HomeAssistant, callback
from homeassistant.exceptions import ServiceValidationError
from homeassistant.util import dt as dt_util

from ..bounds import MAX_ID_CHARS
from ..const import DOMAIN, EVENT_RUN_FINISHED, EVENT_RUN_STEP
from ..people import Viewer, viewer_for_user
from ..planning.home_view import home_payload
from ..service_helpers import resolve_entry
from ..validation import vol

if TYPE_CHECKING:
    from ..runtime import AgenticHemsConfigEntry

MAX_DECISIONS = 20
DATA_SUBSCRIBERS = f"{DOMAIN}_ws_subscribers"  # entry id -> {(connection, message id)}
ENTRY: dict[str | vol.Marker, Any] = {vol.Optional("entry_id"): vol.All(str, vol.Length(max=MAX_ID_CHARS))}


@callback
def async_setup_websocket(hass: HomeAssistant) -> None:
    """Register the commands (once, in ``async_setup``)."""
    for command in (ws_schedule, ws_subscribe_schedule, ws_subscribe_decisions, ws_subscribe_run, ws_runs):
        websocket_api.async_register_command(hass, command)


def _entry(hass: HomeAssistant, connection: ActiveConnection, msg: dict[str, Any]) -> AgenticHemsConfigEntry | None:
    """Return the entry named by ``entry_id`` or the only loaded one (as the services resolve it).

    Otherwise the error is sent, its code the services' translation key (``entry_not_found``, ``entry_required``,
    ...), and None returned.
    """
    try:
        return resolve_entry(hass, msg.get("entry_id"))
    except ServiceValidationError as err:
        connection.send_error(msg["id"], str(err.translation_key), str(err) or str(err.translation_key))
        return None


def _track(hass: HomeAssistant, entry_id: str, connection: ActiveConnection, msg_id: int) -> Callable[[], None]:
    """Remember a live subscription of the entry; the returned callback forgets it."""
    subscribers: set[tuple[ActiveConnection, int]] = hass.data.setdefault(DATA_SUBSCRIBERS, {}).setdefault(
        entry_id, set()
    )
    key = (connection, msg_id)
    subscribers.add(key)
    return lambda: subscribers.discard(key)


@callback
def async_entry_unloaded(hass: HomeAssistant, entry_id: str) -> None:
    """Tell the entry's live subscribers it unloaded: their cards subscribe again once it is back."""
    for connection, msg_id in hass.data.get(DATA_SUBSCRIBERS, {}).pop(entry_id, set()):
        connection.send_message(event_message(msg_id, {"type": "unloaded"}))


def plan_slots(plan: dict[str, Any]) -> list[dict[str, Any]]:
    """Return a stored plan's running slots (power > 0) as ``[{start, end, power_kw}]`` (ISO 8601 UTC)."""
    start = dt_util.parse_datetime(plan["curve_start"])
    if start is None:
        return []
    step = timedelta(minutes=int(plan["resolution_minutes"]))
    return [
        {"start": (start + i * step).isoformat(), "end": (start + (i + 1) * step).isoformat(), "power_kw": p}
        for i, p in enumerate(plan["power_kw"])
        if p > 0
    ]


def schedule_payload(entry: AgenticHemsConfigEntry) -> dict[str, Any]:
    """Return the prices of today and tomorrow (local) and the stored plans, as the schedule card reads them.

    ``{entry_id, currency, resolution_minutes, prices: [{start, end, price, trust}], price_notes: [{start, end,
    issue, trust, detail}], plans: [{appliance_id, name, feasible, start, end, cost, baseline_cost, savings, currency,
    reason, detail, slots}], home, now}``: ``home`` is the whole-home plan (:func:`..planning.home_view.home_payload`,
    None without one); ``price`` is None where unknown, ``trust`` 0 known, 1 doubtful, 2 unknown
    (``PriceCurve.trust``); times are ISO 8601 UTC.
    """
    runtime = entry.runtime_data
    data = runtime.coordinator.data
    prices: list[dict[str, Any]] = []
    notes: list[dict[str, str]] = []
    currency = None
    if data is not None:
        curve = data.total
        currency = curve.currency
        today = dt_util.start_of_local_day()
        window = curve.window(
            max(curve.start, dt_util.as_utc(today)), min(curve.end, dt_util.as_utc(today + timedelta(days=2)))
        )
        step = window.resolution
        prices = [
            {"start": s.isoformat(), "end": (s + step).isoformat(), "price": p, "trust": int(trust)}
            for s, p, trust in zip(window.slot_starts(), window.as_dict()["prices"], window.trust(), strict=True)
        ]
        notes = [span.as_dict() for span in window.issues()]
    return {
        "entry_id": entry.entry_id,
        "currency": currency,
        "resolution_minutes": 15,
        "prices": prices,
        "price_notes": notes,
        "plans": _plans(entry),
        "home": home_payload(home.result, home.config) if (home := runtime.home) is not None else None,
        "now": dt_util.utcnow().isoformat(),
    }


def _plans(entry: AgenticHemsConfigEntry) -> list[dict[str, Any]]:
    """Every appliance's stored plan with its running slots (see :func:`schedule_payload`)."""
    planner = entry.runtime_data.planner
    keys = ("feasible", "start", "end", "cost", "baseline_cost", "savings", "currency", "reason", "detail")
    plans = []
    for appliance_id, state in planner.states.items():
        if state.plan is None:
            continue
        plan = state.plan.as_dict()
        plans.append(
            {
                "appliance_id": appliance_id,
                "name": planner.appliances[appliance_id].name,
                **{key: plan.get(key) for key in keys},
                "slots": plan_slots(plan),
            }
        )
    return plans


@websocket_command({vol.Required("type"): "agentic_hems/schedule", **ENTRY})
@callback
def ws_schedule(hass: HomeAssistant, connection: ActiveConnection, msg: dict[str, Any]) -> None:
    """Prices of today and tomorrow (local) and the stored plans (:func:`schedule_payload`)."""
    if (entry := _entry(hass, connection, msg)) is not None:
        connection.send_result(msg["id"], schedule_payload(entry))


@websocket_command({vol.Required("type"): "agentic_hems/subscribe_schedule", **ENTRY})
@callback
def ws_subscribe_schedule(hass: HomeAssistant, connection: ActiveConnection, msg: dict[str, Any]) -> None:
    """Send ``{"type": "schedule", **schedule_payload}`` now and after each change of plans, prices, gates or runs."""
    if (entry := _entry(hass, connection, msg)) is None:
        return
    runtime = entry.runtime_data

    @callback
    def send() -> None:
        connection.send_message(event_message(msg["id"], {"type": "schedule", **schedule_payload(entry)}))

    unsubs = [
        runtime.planner.async_add_listener(send),
        runtime.coordinator.async_add_listener(send),
        runtime.control.async_add_listener(send),
        runtime.assistant.async_add_listener(send),
        _track(hass, entry.entry_id, connection, msg["id"]),
        *([runtime.home.async_add_listener(send)] if runtime.home is not None else []),
    ]

    @callback
    def unsubscribe() -> None:
        for unsub in unsubs:
            unsub()

    connection.subscriptions[msg["id"]] = unsubscribe
    connection.send_result(msg["id"])
    send()


def _people_in(record: dict[str, Any]) -> set[str]:
    """Return the user ids a trace record names: who asked, confirmed, rejected (history, evidence, result)."""
    found: list[Any] = [step.get("user_id") for step in record.get("history") or () if isinstance(step, dict)]
    sources = [g.get("evidence") for g in record.get("gate_results") or () if isinstance(g, dict)]
    sources.append(record.get("execution_result"))
    for source in sources:
        if isinstance(source, dict):
            found += [source.get(key) for key in ("user_id", "requested_by", "confirmed_by")]
    return {uid for uid in found if isinstance(uid, str)}


async def async_labels(hass: HomeAssistant, viewer: Viewer, records: list[dict[str, Any]]) -> dict[str, Any]:
    """Return ``{"entities": {entity_id: friendly name}, "users": {user_id: name}}`` for the trace records.

    Users are named only where :meth:`Viewer.may_see` allows it (a non-admin: only themselves); unknown ids are left
    out.
    """
    entities: dict[str, str] = {}
    users: dict[str, str] = {}
    for record in records:
        if isinstance(entity_id := record.get("entity_id"), str) and (state := hass.states.get(entity_id)):
            entities[entity_id] = state.name
        for user_id in _people_in(record) - users.keys():
            if viewer.may_see(user_id) and (user := await hass.auth.async_get_user(user_id)) is not None:
                users[user_id] = user.name or ""
    return {"entities": entities, "users": {uid: name for uid, name in users.items() if name}}


@websocket_command({vol.Required("type"): "agentic_hems/subscribe_decisions", **ENTRY})
@async_response
async def ws_subscribe_decisions(hass: HomeAssistant, connection: ActiveConnection, msg: dict[str, Any]) -> None:
    """Send the latest gate decisions (newest first), then each new decision, each with its ``labels``."""
    if (entry := _entry(hass, connection, msg)) is None:
        return
    control = entry.runtime_data.control
    viewer = viewer_for_user(connection.user)

    def pending() -> list[str]:
        return [p["trace_id"] for p in control.pending_records() if viewer.may_see_trace(p)]

    async def send_decision(record: dict[str, Any], waiting: list[str]) -> None:
        labels = await async_labels(hass, viewer, [record])
        if msg["id"] in connection.subscriptions:  # still subscribed once the names are read
            connection.send_message(
                event_message(msg["id"], {"type": "decision", "decision": record, "pending": waiting, "labels": labels})
            )

    @callback
    def forward() -> None:
        if (last := control.last) is not None and viewer.may_see_trace(last):
            hass.async_create_task(send_decision(last, pending()), f"{DOMAIN} decision to a card")

    decisions = control.traces_matching(limit=MAX_DECISIONS, visible=viewer.may_see_trace)
    waiting = pending()
    held = [p for p in control.pending_records() if p["trace_id"] in waiting]
    labels = await async_labels(hass, viewer, [*decisions, *held])
    remove_listener = control.async_add_listener(forward)
    forget = _track(hass, entry.entry_id, connection, msg["id"])

    @callback
    def unsubscribe() -> None:
        remove_listener()
        forget()

    connection.subscriptions[msg["id"]] = unsubscribe
    connection.send_result(msg["id"])
    snapshot = {"type": "snapshot", "decisions": decisions, "pending": waiting, "is_admin": viewer.admin}
    connection.send_message(event_message(msg["id"], {**snapshot, "labels": labels}))


@websocket_command({vol.Required("type"): "agentic_hems/subscribe_run", **ENTRY})
@callback
def ws_subscribe_run(hass: HomeAssistant, connection: ActiveConnection, msg: dict[str, Any]) -> None:
    """Follow the calling user's assistant runs: one message per iteration, then the end of the run."""
    if (entry := _entry(hass, connection, msg)) is None:
        return

    @callback
    def forward(event: Event) -> None:
        if event.data.get("config_entry_id") != entry.entry_id or event.context.user_id != connection.user.id:
            return
        kind = "step" if event.event_type == EVENT_RUN_STEP else "finished"
        payload = {k: v for k, v in event.data.items() if k != "config_entry_id"}
        connection.send_message(event_message(msg["id"], {"type": kind, **payload}))

    unsubs = [
        hass.bus.async_listen(EVENT_RUN_STEP, forward),
        hass.bus.async_listen(EVENT_RUN_FINISHED, forward),
        _track(hass, entry.entry_id, connection, msg["id"]),
    ]

    @callback
    def unsubscribe() -> None:
        for unsub in unsubs:
            unsub()

    connection.subscriptions[msg["id"]] = unsubscribe
    connection.send_result(msg["id"])


@websocket_command({vol.Required("type"): "agentic_hems/runs", **ENTRY})
@callback
def ws_runs(hass: HomeAssistant, connection: ActiveConnection, msg: dict[str, Any]) -> None:
    """Send the stored runs (newest first) and their statistics."""
    if (entry := _entry(hass, connection, msg)) is None:
        return
    assistant = entry.runtime_data.assistant
    viewer = viewer_for_user(connection.user)
    visible = [run for run in reversed(assistant.runs) if viewer.may_see_run(run)]
    keys = ("run_id", "timestamp", "model", "success", "refused", "iterations", "total_tokens", "total_cost")
    runs = [{k: run.get(k) for k in keys} for run in visible]
    connection.send_result(msg["id"], {"runs": runs, "stats": assistant.stats(visible[::-1])})
