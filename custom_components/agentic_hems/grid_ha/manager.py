"""The grid toolkit on one site: seed 002's tenant (a config entry) over HA's states, recorder and stores (issue 5).

:class:`GridManager` implements :class:`~.grid.host.TenantHost` for the pure tools, keeps the persisted authorization
requests and the incident queue, maps HA users to scopes, and turns an approved plan into one gated command per
slot (``source_agent="grid"``): nothing reaches a device but through the eight gates. It is also the gates'
:class:`~.gates.models.SetpointAuthority`: the battery setpoint is reserved to those slot commands, each carrying its
request id and slot (a :class:`~.gates.models.GridGrant`), which the Policy gate has checked here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
import functools
from pathlib import Path
import secrets
from typing import TYPE_CHECKING, Any
import uuid

import numpy as np

from homeassistant.components import persistent_notification
from homeassistant.const import UnitOfPower
from homeassistant.core import Context, HomeAssistant, State
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.recorder import get_instance
from homeassistant.helpers.storage import Store
from homeassistant.util import dt as dt_util
from homeassistant.util.unit_conversion import PowerConverter

from ..const import (
    CONF_BATTERY_CAPACITY_KWH,
    CONF_BATTERY_POWER_KW,
    CONF_GRID_INCIDENT_USERS,
    CONF_GRID_REQUEST_USERS,
    CONF_GRID_SIMULATE_USERS,
    CONF_POWER_LIMIT_KW,
    CONF_PV_PEAK_KW,
    DOMAIN,
    MEASUREMENT_OPTIONS,
    STORAGE_VERSION,
)
from ..gates.models import SOURCE_GRID, GridGrant
from ..grid.contracts import USER_SCOPES, Caller, Scope, ToolError, generate_audit_record
from ..grid.host import Artifacts, Measurement, Prices
from ..grid.network import NetworkError, load_matpower
from ..grid.twin import HOME, HomeSite, Twin, home_twin, matpower_twin
from ..prices.curve import floor_slot

if TYPE_CHECKING:
    from .audit_log import AuditLog
    from ..control.manager import ControlManager
    from ..coordinator import PriceCoordinator
    from ..scheduling.appliance import Appliance

POWER_UNITS = (UnitOfPower.WATT, UnitOfPower.KILO_WATT, UnitOfPower.MEGA_WATT)
NETWORKS_DIR = ("agentic_hems", "networks")
REQUEST_TTL = timedelta(minutes=30)
MAX_CLOSED = 200  # settled requests and acknowledged incidents kept
MAX_CASE_BYTES = 20_000_000  # a case file larger than this is refused, not read


def request_issue_id(request_id: str) -> str:
    """The repair issue of a pending authorization request."""
    return f"authorization_{request_id}"


def incident_issue_id(incident_id: str) -> str:
    """The repair issue of an unacknowledged incident."""
    return f"incident_{incident_id}"


def to_kw(state: State) -> float:
    """A power state in kW (W, kW and MW units; none means kW). Raises ValueError when not numeric."""
    value = float(state.state)
    if not np.isfinite(value):
        raise ValueError(state.state)
    unit = state.attributes.get("unit_of_measurement") or UnitOfPower.KILO_WATT
    if unit not in POWER_UNITS:
        raise ValueError(f"{unit} is not a power unit (W, kW or MW)")
    return float(PowerConverter.convert(value, unit, UnitOfPower.KILO_WATT))


class GridManager:
    """One site's tenant for the grid tools (see the module docstring)."""

    def __init__(self, hass: HomeAssistant, entry_id: str, options: Mapping[str, Any],
                 appliances: Mapping[str, Appliance], coordinator: PriceCoordinator, control: ControlManager,
                 audit: AuditLog) -> None:
        self.hass = hass
        self.tenant = entry_id
        self.artifacts = Artifacts()
        self.secret = b""
        self.options = options
        self.coordinator = coordinator
        self.control = control
        self.audit = audit
        self.requests: dict[str, dict[str, Any]] = {}
        self.incidents: dict[str, dict[str, Any]] = {}
        self._site = _site(options, appliances)
        self._cases: dict[str, tuple[float, Twin]] = {}
        self._store: Store[dict[str, Any]] = Store(hass, STORAGE_VERSION, f"{DOMAIN}.{entry_id}.grid")

    # --- persistence -----------------------------------------------------------------------------------------------

    async def async_load(self) -> None:
        """Restore the secret, requests and incidents; re-notify what still waits for a person."""
        data = await self._store.async_load() or {}
        secret = data.get("secret")
        self.secret = bytes.fromhex(secret) if isinstance(secret, str) else secrets.token_bytes(32)
        self.requests = dict(data.get("requests") or {})
        self.incidents = dict(data.get("incidents") or {})
        if secret is None:
            await self._async_save()
        self.expire_requests()
        for request in self.requests.values():
            if request["status"] == "pending":
                self._notify_request(request)
        for incident in self.incidents.values():
            if not incident.get("acknowledged_at"):
                self._notify_incident(incident)

    async def _async_save(self) -> None:
        await self._store.async_save({"secret": self.secret.hex(), "requests": self.requests,
                                      "incidents": self.incidents})

    # --- TenantHost ------------------------------------------------------------------------------------------------

    def now(self) -> datetime:
        """UTC now."""
        return dt_util.utcnow()

    @property
    def retention(self) -> timedelta | None:
        """The recorder's retention (``purge_keep_days``), None without a recorder."""
        if "recorder" not in self.hass.config.components:
            return None
        return timedelta(days=get_instance(self.hass).keep_days)

    @property
    def networks_dir(self) -> Path:
        """``<config>/agentic_hems/networks``."""
        return Path(self.hass.config.path(*NETWORKS_DIR))

    def network_ids(self) -> list[str]:
        """``home`` and the case files' stems (blocking: call in the executor)."""
        found = sorted(p.stem for p in self.networks_dir.glob("*") if p.suffix in (".m", ".json"))
        return [HOME, *found]

    async def async_twin(self, network_id: str) -> Twin:
        """The home twin, or a MATPOWER case from the networks folder (cached until the file changes)."""
        if network_id == HOME:
            return home_twin(self._site)
        if "/" in network_id or "\\" in network_id or network_id.startswith("."):
            raise ToolError("network_not_found", "not_found", network_id=network_id)
        return await self.hass.async_add_executor_job(self._load_case, network_id)

    def _load_case(self, network_id: str) -> Twin:
        for suffix in (".m", ".json"):
            path = self.networks_dir / f"{network_id}{suffix}"
            if path.is_file():
                mtime, size = path.stat().st_mtime, path.stat().st_size
                if size > MAX_CASE_BYTES:
                    raise ToolError("network_invalid", "failed", network_id=network_id,
                                    error=f"{size} bytes, more than {MAX_CASE_BYTES}")
                cached = self._cases.get(network_id)
                if cached and cached[0] == mtime:
                    return cached[1]
                try:
                    twin = matpower_twin(network_id, load_matpower(path), path.name)
                except (NetworkError, OSError, ValueError) as err:  # ValueError: not UTF-8 text
                    raise ToolError("network_invalid", "failed", network_id=network_id, error=str(err)) from err
                self._cases[network_id] = (mtime, twin)
                return twin
        raise ToolError("network_not_found", "not_found", network_id=network_id)

    async def async_measure(self, twin: Twin, at: datetime | None) -> dict[str, Measurement]:
        """Every mapped measurement now (states) or at ``at`` (the recorder); all or nothing."""
        wanted = {f"{a.asset_id}.{q}": e for a in twin.assets.values() for q, e in a.measurements.items()}
        states = self._states_now(wanted.values()) if at is None else await self._states_at(wanted.values(), at)
        measured: dict[str, Measurement] = {}
        for key, entity_id in wanted.items():
            state = states.get(entity_id)
            try:
                if state is None:
                    raise ValueError("no state")
                value = float(state.state) if key.endswith(".soc") else to_kw(state)
                if not np.isfinite(value):
                    raise ValueError(state.state)
            except (ValueError, TypeError) as err:
                raise ToolError("measurement_unavailable", "failed", detail=f"{entity_id}: {err}") from err
            measured[key] = Measurement(value, entity_id, state.last_updated)
        return measured

    def _states_now(self, entity_ids: Sequence[str] | Any) -> dict[str, State]:
        return {e: s for e in entity_ids if (s := self.hass.states.get(e)) is not None}

    async def _states_at(self, entity_ids: Sequence[str] | Any, at: datetime) -> dict[str, State]:
        from homeassistant.components.recorder import history  # noqa: PLC0415 - only with a recorder

        ids = list(entity_ids)
        if not ids:
            return {}
        found = await get_instance(self.hass).async_add_executor_job(
            functools.partial(history.get_significant_states, self.hass, at, at + timedelta(seconds=1), ids,
                              include_start_time_state=True, significant_changes_only=False)
        )
        return {e: rows[0] for e, rows in found.items() if rows and isinstance(rows[0], State)}

    def describe(self, entity_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Current state, unit and last update of each entity."""
        described: dict[str, dict[str, Any]] = {}
        for entity_id in entity_ids:
            state = self.hass.states.get(entity_id)
            described[entity_id] = {"entity_id": entity_id, "available": state is not None and state.state not in (
                "unavailable", "unknown")}
            if state is not None:
                described[entity_id] |= {"state": state.state,
                                         "unit": state.attributes.get("unit_of_measurement"),
                                         "last_updated": state.last_updated.isoformat()}
        return described

    def forecast_entity(self, target: str) -> str | None:
        """load: the house power sensor (a grid meter is net of PV and battery, so never the load); pv: the PV power
        sensor; price: this entry's current price."""
        entities = self._site.entities
        if target == "load":
            return entities.get("house.power")
        if target == "pv":
            return entities.get("pv.power")
        from homeassistant.helpers import entity_registry as er  # noqa: PLC0415

        return er.async_get(self.hass).async_get_entity_id("sensor", DOMAIN, f"{self.tenant}_electricity_price")

    async def async_history(self, entity_id: str, start: datetime, end: datetime
                            ) -> tuple[list[datetime], list[float]]:
        """Numeric states in [start, end] from the recorder (power in kW; unavailable is NaN, a gap). Without a
        recorder or recorded states, the current state alone (so the persistence baseline still answers)."""
        states: list[State] = []
        if "recorder" in self.hass.config.components:
            from homeassistant.components.recorder import history  # noqa: PLC0415 - only with a recorder

            found = await get_instance(self.hass).async_add_executor_job(
                functools.partial(history.state_changes_during_period, self.hass, start, end, entity_id,
                                  include_start_time_state=True)
            )
            states = found.get(entity_id, [])
        if not states and (current := self.hass.states.get(entity_id)) is not None:
            states = [current]
        power = entity_id != self.forecast_entity("price")
        times: list[datetime] = []
        values: list[float] = []
        for state in states:
            try:
                value = to_kw(state) if power else float(state.state)
            except (ValueError, TypeError):
                value = float("nan")  # unavailable: a gap, never a zero
            times.append(state.last_updated)
            values.append(value)
        return times, values

    def prices(self) -> Prices | None:
        """Import: the total price after the formula; export: the spot price (per kWh)."""
        data = self.coordinator.data
        if data is None:
            return None
        total, spot = data.total, data.spot
        return Prices(total.start, total.resolution, np.asarray(total.prices, dtype=float),
                      np.asarray(spot.window(total.start, total.end).prices, dtype=float), total.currency, total.source)

    async def async_run[T](self, func: Callable[..., T], *args: Any) -> T:
        """Numeric work in the executor."""
        return await self.hass.async_add_executor_job(func, *args)

    @property
    def audit_broken(self) -> bool:
        """True while the audit chain is broken."""
        return bool(self.audit.broken)

    async def async_append(self, record: dict[str, Any]) -> dict[str, Any]:
        """The audit sink: append to this entry's hash-chained log."""
        appended: dict[str, Any] = await self.audit.async_append(record)
        return appended

    def record_ids(self) -> set[str]:
        """Persisted ids usable as evidence."""
        return set(self.requests) | set(self.incidents)

    # --- authorization ---------------------------------------------------------------------------------------------

    def scopes(self, user_id: str | None, is_admin: bool) -> Caller:
        """The caller on this tenant: system (no user) and admins get all four tenant scopes, others read plus the
        scopes the options grant them. ``system`` is never a user's."""
        if user_id is None:
            return Caller(None, USER_SCOPES | {Scope.SYSTEM})
        if is_admin:
            return Caller(user_id, USER_SCOPES)
        granted = {Scope.READ}
        for scope, option in ((Scope.SIMULATE, CONF_GRID_SIMULATE_USERS), (Scope.REQUEST, CONF_GRID_REQUEST_USERS),
                              (Scope.INCIDENT, CONF_GRID_INCIDENT_USERS)):
            if user_id in (self.options.get(option) or []):
                granted.add(scope)
        return Caller(user_id, frozenset(granted))

    async def async_submit_request(self, request: dict[str, Any]) -> dict[str, Any]:
        """Persist a request (pending or denied by default), notify a person when pending."""
        now = self.now()
        request_id = f"auth_{uuid.uuid4().hex}"
        stored = {**request, "request_id": request_id, "created_at": now.isoformat(),
                  "expires_at": (now + REQUEST_TTL).isoformat(), "decided_by": None, "decided_at": None,
                  "executed_slots": []}
        self.requests[request_id] = stored
        self._trim(self.requests, lambda r: r["status"] != "pending")
        await self._async_save()
        if stored["status"] == "pending":
            self._notify_request(stored)
        return stored

    def _notify_request(self, request: dict[str, Any]) -> None:
        window = request["requested_window"]
        ir.async_create_issue(
            self.hass, DOMAIN, request_issue_id(request["request_id"]), is_fixable=False, is_persistent=True,
            severity=ir.IssueSeverity.WARNING, translation_key="authorization_pending",
            translation_placeholders={"request_id": request["request_id"], "start": window["start"],
                                      "end": window["end"], "expires_at": request["expires_at"]},
        )
        persistent_notification.async_create(
            self.hass,
            f"{request.get('summary') or 'A grid plan'}\n\nRequest `{request['request_id']}` for {window['start']} to "
            f"{window['end']} waits for an administrator: `{DOMAIN}.approve_authorization` or "
            f"`{DOMAIN}.deny_authorization` (expires {request['expires_at']}).",
            title="Agentic HEMS: authorization requested", notification_id=request_issue_id(request["request_id"]),
        )

    def _close_request(self, request: dict[str, Any]) -> None:
        ir.async_delete_issue(self.hass, DOMAIN, request_issue_id(request["request_id"]))
        persistent_notification.async_dismiss(self.hass, request_issue_id(request["request_id"]))

    async def async_decide(self, request_id: str, approve: bool, user_id: str, context: Context) -> dict[str, Any]:
        """An administrator approves or denies a pending request (the caller checked the user).

        Raises:
            ToolError: ``request_not_found`` (404), ``request_not_pending``; on approval ``audit_chain_broken`` or
                ``request_overlaps`` (another approved request still to run in an overlapping window).
        """
        self.expire_requests()
        request = self.requests.get(request_id)
        if request is None:
            raise ToolError("request_not_found", "not_found", request_id=request_id)
        if request["status"] != "pending":
            raise ToolError("request_not_pending", request_id=request_id, state=request["status"])
        if approve and self.audit.broken:
            raise ToolError("audit_chain_broken", "halted")
        if approve and (other := self._overlapping(request)) is not None:  # one plan drives the battery at a time
            raise ToolError("request_overlaps", request_id=request_id, other=other)
        request |= {"status": "approved" if approve else "denied", "decided_by": user_id,
                    "decided_at": self.now().isoformat()}
        self._close_request(request)
        await self._async_save()
        await generate_audit_record(self.audit, {
            "type": "authorization", "actor": user_id, "tool": "request_authorization",
                                       "request_id": request_id, "decision": request["status"],
                                       "plan_id": request["plan_id"], "inputs_hash": None, "outputs_hash": None})
        if approve:
            await self.async_execute_due(self.now(), context)
        return request

    def _overlapping(self, request: dict[str, Any]) -> str | None:
        """An approved request whose window, from its next unexecuted slot on, overlaps ``request``'s."""
        start, end = (datetime.fromisoformat(request["requested_window"][k]) for k in ("start", "end"))
        now = floor_slot(self.now())
        for other in self.requests.values():
            if other["status"] != "approved":
                continue
            o_start, o_end = (datetime.fromisoformat(other["requested_window"][k]) for k in ("start", "end"))
            if max(start, o_start, now) < min(end, o_end):
                return str(other["request_id"])
        return None

    def expire_requests(self) -> list[str]:
        """Mark pending requests past ``expires_at`` as expired (their issues go)."""
        now = self.now()
        expired = []
        for request in self.requests.values():
            if request["status"] == "pending" and datetime.fromisoformat(request["expires_at"]) <= now:
                request["status"] = "expired"
                self._close_request(request)
                expired.append(request["request_id"])
        return expired

    async def async_execute_due(self, now: datetime, context: Context | None = None) -> list[dict[str, Any]]:
        """For every approved request whose window covers the current slot, one gated ``number.set_value`` on the
        battery's setpoint entity (``source_agent="grid"``); each command passes all eight gates."""
        slot = floor_slot(now)
        records: list[dict[str, Any]] = []
        entity_id = self._site.entities.get("battery.setpoint")
        for request in self.requests.values():
            window = request["requested_window"]
            if request["status"] != "approved" or slot.isoformat() in request["executed_slots"] or not (
                    datetime.fromisoformat(window["start"]) <= slot < datetime.fromisoformat(window["end"])):
                continue
            action = _slot_action(request, slot)
            if action is None:
                continue
            request["executed_slots"].append(slot.isoformat())
            if entity_id is None:
                records.append({"request_id": request["request_id"], "outcome": "blocked",
                                "reason": "no battery setpoint entity is mapped in the options"})
                continue
            record = await self.control.async_evaluate(
                source_agent=SOURCE_GRID,
                candidate={"intent": "set_value", "device_alias": entity_id,
                           "params": {"value": self._setpoint(entity_id, action["p_kw"])}},
                context=context or Context(),
                raw_input=f"set the battery to {action['p_kw']:g} kW: approved grid plan, slot {slot.isoformat()}",
                slot_start=slot,
                grant=GridGrant(request_id=request["request_id"], slot_start=slot),
            )
            records.append({"request_id": request["request_id"], **record})
        if records:
            await self._async_save()
        return records

    def reserved(self) -> frozenset[str]:
        """The battery setpoint entity, when mapped: only approved requests set it (the Policy gate)."""
        entity_id = self._site.entities.get("battery.setpoint")
        return frozenset({entity_id}) if entity_id else frozenset()

    def check_grant(self, grant: GridGrant, entity_id: str, data: Mapping[str, Any], now: datetime) -> str | None:
        """None when ``grant`` names an approved request, its slot is the current one and in its window, and the
        command sets ``entity_id`` (the setpoint) to that slot's approved value; else why not."""
        request = self.requests.get(grant.request_id)
        if request is None:
            return f"no authorization request {grant.request_id}"
        if request["status"] != "approved":
            return f"authorization request {grant.request_id} is {request['status']}, not approved"
        slot = floor_slot(now)
        if grant.slot_start != slot:
            return f"the command is for slot {grant.slot_start.isoformat()}, not the current slot {slot.isoformat()}"
        window = request["requested_window"]
        if not datetime.fromisoformat(window["start"]) <= slot < datetime.fromisoformat(window["end"]):
            return f"slot {slot.isoformat()} is outside the window of authorization request {grant.request_id}"
        if (action := _slot_action(request, slot)) is None:
            return f"authorization request {grant.request_id} sets no battery power in slot {slot.isoformat()}"
        if entity_id not in self.reserved():
            return f"{entity_id} is not the battery setpoint"
        expected, value = self._setpoint(entity_id, action["p_kw"]), data.get("value")
        if not isinstance(value, (int, float)) or abs(float(value) - expected) > 1e-6:
            return f"value {value} is not the approved {expected:g} for slot {slot.isoformat()}"
        return None

    def _setpoint(self, entity_id: str, p_kw: float) -> float:
        """``p_kw`` in the setpoint entity's unit (W, kW or MW; kW without one), on its step grid from ``min``."""
        state = self.hass.states.get(entity_id)
        attributes = state.attributes if state else {}
        unit = attributes.get("unit_of_measurement")
        value = float(PowerConverter.convert(p_kw, UnitOfPower.KILO_WATT, unit)) if unit in POWER_UNITS else p_kw
        step, low = attributes.get("step"), attributes.get("min", 0.0)
        if isinstance(step, (int, float)) and step > 0 and isinstance(low, (int, float)):
            value = low + round((value - low) / step) * step
        return round(value, 6)

    # --- incidents -------------------------------------------------------------------------------------------------

    async def async_open_incident(self, incident: dict[str, Any]) -> dict[str, Any]:
        """Queue an incident (persisted, notified) until a person acknowledges it."""
        incident_id = f"incident_{uuid.uuid4().hex}"
        stored = {**incident, "incident_id": incident_id, "opened_at": self.now().isoformat(),
                  "acknowledged_by": None, "acknowledged_at": None}
        self.incidents[incident_id] = stored
        self._trim(self.incidents, lambda i: bool(i.get("acknowledged_at")))
        await self._async_save()
        self._notify_incident(stored)
        return stored

    def _notify_incident(self, incident: dict[str, Any]) -> None:
        severity = {"critical": ir.IssueSeverity.CRITICAL, "warning": ir.IssueSeverity.WARNING}.get(
            incident["severity"], ir.IssueSeverity.WARNING)
        ir.async_create_issue(
            self.hass, DOMAIN, incident_issue_id(incident["incident_id"]), is_fixable=False, is_persistent=True,
            severity=severity, translation_key="incident_open",
            translation_placeholders={"incident_id": incident["incident_id"], "title": incident["title"],
                                      "severity": incident["severity"]},
        )
        persistent_notification.async_create(
            self.hass,
            f"**{incident['severity']}**: {incident['title']}\n\nEvidence: {', '.join(incident['evidence_ids'])}\n\n"
            f"Acknowledge with `{DOMAIN}.acknowledge_incident` (incident_id `{incident['incident_id']}`).",
            title="Agentic HEMS: incident", notification_id=incident_issue_id(incident["incident_id"]),
        )

    async def async_acknowledge(self, incident_id: str, user_id: str) -> dict[str, Any]:
        """A person acknowledges an incident; it leaves the queue of open ones.

        Raises:
            ToolError: ``incident_not_found`` (404) or ``incident_acknowledged``.
        """
        incident = self.incidents.get(incident_id)
        if incident is None:
            raise ToolError("incident_not_found", "not_found", incident_id=incident_id)
        if incident.get("acknowledged_at"):
            raise ToolError("incident_acknowledged", incident_id=incident_id)
        incident |= {"acknowledged_by": user_id, "acknowledged_at": self.now().isoformat()}
        await self._async_save()
        ir.async_delete_issue(self.hass, DOMAIN, incident_issue_id(incident_id))
        persistent_notification.async_dismiss(self.hass, incident_issue_id(incident_id))
        await generate_audit_record(self.audit, {
            "type": "incident_acknowledged", "actor": user_id, "tool": "create_incident",
                                       "incident_id": incident_id, "inputs_hash": None, "outputs_hash": None})
        return incident

    @staticmethod
    def _trim(items: dict[str, dict[str, Any]], closed: Callable[[dict[str, Any]], bool]) -> None:
        """Drop the oldest closed items beyond :data:`MAX_CLOSED`; open ones are never dropped."""
        done = [key for key, item in items.items() if closed(item)]
        for key in done[:-MAX_CLOSED]:
            del items[key]


def _slot_action(request: Mapping[str, Any], slot: datetime) -> dict[str, Any] | None:
    """The approved request's ``battery_power`` action covering ``slot``, or None."""
    return next((a for a in request["actions"] if datetime.fromisoformat(a["start"]) <= slot
                 < datetime.fromisoformat(a["end"]) and a["type"] == "battery_power"), None)


def _site(options: Mapping[str, Any], appliances: Mapping[str, Appliance]) -> HomeSite:
    """The home twin's site from the options and the appliance subentries."""
    flexible: list[tuple[str, str, float]] = []
    ids: dict[str, str] = {}
    for appliance in appliances.values():
        if appliance.kind in ("ev_charger", "heat_pump"):
            asset_id = appliance.kind if appliance.kind not in ids.values() else f"{appliance.kind}_{len(ids) + 1}"
            ids[appliance.appliance_id] = asset_id
            flexible.append((asset_id, appliance.kind, appliance.power_kw))
    entities = {key: options[option] for key, option in MEASUREMENT_OPTIONS.items() if options.get(option)}

    def number(key: str) -> float | None:
        value = options.get(key)
        return float(value) if isinstance(value, (int, float, str)) and value != "" else None

    return HomeSite(
        fuse_kw=float(options[CONF_POWER_LIMIT_KW]),
        pv_peak_kw=number(CONF_PV_PEAK_KW),
        battery_kwh=number(CONF_BATTERY_CAPACITY_KWH),
        battery_kw=number(CONF_BATTERY_POWER_KW),
        appliances=tuple(flexible),
        entities=entities,
    )
