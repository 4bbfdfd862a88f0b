"""The gate types: JSON-safe forms and small properties."""

from __future__ import annotations

from datetime import UTC, datetime
import json

from custom_components.agentic_hems.canonical_json import json_safe
from custom_components.agentic_hems.gates.models import (
    GateResult,
    ModelCandidate,
    Outcome,
    PipelineTrace,
    PolicyAction,
)

T = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)


def test_json_safe() -> None:
    assert json_safe({"a": T, "b": {3, 1}, "c": (PolicyAction.DENY,), 4: None, "d": object}) == {
        "a": "2026-01-05T12:00:00+00:00", "b": [1, 3], "c": ["deny"], "4": None, "d": repr(object),
    }


def test_outcomes_are_the_issue_list() -> None:
    assert [str(o) for o in Outcome] == ["blocked", "dry_run", "executed", "pending_confirmation", "confirmed",
                                         "rejected", "failed", "cancelled", "expired"]


def test_trace_as_dict_and_failed_gate() -> None:
    trace = PipelineTrace(
        trace_id="t", source_agent="a", raw_input="", candidate={"intent": "turn_on"},
        gate_results=[GateResult("input_guard", True, "ok"), GateResult("schema", False, "bad", {"at": T})],
        timestamp=T, outcome=Outcome.BLOCKED,
    )
    assert trace.failed_gate == "schema" and trace.policy_action is None
    data = json.loads(json.dumps(trace.as_dict()))
    assert data["gate_results"][1] == {"gate": "schema", "passed": False, "reason": "bad",
                                       "evidence": {"at": "2026-01-05T12:00:00+00:00"}}
    assert data["outcome"] == "blocked" and data["failed_gate"] == "schema" and data["command"] is None


def test_candidate_round_trip() -> None:
    candidate = ModelCandidate(intent="set_value", device_alias="x", params={"value": 2})
    assert ModelCandidate.from_dict(candidate.as_dict()) == candidate
