"""What the grid toolkit keeps for people to decide, and the gates' authority over the battery setpoint.

:class:`GridRecords` persists (Store ``agentic_hems.<entry_id>.grid``) the tools' HMAC secret, the authorization
requests and the incident queue; it raises a repair issue and a persistent notification for each request that waits
for an administrator and each unacknowledged incident, and audits every decision. It is also the gates'
:class:`~..gates.models.SetpointAuthority`: the battery setpoint is reserved to approved requests' slot commands, each
carrying its request id and slot (a :class:`~..gates.models.GridGrant`), which the Policy gate checks here.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
import secrets
from typing import TYPE_CHECKING, Any
import uuid

import voluptuous as vol

from homeassistant.components import persistent_notification
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.storage import Store
from homeassistant.util import dt as dt_util

from ..const import DOMAIN, LOGGER, STORAGE_VERSION
from ..gates.models import GrantRefusal, GridGrant, NormalizedCommand
from ..grid.contracts import ToolError, generate_audit_record
from ..orchestrator.texts import language as text_language
from ..prices.curve import floor_slot
from ..storage import async_load_store
from .request_text import request_note
from .site import setpoint_value

if TYPE_CHECKING:
    from .audit_log import AuditLog

REQUEST_TTL = timedelta(minutes=30)
MAX_CLOSED = 200  # settled requests and acknowledged incidents kept
SECRET_HEX = 64  # the HMAC secret: 32 bytes, stored as hex


def _instant(value: Any) -> str:
    """Accept an ISO 8601 instant with its offset."""
    if not isinstance(value, str) or datetime.fromisoformat(value).tzinfo is None:
        raise vol.Invalid("not an ISO 8601 instant with an offset")
    return value


_ACTION = vol.Schema(
    {vol.Required("start"): _instant, vol.Required("end"): _instant, vol.Required("type"): str}, extra=vol.ALLOW_EXTRA
)
_REQUEST = vol.Schema(
    {
        vol.Required("request_id"): str,
        vol.Required("plan_id"): str,
        vol.Required("status"): vol.In(("pending", "approved", "denied", "expired")),
        vol.Required("requested_window"): {vol.Required("start"): _instant, vol.Required("end"): _instant},
        vol.Required("expires_at"): _instant,
        vol.Required("actions"): [_ACTION],
    },
    extra=vol.ALLOW_EXTRA,
)
_INCIDENT = vol.Schema(
    {vol.Required("incident_id"): str, vol.Required("severity"): str, vol.Required("title"): str},
    extra=vol.ALLOW_EXTRA,
)


def _readable(items: Any, schema: vol.Schema, what: str) -> dict[str, dict[str, Any]]:
    """Return the stored records ``schema`` accepts; each other one is dropped with a warning, never trusted."""
    kept: dict[str, dict[str, Any]] = {}
    for key, item in (items if isinstance(items, dict) else {}).items():
        try:
            kept[key] = schema(item)
        except (vol.Invalid, ValueError) as err:
            LOGGER.warning("Dropping unreadable stored %s %s: %s", what, key, err)
    return kept


def request_issue_id(request_id: str) -> str:
    """Return the repair issue id of a pending authorization request."""
    return f"authorization_{request_id}"


def incident_issue_id(incident_id: str) -> str:
    """Return the repair issue id of an unacknowledged incident."""
    return f"incident_{incident_id}"


class GridRecords:
    """One site's authorization requests and incidents (see the module docstring).

    ``setpoint_entity`` is the battery's setpoint entity from the options (None when none is mapped).
    """

    def __init__(self, hass: HomeAssistant, entry_id: str, audit: AuditLog, setpoint_entity: str | None) -> None:
        """Start empty; :meth:`async_load` restores the stored requests and incidents."""
        self.hass = hass
        self.audit = audit
        self.setpoint_entity = setpoint_entity
        self.secret = b""
        self.requests: dict[str, dict[str, Any]] = {}
        self.incidents: dict[str, dict[str, Any]] = {}
        self._store: Store[dict[str, Any]] = Store(hass, STORAGE_VERSION, f"{DOMAIN}.{entry_id}.grid")

    async def async_load(self) -> None:
        """Restore the secret, requests and incidents; re-notify what still waits for a person.

        What cannot be read is dropped with a warning, never trusted: an unreadable Store, a request or incident
        without its fields, and a secret that is not 32 bytes of hex (a new secret is drawn and saved: dispatch plans
        signed before must be made again).
        """
        data = await async_load_store(self._store, "grid requests and incidents") or {}
        secret = data.get("secret")
        if isinstance(secret, str) and len(secret) == SECRET_HEX and all(c in "0123456789abcdef" for c in secret):
            self.secret = bytes.fromhex(secret)
        else:
            secret, self.secret = None, secrets.token_bytes(SECRET_HEX // 2)
        self.requests = _readable(data.get("requests"), _REQUEST, "authorization request")
        self.incidents = _readable(data.get("incidents"), _INCIDENT, "incident")
        if secret is None:
            await self.async_save()
        self.expire_requests()
        for request in self.requests.values():
            if request["status"] == "pending":
                self._notify_request(request)
        for incident in self.incidents.values():
            if not incident.get("acknowledged_at"):
                self._notify_incident(incident)

    async def async_save(self) -> None:
        """Write the secret, requests and incidents."""
        await self._store.async_save(
            {"secret": self.secret.hex(), "requests": self.requests, "incidents": self.incidents}
        )

    def now(self) -> datetime:
        """UTC now."""
        return dt_util.utcnow()

    def record_ids(self) -> set[str]:
        """Return the persisted ids usable as evidence."""
        return set(self.requests) | set(self.incidents)

    # --- authorization ---------------------------------------------------------------------------------------------

    async def async_submit_request(self, request: dict[str, Any]) -> dict[str, Any]:
        """Persist a request (pending or denied by default), notify a person when pending."""
        now = self.now()
        request_id = f"auth_{uuid.uuid4().hex}"
        stored = {
            **request,
            "request_id": request_id,
            "created_at": now.isoformat(),
            "expires_at": (now + REQUEST_TTL).isoformat(),
            "decided_by": None,
            "decided_at": None,
            "executed_slots": [],
        }
        self.requests[request_id] = stored
        self._trim(self.requests, lambda r: r["status"] != "pending")
        await self.async_save()
        if stored["status"] == "pending":
            self._notify_request(stored)
        return stored

    def _notify_request(self, request: dict[str, Any]) -> None:
        window = request["requested_window"]
        ir.async_create_issue(
            self.hass,
            DOMAIN,
            request_issue_id(request["request_id"]),
            is_fixable=False,
            is_persistent=True,
            severity=ir.IssueSeverity.WARNING,
            translation_key="authorization_pending",
            translation_placeholders={
                "request_id": request["request_id"],
                "start": window["start"],
                "end": window["end"],
                "expires_at": request["expires_at"],
            },
        )
        title, message = request_note(request, text_language(self.hass.config.language), self.now())
        persistent_notification.async_create(
            self.hass, message, title=title, notification_id=request_issue_id(request["request_id"])
        )

    def _close_request(self, request: dict[str, Any]) -> None:
        ir.async_delete_issue(self.hass, DOMAIN, request_issue_id(request["request_id"]))
        persistent_notification.async_dismiss(self.hass, request_issue_id(request["request_id"]))

    async def async_decide(self, request_id: str, approve: bool, user_id: str) -> dict[str, Any]:
        """Approve or deny a pending request as an administrator (the caller checked the user).

        The approved request's slots are then the manager's to carry out.

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
        request |= {
            "status": "approved" if approve else "denied",
            "decided_by": user_id,
            "decided_at": self.now().isoformat(),
        }
        self._close_request(request)
        await self.async_save()
        await generate_audit_record(
            self.audit,
            {
                "type": "authorization",
                "actor": user_id,
                "tool": "request_authorization",
                "request_id": request_id,
                "decision": request["status"],
                "plan_id": request["plan_id"],
                "inputs_hash": None,
                "outputs_hash": None,
            },
        )
        return request

    def _overlapping(self, request: dict[str, Any]) -> str | None:
        """Return an approved request whose window, from its next unexecuted slot on, overlaps ``request``'s."""
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

    def reserved(self) -> frozenset[str]:
        """Return the battery setpoint entity, when mapped: only approved requests set it (the Policy gate)."""
        return frozenset({self.setpoint_entity}) if self.setpoint_entity else frozenset()

    def scheduled(self) -> frozenset[str]:
        """Return no entity: the grid toolkit's setpoint is set by approved requests only."""
        return frozenset()

    def check_grant(self, grant: GridGrant, command: NormalizedCommand, now: datetime) -> GrantRefusal | None:
        """Return None when ``grant`` allows ``command``, else why not.

        It allows it when it names an approved request, its slot is the current one and in its window, and the
        command sets the setpoint entity to that slot's approved value.
        """
        why = self._grant_refusal(grant, command.entity_id, command.data, now)
        return None if why is None else GrantRefusal(reason=why)

    def _grant_refusal(self, grant: GridGrant, entity_id: str, data: Mapping[str, Any], now: datetime) -> str | None:
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
        if (action := slot_action(request, slot)) is None:
            return f"authorization request {grant.request_id} sets no battery power in slot {slot.isoformat()}"
        if entity_id not in self.reserved():
            return f"{entity_id} is not the battery setpoint"
        expected, value = setpoint_value(self.hass, entity_id, action["p_kw"]), data.get("value")
        if not isinstance(value, (int, float)) or abs(float(value) - expected) > 1e-6:
            return f"value {value} is not the approved {expected:g} for slot {slot.isoformat()}"
        return None

    # --- incidents -------------------------------------------------------------------------------------------------

    async def async_open_incident(self, incident: dict[str, Any]) -> dict[str, Any]:
        """Queue an incident (persisted, notified) until a person acknowledges it."""
        incident_id = f"incident_{uuid.uuid4().hex}"
        stored = {
            **incident,
            "incident_id": incident_id,
            "opened_at": self.now().isoformat(),
            "acknowledged_by": None,
            "acknowledged_at": None,
        }
        self.incidents[incident_id] = stored
        self._trim(self.incidents, lambda i: bool(i.get("acknowledged_at")))
        await self.async_save()
        self._notify_incident(stored)
        return stored

    def _notify_incident(self, incident: dict[str, Any]) -> None:
        severity = {"critical": ir.IssueSeverity.CRITICAL, "warning": ir.IssueSeverity.WARNING}.get(
            incident["severity"], ir.IssueSeverity.WARNING
        )
        ir.async_create_issue(
            self.hass,
            DOMAIN,
            incident_issue_id(incident["incident_id"]),
            is_fixable=False,
            is_persistent=True,
            severity=severity,
            translation_key="incident_open",
            translation_placeholders={
                "incident_id": incident["incident_id"],
                "title": incident["title"],
                "severity": incident["severity"],
            },
        )
        persistent_notification.async_create(
            self.hass,
            f"**{incident['severity']}**: {incident['title']}\n\nEvidence: {', '.join(incident['evidence_ids'])}\n\n"
            f"Acknowledge with `{DOMAIN}.acknowledge_incident` (incident_id `{incident['incident_id']}`).",
            title="Agentic HEMS: incident",
            notification_id=incident_issue_id(incident["incident_id"]),
        )

    async def async_acknowledge(self, incident_id: str, user_id: str) -> dict[str, Any]:
        """Acknowledge an incident as a person; it leaves the queue of open ones.

        Raises:
            ToolError: ``incident_not_found`` (404) or ``incident_acknowledged``.

        """
        incident = self.incidents.get(incident_id)
        if incident is None:
            raise ToolError("incident_not_found", "not_found", incident_id=incident_id)
        if incident.get("acknowledged_at"):
            raise ToolError("incident_acknowledged", incident_id=incident_id)
        incident |= {"acknowledged_by": user_id, "acknowledged_at": self.now().isoformat()}
        await self.async_save()
        ir.async_delete_issue(self.hass, DOMAIN, incident_issue_id(incident_id))
        persistent_notification.async_dismiss(self.hass, incident_issue_id(incident_id))
        await generate_audit_record(
            self.audit,
            {
                "type": "incident_acknowledged",
                "actor": user_id,
                "tool": "create_incident",
                "incident_id": incident_id,
                "inputs_hash": None,
                "outputs_hash": None,
            },
        )
        return incident

    @staticmethod
    def _trim(items: dict[str, dict[str, Any]], closed: Callable[[dict[str, Any]], bool]) -> None:
        """Drop the oldest closed items beyond :data:`MAX_CLOSED`; open ones are never dropped."""
        done = [key for key, item in items.items() if closed(item)]
        for key in done[:-MAX_CLOSED]:
            del items[key]


def slot_action(request: Mapping[str, Any], slot: datetime) -> dict[str, Any] | None:
    """Return the approved request's ``battery_power`` action covering ``slot``, or None."""
    return next(
        (
            a
            for a in request["actions"]
            if datetime.fromisoformat(a["start"]) <= slot < datetime.fromisoformat(a["end"])
            and a["type"] == "battery_power"
        ),
        None,
    )
