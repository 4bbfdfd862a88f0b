"""The one contract mechanism: every call is authorized, validated, timed out, provenanced and audited."""

from __future__ import annotations

import asyncio
from datetime import UTC, datetime
from typing import Any

import pytest
import voluptuous as vol

from custom_components.agentic_hems.canonical_json import digest
from custom_components.agentic_hems.grid.contracts import (
    GENERATE_AUDIT_RECORD,
    USER_SCOPES,
    Caller,
    Scope,
    SideEffect,
    ToolContract,
    ToolError,
    ToolOutput,
    generate_audit_record,
    invoke,
)
from custom_components.agentic_hems.grid.tools import TOOLS

CONTRACT = ToolContract("probe", SideEffect.COMPUTE, Scope.SIMULATE, 50,
                        vol.Schema({vol.Required("x"): vol.All(int, vol.Range(min=0))}), ("y",))
NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class Sink:
    def __init__(self) -> None:
        self.records: list[dict[str, Any]] = []

    async def async_append(self, record: dict[str, Any]) -> dict[str, Any]:
        self.records.append(record)
        return {"record_id": f"0-{len(self.records) - 1}", "chain_hash": "h"}


async def double(data: dict[str, Any], caller: Caller) -> ToolOutput:
    return ToolOutput({"y": data["x"] * 2}, ["b", "a", "b"], "arith")


async def test_an_allowed_call_carries_provenance_and_one_audit_record() -> None:
    sink = Sink()
    result = await invoke(CONTRACT, double, {"x": 21}, Caller("u1", USER_SCOPES), tenant="t", audit=sink,
                          now=lambda: NOW)
    provenance = result.pop("provenance")
    assert result == {"y": 42}
    assert provenance["inputs_hash"] == digest({"x": 21}) and provenance["sources"] == ["a", "b"]
    assert (provenance["tool"], provenance["solver"], provenance["actor"]) == ("probe", "arith", "u1")
    assert provenance["computed_at"] == NOW.isoformat() and provenance["audit_record_id"] == "0-0"
    assert sink.records == [{"type": "tool_call", "actor": "u1", "tool": "probe", "tenant": "t",
                             "inputs_hash": digest({"x": 21}), "outputs_hash": digest({"y": 42}),
                             "decision": "ok", "sources": ["a", "b"]}]


@pytest.mark.parametrize(
    ("inputs", "caller", "key", "status"),
    [
        ({"x": 1}, Caller("u2", frozenset({Scope.READ})), "tool_forbidden", "forbidden"),
        ({"x": -1}, Caller(None, USER_SCOPES), "tool_invalid_input", "invalid"),
        ({"x": 1, "z": 2}, Caller(None, USER_SCOPES), "tool_invalid_input", "invalid"),
    ],
)
async def test_refusals_are_typed_and_audited(inputs: dict[str, Any], caller: Caller, key: str, status: str) -> None:
    sink = Sink()
    with pytest.raises(ToolError) as err:
        await invoke(CONTRACT, double, inputs, caller, tenant="t", audit=sink)
    assert (err.value.key, err.value.status) == (key, status)
    assert len(sink.records) == 1 and sink.records[0]["decision"] == f"{status}:{key}"
    assert sink.records[0]["outputs_hash"] is None


async def test_the_timeout_is_the_contracts() -> None:
    async def slow(data: dict[str, Any], caller: Caller) -> ToolOutput:
        await asyncio.sleep(1)
        return ToolOutput({"y": 0})

    sink = Sink()
    with pytest.raises(ToolError) as err:
        await invoke(CONTRACT, slow, {"x": 1}, Caller(None, USER_SCOPES), tenant="t", audit=sink)
    assert err.value.key == "tool_timeout" and err.value.placeholders == {"tool": "probe", "timeout_ms": "50"}
    assert sink.records[0]["decision"] == "timeout:tool_timeout"


async def test_a_missing_output_is_a_failure() -> None:
    async def partial(data: dict[str, Any], caller: Caller) -> ToolOutput:
        return ToolOutput({})

    with pytest.raises(ToolError) as err:
        await invoke(CONTRACT, partial, {"x": 1}, Caller(None, USER_SCOPES), tenant="t", audit=Sink())
    assert err.value.key == "tool_failed"


def test_the_contract_table() -> None:
    """Each grid tool's side effect, scope and timeout, tool by tool; system scope is never a user's."""
    expected = {
        "inspect_grid_state": ("read", "tenant:read", 2000),
        "retrieve_asset": ("read", "tenant:read", 1000),
        "run_power_flow": ("compute", "tenant:simulate", 10000),
        "run_contingency": ("compute", "tenant:simulate", 30000),
        "run_forecast": ("compute", "tenant:read", 5000),
        "simulate_action": ("simulate", "tenant:simulate", 20000),
        "calculate_flexibility": ("compute", "tenant:read", 5000),
        "optimize_dispatch": ("compute", "tenant:simulate", 60000),
        "validate_constraints": ("compute", "tenant:simulate", 10000),
        "request_authorization": ("request", "tenant:request", 3000),
        "generate_explanation": ("compute", "tenant:read", 15000),
        "create_incident": ("record", "tenant:write:incident", 3000),
    }
    assert {name: (c.side_effect.value, c.scope.value, c.timeout_ms) for name, (c, _) in TOOLS.items()} == expected
    audit = GENERATE_AUDIT_RECORD
    assert (audit.side_effect, audit.scope, audit.timeout_ms) == (SideEffect.RECORD, Scope.SYSTEM, 1000)
    assert Scope.SYSTEM not in USER_SCOPES


async def test_generate_audit_record_checks_its_record() -> None:
    """Internal: the integration's records need actor, tool and both hashes; extra fields are kept."""
    sink = Sink()
    ref = await generate_audit_record(sink, {"actor": "u1", "tool": "gate_pipeline", "inputs_hash": None,
                                             "outputs_hash": "ab", "trace_id": "t1"})
    assert ref["record_id"] == "0-0" and sink.records[0]["trace_id"] == "t1"
    with pytest.raises(ToolError) as err:
        await generate_audit_record(sink, {"tool": "x", "inputs_hash": None, "outputs_hash": None})
    assert err.value.key == "tool_invalid_input" and len(sink.records) == 1
