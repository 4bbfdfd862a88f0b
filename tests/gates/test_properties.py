"""Property tests over arbitrary candidates and policies (pure core only).

- No actuating call reaches any entity unless every gate passed and policy allowed or an admin confirmed
  (calls are counted by a recording actuator, not by mocking gates).

- A matching deny rule always blocks, and nothing reaches dry_run whose first matching rule denies.
- A stale state always blocks risk >= 4.
- An unknown (or unexposed, or own) entity never passes.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

import asyncio

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from custom_components.agentic_hems.gates.device_resolved import ResolverIndex, candidate_ids
from custom_components.agentic_hems.gates.keeper import Gatekeeper, NotPending, Settings
from custom_components.agentic_hems.gates.models import Outcome, PolicyAction
from custom_components.agentic_hems.gates.pipeline import evaluate
from custom_components.agentic_hems.gates.policy import decide
from custom_components.agentic_hems.gates.schema import HVAC_MODES
from custom_components.agentic_hems.gates.tables import DOMAINS, INTENTS, PolicyRule, effective_policy

from .fakes import NOW, FakeView, RecordingActuator, house

SETTINGS = settings(derandomize=True, max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])

KNOWN_ALIASES = ["main light", "ceiling", "kettle", "thermostat", "front door", "garage door", "boiler setpoint",
                 "dishwasher", "hidden lamp", "Kitchen Main light", "Living Thermostat"]
PASSABLE = [("ceiling", "set_brightness"), ("kettle", "turn_on"), ("front door", "lock"), ("front door", "unlock"),
            ("garage door", "open"), ("garage door", "close"), ("thermostat", "set_temperature"),
            ("boiler setpoint", "set_value"), ("dishwasher", "start"), ("dishwasher", "stop")]
ROOMS = [None, "living_room", "Lounge", "kitchen", "garage", "hall", "attic"]
PARAMS: dict[str, Any] = {
    "set_brightness": st.fixed_dictionaries({"brightness": st.integers(0, 100)}),
    "set_temperature": st.fixed_dictionaries({"temperature": st.floats(0, 40, allow_nan=False)}),
    "set_hvac_mode": st.fixed_dictionaries({"hvac_mode": st.sampled_from(HVAC_MODES)}),
    "set_value": st.fixed_dictionaries({"value": st.sampled_from([40, 45.5, 55.2, 70, 90])}),
}


@st.composite
def candidates(draw: st.DrawFn, aliases: st.SearchStrategy[str] | None = None) -> dict[str, Any]:
    if aliases is None and draw(st.booleans()):  # half the time a pair that can pass every gate
        alias, intent = draw(st.sampled_from(PASSABLE))
    else:
        intent = draw(st.sampled_from(sorted(INTENTS)))
        alias = draw(aliases if aliases is not None else st.sampled_from(KNOWN_ALIASES))
    candidate: dict[str, Any] = {"intent": intent, "device_alias": alias}
    if draw(st.integers(0, 3)) == 0 and (room := draw(st.sampled_from(ROOMS))) is not None:
        candidate["room"] = room
    if draw(st.integers(0, 3)) == 0:
        candidate["device_type"] = draw(st.sampled_from(sorted(DOMAINS)))
    candidate["params"] = draw(PARAMS.get(intent, st.just({})))
    return candidate


@st.composite
def rules(draw: st.DrawFn) -> tuple[PolicyRule, ...]:
    out = []
    for _ in range(draw(st.integers(0, 6))):
        low = draw(st.integers(0, 5))
        out.append(PolicyRule(
            draw(st.sampled_from(["*", *sorted(INTENTS)])), draw(st.sampled_from(["*", *sorted(DOMAINS)])), low,
            draw(st.integers(low, 5)), draw(st.sampled_from(list(PolicyAction))), "user",
        ))
    return tuple(out)


ALLOW_ALL = (PolicyRule("*", "*", 0, 5, PolicyAction.ALLOW),)


@SETTINGS
@given(candidates(), rules())
def test_dry_run_never_follows_a_deny(candidate: dict[str, Any], policy: tuple[PolicyRule, ...]) -> None:
    trace = evaluate(house(), source_agent="prop", candidate=candidate, now=NOW, rules=policy)
    if trace.outcome is Outcome.DRY_RUN:
        command = trace.command
        assert command is not None, "a dry_run trace carries its command"
        assert decide(policy, command.intent, command.domain, command.risk_level)[1] is not PolicyAction.DENY
        assert command.policy_action in (PolicyAction.ALLOW, PolicyAction.CONFIRM)
    else:
        assert trace.outcome is Outcome.BLOCKED and trace.command is None


@SETTINGS
@given(candidates(), rules(), st.sampled_from(["*", *sorted(INTENTS)]), st.sampled_from(["*", *sorted(DOMAINS)]))
def test_a_matching_deny_rule_always_blocks(
    candidate: dict[str, Any], policy: tuple[PolicyRule, ...], operation: str, device_type: str
) -> None:
    # First learn what the command resolves to under allow-all, then put a deny that matches it in front of `policy`.
    probe = evaluate(house(), source_agent="prop", candidate=candidate, now=NOW, rules=ALLOW_ALL)
    deny = PolicyRule(operation, device_type, 0, 5, PolicyAction.DENY, "user")
    trace = evaluate(house(), source_agent="prop", candidate=candidate, now=NOW, rules=(deny, *policy))
    if probe.command and deny.matches(probe.command.intent, probe.command.domain, probe.command.risk_level):
        assert trace.outcome is Outcome.BLOCKED and trace.failed_gate == "policy"
    deny_all = PolicyRule("*", "*", 0, 5, PolicyAction.DENY, "user")
    assert evaluate(house(), source_agent="prop", candidate=candidate, now=NOW,
                    rules=(deny_all, *policy)).outcome is Outcome.BLOCKED


def aged_house(age_s: float) -> FakeView:
    """``house()`` with every state last reported ``age_s`` seconds before NOW."""
    view = house()
    for entity_id, entity in list(view.entities.items()):
        view.add(entity, view.states[entity_id].state, age=timedelta(seconds=age_s))
    return view


@SETTINGS
@given(candidates(), st.floats(5.001, 1e6, allow_nan=False))
def test_a_stale_state_always_blocks_risk_4_and_up(candidate: dict[str, Any], age_s: float) -> None:
    view = aged_house(age_s)
    trace = evaluate(view, source_agent="prop", candidate=candidate, now=NOW, rules=ALLOW_ALL)
    if trace.command is not None:
        assert trace.command.risk_level < 4
    resolved = next((r for r in trace.gate_results if r.gate == "device_resolved" and r.passed), None)
    if resolved and resolved.evidence["risk_level"] >= 4:
        assert trace.outcome is Outcome.BLOCKED and trace.failed_gate in ("capability", "freshness")


@SETTINGS
@given(candidates(st.text(min_size=1, max_size=30).filter(lambda s: s.strip() != "")), rules())
def test_an_unknown_entity_never_passes(candidate: dict[str, Any], policy: tuple[PolicyRule, ...]) -> None:
    view = house()
    known = {n.casefold().strip() for n in KNOWN_ALIASES} | {"living room main light", "kitchen main light",
                                                             "blind", "strip", "plug", "heater"} | set(view.entities)
    trace = evaluate(view, source_agent="prop", candidate=candidate, now=NOW, rules=(*policy, *ALLOW_ALL))
    if " ".join(candidate["device_alias"].casefold().replace("_", " ").replace("-", " ").split()) not in known:
        assert trace.outcome is Outcome.BLOCKED
    if trace.outcome is Outcome.DRY_RUN:
        assert trace.entity_id in candidate_ids(view, True)


@SETTINGS
@given(candidates(st.sampled_from(["hidden lamp", "Hidden lamp", "main light"])), rules())
def test_unexposed_and_own_entities_never_pass(candidate: dict[str, Any], policy: tuple[PolicyRule, ...]) -> None:
    trace = evaluate(house(), source_agent="prop", candidate=candidate, now=NOW, rules=(*policy, *ALLOW_ALL))
    assert trace.entity_id not in {"light.hidden", "sensor.agentic_hems_last_decision"}


@SETTINGS
@given(candidates(), rules())
def test_prebuilt_index_gives_the_same_trace(candidate: dict[str, Any], policy: tuple[PolicyRule, ...]) -> None:
    view = house()
    index = ResolverIndex.build(view)
    a = evaluate(view, source_agent="prop", candidate=candidate, now=NOW, rules=policy, trace_id="x")
    b = evaluate(view, source_agent="prop", candidate=candidate, now=NOW, rules=policy, trace_id="x", index=index)
    assert a.as_dict() == b.as_dict()


GATES_1_TO_7 = ["input_guard", "schema", "device_resolved", "capability", "freshness", "policy", "dry_run"]


@SETTINGS
@given(
    st.lists(st.tuples(candidates(), st.sampled_from(["none", "confirm", "reject"])), min_size=1, max_size=4),
    rules(),
    st.sampled_from([True, True, True, False]),
    st.sampled_from([False, False, False, True]),
)
def test_no_actuation_without_every_gate_and_allow_or_admin_confirmation(
    steps: list[tuple[dict[str, Any], str]], policy: tuple[PolicyRule, ...], allow_control: bool, dry_run: bool
) -> None:
    view = house()
    actuator = RecordingActuator(view)
    keeper = Gatekeeper(Settings(allow_control=allow_control, rules=effective_policy(policy)), lambda: NOW)
    records = []

    async def play() -> None:
        for candidate, then in steps:
            record = await keeper.evaluate(view, actuator, source_agent="prop", candidate=candidate, dry_run=dry_run)
            records.append(record)
            if then == "none" or record["outcome"] != "pending_confirmation":
                continue
            if then == "confirm":
                records.append(await keeper.confirm(record["trace_id"], "admin", view, actuator))
            else:
                records.append(keeper.reject(record["trace_id"], "admin"))
        for record in records:  # nothing left pending can be confirmed by a second call
            if record["outcome"] != "pending_confirmation" and record["trace_id"] not in keeper.pending:
                try:
                    await keeper.confirm(record["trace_id"], "admin", view, actuator)
                except NotPending:
                    continue
                raise AssertionError("a decided trace was confirmable")

    asyncio.run(play())
    acting = [r for r in records if r["outcome"] in ("executed", "failed") and r["execution_result"]]
    called = [r for r in acting if not r["execution_result"]["no_op"]]
    assert len(actuator.calls) == len(called)
    for record, call in zip(called, actuator.calls, strict=True):
        assert call[2] == record["entity_id"] and not dry_run and allow_control
        gates = record["gate_results"]
        assert [g["gate"] for g in gates] == [*GATES_1_TO_7, "execution"]
        assert all(g["passed"] for g in gates[:7])
        policy_action = gates[5]["evidence"]["action"]
        confirmed = [h for h in record["history"] if h["outcome"] == "confirmed"]
        assert policy_action == "allow" or (policy_action == "confirm" and confirmed[0]["user_id"] == "admin")
        assert record["entity_id"] in candidate_ids(view, True)


@SETTINGS
@given(candidates(), st.floats(5.001, 1e6, allow_nan=False))
def test_a_stale_state_never_actuates_risk_4_and_up(candidate: dict[str, Any], age_s: float) -> None:
    view = aged_house(age_s)
    actuator = RecordingActuator(view)
    keeper = Gatekeeper(Settings(allow_control=True, rules=ALLOW_ALL), lambda: NOW)
    asyncio.run(keeper.evaluate(view, actuator, source_agent="prop", candidate=candidate))
    assert all(view.entities[entity_id].domain not in ("lock",) and entity_id != "cover.garage_door"
               for _, _, entity_id, _ in actuator.calls)
