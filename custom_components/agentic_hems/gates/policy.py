"""Gate 6, Policy: first match in the (operation, device_type, risk range) table (seed 001 sections 4.6 and 6).

The table is ``ctx.policy`` (``tables.effective_policy``: validated user rules, then the defaults). The operation
is the intent and the device type the HA domain. No matching rule denies (fail closed). ``allow`` and ``confirm``
pass (Execution asks a person for ``confirm``); ``deny`` blocks.

Before the table, grid setpoints (``ctx.setpoints.reserved()``, the battery setpoint of the options' grid step) are
the grid toolkit's alone: a command on one passes only with ``source_agent: grid`` and a :class:`.models.GridGrant`
that the :class:`.models.SetpointAuthority` accepts (an approved request, its current slot, its value). A person,
an automation, the orchestrator and the scheduler are refused, and so is a ``grid`` command without a grant on any
entity. No user rule can allow what this check refuses.
"""

from __future__ import annotations

from collections.abc import Sequence

from .models import SOURCE_GRID, GateContext, GatedCommand, GateResult, NormalizedCommand, PolicyAction
from .tables import PolicyRule

NAME = "policy"


def decide(rules: Sequence[PolicyRule], operation: str, device_type: str, risk: int) -> tuple[int | None, PolicyAction]:
    """(index of the first matching rule or None, its action; DENY when nothing matches)."""
    for index, rule in enumerate(rules):
        if rule.matches(operation, device_type, risk):
            return index, rule.action
    return None, PolicyAction.DENY


def setpoint_refusal(ctx: GateContext, command: NormalizedCommand) -> str | None:
    """Why a command on a grid setpoint, or a ``grid`` command, may not pass; None when it may."""
    reserved = ctx.setpoints.reserved() if ctx.setpoints is not None else frozenset()
    if command.entity_id in reserved and ctx.source_agent != SOURCE_GRID:
        return (f"{command.entity_id} is a grid setpoint: only an approved authorization request sets it "
                "(request_authorization, then approve_authorization)")
    if ctx.source_agent != SOURCE_GRID:
        return None
    if ctx.grant is None:
        return "a grid command without an approved authorization request"
    if command.entity_id not in reserved or ctx.setpoints is None:
        return f"{command.entity_id} is not a grid setpoint"
    return ctx.setpoints.check_grant(ctx.grant, command.entity_id, command.data, ctx.now)


def evaluate(ctx: GateContext) -> GateResult:
    """Pass unless the first matching rule denies; sets ``ctx.policy_action`` and ``ctx.gated``.

    Evidence: ``operation``, ``device_type``, ``risk_level``, ``rule`` (the matched rule or None), ``rule_index``,
    ``action`` and ``override_available`` (True for ``confirm``: an admin may confirm).
    """
    assert ctx.command is not None  # device_resolved ran
    command = ctx.command
    service = command.service
    assert service is not None  # capability ran
    if (why := setpoint_refusal(ctx, command)) is not None:
        ctx.policy_action = PolicyAction.DENY
        return GateResult(NAME, False, f"blocked by policy: {why}", {
            "operation": command.intent, "device_type": command.domain, "risk_level": command.risk_level,
            "grid_setpoint": True, "grant": ctx.grant.as_dict() if ctx.grant else None, "action": str(PolicyAction.DENY),
            "override_available": False,
        })
    index, action = decide(ctx.policy, command.intent, command.domain, command.risk_level)
    rule = ctx.policy[index] if index is not None else None
    evidence = {
        "operation": command.intent,
        "device_type": command.domain,
        "risk_level": command.risk_level,
        "rule": rule.as_dict() if rule else None,
        "rule_index": index,
        "action": str(action),
        "override_available": action is PolicyAction.CONFIRM,
    }
    ctx.policy_action = action
    if action is PolicyAction.DENY:
        what = f"{rule.operation}/{rule.device_type}/risk {rule.risk_min}-{rule.risk_max}" if rule else "no matching rule"
        return GateResult(NAME, False, f"blocked by policy: {what}", evidence)
    ctx.gated = GatedCommand(
        intent=command.intent,
        entity_id=command.entity_id,
        domain=command.domain,
        service=service,
        data=dict(command.data),
        risk_level=command.risk_level,
        policy_action=action,
        trace_id=ctx.trace_id,
    )
    return GateResult(NAME, True, f"policy: {action}", evidence)
