"""Gate 7, DryRun: the execution plan, built without executing.

The plan (:class:`.models.DryRunPlan`) names the service, the target, the data, the expected state
(``tables.expected_state``; for an entity with nothing to read back but a ``confirmed_by`` entity, such as a start
button, ``{"entity_id": that entity, "states": [...]}``) and an idempotency key: sha256 over source_agent, entity_id, ``domain.service``, the
canonical JSON of the data, and the plan slot's start when the command carries one (the scheduler), else the
trace_id. Keys of executed commands are remembered for 24 h in an :class:`IdempotencyLedger`; the gatekeeper
(:mod:`.keeper`) calls ``remember`` after a call and the HA shell persists the ledger.

The gate fails, with the plan in its evidence, when the entity's state is missing, unavailable or unknown (a button
never pressed, or a program select with no program, is ``unknown`` and passes), when the
service is not registered (both read again through the view), or when the key was executed within 24 h
("duplicate").
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime, timedelta
import hashlib
from typing import Any

from ..canonical_json import canonical_json
from .freshness import STATELESS_DOMAINS
from .models import DryRunPlan, GateContext, GateResult
from .tables import expected_state

NAME = "dry_run"
KEY_TTL = timedelta(hours=24)
UNAVAILABLE_STATES = frozenset({"unavailable", "unknown"})
FAIL_PREFIX = "cannot build execution plan: "


def idempotency_key(
    source_agent: str, entity_id: str, service: str, data: Mapping[str, Any], anchor: datetime | str
) -> str:
    """sha256 hex of the canonical JSON array ``[source_agent, entity_id, service, canonical_json(data), anchor]``.

    ``service`` is ``domain.service``; ``anchor`` is the slot start (as ISO 8601) or the trace_id.
    """
    anchor_text = anchor.isoformat() if isinstance(anchor, datetime) else anchor
    payload = canonical_json([source_agent, entity_id, service, canonical_json(dict(data)), anchor_text])
    return hashlib.sha256(payload.encode()).hexdigest()


class IdempotencyLedger:
    """Keys of executed commands with the moment they ran, forgotten after ``ttl`` (24 h).

    In memory and pure; the HA shell persists :meth:`as_dict` and restores with :meth:`from_dict`.
    """

    def __init__(self, ttl: timedelta = KEY_TTL) -> None:
        """Start empty; a key is remembered for ``ttl``."""
        self.ttl = ttl
        self._keys: dict[str, datetime] = {}

    def _expire(self, now: datetime) -> None:
        for key in [k for k, at in self._keys.items() if now - at >= self.ttl]:
            del self._keys[key]

    def seen(self, key: str, now: datetime) -> bool:
        """Return True when ``key`` was remembered less than ``ttl`` before ``now``; expired keys are dropped."""
        self._expire(now)
        return key in self._keys

    def remember(self, key: str, now: datetime) -> None:
        """Record that ``key`` executed at ``now``."""
        self._expire(now)
        self._keys[key] = now

    def forget(self, key: str) -> None:
        """Drop ``key`` (a reserved call that failed before reaching the device may run again)."""
        self._keys.pop(key, None)

    def executed_at(self, key: str) -> datetime | None:
        """When ``key`` was remembered (expired or not), or None."""
        return self._keys.get(key)

    def __len__(self) -> int:
        """Return the number of keys held, expired or not."""
        return len(self._keys)

    def as_dict(self) -> dict[str, str]:
        """JSON-safe form: key -> ISO 8601 moment."""
        return {key: at.isoformat() for key, at in self._keys.items()}

    @classmethod
    def from_dict(cls, data: Mapping[str, str], ttl: timedelta = KEY_TTL) -> IdempotencyLedger:
        """Return the ledger :meth:`as_dict` wrote."""
        ledger = cls(ttl)
        ledger._keys = {key: datetime.fromisoformat(at) for key, at in data.items()}
        return ledger


def build_plan(ctx: GateContext) -> DryRunPlan:
    """Return the plan for ``ctx.gated`` (policy passed)."""
    assert ctx.gated is not None  # policy ran
    gated = ctx.gated
    data = dict(gated.data)
    anchor: datetime | str = ctx.slot_start if ctx.slot_start is not None else ctx.trace_id
    expected = expected_state(gated.domain, gated.service, data)
    if not expected and ctx.entity is not None and ctx.entity.confirmed_by is not None:
        watched, states = ctx.entity.confirmed_by  # a start button: its appliance's operation state
        expected = {"entity_id": watched, "states": list(states)}
    return DryRunPlan(
        domain=gated.domain,
        service=gated.service,
        target={"entity_id": gated.entity_id},
        data=data,
        expected_state=expected,
        idempotency_key=idempotency_key(ctx.source_agent, gated.entity_id, gated.backend_action, data, anchor),
        slot_start=ctx.slot_start,
    )


def evaluate(ctx: GateContext) -> GateResult:
    """Pass when the plan can run now; sets ``ctx.plan`` only on a pass.

    Evidence: ``plan`` (JSON-safe), ``state`` (the current state string or None), ``service_registered``,
    ``duplicate`` and ``executed_at`` (when the key last executed, or None).
    """
    plan = build_plan(ctx)
    ledger = ctx.ledger
    entity_id = plan.target["entity_id"]
    state = ctx.view.state(entity_id)
    registered = ctx.view.has_service(plan.domain, plan.service)
    duplicate = ledger is not None and ledger.seen(plan.idempotency_key, ctx.now)
    evidence: dict[str, Any] = {
        "plan": plan.as_dict(),
        "state": state.state if state else None,
        "service_registered": registered,
        "duplicate": duplicate,
        "executed_at": ledger.executed_at(plan.idempotency_key) if duplicate and ledger is not None else None,
    }
    idle = plan.domain in STATELESS_DOMAINS or (ctx.entity is not None and ctx.entity.idle_unknown)
    if state is None or (state.state in UNAVAILABLE_STATES and not (idle and state.state == "unknown")):
        return GateResult(NAME, False, f"{FAIL_PREFIX}{entity_id} is {state.state if state else 'missing'}", evidence)
    if not registered:
        return GateResult(NAME, False, f"{FAIL_PREFIX}service {plan.domain}.{plan.service} is not registered", evidence)
    if duplicate:
        return GateResult(
            NAME, False, f"{FAIL_PREFIX}duplicate: key {plan.idempotency_key[:12]} executed within 24 h", evidence
        )
    ctx.plan = plan
    return GateResult(NAME, True, f"plan: {plan.domain}.{plan.service} on {entity_id}", evidence)
