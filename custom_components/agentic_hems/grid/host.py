"""What the tools need from a tenant (a config entry), as a small protocol, and the tenant's artifacts.

The HA shell implements :class:`TenantHost` over the entry's registries, states, recorder and stores; the tools stay
pure. Artifacts (snapshots, power-flow results, sims, plans, validations, explanations, forecasts) are kept in memory,
a bounded number per kind: an id from before a restart is unknown, and the tools say so with a typed 404.
"""

from __future__ import annotations

from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Protocol
import uuid

import numpy as np
from numpy.typing import NDArray

from .contracts import ToolError
from .twin import Twin

MAX_PER_KIND = 100


@dataclass(frozen=True)
class Measurement:
    """One mapped measurement: ``value`` in kW (power) or % (SoC), its entity and when it was last updated (UTC)."""

    value: float
    entity_id: str
    last_updated: datetime


@dataclass(frozen=True)
class Prices:
    """Day-ahead prices per 15-minute slot from ``start``: import and export in ``currency``/kWh (NaN unknown)."""

    start: datetime
    step: timedelta
    import_price: NDArray[np.float64]
    export_price: NDArray[np.float64]
    currency: str
    source: str


@dataclass
class Artifact:
    """A tool result kept for later tools: ``data`` is what the tool returned, ``payload`` internal objects."""

    artifact_id: str
    kind: str
    created_at: datetime
    data: dict[str, Any]
    payload: Any = None
    refs: dict[str, str] = field(default_factory=dict)


class Artifacts:
    """The tenant's artifacts by id (at most :data:`MAX_PER_KIND` per kind, oldest dropped first)."""

    def __init__(self) -> None:
        """Start with no artifacts."""
        self._items: OrderedDict[str, Artifact] = OrderedDict()

    def add(
        self,
        kind: str,
        created_at: datetime,
        data: dict[str, Any],
        payload: Any = None,
        refs: dict[str, str] | None = None,
    ) -> Artifact:
        """Store a new artifact of ``kind`` (its id is ``<kind>_<32 hex>``)."""
        artifact = Artifact(f"{kind}_{uuid.uuid4().hex}", kind, created_at, data, payload, refs or {})
        self._items[artifact.artifact_id] = artifact
        same = [key for key, item in self._items.items() if item.kind == kind]
        for key in same[:-MAX_PER_KIND]:
            del self._items[key]
        return artifact

    def get(self, artifact_id: str, kind: str) -> Artifact:
        """Return the artifact, or a typed 404 (``artifact_not_found``): no fuzzy match.

        Raises:
            ToolError: unknown id, or an id of another kind.

        """
        item = self._items.get(artifact_id)
        if item is None or item.kind != kind:
            raise ToolError("artifact_not_found", "not_found", kind=kind, id=artifact_id)
        return item

    def __len__(self) -> int:
        """Return the number of artifacts held."""
        return len(self._items)

    def __contains__(self, artifact_id: object) -> bool:
        """Return True when an artifact with ``artifact_id`` is held."""
        return artifact_id in self._items

    def latest(self, kind: str, predicate: Callable[[Artifact], bool]) -> Artifact | None:
        """Return the newest artifact of ``kind`` satisfying ``predicate``."""
        for item in reversed(self._items.values()):
            if item.kind == kind and predicate(item):
                return item
        return None


class TenantHost(Protocol):
    """One tenant (a site): its twins, measurements, history, prices, secrets and stores."""

    tenant: str
    artifacts: Artifacts
    secret: bytes

    @property
    def retention(self) -> timedelta | None:
        """The recorder's retention, None without a recorder."""

    def now(self) -> datetime:
        """Return the current time (UTC)."""

    async def async_twin(self, network_id: str) -> Twin:
        """Return the twin. Raises ToolError ``network_not_found`` (404) or ``network_invalid``."""

    async def async_measure(self, twin: Twin, at: datetime | None) -> dict[str, Measurement]:
        """``asset_id.quantity`` -> measurement, now or at ``at`` (from the recorder).

        Raises ToolError ``measurement_unavailable`` when any mapped measurement has no valid value.
        """

    def describe(self, entity_ids: Sequence[str]) -> dict[str, dict[str, Any]]:
        """Return the current state, unit and last update of each entity (for asset health)."""

    def forecast_entity(self, target: str) -> str | None:
        """Return the entity whose history feeds ``target`` (load, pv, price), if mapped."""

    async def async_history(self, entity_id: str, start: datetime, end: datetime) -> tuple[list[datetime], list[float]]:
        """Numeric states of ``entity_id`` in [start, end] (UTC), converted to kW for power sensors."""

    def prices(self) -> Prices | None:
        """Return the known day-ahead prices, if any."""

    async def async_run[T](self, func: Callable[..., T], *args: Any) -> T:
        """Run numeric work in the executor."""

    @property
    def audit_broken(self) -> bool:
        """True while the audit chain is broken: request tools are halted."""

    async def async_submit_request(self, request: dict[str, Any]) -> dict[str, Any]:
        """Persist a pending authorization request, notify a person; return it with ``request_id``, ``expires_at``."""

    async def async_open_incident(self, incident: dict[str, Any]) -> dict[str, Any]:
        """Persist an incident in the queue, notify; return it with ``incident_id``."""

    def record_ids(self) -> set[str]:
        """Ids of the persisted records (incidents, authorization requests) usable as evidence."""
