"""Pending plan changes: a schedule or cancel asked for without a person's request, held until a person confirms it.

A caller of the LLM API without a conversation (an MCP client: the person's words never reach Home Assistant) may not
store or clear a plan on its own. Its schedule or cancel becomes a :class:`PendingPlanChange` that an administrator
confirms or rejects like a pending device command (the same ``confirm``/``reject`` actions, notification and trace
card): its record is a trace record (``outcome`` ``pending_confirmation``, an Execution result with ``expires_at``
and ``requested_by``, ``candidate`` ``{"intent": "schedule" | "cancel", "appliance": ...}``), and closing it
(confirmed and applied, failed, rejected, expired) gives the same outcomes as a command's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any
import uuid

from homeassistant.core import Context
from homeassistant.exceptions import HomeAssistantError

from ..bounds import MAX_PENDING_PER_USER, MAX_PENDING_TOTAL
from ..canonical_json import json_safe
from ..gates.keeper import REQUESTED, NotPending, TraceRecord
from ..gates.models import Outcome
from ..service_helpers import invalid

EXECUTION = "execution"  # the gate a plan change's confirmation is recorded under, as a command's
EXPIRED = "expired before it was confirmed"
type PlanApplier = Callable[[Mapping[str, Any], Context], Awaitable[dict[str, Any]]]
"""Stores or clears the plan change ``args`` as the confirming administrator (``context``); returns what it did, or
``{"error": ...}``; may raise HomeAssistantError or ValueError (an appliance gone since).
"""


def _step(outcome: Outcome | str, at: datetime, user_id: str | None) -> dict[str, Any]:
    return {"outcome": str(outcome), "at": at.isoformat(), "user_id": user_id}


@dataclass(kw_only=True)
class PendingPlanChange:
    """A schedule or cancel waiting for an administrator.

    ``args`` are the tool's checked arguments (``appliance`` names, comma-separated; ``cancel`` True for a cancel;
    optional ``deadline``, ``earliest_start``, ``start_at`` as written); ``expires_at`` is aware UTC; ``trace`` is its
    record as stored.
    """

    trace_id: str
    source_agent: str
    args: dict[str, Any]
    requested_by: str | None
    expires_at: datetime
    trace: TraceRecord

    @classmethod
    def hold(
        cls,
        args: Mapping[str, Any],
        *,
        source_agent: str,
        user_id: str | None,
        entity_id: str | None,
        now: datetime,
        expires_at: datetime,
    ) -> PendingPlanChange:
        """Return a new pending change of ``args`` asked for by ``user_id`` at ``now`` (``entity_id``: its device)."""
        trace_id = uuid.uuid4().hex
        intent = "cancel" if args.get("cancel") else "schedule"
        record: TraceRecord = {
            "trace_id": trace_id,
            "source_agent": source_agent,
            "raw_input": "",
            "candidate": json_safe({"intent": intent, **args}),
            "entity_id": entity_id,
            "command": None,
            "dry_run_plan": None,
            "execution_result": None,
            "failed_gate": None,
            "gate_results": [
                {
                    "gate": EXECUTION,
                    "passed": True,
                    "reason": f"awaiting confirmation by an administrator until {expires_at.isoformat(timespec='seconds')}",
                    "evidence": {"expires_at": expires_at.isoformat(), "requested_by": user_id, "plan_change": True},
                }
            ],
            "timestamp": now.isoformat(),
            "outcome": str(Outcome.PENDING_CONFIRMATION),
            "history": [_step(REQUESTED, now, user_id), _step(Outcome.PENDING_CONFIRMATION, now, None)],
        }
        return cls(
            trace_id=trace_id,
            source_agent=source_agent,
            args=json_safe(dict(args)),
            requested_by=user_id,
            expires_at=expires_at,
            trace=record,
        )

    @property
    def what(self) -> str:
        """The change in words: ``"schedule Dishwasher"``."""
        return f"{self.trace['candidate']['intent']} {self.args.get('appliance')}"

    def close(self, outcome: Outcome, now: datetime, user_id: str | None, reason: str, **evidence: Any) -> TraceRecord:
        """Return the record closed with ``outcome`` at ``now`` by ``user_id`` (None: the clock) for ``reason``.

        A confirmed change (``executed`` or ``failed``) has ``confirmed`` in its history, and ``evidence`` (with
        ``confirmed_by``) is its ``execution_result``.
        """
        record = dict(self.trace)
        confirmed = outcome in (Outcome.EXECUTED, Outcome.FAILED)
        result = {"user_id": user_id, **json_safe(evidence)}
        record["gate_results"] = [
            *record["gate_results"],
            {"gate": EXECUTION, "passed": outcome is Outcome.EXECUTED, "reason": reason, "evidence": result},
        ]
        record["execution_result"] = result if confirmed else None
        record["outcome"] = str(outcome)
        record["failed_gate"] = None if outcome is Outcome.EXECUTED else EXECUTION
        record["timestamp"] = now.isoformat()
        steps = [_step(Outcome.CONFIRMED, now, user_id)] if confirmed else []
        record["history"] = [*record["history"], *steps, _step(outcome, now, user_id)]
        return record

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form for the Store."""
        return {
            "trace_id": self.trace_id,
            "source_agent": self.source_agent,
            "args": self.args,
            "requested_by": self.requested_by,
            "expires_at": self.expires_at.isoformat(),
            "trace": self.trace,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PendingPlanChange:
        """Inverse of :meth:`as_dict`; raises KeyError, TypeError or ValueError on malformed data."""
        return cls(
            trace_id=str(data["trace_id"]),
            source_agent=str(data["source_agent"]),
            args=dict(data["args"]),
            requested_by=data.get("requested_by"),
            expires_at=datetime.fromisoformat(data["expires_at"]),
            trace=dict(data["trace"]),
        )


@dataclass
class PlanChanges:
    """The site's pending plan changes (``pending``, by trace id) and ``applier``, which stores a confirmed one."""

    pending: dict[str, PendingPlanChange] = field(default_factory=dict)
    applier: PlanApplier | None = None

    def hold(
        self,
        args: Mapping[str, Any],
        user_id: str | None,
        waiting: Iterable[str | None],
        *,
        source_agent: str,
        entity_id: str | None,
        now: datetime,
        ttl: timedelta,
    ) -> PendingPlanChange:
        """Hold ``args`` for an administrator until ``now + ttl``; ``waiting`` are the requesters of all else pending.

        Raises:
            ServiceValidationError: ``pending_limit_user`` or ``pending_limit_total``: as many items wait as allowed.

        """
        requesters = [*waiting, *(c.requested_by for c in self.pending.values())]
        if requesters.count(user_id) >= MAX_PENDING_PER_USER:
            raise invalid("pending_limit_user", maximum=str(MAX_PENDING_PER_USER), trace_id="-")
        if len(requesters) >= MAX_PENDING_TOTAL:
            raise invalid("pending_limit_total", maximum=str(MAX_PENDING_TOTAL), trace_id="-")
        change = PendingPlanChange.hold(
            args, source_agent=source_agent, user_id=user_id, entity_id=entity_id, now=now, expires_at=now + ttl
        )
        self.pending[change.trace_id] = change
        return change

    async def confirm(self, trace_id: str, user_id: str, context: Context, now: datetime) -> TraceRecord:
        """Apply a pending change as the administrator ``user_id``: ``executed``, ``failed`` or ``expired``.

        Raises:
            NotPending: no change waits with ``trace_id``.

        """
        change = self._take(trace_id)
        if now >= change.expires_at:
            return change.close(Outcome.EXPIRED, now, None, EXPIRED)
        try:
            done = await self.applier(change.args, context) if self.applier else {"error": "no planner"}
        except (HomeAssistantError, ValueError) as err:
            done = {"error": str(err) or type(err).__name__}
        if "error" in done:
            reason = f"not applied: {done['error']}"
            return change.close(Outcome.FAILED, now, user_id, reason, confirmed_by=user_id)
        return change.close(Outcome.EXECUTED, now, user_id, f"{change.what}: done", confirmed_by=user_id, **done)

    def reject(self, trace_id: str, user_id: str, now: datetime) -> TraceRecord:
        """Reject a pending change as the administrator ``user_id``; raises NotPending as :meth:`confirm`."""
        return self._take(trace_id).close(Outcome.REJECTED, now, user_id, f"rejected by {user_id}")

    def _take(self, trace_id: str) -> PendingPlanChange:
        if (change := self.pending.pop(trace_id, None)) is None:
            raise NotPending(trace_id)
        return change

    def expire(self, now: datetime) -> list[TraceRecord]:
        """Close every change past its expiry as ``expired``; returns their records."""
        done = [c for c in self.pending.values() if now >= c.expires_at]
        return [self._take(c.trace_id).close(Outcome.EXPIRED, now, None, EXPIRED) for c in done]

    def next_expiry(self) -> datetime | None:
        """When the next change expires, or None."""
        return min((c.expires_at for c in self.pending.values()), default=None)

    def load(self, items: Iterable[Any]) -> list[str]:
        """Restore stored changes (:meth:`PendingPlanChange.as_dict`); returns a warning per unreadable one."""
        warnings: list[str] = []
        for item in items:
            try:
                change = PendingPlanChange.from_dict(item)
            except (KeyError, TypeError, ValueError) as err:
                warnings.append(f"pending plan change: {err}")
                continue
            self.pending[change.trace_id] = change
        return warnings
