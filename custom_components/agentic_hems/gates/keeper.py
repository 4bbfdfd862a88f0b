"""The gatekeeper: gates 1-7, then Execution (gate 8), confirmations and their expiry.

One :class:`Gatekeeper` per site (config entry). It is pure: the HA shell gives it a view, an actuator, a clock and a
Freshness refresh hook, persists :meth:`Gatekeeper.as_dict`, stores the trace records it returns, fires events and
raises notifications. Every method returns the trace as a JSON-safe record (``PipelineTrace.as_dict()`` plus
``history``: the steps it went through, each ``{"outcome", "at", "user_id"}``; the first is ``requested``, with the
HA user who asked, or None for automations and the scheduler).

- Device control off (the default) or ``dry_run`` asked: a passing command ends as ``dry_run``.
- Policy ``allow``: executed through :func:`.execution.execute`.
- Policy ``confirm``: a :class:`PendingConfirmation` waits for an administrator (the shell checks who may confirm;
  no source_agent can). :meth:`Gatekeeper.confirm` re-runs the gates (so Freshness and Policy again) under the same
  trace_id and slot start, and executes only when the target and idempotency key are unchanged and control is on;
  a stale state leaves it pending, so the administrator can try again once the device reports.
- Pendings expire after ``confirm_ttl`` (10 min); an idempotency key never executes twice within 24 h.
- Pendings are capped: ``MAX_PENDING_PER_USER`` per requester (an HA user, or None: the automations and the
  scheduler together) and ``MAX_PENDING_TOTAL`` per site. A command over a cap is refused (outcome ``blocked`` at
  the Execution gate, evidence ``pending_limit``). A repeat of a pending command (the same idempotency key, or the
  same requester, source, service call and slot) joins it: :meth:`Gatekeeper.evaluate` returns the pending trace and
  keeps no second entry.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any

from ..bounds import MAX_PENDING_PER_USER, MAX_PENDING_TOTAL
from ..canonical_json import json_safe
from . import execution, freshness
from .device_resolved import ResolverIndex
from .dry_run import IdempotencyLedger
from .execution import Actuator
from .models import (
    DryRunPlan,
    GateContext,
    GateResult,
    GridGrant,
    Outcome,
    PipelineTrace,
    PolicyAction,
    RequestReader,
    SetpointAuthority,
)
from .pipeline import Refresh, make_context, run_async
from .tables import DEFAULT_POLICY, PolicyRule
from .view import HaView

DEFAULT_WAIT_S = 10.0
DEFAULT_CONFIRM_TTL = timedelta(minutes=10)
REQUESTED = "requested"  # the first history step: who asked
PENDING_LIMIT = "pending_limit"  # the evidence key of a refusal over a pending cap: ``per_user`` or ``total``
CONTROL_OFF = "device control is off"  # why a passing command ended as a dry run with control off
type TraceRecord = dict[str, Any]


class NotPending(LookupError):
    """No pending confirmation has this trace_id (never asked, already decided, or expired)."""


@dataclass
class Settings:
    """What the options and the "Allow device control" switch set.

    Attributes:
        allow_control: execute allowed and confirmed commands (off: everything ends as ``dry_run``).
        wait_s: seconds to wait for the expected state after a call (phantom-success check).
        confirm_ttl: how long a pending confirmation lives.
        rules: the effective policy table (user rules, then the defaults).
        include_appliances: appliance-controlled entities are resolution candidates even when not exposed.

    """

    allow_control: bool = False
    wait_s: float = DEFAULT_WAIT_S
    confirm_ttl: timedelta = DEFAULT_CONFIRM_TTL
    rules: tuple[PolicyRule, ...] = DEFAULT_POLICY
    include_appliances: bool = True


@dataclass(kw_only=True)
class PendingConfirmation:
    """A command that passed gates 1-7 with policy ``confirm`` and waits for an administrator.

    ``trace`` is its record as stored (outcome ``pending_confirmation``); ``candidate``, ``source_agent``,
    ``raw_input`` and ``slot_start`` are what the gates re-run on; ``expires_at`` is aware UTC. ``superseded_by`` is
    the trace id of the same source's command for a later slot on the same entity, which replaced this one.
    """

    trace_id: str
    source_agent: str
    raw_input: str
    candidate: dict[str, Any]
    entity_id: str
    idempotency_key: str
    slot_start: datetime | None
    created_at: datetime
    expires_at: datetime
    requested_by: str | None
    trace: TraceRecord = field(default_factory=dict)
    superseded_by: str | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form for the Store."""
        return {
            "trace_id": self.trace_id,
            "source_agent": self.source_agent,
            "raw_input": self.raw_input,
            "candidate": json_safe(self.candidate),
            "entity_id": self.entity_id,
            "idempotency_key": self.idempotency_key,
            "slot_start": self.slot_start.isoformat() if self.slot_start else None,
            "created_at": self.created_at.isoformat(),
            "expires_at": self.expires_at.isoformat(),
            "requested_by": self.requested_by,
            "trace": self.trace,
            "superseded_by": self.superseded_by,
        }

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> PendingConfirmation:
        """Inverse of :meth:`as_dict`; raises KeyError, TypeError or ValueError on malformed data."""
        return cls(
            trace_id=str(data["trace_id"]),
            source_agent=str(data["source_agent"]),
            raw_input=str(data["raw_input"]),
            candidate=dict(data["candidate"]),
            entity_id=str(data["entity_id"]),
            idempotency_key=str(data["idempotency_key"]),
            slot_start=datetime.fromisoformat(data["slot_start"]) if data.get("slot_start") else None,
            created_at=datetime.fromisoformat(data["created_at"]),
            expires_at=datetime.fromisoformat(data["expires_at"]),
            requested_by=data.get("requested_by"),
            trace=dict(data.get("trace") or {}),
            superseded_by=data.get("superseded_by"),
        )


def _step(outcome: Outcome | str, at: datetime, user_id: str | None = None) -> dict[str, Any]:
    return {"outcome": str(outcome), "at": at.isoformat(), "user_id": user_id}


def _repeats(pending: PendingConfirmation, plan: DryRunPlan, source_agent: str, user_id: str | None) -> bool:
    """Return True when ``plan`` repeats the command that ``pending`` holds.

    A repeat has the same idempotency key, or the same requester and source agent asking for the same service call
    (domain, service, target, data) for the same slot.
    """
    if pending.idempotency_key == plan.idempotency_key:
        return True
    if (pending.requested_by, pending.source_agent, pending.slot_start) != (user_id, source_agent, plan.slot_start):
        return False
    held = next(
        (
            g.get("evidence", {}).get("plan")
            for g in pending.trace.get("gate_results", ())
            if g.get("gate") == "dry_run"
        ),
        None,
    )
    call = {k: v for k, v in plan.as_dict().items() if k in ("domain", "service", "target", "data")}
    return isinstance(held, dict) and {k: held.get(k) for k in call} == call


def _record(trace: PipelineTrace, history: list[dict[str, Any]]) -> TraceRecord:
    record = trace.as_dict()
    record["history"] = [*history, _step(trace.outcome, trace.timestamp)]
    return record


class Gatekeeper:
    """Gates 1-8 for one site; see the module docstring.

    ``clock`` returns aware UTC now. ``ledger`` and ``pending`` come from :meth:`from_dict` after a restart.
    ``halt`` says why Execution is halted for a source agent (None: it is not); ``setpoints`` is the grid setpoints'
    authority and ``read_request`` the reader that binds orchestrator commands to the request (both for Policy).
    """

    def __init__(
        self,
        settings: Settings,
        clock: Callable[[], datetime],
        *,
        ledger: IdempotencyLedger | None = None,
        pending: dict[str, PendingConfirmation] | None = None,
        halt: Callable[[str], str | None] | None = None,
        setpoints: SetpointAuthority | None = None,
        read_request: RequestReader | None = None,
    ) -> None:
        """Keep the collaborators; a missing ledger or pending map starts empty, a missing ``halt`` never halts."""
        self.settings = settings
        self.clock = clock
        self.ledger = ledger if ledger is not None else IdempotencyLedger()
        self.pending: dict[str, PendingConfirmation] = pending if pending is not None else {}
        self.halt: Callable[[str], str | None] = halt or (lambda source_agent: None)  # why Execution is halted
        self.setpoints = setpoints  # the grid setpoints' authority (Policy)
        self.read_request = read_request  # the request reader orchestrator commands are bound by

    async def evaluate(
        self,
        view: HaView,
        actuator: Actuator,
        *,
        source_agent: str,
        raw_input: str = "",
        candidate: Mapping[str, Any] | None,
        dry_run: bool = False,
        slot_start: datetime | None = None,
        user_id: str | None = None,
        index: ResolverIndex | None = None,
        refresh: Refresh | None = None,
        grant: GridGrant | None = None,
        confirm_only: bool = False,
    ) -> TraceRecord:
        """Run gates 1-7 on ``candidate`` (untrusted), then Execution; returns the trace record.

        ``user_id`` is who asked (the HA user of the call, or None for automations and the scheduler); it is kept
        on a pending confirmation, never used to confirm. ``grant`` is the approved request a ``grid`` command
        carries out (only the grid toolkit passes one). A grid command never waits for confirmation: Policy
        refuses it without an approved grant, and with one the approval is the confirmation (``gates.policy``).
        ``confirm_only``: a command that passes waits for an administrator even where the policy allows it (a caller
        without a person's request); confirming it re-runs the gates under the policy as it is.
        """
        ctx = make_context(
            view,
            source_agent=source_agent,
            raw_input=raw_input,
            candidate=candidate,
            now=self.clock(),
            rules=self.settings.rules,
            include_appliances=self.settings.include_appliances,
            index=index,
            slot_start=slot_start,
            ledger=self.ledger,
            setpoints=self.setpoints,
            read_request=self.read_request,
            grant=grant,
            confirm_only=confirm_only,
        )
        trace = await run_async(ctx, refresh)
        asked = [_step(REQUESTED, trace.timestamp, user_id)]
        if trace.outcome is Outcome.BLOCKED or trace.command is None or ctx.plan is None:
            return _record(trace, asked)
        if dry_run or not self.settings.allow_control:
            why = "dry run requested" if dry_run else CONTROL_OFF
            trace.gate_results.append(GateResult(execution.NAME, True, f"not executed: {why}", {"dry_run": True}))
            return _record(trace, asked)
        self._supersede(trace, ctx.plan, slot_start)
        if trace.command.policy_action is PolicyAction.CONFIRM:
            return self._hold(trace, ctx.plan, candidate or {}, slot_start=slot_start, user_id=user_id, history=asked)
        return await self._execute(trace, ctx.plan, view, actuator, asked)

    def _supersede(self, trace: PipelineTrace, plan: DryRunPlan, slot_start: datetime | None) -> None:
        """Mark the same source's pending commands for earlier slots on this entity as superseded by ``trace``.

        A plan's command for a later slot replaces them: they can no longer be confirmed and close (cancelled) at
        the next :meth:`expire`, which is due at once.
        """
        if slot_start is None:
            return
        for pending in self.pending.values():
            earlier = pending.slot_start is not None and pending.slot_start < slot_start
            if earlier and (pending.source_agent, pending.entity_id) == (trace.source_agent, plan.target["entity_id"]):
                pending.superseded_by = trace.trace_id
                pending.expires_at = min(pending.expires_at, trace.timestamp)

    def _hold(
        self,
        trace: PipelineTrace,
        plan: DryRunPlan,
        candidate: Mapping[str, Any],
        *,
        slot_start: datetime | None,
        user_id: str | None,
        history: list[dict[str, Any]],
    ) -> TraceRecord:
        for pending in self.pending.values():
            if _repeats(pending, plan, trace.source_agent, user_id):  # a repeat joins the command that already waits
                return pending.trace
        if (refusal := self._over_cap(user_id)) is not None:
            trace.outcome = Outcome.BLOCKED
            trace.gate_results.append(refusal)
            return _record(trace, history)
        expires_at = trace.timestamp + self.settings.confirm_ttl
        trace.outcome = Outcome.PENDING_CONFIRMATION
        trace.gate_results.append(
            GateResult(
                execution.NAME,
                True,
                f"awaiting confirmation by an administrator until {expires_at.isoformat(timespec='seconds')}",
                {"expires_at": expires_at.isoformat(), "requested_by": user_id},
            )
        )
        record = _record(trace, history)
        self.pending[trace.trace_id] = PendingConfirmation(
            trace_id=trace.trace_id,
            source_agent=trace.source_agent,
            raw_input=trace.raw_input,
            candidate=json_safe(dict(candidate)),
            entity_id=plan.target["entity_id"],
            idempotency_key=plan.idempotency_key,
            slot_start=slot_start,
            created_at=trace.timestamp,
            expires_at=expires_at,
            requested_by=user_id,
            trace=record,
        )
        return record

    def _over_cap(self, user_id: str | None) -> GateResult | None:
        """Return the refusal when one more pending confirmation (for ``user_id``) would exceed a cap, else None."""
        mine = sum(1 for p in self.pending.values() if p.requested_by == user_id)
        if mine >= MAX_PENDING_PER_USER:
            limit, maximum, whose = "per_user", MAX_PENDING_PER_USER, "this requester has"
        elif len(self.pending) >= MAX_PENDING_TOTAL:
            limit, maximum, whose = "total", MAX_PENDING_TOTAL, "this site has"
        else:
            return None
        return GateResult(
            execution.NAME,
            False,
            f"refused: {whose} {maximum} commands awaiting confirmation already (the most allowed); "
            "confirm, reject or wait for them to expire",
            {PENDING_LIMIT: limit, "maximum": maximum, "requested_by": user_id},
        )

    async def _execute(
        self, trace: PipelineTrace, plan: DryRunPlan, view: HaView, actuator: Actuator, history: list[dict[str, Any]]
    ) -> TraceRecord:
        now = self.clock()
        key = plan.idempotency_key
        if (why := self.halt(trace.source_agent)) is not None:
            result = GateResult(execution.NAME, False, f"halted: {why}", {"halted": True})
        elif self.ledger.seen(key, now):  # another decision executed it while this one was on its way
            result = GateResult(
                execution.NAME, False, f"duplicate: key {key[:12]} executed within 24 h", {"duplicate": True}
            )
        else:
            self.ledger.remember(key, now)  # reserved before the call: concurrent duplicates stop above
            result, remember = await execution.execute(
                plan, view.state(execution.watched(plan)), actuator, wait_s=self.settings.wait_s, now=now
            )
            if not remember:
                self.ledger.forget(key)
        trace.gate_results.append(result)
        trace.execution_result = result.evidence
        trace.outcome = Outcome.EXECUTED if result.passed else Outcome.FAILED
        trace.timestamp = self.clock()
        return _record(trace, history)

    async def confirm(
        self,
        trace_id: str,
        user_id: str,
        view: HaView,
        actuator: Actuator,
        *,
        index: ResolverIndex | None = None,
        refresh: Refresh | None = None,
    ) -> TraceRecord:
        """Confirm a pending command for an administrator (``user_id``, checked by the caller).

        The gates re-run with the stored candidate, trace_id and slot start. The outcome is ``executed`` or
        ``failed`` on execution, ``expired`` past ``expires_at``, ``cancelled`` when a command for a later slot
        superseded it, when a gate other than Freshness now blocks, the target or idempotency key changed, or device
        control is off. When Freshness blocks (the device has not reported within its TTL) the command stays pending,
        with the attempt in its ``history``, and the record returned still says ``pending_confirmation``.

        Raises:
            NotPending: no pending confirmation has ``trace_id``.

        """
        pending = self.pending.pop(trace_id, None)
        if pending is None:
            raise NotPending(trace_id)
        now = self.clock()
        if now >= pending.expires_at:
            return self._lapse(pending, now)
        history = [*pending.trace.get("history", []), _step(Outcome.CONFIRMED, now, user_id)]
        ctx = self._replay_context(pending, view, now, index)
        trace = await run_async(ctx, refresh)
        if trace.failed_gate == freshness.NAME:  # the device has not reported lately: the admin may try again
            return self._keep_pending(pending, trace, now, user_id)
        why = self._cancel_reason(pending, trace, ctx.plan)
        if why is not None or ctx.plan is None:
            trace.outcome = Outcome.CANCELLED
            trace.command = None
            trace.dry_run_plan = None
            trace.gate_results.append(
                GateResult(execution.NAME, False, f"cancelled on confirmation: {why}", {"confirmed_by": user_id})
            )
            return _record(trace, history)
        record = await self._execute(trace, ctx.plan, view, actuator, history)
        record["execution_result"]["confirmed_by"] = user_id
        return record

    def _replay_context(
        self, pending: PendingConfirmation, view: HaView, now: datetime, index: ResolverIndex | None
    ) -> GateContext:
        """Return the gates' context for a pending command: its stored candidate, trace_id and slot start."""
        return make_context(
            view,
            source_agent=pending.source_agent,
            raw_input=pending.raw_input,
            candidate=pending.candidate,
            now=now,
            rules=self.settings.rules,
            include_appliances=self.settings.include_appliances,
            trace_id=pending.trace_id,
            index=index,
            slot_start=pending.slot_start,
            ledger=self.ledger,
            setpoints=self.setpoints,
            read_request=self.read_request,
        )

    def _keep_pending(
        self, pending: PendingConfirmation, trace: PipelineTrace, now: datetime, user_id: str
    ) -> TraceRecord:
        """Keep a command pending after Freshness blocked its confirmation; the attempt joins its history."""
        self.pending[pending.trace_id] = pending
        reason = trace.gate_results[-1].reason
        step = {**_step(Outcome.PENDING_CONFIRMATION, now, user_id), "reason": f"not confirmed: {reason}"}
        pending.trace = {**pending.trace, "history": [*pending.trace.get("history", []), step]}
        return pending.trace

    def _cancel_reason(self, pending: PendingConfirmation, trace: PipelineTrace, plan: DryRunPlan | None) -> str | None:
        """Return why a confirmed command is cancelled (a gate blocks, it resolves differently, control is off)."""
        if trace.outcome is Outcome.BLOCKED or plan is None or trace.command is None:
            return f"the {trace.failed_gate} gate blocks it now"
        if plan.target["entity_id"] != pending.entity_id or plan.idempotency_key != pending.idempotency_key:
            return "the command resolves differently now"
        if not self.settings.allow_control:
            return "device control is off"
        return None

    def reject(self, trace_id: str, user_id: str) -> TraceRecord:
        """Reject a pending command for an administrator: outcome ``rejected``.

        Raises:
            NotPending: no pending confirmation has ``trace_id``.

        """
        pending = self.pending.pop(trace_id, None)
        if pending is None:
            raise NotPending(trace_id)
        return self._close(pending, Outcome.REJECTED, self.clock(), user_id, f"rejected by {user_id}")

    def expire(self) -> list[TraceRecord]:
        """Close every pending confirmation past its ``expires_at``: ``expired``, or ``cancelled`` when superseded."""
        now = self.clock()
        done = [p for p in self.pending.values() if now >= p.expires_at]
        for pending in done:
            del self.pending[pending.trace_id]
        return [self._lapse(p, now) for p in done]

    def _lapse(self, pending: PendingConfirmation, now: datetime) -> TraceRecord:
        """Close a pending command past its ``expires_at``: ``cancelled`` when superseded, else ``expired``."""
        if pending.superseded_by is not None:
            why = f"superseded by {pending.superseded_by}, the plan's command for a later slot"
            return self._close(pending, Outcome.CANCELLED, now, None, why)
        return self._close(pending, Outcome.EXPIRED, now, None, "expired before it was confirmed")

    def next_expiry(self) -> datetime | None:
        """When the next pending confirmation expires, or None."""
        return min((p.expires_at for p in self.pending.values()), default=None)

    def _close(
        self, pending: PendingConfirmation, outcome: Outcome, now: datetime, user_id: str | None, reason: str
    ) -> TraceRecord:
        record = dict(pending.trace)
        record["gate_results"] = [
            *record.get("gate_results", []),
            GateResult(execution.NAME, False, reason, {"user_id": user_id}).as_dict(),
        ]
        record["outcome"] = str(outcome)
        record["failed_gate"] = execution.NAME
        record["timestamp"] = now.isoformat()
        record["history"] = [*record.get("history", []), _step(outcome, now, user_id)]
        return record

    def as_dict(self) -> dict[str, Any]:
        """Return what the shell persists: the ledger, the pending confirmations and the control switch."""
        return {
            "allow_control": self.settings.allow_control,
            "ledger": self.ledger.as_dict(),
            "pending": [p.as_dict() for p in self.pending.values()],
        }

    def load(self, data: Mapping[str, Any]) -> list[str]:
        """Restore :meth:`as_dict`; returns a warning per unreadable pending (which is dropped)."""
        warnings: list[str] = []
        self.settings.allow_control = bool(data.get("allow_control", False))
        try:
            self.ledger = IdempotencyLedger.from_dict(dict(data.get("ledger") or {}))
        except (TypeError, ValueError) as err:
            warnings.append(f"ledger: {err}")
        for item in data.get("pending") or []:
            try:
                pending = PendingConfirmation.from_dict(item)
            except (KeyError, TypeError, ValueError) as err:
                warnings.append(f"pending confirmation: {err}")
                continue
            self.pending[pending.trace_id] = pending
        return warnings
