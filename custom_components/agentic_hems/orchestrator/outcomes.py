"""Outcomes, not claims: what a run actually did, and the summary built from it (issue "The model proposes, the
person decides").

The assistant's tools record one outcome per device command (its gate outcome: ``executed``, ``dry_run``,
``blocked``, ``pending_confirmation``, ``failed``, ...) and per plan (``stored``, ``cancelled`` or ``not_planned``).
When a language model drove a run that did anything, the summary that ``ask`` returns and Assist speaks is
:func:`report` of those outcomes; the model's closing FINISH text is dropped from it (the run keeps it as
``model_summary``), so no model can state an action that did not happen. A run that did nothing (a question
answered) keeps the model's answer. :func:`fulfilled` says whether anything the person asked for happened.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

COMMAND = "command"
PLAN = "plan"
# A command that went through: it ran, or it waits for an administrator (the person decides).
EFFECTIVE_COMMANDS = frozenset({"executed", "pending_confirmation"})
EFFECTIVE_PLANS = frozenset({"stored", "cancelled"})


def command_outcome(candidate: Mapping[str, Any], record: Mapping[str, Any]) -> dict[str, Any]:
    """The outcome of one gated command from its trace record (JSON-safe)."""
    gates = record.get("gate_results") or []
    return {
        "kind": COMMAND,
        "intent": candidate.get("intent"),
        "target": record.get("entity_id") or candidate.get("device_alias"),
        "outcome": record.get("outcome"),
        "failed_gate": record.get("failed_gate"),
        "reason": gates[-1].get("reason") if gates else None,
        "trace_id": record.get("trace_id"),
    }


def refused_command(action: Mapping[str, Any] | None, error: str) -> dict[str, Any]:
    """A device command the orchestrator refused before the gates (it did not validate)."""
    args = (action or {}).get("args") or {}
    return {"kind": COMMAND, "intent": args.get("intent"), "target": args.get("device_alias"),
            "outcome": "invalid", "failed_gate": None, "reason": error, "trace_id": None}


def plan_outcome(plan: Mapping[str, Any]) -> dict[str, Any]:
    """The outcome of one planned (or cancelled) appliance from its SCHEDULE observation."""
    if plan.get("cancelled"):
        outcome = "cancelled"
    elif plan.get("feasible"):
        outcome = "stored"
    else:
        outcome = "not_planned"
    return {"kind": PLAN, **plan, "outcome": outcome}


def plan_line(plan: Mapping[str, Any]) -> str:
    """One sentence for a plan observation: cleared, its window and cost, or why it was not planned."""
    if plan.get("cancelled"):
        return f"{plan.get('appliance')}: plan cleared."
    if plan.get("feasible"):
        savings = plan.get("savings")
        if isinstance(savings, int | float) and savings < 0:
            note = f"{-savings} more than starting now: the main fuse is shared with the other plans"
        else:
            note = f"saves {savings}"
        return (
            f"{plan.get('appliance')}: {plan.get('start_local')} to {plan.get('end_local')}, "
            f"{plan.get('cost')} {plan.get('currency')} ({note})."
        )
    why = plan.get("detail") or plan.get("reason") or plan.get("error")
    return f"{plan.get('appliance')}: not planned: {why}."


_COMMAND_TEXT = {
    "executed": "executed",
    "pending_confirmation": "waits for an administrator to confirm it",
    "dry_run": "not executed (dry run)",
    "failed": "failed",
    "cancelled": "cancelled",
    "rejected": "rejected",
    "expired": "expired",
    "invalid": "not run, the command was invalid",
}


def command_line(outcome: Mapping[str, Any]) -> str:
    """One sentence for a command outcome, e.g. ``unlock lock.front_door: blocked by the policy gate (...)``."""
    what = f"{outcome.get('intent')} {outcome.get('target')}"
    state = str(outcome.get("outcome"))
    reason = outcome.get("reason")
    if state == "blocked":
        return f"{what}: blocked by the {outcome.get('failed_gate')} gate ({reason})."
    text = _COMMAND_TEXT.get(state, state)
    return f"{what}: {text} ({reason})." if state in ("dry_run", "failed", "invalid") and reason else f"{what}: {text}."


def report(outcomes: Sequence[Mapping[str, Any]], error: str | None = None) -> str:
    """The summary of a run: one sentence per outcome in order, then why the run stopped (if it did)."""
    lines = [command_line(o) if o.get("kind") == COMMAND else plan_line(o) for o in outcomes]
    if error:
        lines.append(f"Stopped: {error}.")
    return " ".join(lines) or "Nothing was done."


def fulfilled(outcomes: Sequence[Mapping[str, Any]]) -> bool:
    """False when device commands were asked and none executed or waits for confirmation, and no plan was stored or
    cancelled; True otherwise (also when nothing was asked: a question answered)."""
    commands = [o for o in outcomes if o.get("kind") == COMMAND]
    if not commands:
        return True
    return any(o.get("outcome") in EFFECTIVE_COMMANDS for o in commands) or any(
        o.get("kind") == PLAN and o.get("outcome") in EFFECTIVE_PLANS for o in outcomes
    )
