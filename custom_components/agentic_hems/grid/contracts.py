"""One contract mechanism for the grid toolkit's thirteen tools.

A :class:`ToolContract` fixes a tool's name, side effect, scope, timeout, input schema and output keys. Every call goes
through :func:`invoke`, which carries the nine requirements that no tool repeats:

- **authentication**: the :class:`Caller` (an HA user id, or ``system`` for automations and the integration itself);
- **authorization**: the contract's scope must be among the caller's scopes (``system`` is never granted to a user);
- **validation**: the input schema (:func:`..validation.closed`); tools add their semantic checks and raise
  :class:`ToolError`;
- **timeout**: ``asyncio.timeout(timeout_ms)``; numeric work runs in the executor (the tools' business);
- **provenance**: tool, version, the SHA-256 of the validated inputs, the ids of the sources and snapshots, the solver,
  the actor and ``computed_at`` (UTC);
- **logging**: one structured line per call;
- **the audit record**: appended for every call, allowed or not (``generate_audit_record``'s fields);
- **failure behaviour**: a typed :class:`ToolError` whose ``key`` is a translation key of the HA shell.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from enum import StrEnum
import logging
import time
from typing import Any, Protocol

from ..canonical_json import digest, json_safe
from ..validation import Closed, describe, vol

LOGGER = logging.getLogger(__name__)


class Scope(StrEnum):
    """What a caller may do on a tenant (a site)."""

    READ = "tenant:read"
    SIMULATE = "tenant:simulate"
    REQUEST = "tenant:request"
    INCIDENT = "tenant:write:incident"
    SYSTEM = "system"


USER_SCOPES = frozenset({Scope.READ, Scope.SIMULATE, Scope.REQUEST, Scope.INCIDENT})


class SideEffect(StrEnum):
    """What a tool does besides computing. No tool writes a setpoint."""

    READ = "read"
    COMPUTE = "compute"
    SIMULATE = "simulate"
    REQUEST = "request"
    RECORD = "record"


class ToolError(Exception):
    """A typed tool failure.

    ``key`` is the translation key; ``status`` one of invalid, forbidden, not_found, timeout, failed, halted;
    ``placeholders`` fill the translated message.
    """

    def __init__(self, key: str, status: str = "invalid", **placeholders: Any) -> None:
        """Hold ``key``, ``status`` and the placeholders as strings."""
        super().__init__(f"{key}: {placeholders}" if placeholders else key)
        self.key = key
        self.status = status
        self.placeholders = {k: str(v) for k, v in placeholders.items()}


@dataclass(frozen=True)
class Caller:
    """Who calls: ``user_id`` (``None`` for system) and the scopes granted on the tenant."""

    user_id: str | None
    scopes: frozenset[Scope]

    @property
    def actor(self) -> str:
        """The user id, or ``system``."""
        return self.user_id or "system"


@dataclass(frozen=True)
class ToolContract:
    """A tool's fixed contract: ``timeout_ms`` in milliseconds; ``output_keys`` every result carries."""

    name: str
    side_effect: SideEffect
    scope: Scope
    timeout_ms: int
    schema: Closed | vol.Schema
    output_keys: tuple[str, ...]
    version: str = "1"


@dataclass
class ToolOutput:
    """What a tool returns: its JSON-safe ``data``, the ids of the ``sources`` it read and the ``solver`` used."""

    data: dict[str, Any]
    sources: list[str] = field(default_factory=list)
    solver: str | None = None


type Handler = Callable[[dict[str, Any], Caller], Awaitable[ToolOutput]]


class AuditSink(Protocol):
    """Where the audit records go (the HA shell's hash-chained log)."""

    async def async_append(self, record: dict[str, Any]) -> dict[str, Any]:
        """Append ``record``; return ``{"record_id", "chain_hash"}``."""


GENERATE_AUDIT_RECORD = ToolContract(
    "generate_audit_record",
    SideEffect.RECORD,
    Scope.SYSTEM,
    1000,
    vol.Schema(
        {
            vol.Required("actor"): str,
            vol.Required("tool"): str,
            vol.Required("inputs_hash"): vol.Any(None, str),
            vol.Required("outputs_hash"): vol.Any(None, str),
            vol.Optional("decision"): str,
        },
        extra=vol.ALLOW_EXTRA,
    ),
    ("record_id", "chain_hash"),
)


async def generate_audit_record(audit: AuditSink, record: Mapping[str, Any]) -> dict[str, Any]:
    """Append an audit record (``generate_audit_record``, internal, scope ``system``).

    Only the integration appends records: for every tool call, gate decision and approval. The sink checks the
    previous chain hash; the append is shielded, so a timeout (1000 ms) never leaves a half-written line.

    Raises:
        ToolError: ``tool_invalid_input`` (a record without actor, tool or hashes), ``tool_timeout``.

    """
    contract = GENERATE_AUDIT_RECORD
    try:
        data = contract.schema(json_safe(record))
    except vol.Invalid as err:
        raise ToolError("tool_invalid_input", tool=contract.name, error=describe(err)) from err
    try:
        async with asyncio.timeout(contract.timeout_ms / 1000):
            return await asyncio.shield(audit.async_append(data))
    except TimeoutError as err:
        raise ToolError("tool_timeout", "timeout", tool=contract.name, timeout_ms=contract.timeout_ms) from err


async def _audit_refusal(audit: AuditSink, record: dict[str, Any], err: ToolError) -> None:
    """Complete ``record`` with the typed error ``err``, audit it and log the outcome."""
    record |= {"outputs_hash": None, "decision": f"{err.status}:{err.key}"}
    await generate_audit_record(audit, record)
    LOGGER.info(
        "tool=%s actor=%s tenant=%s outcome=%s key=%s",
        record["tool"],
        record["actor"],
        record["tenant"],
        err.status,
        err.key,
    )


async def invoke(
    contract: ToolContract,
    handler: Handler,
    inputs: Mapping[str, Any],
    caller: Caller,
    *,
    tenant: str,
    audit: AuditSink,
    now: Callable[[], datetime] = lambda: datetime.now(UTC),
) -> dict[str, Any]:
    """Run ``handler`` under ``contract`` for ``caller`` on ``tenant``; return its data plus ``provenance``.

    Raises:
        ToolError: ``tool_forbidden`` (scope missing), ``tool_invalid_input`` (schema), ``tool_timeout``, or the
            handler's own typed error. Every outcome, including refusals, is audited and logged.

    """
    started = time.monotonic()
    record: dict[str, Any] = {
        "type": "tool_call",
        "actor": caller.actor,
        "tool": contract.name,
        "tenant": tenant,
        "inputs_hash": digest(json_safe(inputs)),
    }
    try:
        output = await _checked_call(contract, handler, inputs, caller, record)
    except ToolError as err:
        await _audit_refusal(audit, record, err)
        raise
    inputs_hash = record["inputs_hash"]
    latency_ms = round((time.monotonic() - started) * 1000, 3)
    result = json_safe(output.data)
    sources = sorted(set(output.sources))
    provenance: dict[str, Any] = {
        "tool": contract.name,
        "version": contract.version,
        "inputs_hash": inputs_hash,
        "sources": sources,
        "solver": output.solver,
        "actor": caller.actor,
        "computed_at": now().isoformat(),
        "latency_ms": latency_ms,
    }
    record |= {"outputs_hash": digest(result), "decision": "ok", "sources": sources}
    audit_ref = await generate_audit_record(audit, record)
    provenance["audit_record_id"] = audit_ref["record_id"]
    LOGGER.info(
        "tool=%s actor=%s tenant=%s outcome=ok latency_ms=%s sources=%s",
        contract.name,
        caller.actor,
        tenant,
        latency_ms,
        ",".join(sources),
    )
    return {**result, "provenance": provenance}


async def _checked_call(
    contract: ToolContract, handler: Handler, inputs: Mapping[str, Any], caller: Caller, record: dict[str, Any]
) -> ToolOutput:
    """Check scope and inputs, run ``handler`` within the contract's time and check that every output is there.

    Sets ``record["inputs_hash"]`` to the digest of the validated inputs. Raises ToolError ``tool_forbidden``,
    ``tool_invalid_input``, ``tool_timeout``, ``tool_failed`` (an output missing) or the handler's own.
    """
    if contract.scope not in caller.scopes:
        raise ToolError("tool_forbidden", "forbidden", tool=contract.name, scope=contract.scope.value)
    try:
        data = contract.schema(dict(inputs))
    except vol.Invalid as err:
        raise ToolError("tool_invalid_input", tool=contract.name, error=describe(err)) from err
    record["inputs_hash"] = digest(json_safe(data))
    try:
        async with asyncio.timeout(contract.timeout_ms / 1000):
            output = await handler(data, caller)
    except TimeoutError as err:
        raise ToolError("tool_timeout", "timeout", tool=contract.name, timeout_ms=contract.timeout_ms) from err
    missing = [key for key in contract.output_keys if key not in output.data]
    if missing:
        raise ToolError("tool_failed", "failed", tool=contract.name, error=f"missing outputs {missing}")
    return output
