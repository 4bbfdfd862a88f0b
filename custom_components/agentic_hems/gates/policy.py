"""Gate 6, Policy: first match in the (operation, device_type, risk range) table.

The table is ``ctx.policy`` (``tables.effective_policy``: validated user rules, then the defaults). The operation
is the intent and the device type the HA domain. No matching rule denies (fail closed). ``allow`` and ``confirm``
pass (Execution asks a person for ``confirm``); ``deny`` blocks.

Before the table, grid setpoints (``ctx.setpoints.reserved()``, the battery setpoint of the options' grid step) are
the grid toolkit's alone: a command on one passes only with ``source_agent: grid`` and a :class:`.models.GridGrant`
that the :class:`.models.SetpointAuthority` accepts (an approved request, its current slot, its exact command: the
intent and the service data). A person, an automation, the orchestrator and the scheduler are refused, and so is a
``grid`` command without a grant on any entity, all before the table: no pending confirmation is ever created for
them, and no user rule can allow what this check refuses. Such a refusal's evidence has ``grid_setpoint`` (True),
``grant`` and, when the grant covers another command on that entity in that slot, ``approved_command`` (``{"intent",
"data"}``). A ``grid`` command whose grant passed follows the approval path: when the table asks for ``confirm``,
the administrator's approval of the authorization request is that confirmation (for this request, slot and value),
so the command passes as ``allow`` with the grant in the evidence (``confirmed_by_grant``); ``deny`` still denies.

Then intent binding ("the model proposes, the person decides"): a command of the ``orchestrator`` (a language model
or the offline planner) passes only when the person's request text, ``raw_input``, asks for its target and action.
``ctx.read_request`` reads the text into :class:`.models.RequestedAction` pairs (``orchestrator.intent``); nothing
the model writes and no data (calendar titles, names, prices, tool results) is read, so a model can narrow the set but
never widen it. ``start``/``turn_on`` and ``stop``/``turn_off`` count as the same action. The value is bound too
(``gates.values``): a brightness, temperature or number value must be one the request names for that target and
action ("set the boiler to 50 degrees" allows 50 only; the reason names both values); where the request names no
value ("make it warmer"), the model's value never passes as ``allow``: an ``allow`` rule counts as ``confirm``.
A ``scheduler`` command with a value is bound to the value its plan states in ``raw_input``
(``values.plan_text``). Other sources (automations, scripts, outside agents, the grid, and the scheduler's commands
without a value) are not bound. No user rule can allow what this check refuses. Such a refusal's evidence names its
reason for translation: ``reason_key`` (:data:`BINDING_KEYS`) and ``reason_placeholders`` (strings: ``entity_id``,
``intent``, and for a value ``asked``, the values asked or planned in words joined by " / ", and ``proposed``).

A command with ``ctx.confirm_only`` (a caller without a person's request, e.g. an MCP client) never passes as
``allow``: an ``allow`` rule counts as ``confirm``, so it waits for an administrator; ``deny`` still denies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from .models import (
    SOURCE_GRID,
    SOURCE_ORCHESTRATOR,
    SOURCE_SCHEDULER,
    GateContext,
    GatedCommand,
    GateResult,
    GrantRefusal,
    NormalizedCommand,
    PolicyAction,
    RequestedAction,
)
from .tables import INTENT_SERVICES, PolicyRule, service_for
from .values import asked_words, fits, planned_value, proposed_value, proposed_words
from .words import rule_words

NAME = "policy"


def decide(rules: Sequence[PolicyRule], operation: str, device_type: str, risk: int) -> tuple[int | None, PolicyAction]:
    """(index of the first matching rule or None, its action; DENY when nothing matches)."""
    for index, rule in enumerate(rules):
        if rule.matches(operation, device_type, risk):
            return index, rule.action
    return None, PolicyAction.DENY


def guarded_intents(
    rules: Sequence[PolicyRule], domain: str, risk: int, *, appliance: bool = False
) -> dict[str, PolicyAction]:
    """Return the intents on a ``domain`` entity of risk ``risk`` that the table does not allow outright.

    Each maps to CONFIRM or DENY (the first matching rule, as :func:`evaluate` decides it); the intents are the
    domain's vocabulary (``tables.INTENT_SERVICES``), plus ``start``/``stop`` on a planned appliance's entity. Empty
    when every intent is allowed, or for a domain the gates never act on.
    """
    intents = [*INTENT_SERVICES.get(domain, {})]
    if appliance:
        intents += [i for i in ("start", "stop") if i not in intents and service_for(domain, i, appliance=True)]
    guarded = {intent: decide(rules, intent, domain, risk)[1] for intent in intents}
    return {intent: action for intent, action in guarded.items() if action is not PolicyAction.ALLOW}


def setpoint_refusal(ctx: GateContext, command: NormalizedCommand) -> GrantRefusal | None:
    """Why a command on a grid setpoint, or a ``grid`` command, may not pass; None when it may.

    The scheduler may set a reserved entity the authority lists as ``scheduled`` (the whole-home plan's battery in
    automatic mode, whose control entity may also be the grid toolkit's setpoint); the policy rules still decide.
    """
    reserved = ctx.setpoints.reserved() if ctx.setpoints is not None else frozenset()
    scheduled = ctx.setpoints.scheduled() if ctx.setpoints is not None else frozenset()
    if ctx.source_agent == SOURCE_SCHEDULER and command.entity_id in scheduled:
        return None
    if command.entity_id in reserved and ctx.source_agent != SOURCE_GRID:
        return GrantRefusal(
            reason=f"{command.entity_id} is a grid setpoint: only an approved authorization request sets it "
            "(request_authorization, then approve_authorization)"
        )
    if ctx.source_agent != SOURCE_GRID:
        return None
    if ctx.grant is None:
        return GrantRefusal(reason="a grid command without an approved authorization request")
    if command.entity_id not in reserved or ctx.setpoints is None:
        return GrantRefusal(reason=f"{command.entity_id} is not a grid setpoint")
    return ctx.setpoints.check_grant(ctx.grant, command, ctx.now)


_SAME_ACTION = {"start": "turn_on", "stop": "turn_off"}
# why intent binding refused a command: a reason key (translated by the shell, the cards and the summaries)
NOTHING_REQUESTED = "nothing_requested"  # the request asks for no device action
NOT_REQUESTED = "not_requested"  # it asks for others, not this target and action
VALUE_NOT_REQUESTED = "value_not_requested"  # it asks for this target and action with another value
VALUE_NOT_PLANNED = "value_not_planned"  # a plan's command with another value than its plan states
PLAN_NO_VALUE = "plan_no_value"  # a plan's command whose plan states no value for its entity
BINDING_KEYS = frozenset({NOTHING_REQUESTED, NOT_REQUESTED, VALUE_NOT_REQUESTED, VALUE_NOT_PLANNED, PLAN_NO_VALUE})


def same_action(action: str) -> str:
    """Return the action ``action`` counts as in intent binding (``start`` is ``turn_on``, ``stop`` is ``turn_off``)."""
    return _SAME_ACTION.get(action, action)


def binding_refusal(ctx: GateContext, command: NormalizedCommand) -> tuple[tuple[str, str] | None, dict[str, object]]:
    """((reason key, why) a command is not what the request asked for or the plan planned, or None; the evidence).

    The key is one of :data:`BINDING_KEYS`, why its English sentence. An ``orchestrator`` command is bound to the
    request by target, action and value; a ``scheduler`` command with a value to its plan's statement
    (:func:`.values.planned_value`). Evidence (empty for other sources and a scheduler command without a value):
    ``request`` (the text matched against), ``requested`` (its pairs), ``bound`` (True when the command is among them,
    its value included), and for a command with a value ``proposed`` (it in words) and ``asked`` (the values asked or
    planned, in words; empty when none was named: ``value_asked`` False); ``plan`` (True) for a scheduler command.
    """
    proposed = proposed_value(command.intent, command.params)
    if ctx.source_agent == SOURCE_SCHEDULER and proposed is not None:
        return _plan_binding(ctx, command, proposed)
    if ctx.source_agent != SOURCE_ORCHESTRATOR:
        return None, {}
    requested = ctx.read_request(ctx.raw_input) if ctx.read_request is not None else frozenset[RequestedAction]()
    want = (command.entity_id, same_action(command.intent))
    pairs = [r for r in requested if (r.target, same_action(r.action)) == want]
    evidence: dict[str, object] = {
        "request": ctx.raw_input,
        "requested": [r.as_dict() for r in sorted(requested, key=RequestedAction.sort_key)],
        "bound": bool(pairs),
    }
    if not pairs:
        if not requested:
            return (NOTHING_REQUESTED, "the request asks for no device action"), evidence
        return (NOT_REQUESTED, f"the request does not ask to {command.intent} {command.entity_id}"), evidence
    if proposed is None:
        return None, evidence
    unit = _entity_unit(ctx)
    asked = sorted({asked_words(r) for r in pairs if r.value is not None})
    proposed_text = proposed_words(command.intent, proposed, unit)
    evidence |= {"proposed": proposed_text, "asked": asked, "value_asked": bool(asked)}
    if not asked or any(fits(r, command.intent, proposed, unit) for r in pairs):
        return None, evidence
    evidence["bound"] = False
    return (VALUE_NOT_REQUESTED, f"the request asks for {' or '.join(asked)}, not {proposed_text}"), evidence


def _entity_unit(ctx: GateContext) -> str | None:
    """Return the entity's ``unit_of_measurement`` (Freshness read its state), else its profile's unit, or None."""
    unit = ctx.state.attributes.get("unit_of_measurement") if ctx.state is not None else None
    if isinstance(unit, str) and unit.strip():
        return unit
    return ctx.entity.value_unit if ctx.entity is not None else None


def _plan_binding(
    ctx: GateContext, command: NormalizedCommand, proposed: float
) -> tuple[tuple[str, str] | None, dict[str, object]]:
    """Bind a scheduler command with a value to the value its plan states in ``raw_input``."""
    unit = _entity_unit(ctx)
    planned = planned_value(ctx.raw_input)
    proposed_text = proposed_words(command.intent, proposed, unit)
    evidence: dict[str, object] = {"request": ctx.raw_input, "plan": True, "proposed": proposed_text}
    if planned is None or planned[0] != command.entity_id:
        evidence |= {"bound": False, "asked": []}
        return (PLAN_NO_VALUE, f"the plan sets no value for {command.entity_id}"), evidence
    planned_text = proposed_words(command.intent, planned[1], unit)  # stated in the command's unit
    bound = fits(RequestedAction(command.entity_id, command.intent, planned[1]), command.intent, proposed, unit)
    evidence |= {"asked": [planned_text], "bound": bound}
    if bound:
        return None, evidence
    return (VALUE_NOT_PLANNED, f"the plan sets {planned_text}, not {proposed_text}"), evidence


def binding_placeholders(command: NormalizedCommand, binding: Mapping[str, object]) -> dict[str, str]:
    """Return the placeholders of a binding refusal's reason (see the module docstring)."""
    found = {"entity_id": command.entity_id, "intent": command.intent}
    if "proposed" in binding:
        asked = binding.get("asked")
        found |= {
            "asked": " / ".join(map(str, asked)) if isinstance(asked, list) else "",
            "proposed": str(binding["proposed"]),
        }
    return found


def _refuse(ctx: GateContext, command: NormalizedCommand, why: str, details: dict[str, object]) -> GateResult:
    """Deny ``command`` for ``why`` before any rule is consulted; ``details`` join the evidence."""
    ctx.policy_action = PolicyAction.DENY
    return GateResult(
        NAME,
        False,
        f"blocked by policy: {why}",
        {
            "operation": command.intent,
            "device_type": command.domain,
            "risk_level": command.risk_level,
            **details,
            "action": str(PolicyAction.DENY),
            "override_available": False,
        },
    )


def evaluate(ctx: GateContext) -> GateResult:
    """Pass unless the first matching rule denies; sets ``ctx.policy_action`` and ``ctx.gated``.

    Evidence: ``operation``, ``device_type``, ``risk_level``, ``rule`` (the matched rule or None), ``rule_index``,
    ``action`` and ``override_available`` (True for ``confirm``: an admin may confirm); ``intent_binding`` (see
    :func:`binding_refusal`) for an ``orchestrator`` command; ``confirmed_by_grant`` (the grant) when a ``confirm``
    rule was met by an approved authorization request; ``confirm_only`` (True) when ``ctx.confirm_only`` is set.
    """
    assert ctx.command is not None  # device_resolved ran
    command = ctx.command
    service = command.service
    assert service is not None  # capability ran
    if (refusal := setpoint_refusal(ctx, command)) is not None:
        grant = ctx.grant.as_dict() if ctx.grant else None
        other = {"approved_command": dict(refusal.approved)} if refusal.approved is not None else {}
        return _refuse(ctx, command, refusal.reason, {"grid_setpoint": True, "grant": grant, **other})
    refused, binding = binding_refusal(ctx, command)
    if refused is not None:
        key, why = refused
        keys = {"reason_key": key, "reason_placeholders": binding_placeholders(command, binding)}
        return _refuse(ctx, command, why, {"intent_binding": binding, **keys})
    index, action = decide(ctx.policy, command.intent, command.domain, command.risk_level)
    rule = ctx.policy[index] if index is not None else None
    approved = ctx.grant if action is PolicyAction.CONFIRM and ctx.source_agent == SOURCE_GRID else None
    if approved is not None:  # setpoint_refusal accepted the grant: its approval is the confirmation
        action = PolicyAction.ALLOW
    if ctx.confirm_only and action is PolicyAction.ALLOW:  # no person's request: a person confirms it instead
        action = PolicyAction.CONFIRM
    if binding.get("value_asked") is False and action is PolicyAction.ALLOW:  # a value nobody named: a person decides
        action = PolicyAction.CONFIRM
    evidence = {
        "operation": command.intent,
        "device_type": command.domain,
        "risk_level": command.risk_level,
        "rule": rule.as_dict() if rule else None,
        "rule_index": index,
        "action": str(action),
        "override_available": action is PolicyAction.CONFIRM,
        **({"intent_binding": binding} if binding else {}),
        **({"confirmed_by_grant": approved.as_dict()} if approved else {}),
        **({"confirm_only": True} if ctx.confirm_only else {}),
    }
    ctx.policy_action = action
    if action is PolicyAction.DENY:
        what = rule_words(rule.as_dict() if rule else None, index)  # "your rule 1 denies opening covers"
        return GateResult(NAME, False, f"blocked by policy: {what}", evidence)
    ctx.gated = GatedCommand(
        intent=command.intent,
        entity_id=command.entity_id,
        domain=command.service_domain,
        service=service,
        data=dict(command.data),
        risk_level=command.risk_level,
        policy_action=action,
        trace_id=ctx.trace_id,
    )
    return GateResult(NAME, True, f"policy: {action}", evidence)
