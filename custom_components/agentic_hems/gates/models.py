"""Types of the gate pipeline: candidates, resolved and gated commands, plans, gate results, context and traces.

Nothing here imports Home Assistant. Times are aware UTC datetimes; ``as_dict`` forms are JSON-safe (ISO 8601
strings, plain ints, floats, strings, lists and dicts) for service responses, events and storage.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields
from datetime import datetime
from enum import StrEnum
import math
from typing import TYPE_CHECKING, Any, Protocol

from ..canonical_json import json_safe
from .view import EntityInfo, HaView, StateInfo

if TYPE_CHECKING:
    from .device_resolved import ResolverIndex
    from .dry_run import IdempotencyLedger
    from .tables import PolicyRule


class Outcome(StrEnum):
    """How a trace ended (``PipelineTrace.outcome``).

    Gates 1-7 give BLOCKED or DRY_RUN; the gatekeeper the rest. CONFIRMED appears in a trace's ``history`` (an
    administrator confirmed), before its final outcome.
    """

    BLOCKED = "blocked"
    DRY_RUN = "dry_run"
    EXECUTED = "executed"
    PENDING_CONFIRMATION = "pending_confirmation"
    CONFIRMED = "confirmed"
    REJECTED = "rejected"
    FAILED = "failed"
    CANCELLED = "cancelled"
    EXPIRED = "expired"


class PolicyAction(StrEnum):
    """What the policy table says about a command."""

    ALLOW = "allow"
    CONFIRM = "confirm"
    DENY = "deny"


@dataclass(frozen=True, kw_only=True)
class ModelCandidate:
    """What a model (or any caller) proposes: untrusted and backend-neutral.

    Built only by the schema gate (:func:`.schema.parse_candidate`), which rejects extra keys, unknown intents and
    mistyped params; :meth:`from_dict` here only rejects unknown keys.

    Attributes:
        intent: one of the vocabulary's intents (``tables.INTENTS``), e.g. ``turn_on``, ``set_temperature``.
        room: an area name, id or alias, or None.
        device_alias: what the caller calls the device ("main light"), or None.
        device_type: an HA domain (``light``, ``climate``) narrowing the search, or None.
        params: intent parameters, e.g. ``{"brightness": 80}`` (percent) or ``{"temperature": 21.5}`` (°C or the
            entity's unit).

    """

    intent: str
    room: str | None = None
    device_alias: str | None = None
    device_type: str | None = None
    params: Mapping[str, Any] = field(default_factory=dict)

    @classmethod
    def from_dict(cls, data: Mapping[str, Any]) -> ModelCandidate:
        """Build from a mapping with exactly the field names.

        Raises:
            ValueError: extra keys or a missing intent.

        """
        extra = set(data) - {f.name for f in fields(cls)}
        if extra:
            raise ValueError(f"extra keys not allowed: {sorted(map(str, extra))}")
        if "intent" not in data:
            raise ValueError("missing intent")
        return cls(**dict(data))

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "intent": self.intent,
            "room": self.room,
            "device_alias": self.device_alias,
            "device_type": self.device_type,
            "params": json_safe(self.params),
        }


@dataclass(frozen=True, kw_only=True)
class NormalizedCommand:
    """A candidate resolved to one entity: trusted internal type.

    Attributes:
        intent: the vocabulary intent.
        entity_id: the resolved entity.
        domain: the entity's HA domain; policy's ``device_type`` (domains such as ``climate``, not "thermostat").
        device_class: the entity's device class, or None.
        service: the HA service name within ``domain`` (``turn_on``, ``open_cover``), or None when the intent has no
            service for this domain (the capability gate then fails).
        data: service data without the target, e.g. ``{"brightness_pct": 80}``.
        params: the candidate's typed params as given.
        risk_level: 0 (harmless) .. 5 (critical), from ``tables.risk_level`` at normalization; Freshness and Policy
            read it.
        appliance: True when the entity is a planned appliance's controlled entity.
        source_agent: who proposed the command (``orchestrator``, ``scheduler``, an outside agent's name).
        action_domain: the domain of an allow-listed integration action (:mod:`.actions`, ``home_connect``) that
            carries out the intent on the entity's device, else None (``service`` is in ``domain``).

    """

    intent: str
    entity_id: str
    domain: str
    device_class: str | None
    service: str | None
    data: Mapping[str, Any]
    params: Mapping[str, Any]
    risk_level: int
    appliance: bool
    source_agent: str
    action_domain: str | None = None

    @property
    def device_type(self) -> str:
        """The domain, by the policy table's name for it."""
        return self.domain

    @property
    def service_domain(self) -> str:
        """The domain ``service`` is in: the allow-listed action's, else the entity's."""
        return self.action_domain or self.domain

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "intent": self.intent,
            "entity_id": self.entity_id,
            "domain": self.domain,
            "device_class": self.device_class,
            "service": self.service,
            "data": json_safe(self.data),
            "params": json_safe(self.params),
            "risk_level": self.risk_level,
            "appliance": self.appliance,
            "source_agent": self.source_agent,
            **({"action_domain": self.action_domain} if self.action_domain else {}),
        }


@dataclass(frozen=True, kw_only=True)
class GatedCommand:
    """A command that passed policy: execution-ready.

    Attributes:
        intent, entity_id, risk_level: as in :class:`NormalizedCommand`.
        backend: always ``homeassistant``.
        backend_action: ``domain.service``, e.g. ``light.turn_on``.
        domain, service: the two halves of ``backend_action``.
        data: service data without the target.
        policy_action: ``allow`` or ``confirm`` (a ``deny`` never becomes a GatedCommand).
        trace_id: the trace this command belongs to.

    """

    intent: str
    entity_id: str
    domain: str
    service: str
    data: Mapping[str, Any]
    risk_level: int
    policy_action: PolicyAction
    trace_id: str
    backend: str = "homeassistant"

    @property
    def backend_action(self) -> str:
        """``domain.service``."""
        return f"{self.domain}.{self.service}"

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "intent": self.intent,
            "entity_id": self.entity_id,
            "backend": self.backend,
            "backend_action": self.backend_action,
            "data": json_safe(self.data),
            "risk_level": self.risk_level,
            "policy_action": str(self.policy_action),
            "trace_id": self.trace_id,
        }


@dataclass(frozen=True, kw_only=True)
class DryRunPlan:
    """The execution plan DryRun (gate 7) builds without executing.

    Attributes:
        domain, service: the HA service to call.
        target: ``{"entity_id": ...}``.
        data: service data without the target.
        expected_state: ``tables.expected_state``: what Execution waits for.
        idempotency_key: ``dry_run.idempotency_key`` (sha256 hex); never executes twice within 24 h.
        slot_start: the plan slot's start (aware UTC) the key is anchored on, or None (then the trace_id).

    """

    domain: str
    service: str
    target: Mapping[str, str]
    data: Mapping[str, Any]
    expected_state: Mapping[str, Any]
    idempotency_key: str
    slot_start: datetime | None = None

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "domain": self.domain,
            "service": self.service,
            "target": dict(self.target),
            "data": json_safe(self.data),
            "expected_state": json_safe(self.expected_state),
            "idempotency_key": self.idempotency_key,
            "slot_start": json_safe(self.slot_start),
        }


@dataclass(frozen=True)
class GateResult:
    """One gate's verdict.

    Attributes:
        gate: the gate's name (``input_guard``, ``schema``, ``device_resolved``, ``capability``, ``freshness``,
            ``policy``, ``dry_run``).
        passed: False stops the pipeline.
        reason: one English sentence for people and agents.
        evidence: a JSON-safe snapshot of what the gate looked at, for the audit trail.

    """

    gate: str
    passed: bool
    reason: str
    evidence: dict[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {"gate": self.gate, "passed": self.passed, "reason": self.reason, "evidence": json_safe(self.evidence)}


SOURCE_GRID = "grid"  # the source_agent of an approved grid plan's slot commands, and of nothing else
SOURCE_SCHEDULER = "scheduler"  # the source_agent of planned commands (appliance starts, the home plan's slots)
SOURCE_ORCHESTRATOR = "orchestrator"  # the assistant's commands (a model or the offline planner): bound to the request


@dataclass(frozen=True, order=True)
class RequestedAction:
    """One (target, action) pair a person's request asks for (intent binding).

    Attributes:
        target: an entity_id for a device, or an appliance's name for a plan.
        action: a vocabulary intent (``turn_on``, ``open``, ...) for a device; ``schedule`` or ``cancel`` for a plan.
        value: the value the request names for a value-carrying action ("to 50 degrees": 50.0), or None.
        unit: ``value``'s unit (``""``, ``"%"``, ``"°"``, ``"A"``, ``"W"``; see ``gates.values``).

    """

    target: str
    action: str
    value: float | None = None
    unit: str = ""

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form (evidence); ``value`` and ``unit`` only when a value is named."""
        named = {"value": self.value, "unit": self.unit} if self.value is not None else {}
        return {"target": self.target, "action": self.action, **named}

    def sort_key(self) -> tuple[str, str, str, float]:
        """Return a total order key (``value`` may be None, which sorts first)."""
        return (self.target, self.action, self.unit, -math.inf if self.value is None else self.value)


type RequestReader = Callable[[str], frozenset[RequestedAction]]  # the person's text -> what it asks for


@dataclass(frozen=True, kw_only=True)
class GridGrant:
    """The approved authorization request a ``grid`` command claims to carry out: its id and the slot it is for.

    Only the grid toolkit's slot execution passes one (never a service caller or a model); the Policy gate has it
    checked by the :class:`SetpointAuthority`.
    """

    request_id: str
    slot_start: datetime

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form (evidence)."""
        return {"request_id": self.request_id, "slot_start": self.slot_start.isoformat()}


@dataclass(frozen=True, kw_only=True)
class GrantRefusal:
    """Why a :class:`GridGrant` does not cover a command: one English sentence (``reason``).

    ``approved`` is the command the grant covers on that entity in that slot (``{"intent", "data"}``, the service
    data) when the refused command is another one; None for any other refusal.
    """

    reason: str
    approved: Mapping[str, Any] | None = None


class SetpointAuthority(Protocol):
    """Who says which entities are grid setpoints and whether a :class:`GridGrant` is good (the grid toolkit)."""

    def reserved(self) -> frozenset[str]:
        """Return the entity_ids only an approved authorization request may set."""

    def scheduled(self) -> frozenset[str]:
        """Return the reserved entity_ids the scheduler also sets without a request (a plan a person made automatic)."""

    def check_grant(self, grant: GridGrant, command: NormalizedCommand, now: datetime) -> GrantRefusal | None:
        """Return None when ``grant`` covers ``command``, else why not.

        ``grant`` covers it when it is an approved request whose current slot (at ``now``) sets the command's
        entity with exactly that command.
        """


@dataclass(kw_only=True)
class GateContext:
    """What the gates share while one command runs through them.

    Gates read the inputs and fill the products of earlier gates; a later gate never runs when an earlier one failed.

    Inputs:
        trace_id, source_agent, raw_input (the caller's text, may be empty), raw_candidate (the caller's mapping,
        untrusted, or None), view (the HA adapter), now (aware UTC), policy (ordered rules, first match wins),
        include_appliances (appliance-controlled entities are resolution candidates; default True), index (an
        optional prebuilt ``device_resolved.ResolverIndex`` built with the same include_appliances), slot_start (the
        plan slot's start when the scheduler issues the command, else None), ledger (the
        ``dry_run.IdempotencyLedger`` of executed keys; None means an empty one, so nothing is a duplicate),
        setpoints (the :class:`SetpointAuthority`, or None when no entity is a grid setpoint), grant (the
        :class:`GridGrant` a ``grid`` command carries, else None), read_request (reads ``raw_input`` into the
        :class:`RequestedAction` set an ``orchestrator`` command is bound to; None refuses every such command),
        confirm_only (a command that passes never executes unasked: Policy turns ``allow`` into ``confirm``).
    Products:
        candidate (schema), entity and command (device_resolved), state (freshness), policy_action and gated (policy),
        plan (dry_run).
    """

    trace_id: str
    source_agent: str
    raw_input: str
    raw_candidate: Mapping[str, Any] | None
    view: HaView
    now: datetime
    policy: tuple[PolicyRule, ...]
    include_appliances: bool = True
    index: ResolverIndex | None = None
    slot_start: datetime | None = None
    ledger: IdempotencyLedger | None = None
    setpoints: SetpointAuthority | None = None
    grant: GridGrant | None = None
    read_request: RequestReader | None = None
    confirm_only: bool = False
    candidate: ModelCandidate | None = None
    entity: EntityInfo | None = None
    command: NormalizedCommand | None = None
    state: StateInfo | None = None
    policy_action: PolicyAction | None = None
    gated: GatedCommand | None = None
    plan: DryRunPlan | None = None


@dataclass(kw_only=True)
class PipelineTrace:
    """The record of one decision.

    Attributes:
        trace_id: a uuid4 hex string.
        source_agent: who proposed the command.
        raw_input: the caller's text (may be empty).
        candidate: the caller's candidate as received (JSON-safe), or None.
        gate_results: every gate that ran, in order; the last one failed when ``outcome`` is ``blocked``.
        command: the gated command when every gate passed, else None.
        dry_run_plan: the :class:`DryRunPlan` (JSON-safe) when every gate passed, else None.
        execution_result: the Execution gate's evidence (:func:`.execution.execute`), or None.
        timestamp: aware UTC datetime of the decision.
        outcome: an :class:`Outcome`.

    """

    trace_id: str
    source_agent: str
    raw_input: str
    candidate: dict[str, Any] | None
    gate_results: list[GateResult]
    timestamp: datetime
    outcome: Outcome
    command: GatedCommand | None = None
    entity_id: str | None = None
    dry_run_plan: dict[str, Any] | None = None
    execution_result: dict[str, Any] | None = None

    @property
    def failed_gate(self) -> str | None:
        """Name of the gate that blocked, or None."""
        for result in self.gate_results:
            if not result.passed:
                return result.gate
        return None

    @property
    def policy_action(self) -> PolicyAction | None:
        """The policy gate's action when every gate passed, else None."""
        return self.command.policy_action if self.command else None

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form for service responses and storage (redaction is the shell's job)."""
        return {
            "trace_id": self.trace_id,
            "source_agent": self.source_agent,
            "raw_input": self.raw_input,
            "candidate": json_safe(self.candidate),
            "gate_results": [r.as_dict() for r in self.gate_results],
            "failed_gate": self.failed_gate,
            "entity_id": self.entity_id,
            "command": self.command.as_dict() if self.command else None,
            "dry_run_plan": json_safe(self.dry_run_plan),
            "execution_result": json_safe(self.execution_result),
            "timestamp": self.timestamp.isoformat(),
            "outcome": str(self.outcome),
        }
