"""Pending plan changes: a schedule or cancel asked for without a person's request, held until a person confirms it.

A caller of the LLM API without a conversation (an MCP client: the person's words never reach Home Assistant) may not
store or clear a plan on its own. Its schedule or cancel becomes a :class:`PendingPlanChange` that an administrator
confirms or rejects like a pending device command (the same ``confirm``/``reject`` actions, notification and trace
card): its record is a trace record (``outcome`` ``pending_confirmation``, an Execution result with ``expires_at``
and ``requested_by``, ``candidate`` ``{"intent": "schedule" | "cancel", "appliance": ...}``), and closing it
(confirmed and applied, failed, rejected, expired) gives the same outcomes as a command's.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import datetime
from typing import Any
import uuid

from homeassistant.core import Context

from ..canonical_json import json_safe
from ..gates.keeper import REQUESTED, TraceRecord
from ..gates.models import Outcome

EXECUTION = "execution"  # the gate a plan change's confirmation is recorded under, as a command's
type PlanApplier = Callable[[Mapping[str, Any], Context], Awaitable[dict[str, Any]]]
"""Stores or clears the plan change ``args`` as the confirming administrator (``context``); returns what it did.

Raises ServiceValidationError or HomeAssistantError when it cannot (an unknown appliance, no prices).
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
