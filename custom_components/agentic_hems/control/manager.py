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
  rejected, expired, traced and announced like pending commands (its ``applier`` stores a confirmed one).
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
from homeassistant.helpers import area_registry as ar, device_registry as dr, entity_registry as er
from homeassistant.helpers.event import async_track_point_in_utc_time
from homeassistant.helpers.storage import Store
from homeassistant.util import dt as dt_util

from ..canonical_json import digest, json_safe
from ..const import DOMAIN, EVENT_GATE_DECISION, LOGGER, MAX_TRACES, STORAGE_VERSION
from ..gates.device_resolved import ResolverIndex
from ..gates.keeper import Gatekeeper, Settings, TraceRecord
from ..gates.models import GridGrant, RequestedAction, SetpointAuthority
from ..gates.redact import redact
from ..grid.contracts import AuditSink, ToolError, generate_audit_record
from ..listeners import ChangeListeners
from ..orchestrator.intent import known_devices, requested_actions
from ..orchestrator.offline import ApplianceRef
from ..people import async_admin
from ..scheduling import program
from ..scheduling.appliance import Appliance
from ..storage import async_load_store
from .ha_view import ASSISTANT, HassActuator, HassView, async_refresh
from .notify import ACTION_CONFIRM, ACTION_REJECT, MOBILE_ACTION_EVENT, Pending, notification_id, notify_pending
from .plan_changes import PlanChanges

__all__ = ["ControlManager", "notification_id"]
SAVE_DELAY_S = 1.0


class ControlManager(ChangeListeners):
    """See the module docstring.

    ``appliance_entity_ids`` are the site's controlled entities (the appliances' and the grid's battery setpoint);
    ``appliances`` are the names a person's request may use (intent binding); ``gated`` are entities hidden from
    Assist that the gates may still target. ``audit`` receives every decision's audit record; ``halt`` and
    ``setpoints`` go to the :class:`~..gates.keeper.Gatekeeper`.
    """

    def __init__(
        self,
        hass: HomeAssistant,
        entry_id: str,
        settings: Settings,
        appliance_entity_ids: frozenset[str],
        *,
        appliances: Sequence[Appliance] = (),
        gated: frozenset[str] = frozenset(),
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
        self.view = HassView(
            hass,
            lambda: appliance_entity_ids,
            gated,
            interlocks=program.interlocks(self.appliances),
            readbacks=program.readbacks(self.appliances),
            idle_unknown=program.program_selects(self.appliances),
            value_units={a.charger.current_entity: a.charger.unit for a in self.appliances if a.charger is not None},
        )
        self.notify_service = notify_service
        self.traces: OrderedDict[str, TraceRecord] = OrderedDict()
        self.plan_changes = PlanChanges()  # its applier is set by the LLM API
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
        for warning in [*self.keeper.load(data), *self.plan_changes.load(data.get("plan_changes") or [])]:
            LOGGER.warning("Dropping unreadable stored control data: %s", warning)

    def _control_data(self) -> dict[str, Any]:
        """Return what the control Store holds: the gatekeeper's state and the pending plan changes."""
        return self.keeper.as_dict() | {"plan_changes": [c.as_dict() for c in self.plan_changes.pending.values()]}

    def _waiting(self) -> list[Pending]:
        return [*self.keeper.pending.values(), *self.plan_changes.pending.values()]

    def pending_records(self) -> list[TraceRecord]:
        """Return the trace records of everything waiting for an administrator: commands, then plan changes."""
        return [p.trace for p in self._waiting()]

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
            notify_pending(self.hass, pending, None)
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

        The text is read against the resolver's candidates, their areas and the site's appliances (which name their
        chargers' current entities too: "charge the car at 10 A"); a temperature in it is in HA's unit system's unit.
        """
        names = {a.charger.current_entity: a.name for a in self.appliances if a.charger is not None}
        devices = known_devices(self.index, names | {a.entity_id: a.name for a in self.appliances})
        refs = [ApplianceRef(a.name, a.kind) for a in self.appliances]
        return requested_actions(text, devices, refs, home_unit=self.hass.config.units.temperature_unit)

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

        It expires after the pending commands' ``confirm_ttl``; ``context.user_id`` asked for it. Raises
        ServiceValidationError (``pending_limit_user``, ``pending_limit_total``) when as many items wait as allowed.
        """

        waiting = (p.requested_by for p in self.keeper.pending.values())
        ttl, now = self.keeper.settings.confirm_ttl, dt_util.utcnow()
        change = self.plan_changes.hold(
            args, context.user_id, waiting, source_agent=source_agent, entity_id=entity_id, now=now, ttl=ttl
        )
        return self._decided(change.trace, context)

    async def async_confirm(self, trace_id: str, user_id: str, context: Context) -> TraceRecord:
        """Confirm a pending command or plan change as an administrator (checked by the caller); raise NotPending."""
        if trace_id in self.plan_changes.pending:
            record = await self.plan_changes.confirm(trace_id, user_id, context, dt_util.utcnow())
            return self._decided(record, context)
        record = await self.keeper.confirm(
            trace_id, user_id, self.view, HassActuator(self.hass, context), index=self.index, refresh=self._refresh
        )
        return self._decided(record, context)

    @callback
    def async_reject(self, trace_id: str, user_id: str, context: Context) -> TraceRecord:
        """Reject a pending command or plan change as an administrator (checked by the caller); raise NotPending."""
        if trace_id in self.plan_changes.pending:
            return self._decided(self.plan_changes.reject(trace_id, user_id, dt_util.utcnow()), context)
        return self._decided(self.keeper.reject(trace_id, user_id), context)

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
        if (pending := self.keeper.pending.get(trace_id) or self.plan_changes.pending.get(trace_id)) is not None:
            notify_pending(self.hass, pending, self.notify_service)
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

    async def _mobile_action(self, event: Event) -> None:
        """Handle a tap on Confirm or Reject in the mobile notification; only an administrator's tap counts."""
        action = str(event.data.get("action", ""))
        trace_id = action.removeprefix(ACTION_CONFIRM).removeprefix(ACTION_REJECT)
        if trace_id == action or (trace_id not in self.keeper.pending and trace_id not in self.plan_changes.pending):
            return
        if (user := await async_admin(self.hass, event.context.user_id)) is None:
            LOGGER.warning("Ignoring a confirmation tap on %s by a non-administrator", trace_id)
            return
        if action.startswith(ACTION_CONFIRM):
            await self.async_confirm(trace_id, user.id, event.context)
        else:
            self.async_reject(trace_id, user.id, event.context)

    def _schedule_expiry(self) -> None:
        if self._expiry_unsub is not None:
            self._expiry_unsub()
            self._expiry_unsub = None
        expiries = (self.keeper.next_expiry(), self.plan_changes.next_expiry())
        if (when := min(filter(None, expiries), default=None)) is not None:
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
        for record in [*self.keeper.expire(), *self.plan_changes.expire(dt_util.utcnow())]:
            self._decided(record, None)

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
