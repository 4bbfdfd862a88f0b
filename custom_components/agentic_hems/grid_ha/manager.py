"""The grid toolkit on one site: the tenant (a config entry) of the pure tools over HA's states, recorder and stores.

:class:`GridManager` implements :class:`~..grid.host.TenantHost` for the pure tools, maps HA users to scopes, and turns
an approved plan into one gated command per slot (``source_agent="grid"``): nothing reaches a device but through the
eight gates. The requests and incidents people decide on, and the gates' setpoint authority, are
:class:`.records.GridRecords`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime, timedelta
import functools
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np

from homeassistant.core import Context, HomeAssistant, State
from homeassistant.helpers.recorder import get_instance
from homeassistant.util import dt as dt_util

from ..const import CONF_GRID_INCIDENT_USERS, CONF_GRID_REQUEST_USERS, CONF_GRID_SIMULATE_USERS, DOMAIN
from ..gates.models import SOURCE_GRID, GridGrant
from ..grid.contracts import USER_SCOPES, Caller, Scope, ToolError
from ..grid.host import Artifacts, Measurement, Prices
from ..grid.network import NetworkError, load_matpower
from ..grid.twin import HOME, HomeSite, Twin, home_twin, matpower_twin
from ..prices.curve import floor_slot
from .records import slot_action
from .site import setpoint_value, to_kw

if TYPE_CHECKING:
    from ..control.manager import ControlManager
    from ..coordinator import PriceCoordinator
    from .audit_log import AuditLog
    from .records import GridRecords

NETWORKS_DIR = ("agentic_hems", "networks")
MAX_CASE_BYTES = 20_000_000  # a case file larger than this is refused, not read


def _measurement(key: str, entity_id: str, state: State | None) -> Measurement:
    """Return the measurement ``key`` from ``state``: a state of charge (``*.soc``) as is, a power in kW.

    Raises:
        ValueError: there is no state, or it is not a finite number.

    """
    if state is None:
        raise ValueError("no state")
    value = float(state.state) if key.endswith(".soc") else to_kw(state)
    if not np.isfinite(value):
        raise ValueError(state.state)
    return Measurement(value, entity_id, state.last_updated)


async def async_recorded_states(hass: HomeAssistant, entity_id: str, start: datetime, end: datetime) -> list[State]:
    """Return the recorder's states of ``entity_id`` in [start, end], with the one in force at ``start``.

    Read in the recorder's executor; empty without a recorder or recorded states.
    """
    if "recorder" not in hass.config.components:
        return []
    from homeassistant.components.recorder import history  # noqa: PLC0415 - only with a recorder

    found = await get_instance(hass).async_add_executor_job(
        functools.partial(
            history.state_changes_during_period, hass, start, end, entity_id, include_start_time_state=True
        )
    )
    return list(found.get(entity_id, []))


class GridManager:
    """One site's tenant for the grid tools (see the module docstring)."""

    def __init__(
        self,
        hass: HomeAssistant,
        entry_id: str,
        options: Mapping[str, Any],
        site: HomeSite,
        coordinator: PriceCoordinator,
        *,
        control: ControlManager,
        audit: AuditLog,
        records: GridRecords,
    ) -> None:
        """Serve the grid tools for the site ``entry_id`` (its tenant) with the given collaborators."""
        self.hass = hass
        self.tenant = entry_id
        self.artifacts = Artifacts()
        self.options = options
        self.coordinator = coordinator
        self.control = control
        self.audit = audit
        self.records = records
        self._site = site
        self._cases: dict[str, tuple[float, Twin]] = {}

    async def async_load(self) -> None:
        """Restore the secret, requests and incidents (see :class:`.records.GridRecords`)."""
        await self.records.async_load()

    @property
    def secret(self) -> bytes:
        """The tools' HMAC secret of this tenant."""
        return self.records.secret

    @secret.setter
    def secret(self, value: bytes) -> None:
        self.records.secret = value

    @property
    def requests(self) -> dict[str, dict[str, Any]]:
        """The authorization requests by id."""
        return self.records.requests

    @property
    def incidents(self) -> dict[str, dict[str, Any]]:
        """The incidents by id."""
        return self.records.incidents

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
        """Return the home twin, or a MATPOWER case from the networks folder (cached until the file changes)."""
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
                    raise ToolError(
                        "network_invalid",
                        "failed",
                        network_id=network_id,
                        error=f"{size} bytes, more than {MAX_CASE_BYTES}",
                    )
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
            try:
                measured[key] = _measurement(key, entity_id, states.get(entity_id))
            except (ValueError, TypeError) as err:
                raise ToolError("measurement_unavailable", "failed", detail=f"{entity_id}: {err}") from err
        return measured

    def _states_now(self, entity_ids: Sequence[str] | Any) -> dict[str, State]:
        return {e: s for e in entity_ids if (s := self.hass.states.get(e)) is not None}

    async def _states_at(self, entity_ids: Sequence[str] | Any, at: datetime) -> dict[str, State]:
        from homeassistant.components.recorder import history  # noqa: PLC0415 - only with a recorder

        ids = list(entity_ids)
        if not ids:
            return {}
        found = await get_instance(self.hass).async_add_executor_job(
            functools.partial(
                history.get_significant_states,
                self.hass,
                at,
                at + timedelta(seconds=1),
                ids,
                include_start_time_state=True,
                significant_changes_only=False,
            )
        )
        return {e: rows[0] for e, rows in found.items() if rows and isinstance(rows[0], State)}

    def describe(self, entity_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Return the current state, unit and last update of each entity."""
        described: dict[str, dict[str, Any]] = {}
        for entity_id in entity_ids:
            state = self.hass.states.get(entity_id)
            described[entity_id] = {
                "entity_id": entity_id,
                "available": state is not None and state.state not in ("unavailable", "unknown"),
            }
            if state is not None:
                described[entity_id] |= {
                    "state": state.state,
                    "unit": state.attributes.get("unit_of_measurement"),
                    "last_updated": state.last_updated.isoformat(),
                }
        return described

    def forecast_entity(self, target: str) -> str | None:
        """Return the entity measuring ``target``, or None.

        load: the house power sensor (a grid meter is net of PV and battery, so never the load); pv: the PV power
        sensor; price: this entry's current price.
        """
        entities = self._site.entities
        if target == "load":
            return entities.get("house.power")
        if target == "pv":
            return entities.get("pv.power")
        from homeassistant.helpers import entity_registry as er  # noqa: PLC0415

        return er.async_get(self.hass).async_get_entity_id("sensor", DOMAIN, f"{self.tenant}_electricity_price")

    async def async_history(self, entity_id: str, start: datetime, end: datetime) -> tuple[list[datetime], list[float]]:
        """Return the numeric states in [start, end] from the recorder (power in kW; unavailable is NaN, a gap).

        Without a recorder or recorded states, the current state alone (so the persistence baseline still answers).
        """
        states = await async_recorded_states(self.hass, entity_id, start, end)
        if not states and (current := self.hass.states.get(entity_id)) is not None:
            states = [current]
        power = entity_id != self.forecast_entity("price")
        times: list[datetime] = []
        values: list[float] = []
        for state in states:
            try:
                value = to_kw(state) if power else float(state.state)
            except ValueError, TypeError:
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
        return Prices(
            total.start,
            total.resolution,
            np.asarray(total.prices, dtype=float),
            np.asarray(spot.window(total.start, total.end).prices, dtype=float),
            total.currency,
            total.source,
        )

    async def async_run[T](self, func: Callable[..., T], *args: Any) -> T:
        """Numeric work in the executor."""
        return await self.hass.async_add_executor_job(func, *args)

    @property
    def audit_broken(self) -> bool:
        """True while the audit chain is broken."""
        return bool(self.audit.broken)

    async def async_append(self, record: dict[str, Any]) -> dict[str, Any]:
        """Append a record to this entry's hash-chained log (the audit sink)."""
        appended: dict[str, Any] = await self.audit.async_append(record)
        return appended

    def record_ids(self) -> set[str]:
        """Return the persisted ids usable as evidence."""
        return self.records.record_ids()

    # --- authorization ---------------------------------------------------------------------------------------------

    def scopes(self, user_id: str | None, is_admin: bool) -> Caller:
        """Return the caller on this tenant and its scopes.

        System (no user) and admins get all four tenant scopes, others read plus the scopes the options grant them.
        ``system`` is never a user's.
        """
        if user_id is None:
            return Caller(None, USER_SCOPES | {Scope.SYSTEM})
        if is_admin:
            return Caller(user_id, USER_SCOPES)
        granted = {Scope.READ}
        for scope, option in (
            (Scope.SIMULATE, CONF_GRID_SIMULATE_USERS),
            (Scope.REQUEST, CONF_GRID_REQUEST_USERS),
            (Scope.INCIDENT, CONF_GRID_INCIDENT_USERS),
        ):
            if user_id in (self.options.get(option) or []):
                granted.add(scope)
        return Caller(user_id, frozenset(granted))

    async def async_submit_request(self, request: dict[str, Any]) -> dict[str, Any]:
        """Persist a request (pending or denied by default), notify a person when pending."""
        return await self.records.async_submit_request(request)

    async def async_open_incident(self, incident: dict[str, Any]) -> dict[str, Any]:
        """Queue an incident (persisted, notified) until a person acknowledges it."""
        return await self.records.async_open_incident(incident)

    async def async_acknowledge(self, incident_id: str, user_id: str) -> dict[str, Any]:
        """Acknowledge an incident as a person (see :meth:`.records.GridRecords.async_acknowledge`)."""
        return await self.records.async_acknowledge(incident_id, user_id)

    def expire_requests(self) -> list[str]:
        """Mark pending requests past ``expires_at`` as expired (their issues go)."""
        return self.records.expire_requests()

    async def async_decide(self, request_id: str, approve: bool, user_id: str, context: Context) -> dict[str, Any]:
        """Approve or deny a pending request as an administrator (the caller checked the user).

        An approved request's current slot is carried out at once.

        Raises:
            ToolError: as :meth:`.records.GridRecords.async_decide`.

        """
        request = await self.records.async_decide(request_id, approve, user_id)
        if approve:
            await self.async_execute_due(self.now(), context)
        return request

    async def async_execute_due(self, now: datetime, context: Context | None = None) -> list[dict[str, Any]]:
        """Set the battery for every approved request whose window covers the current slot.

        Each is one gated ``number.set_value`` on the battery's setpoint entity (``source_agent="grid"``); each
        command passes all eight gates.
        """
        slot = floor_slot(now)
        records: list[dict[str, Any]] = []
        entity_id = self.records.setpoint_entity
        for request in self.requests.values():
            window = request["requested_window"]
            if (
                request["status"] != "approved"
                or slot.isoformat() in request["executed_slots"]
                or not (datetime.fromisoformat(window["start"]) <= slot < datetime.fromisoformat(window["end"]))
            ):
                continue
            action = slot_action(request, slot)
            if action is None:
                continue
            request["executed_slots"].append(slot.isoformat())
            if entity_id is None:
                records.append(
                    {
                        "request_id": request["request_id"],
                        "outcome": "blocked",
                        "reason": "no battery setpoint entity is mapped in the options",
                    }
                )
                continue
            record = await self.control.async_evaluate(
                source_agent=SOURCE_GRID,
                candidate={
                    "intent": "set_value",
                    "device_alias": entity_id,
                    "params": {"value": setpoint_value(self.hass, entity_id, action["p_kw"])},
                },
                context=context or Context(),
                raw_input=f"set the battery to {action['p_kw']:g} kW: approved grid plan, slot {slot.isoformat()}",
                slot_start=slot,
                grant=GridGrant(request_id=request["request_id"], slot_start=slot),
            )
            records.append({"request_id": request["request_id"], **record})
        if records:
            await self.records.async_save()
        return records
