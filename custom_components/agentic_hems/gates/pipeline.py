"""The gate pipeline: ordered, sequential, fail-stop.

This is the pure core of gates 1-7: InputGuard, Schema, DeviceResolved, Capability, Freshness, Policy, DryRun.
Each gate's :class:`GateResult` is appended to the trace before the next gate runs; the first failure stops the run
with outcome ``blocked``. When every gate passes the outcome is ``dry_run``, ``trace.command`` holds the
:class:`GatedCommand` (``policy_action`` allow or confirm) and ``trace.dry_run_plan`` the JSON-safe
:class:`.models.DryRunPlan` (service, target, data, expected state, idempotency key). DryRun only reads the
:class:`.dry_run.IdempotencyLedger`; Execution remembers keys.

Gate 8, Execution, and the outcomes after dry_run (executed, pending_confirmation, rejected, failed, cancelled,
expired) are in :mod:`.keeper` and :mod:`.execution`; the HA shell (``control.py``) stores the traces.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from typing import Any
import uuid

from ..canonical_json import json_safe
from . import capability, device_resolved, dry_run, freshness, input_guard, policy, schema
from .device_resolved import ResolverIndex
from .dry_run import IdempotencyLedger
from .models import GateContext, GateResult, GridGrant, Outcome, PipelineTrace, RequestReader, SetpointAuthority
from .tables import DEFAULT_POLICY, PolicyRule
from .view import HaView

type Gate = Callable[[GateContext], GateResult]

GATES: tuple[tuple[str, Gate], ...] = (
    (input_guard.NAME, input_guard.evaluate),
    (schema.NAME, schema.evaluate),
    (device_resolved.NAME, device_resolved.evaluate),
    (capability.NAME, capability.evaluate),
    (freshness.NAME, freshness.evaluate),
    (policy.NAME, policy.evaluate),
    (dry_run.NAME, dry_run.evaluate),
)
# An async hook that asks a polling entity for a fresh state (``homeassistant.update_entity``) and returns the aware
# UTC moment it did so.
type Refresh = Callable[[str], Awaitable[datetime]]


def make_context(
    view: HaView,
    *,
    source_agent: str,
    raw_input: str = "",
    candidate: Mapping[str, Any] | None,
    now: datetime,
    rules: Sequence[PolicyRule] = DEFAULT_POLICY,
    include_appliances: bool = True,
    trace_id: str | None = None,
    index: ResolverIndex | None = None,
    slot_start: datetime | None = None,
    ledger: IdempotencyLedger | None = None,
    setpoints: SetpointAuthority | None = None,
    grant: GridGrant | None = None,
    read_request: RequestReader | None = None,
    confirm_only: bool = False,
) -> GateContext:
    """Return a fresh :class:`GateContext`; ``trace_id`` defaults to a new uuid4 hex string."""
    return GateContext(
        trace_id=trace_id or uuid.uuid4().hex,
        source_agent=source_agent,
        raw_input=raw_input,
        raw_candidate=candidate,
        view=view,
        now=now,
        policy=tuple(rules),
        include_appliances=include_appliances,
        index=index,
        slot_start=slot_start,
        ledger=ledger,
        setpoints=setpoints,
        grant=grant,
        read_request=read_request,
        confirm_only=confirm_only,
    )


def _trace(ctx: GateContext, results: list[GateResult]) -> PipelineTrace:
    passed = bool(results) and all(r.passed for r in results) and ctx.gated is not None and ctx.plan is not None
    raw = ctx.raw_candidate
    return PipelineTrace(
        trace_id=ctx.trace_id,
        source_agent=ctx.source_agent,
        raw_input=ctx.raw_input,
        candidate=json_safe(raw) if isinstance(raw, Mapping) else None,
        gate_results=results,
        timestamp=ctx.now,
        outcome=Outcome.DRY_RUN if passed else Outcome.BLOCKED,
        command=ctx.gated if passed else None,
        entity_id=ctx.command.entity_id if ctx.command else None,
        dry_run_plan=ctx.plan.as_dict() if passed and ctx.plan else None,
    )


def run(ctx: GateContext) -> PipelineTrace:
    """Run gates 1-7 on ``ctx`` (fail-stop) and return the trace."""
    results: list[GateResult] = []
    for _, gate in GATES:
        result = gate(ctx)
        results.append(result)
        if not result.passed:
            break
    return _trace(ctx, results)


async def run_async(ctx: GateContext, refresh: Refresh | None = None) -> PipelineTrace:
    """:func:`run` with the Freshness refresh-once hook.

    When Freshness fails for an entity that polls and has a state, ``refresh(entity_id)`` is awaited once and
    Freshness re-checked with ``refreshed_at`` (``last_reported`` must not be earlier). The trace records one
    Freshness result; its evidence keeps the first attempt under ``first_attempt``.
    """
    results: list[GateResult] = []
    for name, gate in GATES:
        result = gate(ctx)
        if (
            name == freshness.NAME
            and not result.passed
            and refresh is not None
            and ctx.entity is not None
            and ctx.entity.polls
            and ctx.state is not None
        ):
            refreshed_at = await refresh(ctx.entity.entity_id)
            ctx.now = max(ctx.now, refreshed_at)
            retry = freshness.evaluate(ctx, refreshed_at=refreshed_at)
            result = GateResult(
                retry.gate, retry.passed, retry.reason, {**retry.evidence, "first_attempt": result.as_dict()}
            )
        results.append(result)
        if not result.passed:
            break
    return _trace(ctx, results)


def evaluate(view: HaView, **context: Any) -> PipelineTrace:
    """Evaluate one proposed command against ``view``: :func:`run` on ``make_context(view, **context)``.

    ``context`` takes :func:`make_context`'s keywords: ``source_agent``, ``candidate`` (the caller's untrusted
    mapping, e.g. ``evaluate_command``'s ``model_candidate``; raw text alone is screened but not parsed, so it
    blocks at Schema),
    ``now`` (aware UTC), ``rules`` (first match wins; pass ``tables.effective_policy(user_rules)``), ``index`` (a
    ``ResolverIndex`` of ``view`` built with the same ``include_appliances``), ``slot_start`` (anchors a scheduler
    command's idempotency key instead of the trace_id), ``ledger`` (keys executed in the last 24 h), ``setpoints``
    (the grid setpoints' authority) and ``grant`` (the approved request a ``grid`` command carries out).
    """
    return run(make_context(view, **context))
