"""Device control for one site: the gatekeeper on HA's live registries, traces, events and confirmations.

:class:`ControlManager` is the only path from a proposed command (a service call, the scheduler, later the
orchestrator) to an actuator. It owns:

- the :class:`.gates.keeper.Gatekeeper` with its ledger, pending confirmations and the "Allow device control"
  setting, persisted in ``agentic_hems.<entry_id>.control``;
- the trace ring (the last ``MAX_TRACES``, redacted, in ``agentic_hems.<entry_id>.traces``);
- the resolver index, rebuilt after an entity, device or area registry change, an Assist exposure change or a
  ``friendly_name`` change;
- the ``agentic_hems_gate_decision`` event, persistent notifications for pending confirmations (re-created at
  start-up), the optional actionable mobile notification, and the expiry timer;
- pending plan changes (:mod:`.plan_changes`: a schedule or cancel asked for without a person's request), confirmed,
  rejected, expired, traced and announced like pending commands; ``plan_applier`` stores a confirmed one.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
from typing import Any

from homeassistant.components import persistent_notification
from homeassistant.components.homeassistant.const import DATA_EXPOSED_ENTITIES
from homeassistant.components.homeassistant.exposed_entities import async_listen_entity_updates
from homeassistant.const import EVENT_STATE_CHANGED
from homeassistant.core import CALLBACK_TYPE, Context, Event, EventStateChangedData, HomeAssistant, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import area_registry as ar, device_registry as dr, entity_registry as er
from homeassistant.helpers.event import async_track_point_in_utc_time
from homeassistant.helpers.storage import Store
from homeassistant.util import dt as dt_util

from ..bounds import MAX_PENDING_PER_USER, MAX_PENDING_TOTAL
from ..canonical_json import digest, json_safe
from ..const import DOMAIN, EVENT_GATE_DECISION, LOGGER, MAX_TRACES, STORAGE_VERSION
from ..gates.device_resolved import ResolverIndex
from ..gates.keeper import Gatekeeper, NotPending, PendingConfirmation, Settings, TraceRecord
from ..gates.models import GridGrant, Outcome, RequestedAction, SetpointAuthority
from ..gates.redact import redact
from ..grid.contracts import AuditSink, ToolError, generate_audit_record
from ..listeners import ChangeListeners
from ..orchestrator.intent import known_devices, requested_actions
from ..orchestrator.offline import ApplianceRef
from ..people import async_admin
from ..scheduling.appliance import Appliance
from ..service_helpers import invalid
from ..storage import async_load_store
from .ha_view import ASSISTANT, HassActuator, HassView, async_refresh
from .plan_changes import PendingPlanChange, PlanApplier

MOBILE_ACTION_EVENT = "mobile_app_notification_action"
ACTION_CONFIRM = "AGENTIC_HEMS_CONFIRM_"
ACTION_REJECT = "AGENTIC_HEMS_REJECT_"
SAVE_DELAY_S = 1.0


def notification_id(trace_id: str) -> str:
    """Return the persistent notification id of a pending confirmation."""
    return f"{DOMAIN}_confirm_{trace_id}"


def _what(pending: PendingConfirmation | PendingPlanChange) -> str:
    """Return the pending item in words: ``"unlock lock.front_door"``, ``"schedule Dishwasher"``."""
    if isinstance(pending, PendingPlanChange):
        return pending.what
    params = pending.candidate.get("params")
    return f"{pending.candidate.get('intent')} {pending.entity_id}{' with ' + str(params) if params else ''}"


def _describe(pending: PendingConfirmation | PendingPlanChange) -> str:
    return (
        f"**{pending.source_agent}** asks to **{_what(pending)}**.\n\n"
        f"An administrator can confirm or reject it until {dt_util.as_local(pending.expires_at):%H:%M}: "
        f"action `agentic_hems.confirm` (or `agentic_hems.reject`) with `trace_id: {pending.trace_id}`."
    )


class ControlManager(ChangeListeners):
    """See the module docstring.

    ``appliance_entity_ids`` are the site's controlled entities (the appliances' and the grid's battery setpoint);
    ``appliances`` are the names a person's request may use (intent binding). ``audit`` receives every decision's
    audit record; ``halt`` and ``setpoints`` go to the :class:`~..gates.keeper.Gatekeeper`.
    """

    def __init__(
        self,
        hass: HomeAssistant,
        entry_id: str,
        settings: Settings,
        appliance_entity_ids: frozenset[str],
        *,
        appliances: Sequence[Appliance] = (),
        notify_service: str | None = None,
        audit: AuditSink | None = None,
        halt: Callable[[str], str | None] | None = None,
        setpoints: SetpointAuthority | None = None,
    ) -> None:
        """Build the site's gatekeeper from ``settings``; :meth:`async_load` restores its state and the traces."""
        self.hass = hass
        self.entry_id = entry_id
        self.appliances = tuple(appliances)
        self.audit = audit
        self.keeper = Gatekeeper(
            settings, dt_util.utcnow, halt=halt, setpoints=setpoints, read_request=self.read_request
        )
        self.view = HassView(hass, lambda: appliance_entity_ids)
        self.notify_service = notify_service
        self.traces: OrderedDict[str, TraceRecord] = OrderedDict()
        self.plan_changes: dict[str, PendingPlanChange] = {}
        self.plan_applier: PlanApplier | None = None  # set by the LLM API: stores a confirmed plan change
        self._index: ResolverIndex | None = None
        self._expiry_unsub: CALLBACK_TYPE | None = None
        self._control_store: Store[dict[str, Any]] = Store(hass, STORAGE_VERSION, f"{DOMAIN}.{entry_id}.control")
        self._trace_store: Store[dict[str, Any]] = Store(hass, STORAGE_VERSION, f"{DOMAIN}.{entry_id}.traces")

    async def async_load(self) -> None:
        """Restore the switch, the ledger, pending confirmations and the trace ring; unreadable data is dropped."""
        for store, restore in ((self._control_store, self._restore_control), (self._trace_store, self._restore_traces)):
            if (data := await async_load_store(store, store.key)) is not None:
                restore(data)

    def _restore_control(self, data: dict[str, Any]) -> None:
        for warning in self.keeper.load(data):
            LOGGER.warning("Dropping unreadable stored control data: %s", warning)
        for item in data.get("plan_changes") or []:
            try:
                change = PendingPlanChange.from_dict(item)
            except (KeyError, TypeError, ValueError) as err:
                LOGGER.warning("Dropping an unreadable pending plan change: %s", err)
                continue
            self.plan_changes[change.trace_id] = change

    def _control_data(self) -> dict[str, Any]:
        """Return what the control Store holds: the gatekeeper's state and the pending plan changes."""
        return self.keeper.as_dict() | {"plan_changes": [c.as_dict() for c in self.plan_changes.values()]}

    def _waiting(self) -> list[PendingConfirmation | PendingPlanChange]:
        return [*self.keeper.pending.values(), *self.plan_changes.values()]

    def pending_records(self) -> list[TraceRecord]:
        """Return the trace records of everything waiting for an administrator: commands, then plan changes."""
        return [p.trace for p in self.keeper.pending.values()] + [c.trace for c in self.plan_changes.values()]

    def _restore_traces(self, data: dict[str, Any]) -> None:
        for record in data.get("traces") or []:
            if isinstance(record, dict) and isinstance(record.get("trace_id"), str):
                self.traces[record["trace_id"]] = record
        while len(self.traces) > MAX_TRACES:
            self.traces.popitem(last=False)

    @callback
    def async_start(self) -> CALLBACK_TYPE:
        """Listen for what invalidates the index, expire old pendings, re-create notifications; returns unsub."""
        unsubs = [
            self.hass.bus.async_listen(er.EVENT_ENTITY_REGISTRY_UPDATED, self._invalidate),
            self.hass.bus.async_listen(dr.EVENT_DEVICE_REGISTRY_UPDATED, self._invalidate),
            self.hass.bus.async_listen(ar.EVENT_AREA_REGISTRY_UPDATED, self._invalidate),
            self.hass.bus.async_listen(EVENT_STATE_CHANGED, self._invalidate, event_filter=_renamed_or_new),
            self.hass.bus.async_listen(MOBILE_ACTION_EVENT, self._mobile_action),
        ]
        if DATA_EXPOSED_ENTITIES in self.hass.data:
            unsubs.append(async_listen_entity_updates(self.hass, ASSISTANT, self._invalidate))
        self._expire_all()
        for pending in self._waiting():
            self._notify_pending(pending, mobile=False)
        self._schedule_expiry()

        @callback
        def _stop() -> None:
            for unsub in unsubs:
                unsub()
            if self._expiry_unsub is not None:
                self._expiry_unsub()
                self._expiry_unsub = None

        return _stop

    @callback
    def _invalidate(self, *_: Any) -> None:
        self._index = None

    @property
    def index(self) -> ResolverIndex:
        """The resolver index, built on first use after a change."""
        if self._index is None:
            self._index = ResolverIndex.build(self.view, include_appliances=self.keeper.settings.include_appliances)
        return self._index

    def read_request(self, text: str) -> frozenset[RequestedAction]:
        """Return what the person's ``text`` asks for (``orchestrator.intent.requested_actions``).

        The text is read against the resolver's candidates, their areas and the site's appliances.
        """
        appliances = self.appliances
        devices = known_devices(self.index, {a.entity_id: a.name for a in appliances})
        return requested_actions(text, devices, [ApplianceRef(a.name, a.kind) for a in appliances])

    @property
    def allow_control(self) -> bool:
        """The "Allow device control" switch."""
        return self.keeper.settings.allow_control

    async def async_set_allow_control(self, allow: bool) -> None:
        """Turn device control on or off (persisted at once)."""
        self.keeper.settings.allow_control = allow
        await self._control_store.async_save(self._control_data())
        self.async_notify_listeners()

    @property
    def last(self) -> TraceRecord | None:
        """The newest decision."""
        return next(reversed(self.traces.values()), None)

    async def _refresh(self, entity_id: str) -> datetime:
        return await async_refresh(self.hass, entity_id)

    async def async_evaluate(
        self,
        *,
        source_agent: str,
        candidate: Mapping[str, Any] | None,
        context: Context,
        raw_input: str = "",
        dry_run: bool = False,
        slot_start: datetime | None = None,
        grant: GridGrant | None = None,
        confirm_only: bool = False,
    ) -> TraceRecord:
        """Run a proposed command through all eight gates under the caller's ``context``; returns its trace.

        ``grant`` is for the grid toolkit's approved slot commands only (see ``gates.policy``); ``confirm_only``
        holds a passing command for an administrator even where the policy allows it (a caller without a person's
        request). A repeat of a
        pending command joins it: the pending trace comes back, with no second notification, event or audit record.
        """
        waiting = set(self.keeper.pending)
        record = await self.keeper.evaluate(
            self.view,
            HassActuator(self.hass, context),
            source_agent=source_agent,
            raw_input=raw_input,
            candidate=candidate,
            dry_run=dry_run,
            slot_start=slot_start,
            user_id=context.user_id,
            index=self.index,
            refresh=self._refresh,
            grant=grant,
            confirm_only=confirm_only,
        )
        if (trace_id := record["trace_id"]) in waiting:  # joined the pending command with the same idempotency key
            LOGGER.debug("A repeat of %s joins the pending command", trace_id)
            return self.traces.get(trace_id) or {**redact(record), "config_entry_id": self.entry_id}
        return self._decided(record, context)

    def hold_plan_change(
        self, args: Mapping[str, Any], context: Context, *, source_agent: str, entity_id: str | None
    ) -> TraceRecord:
        """Hold a schedule or cancel (``args``, see :class:`.plan_changes.PendingPlanChange`) for an administrator.

        It expires after the pending commands' ``confirm_ttl``; ``context.user_id`` asked for it.

        Raises:
            ServiceValidationError: ``pending_limit_user`` or ``pending_limit_total``: as many commands and plan
                changes wait as allowed.

        """
        user_id = context.user_id
        waiting = self._waiting()
        if sum(1 for p in waiting if p.requested_by == user_id) >= MAX_PENDING_PER_USER:
            raise invalid("pending_limit_user", maximum=str(MAX_PENDING_PER_USER), trace_id="-")
        if len(waiting) >= MAX_PENDING_TOTAL:
            raise invalid("pending_limit_total", maximum=str(MAX_PENDING_TOTAL), trace_id="-")
        now = dt_util.utcnow()
        change = PendingPlanChange.hold(
            args,
            source_agent=source_agent,
            user_id=user_id,
            entity_id=entity_id,
            now=now,
            expires_at=now + self.keeper.settings.confirm_ttl,
        )
        self.plan_changes[change.trace_id] = change
        return self._decided(change.trace, context)

    async def async_confirm(self, trace_id: str, user_id: str, context: Context) -> TraceRecord:
        """Confirm a pending command or plan change as an administrator (the caller checked ``user_id``).

        A plan change is stored as ``user_id`` (``context``) by ``plan_applier``: outcome ``executed``, or ``failed``
        with the error; ``expired`` past its expiry.

        Raises:
            NotPending: nothing waits with ``trace_id``.

        """
        if trace_id in self.plan_changes:
            return self._decided(await self._apply(self.plan_changes.pop(trace_id), user_id, context), context)
        record = await self.keeper.confirm(
            trace_id, user_id, self.view, HassActuator(self.hass, context), index=self.index, refresh=self._refresh
        )
        return self._decided(record, context)

    async def _apply(self, change: PendingPlanChange, user_id: str, context: Context) -> TraceRecord:
        """Store or clear a confirmed plan change; returns its closed record."""
        now = dt_util.utcnow()
        if now >= change.expires_at:
            return change.close(Outcome.EXPIRED, now, None, "expired before it was confirmed")
        if self.plan_applier is None:
            return change.close(Outcome.FAILED, now, user_id, "no planner", confirmed_by=user_id)
        try:
            done = await self.plan_applier(change.args, context)
        except (HomeAssistantError, ValueError) as err:
            reason = str(err) or type(err).__name__
            return change.close(Outcome.FAILED, now, user_id, f"not applied: {reason}", confirmed_by=user_id)
        return change.close(Outcome.EXECUTED, now, user_id, f"{change.what}: done", confirmed_by=user_id, **done)

    @callback
    def async_reject(self, trace_id: str, user_id: str, context: Context) -> TraceRecord:
        """Reject a pending command or plan change as an administrator (the caller checked ``user_id``).

        Raises:
            NotPending: nothing waits with ``trace_id``.

        """
        if (change := self.plan_changes.pop(trace_id, None)) is not None:
            record = change.close(Outcome.REJECTED, dt_util.utcnow(), user_id, f"rejected by {user_id}")
            return self._decided(record, context)
        return self._decided(self.keeper.reject(trace_id, user_id), context)

    def is_pending(self, trace_id: str) -> bool:
        """Return True when a command or plan change with ``trace_id`` waits for an administrator."""
        return trace_id in self.keeper.pending or trace_id in self.plan_changes

    def _decided(self, record: TraceRecord, context: Context | None) -> TraceRecord:
        """Store (redacted), announce and persist one decision; returns the stored record."""
        record = redact(record)
        record["config_entry_id"] = self.entry_id
        trace_id = record["trace_id"]
        self.traces.pop(trace_id, None)
        self.traces[trace_id] = record
        while len(self.traces) > MAX_TRACES:
            self.traces.popitem(last=False)
        self._trace_store.async_delay_save(lambda: {"traces": list(self.traces.values())}, SAVE_DELAY_S)
        self._control_store.async_delay_save(self._control_data, SAVE_DELAY_S)
        if (pending := self.keeper.pending.get(trace_id) or self.plan_changes.get(trace_id)) is not None:
            self._notify_pending(pending, mobile=True)
        else:
            persistent_notification.async_dismiss(self.hass, notification_id(trace_id))
        self._schedule_expiry()
        self.hass.bus.async_fire(
            EVENT_GATE_DECISION,
            {
                "config_entry_id": self.entry_id,
                "trace_id": trace_id,
                "outcome": record["outcome"],
                "failed_gate": record.get("failed_gate"),
                "entity_id": record.get("entity_id"),
                "source_agent": record.get("source_agent"),
            },
            context=context,
        )
        self.async_notify_listeners()
        if self.audit is not None:
            entry_record = {
                "type": "gate_decision",
                "actor": record.get("user_id") or (context.user_id if context else None) or "system",
                "tool": "gate_pipeline",
                "trace_id": trace_id,
                "outcome": record["outcome"],
                "source_agent": record.get("source_agent"),
                "entity_id": record.get("entity_id"),
                "inputs_hash": None,
                "outputs_hash": digest(json_safe(record)),
            }
            self.hass.async_create_task(self._async_audit(self.audit, entry_record), f"{DOMAIN} audit {trace_id}")
        return record

    async def _async_audit(self, audit: AuditSink, record: dict[str, Any]) -> None:
        """Append a decision's audit record; a slow or failed append is logged, never lost silently."""
        try:
            await generate_audit_record(audit, record)
        except (ToolError, OSError, RuntimeError) as err:  # e.g. the 1000 ms timeout: the shielded write goes on
            LOGGER.error("Audit record for %s not confirmed: %s", record.get("trace_id"), err)

    def _notify_pending(self, pending: PendingConfirmation | PendingPlanChange, *, mobile: bool) -> None:
        persistent_notification.async_create(
            self.hass,
            _describe(pending),
            title="Agentic HEMS: confirmation needed",
            notification_id=notification_id(pending.trace_id),
        )
        if mobile and self.notify_service:
            domain, _, service = self.notify_service.partition(".")
            data = {
                "title": "Agentic HEMS: confirmation needed",
                "message": f"{pending.source_agent}: {_what(pending)}",
                "data": {
                    "tag": pending.trace_id,
                    "actions": [
                        {"action": f"{ACTION_CONFIRM}{pending.trace_id}", "title": "Confirm"},
                        {"action": f"{ACTION_REJECT}{pending.trace_id}", "title": "Reject"},
                    ],
                },
            }
            self.hass.async_create_task(
                self._async_mobile(domain, service, data), f"{DOMAIN} notify {pending.trace_id}", eager_start=False
            )

    async def _async_mobile(self, domain: str, service: str, data: dict[str, Any]) -> None:
        try:
            await self.hass.services.async_call(domain, service, data, blocking=True)
        except HomeAssistantError as err:
            LOGGER.warning("Could not send the confirmation request through %s.%s: %s", domain, service, err)

    async def _mobile_action(self, event: Event) -> None:
        """Handle a tap on Confirm or Reject in the mobile notification; only an administrator's tap counts."""
        action = str(event.data.get("action", ""))
        trace_id = action.removeprefix(ACTION_CONFIRM).removeprefix(ACTION_REJECT)
        if trace_id == action or not self.is_pending(trace_id):
            return
        if (user := await async_admin(self.hass, event.context.user_id)) is None:
            LOGGER.warning("Ignoring a confirmation tap on %s by a non-administrator", trace_id)
            return
        try:
            if action.startswith(ACTION_CONFIRM):
                await self.async_confirm(trace_id, user.id, event.context)
            else:
                self.async_reject(trace_id, user.id, event.context)
        except NotPending:  # decided elsewhere while this tap was on its way
            LOGGER.debug("%s was decided before the tap", trace_id)

    def _schedule_expiry(self) -> None:
        if self._expiry_unsub is not None:
            self._expiry_unsub()
            self._expiry_unsub = None
        changes = (c.expires_at for c in self.plan_changes.values())
        if (when := min(filter(None, (self.keeper.next_expiry(), *changes)), default=None)) is not None:
            self._expiry_unsub = async_track_point_in_utc_time(
                self.hass, self._expire, when + timedelta(milliseconds=1)
            )

    @callback
    def _expire(self, _: datetime) -> None:
        self._expiry_unsub = None
        self._expire_all()
        self._schedule_expiry()

    def _expire_all(self) -> None:
        """Close every pending command and plan change past its expiry as ``expired``."""
        for record in self.keeper.expire():
            self._decided(record, None)
        now = dt_util.utcnow()
        for change in [c for c in self.plan_changes.values() if now >= c.expires_at]:
            del self.plan_changes[change.trace_id]
            self._decided(change.close(Outcome.EXPIRED, now, None, "expired before it was confirmed"), None)

    async def async_flush(self) -> None:
        """Write both Stores now (unload)."""
        await self._control_store.async_save(self._control_data())
        await self._trace_store.async_save({"traces": list(self.traces.values())})

    def traces_matching(
        self,
        *,
        outcome: str | None = None,
        entity_id: str | None = None,
        since: datetime | None = None,
        until: datetime | None = None,
        limit: int = 50,
        visible: Callable[[TraceRecord], bool] | None = None,
    ) -> list[TraceRecord]:
        """Return the traces newest first.

        They are filtered by who may see them (``visible``), outcome, entity and decision time (aware).
        """
        found: list[TraceRecord] = []
        for record in reversed(self.traces.values()):
            if visible is not None and not visible(record):
                continue
            at = dt_util.parse_datetime(str(record.get("timestamp")))
            if outcome is not None and record.get("outcome") != outcome:
                continue
            if entity_id is not None and record.get("entity_id") != entity_id:
                continue
            if at is not None and ((since is not None and at < since) or (until is not None and at > until)):
                continue
            found.append(record)
            if len(found) >= limit:
                break
        return found


@callback
def _renamed_or_new(event_data: EventStateChangedData) -> bool:
    """Mark the resolver index stale: a state appeared, disappeared or changed its friendly_name."""
    old, new = event_data["old_state"], event_data["new_state"]
    if old is None or new is None:
        return True
    return old.attributes.get("friendly_name") != new.attributes.get("friendly_name")
