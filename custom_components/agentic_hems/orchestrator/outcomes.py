"""Outcomes, not claims: what a run actually did, and the summary built from it.

The model proposes, the person decides.

The assistant's tools record one outcome per device command (its gate outcome: ``executed``, ``dry_run``,
``blocked``, ``pending_confirmation``, ``failed``, ...), per plan (``stored``, ``cancelled``, ``kept``: a plan the
person set that a request for all appliances left alone, or ``not_planned``), per authorization request (``pending`` or ``denied``) and per action refused because the request did not ask for it
(``refused``: a specialist agent for an appliance the request does not name, an authorization request without a
grid or battery action asked).

When a language model drove a run that did anything, or that did nothing although the person asked for something
(their request reads into requested actions) or although its closing text claims an action (:func:`claims_action`),
the summary that ``ask`` returns and Assist speaks is :func:`report` of those outcomes ("Nothing was done." for none);
the model's closing FINISH text is dropped from it (the run keeps it as ``model_summary``), so no model can state an
action that did not happen. Only an answer to a question, with no action claimed, keeps the model's words.
:func:`fulfilled` says whether anything the person asked for happened. Every sentence exists in English and German
(:mod:`.texts`); an English sentence carries the gate's own reason, a German one the German wording of the reasons
:func:`reason_id` identifies.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
import re
from typing import Any

from ..gates.keeper import CONTROL_OFF, PENDING_LIMIT
from ..gates.policy import BINDING_KEYS
from ..gates.words import command_words, rule_words
from .texts import (
    GATES_DE,
    GATES_EN,
    REASONS_DE,
    REASONS_EN,
    REFUSED_ACTIONS,
    TEXTS,
    decimal_commas,
    local_time,
    money,
    say,
)

COMMAND = "command"
PLAN = "plan"
AUTHORIZATION = "authorization"
REFUSAL = "refusal"
# A command that went through: it ran, or it waits for an administrator (the person decides).
EFFECTIVE_COMMANDS = frozenset({"executed", "pending_confirmation"})
# a kept plan is one the person set, which a request for all appliances left in place: it stands as asked
EFFECTIVE_PLANS = frozenset({"stored", "cancelled", "kept"})
_EFFECTIVE = {COMMAND: EFFECTIVE_COMMANDS, PLAN: EFFECTIVE_PLANS, AUTHORIZATION: frozenset({"pending"})}


def reason_id(record: Mapping[str, Any]) -> str | None:
    """Return which known reason ended a command, from its trace record's last gate result.

    One of the Policy gate's intent binding keys (its evidence's ``reason_key``, ``gates.policy.BINDING_KEYS``:
    ``nothing_requested``, ``not_requested``, ``value_not_requested``, ``value_not_planned``, ``plan_no_value``; read
    from the binding itself in a trace stored before the key), ``grid_setpoint``, ``pending_limit``, ``control_off``,
    ``dry_run_requested``, ``policy_deny``; None for any other.
    """
    gates = record.get("gate_results") or []
    last: Mapping[str, Any] = gates[-1] if gates else {}
    evidence = last.get("evidence") or {}
    binding = evidence.get("intent_binding") or {}
    if (key := evidence.get("reason_key")) in BINDING_KEYS:
        return str(key)
    if binding.get("bound") is False:
        if "proposed" in binding:
            if binding.get("plan"):
                return "value_not_planned" if binding.get("asked") else "plan_no_value"
            return "value_not_requested"
        return "not_requested" if binding.get("requested") else "nothing_requested"
    if evidence.get("grid_setpoint"):
        return "grid_setpoint"
    if PENDING_LIMIT in evidence:
        return "pending_limit"
    if evidence.get("dry_run"):
        return "control_off" if str(last.get("reason", "")).endswith(CONTROL_OFF) else "dry_run_requested"
    if last.get("gate") == "policy" and evidence.get("action") == "deny":
        return "policy_deny"
    return None


def command_outcome(candidate: Mapping[str, Any], record: Mapping[str, Any], name: str | None = None) -> dict[str, Any]:
    """Return the outcome of one gated command from its trace record (JSON-safe).

    ``name`` is the device's name as users see it (its friendly name), which the summary says instead of the entity
    id; the policy rule that denied it (``rule``, ``rule_index``) comes from the Policy gate's evidence, and so do the
    values of a value refused by intent binding (``asked``: the values asked or planned, ``proposed``: the command's,
    in words).
    """
    gates = record.get("gate_results") or []
    evidence = (gates[-1].get("evidence") or {}) if gates else {}
    binding = evidence.get("intent_binding") or {}
    values = {"asked": binding["asked"], "proposed": binding["proposed"]} if binding.get("asked") else {}
    return {
        "kind": COMMAND,
        "intent": candidate.get("intent"),
        "target": record.get("entity_id") or candidate.get("device_alias"),
        "name": name,
        "params": dict(candidate.get("params") or {}),
        "outcome": record.get("outcome"),
        "failed_gate": record.get("failed_gate"),
        "reason": gates[-1].get("reason") if gates else None,
        "reason_id": reason_id(record),
        "rule": evidence.get("rule"),
        "rule_index": evidence.get("rule_index"),
        "trace_id": record.get("trace_id"),
        **values,
    }


def refused_command(action: Mapping[str, Any] | None, error: str) -> dict[str, Any]:
    """Return a device command the orchestrator refused before the gates (it did not validate)."""
    args = (action or {}).get("args") or {}
    return {
        "kind": COMMAND,
        "intent": args.get("intent"),
        "target": args.get("device_alias"),
        "outcome": "invalid",
        "failed_gate": None,
        "reason": error,
        "reason_id": None,
        "trace_id": None,
    }


def refused_action(action: str, target: str | None, reason_key: str, reason: str) -> dict[str, Any]:
    """Return an action refused because the person's request did not ask for it.

    It holds ``action`` (its type) on ``target``, why (``reason``, English) and the reason's id (``reason_key``, for
    the German summary).
    """
    return {
        "kind": REFUSAL,
        "action": action,
        "target": target,
        "outcome": "refused",
        "reason": reason,
        "reason_id": reason_key,
    }


def authorization_outcome(result: Mapping[str, Any]) -> dict[str, Any]:
    """Return the outcome of a ``request_authorization`` call from its result.

    It is ``pending`` (an administrator decides) or ``denied`` (the reasons, joined).
    """
    return {
        "kind": AUTHORIZATION,
        "request_id": result.get("request_id"),
        "outcome": result.get("status"),
        "reason": "; ".join(str(r) for r in result.get("reasons") or []) or None,
    }


def plan_outcome(plan: Mapping[str, Any]) -> dict[str, Any]:
    """Return the outcome of one planned (or cancelled, or kept) appliance from its SCHEDULE observation."""
    if plan.get("cancelled"):
        outcome = "cancelled"
    elif plan.get("kept"):  # a plan a person set, which a request for all appliances left alone
        outcome = "kept"
    elif plan.get("feasible"):
        outcome = "stored"
    else:
        outcome = "not_planned"
    return {"kind": PLAN, **plan, "outcome": outcome}


def _german(key: Any, outcome: Mapping[str, Any]) -> str | None:
    """Return the German wording of reason ``key`` (with the outcome's command and target), or None."""
    return _known(REASONS_DE, key, outcome, "de")


def _known(reasons: Mapping[str, str], key: Any, outcome: Mapping[str, Any], lang: str) -> str | None:
    """Return reason ``key`` from ``reasons`` in ``lang``, filled from ``outcome``; None for an unknown key."""
    text = reasons.get(str(key))
    if text is None:
        return None
    if key == "policy_deny" and "rule" in outcome:  # which rule, in words
        return rule_words(outcome.get("rule"), outcome.get("rule_index"), lang)
    command = _what(outcome, lang)
    asked = (" oder " if lang == "de" else " or ").join(
        decimal_commas(str(v), lang) for v in outcome.get("asked") or ()
    )
    return text.format(
        target=outcome.get("target"),
        command=command[:1].lower() + command[1:] if lang != "de" else command,
        asked=asked,
        proposed=decimal_commas(str(outcome.get("proposed")), lang),
    )


def _what(outcome: Mapping[str, Any], lang: str) -> str:
    """Return the command in words with the device's name ("Open Garage door"); else its entity id or "a device"."""
    name = outcome.get("name") or outcome.get("target") or ("Ein Gerät" if lang == "de" else "a device")
    return command_words(outcome.get("intent"), name, outcome.get("params"), lang)


def plan_line(plan: Mapping[str, Any], lang: str = "en") -> str:
    """One sentence for a plan observation in ``lang``: cleared, its window and cost, or why it was not planned."""
    appliance = plan.get("appliance")
    if plan.get("cancelled"):
        return say("plan.cleared", lang, appliance=appliance)
    if plan.get("kept"):
        start, end = (local_time(plan.get(k), lang) for k in ("start_local", "end_local"))
        return say("plan.kept", lang, appliance=appliance, start=start, end=end)
    if plan.get("feasible"):
        savings, currency = plan.get("savings"), plan.get("currency")
        notes = []
        if isinstance(savings, int | float):  # None: no baseline (an unknown price), so no saving to state
            extra = money(abs(savings), currency, lang)
            notes.append(
                say("plan.shared_fuse", lang, extra=extra) if savings < 0 else say("plan.saves", lang, savings=extra)
            )
        if plan.get("reason") == "doubtful_prices":  # a day of zeros, ...: the detail in the outcome says which
            notes.append(say("plan.doubtful", lang))
        return say(
            "plan.window" if notes else "plan.window_only",
            lang,
            appliance=appliance,
            start=local_time(plan.get("start_local"), lang),
            end=local_time(plan.get("end_local"), lang),
            cost=money(plan.get("cost"), currency, lang),
            note="; ".join(notes),
        )
    reason = plan.get("reason")
    if lang == "de":
        why = _german("plan_not_requested" if reason == "not_requested" else reason, plan)
    else:
        why = plan.get("detail") or reason or plan.get("error")
    return say("plan.not_planned", lang, appliance=appliance, why=f": {why}" if why else "")


_WITH_REASON = ("blocked", "dry_run", "failed", "invalid")


def command_line(outcome: Mapping[str, Any], lang: str = "en") -> str:
    """Return one sentence for a command outcome in ``lang``.

    For example "Unlock Front door: blocked by the policy check (a default rule denies unlocking at risk 4 to 5)."
    """
    state = str(outcome.get("outcome"))
    key = f"command.{state}" if f"command.{state}" in TEXTS else "command.other"
    if lang == "de":
        reason = _german(outcome.get("reason_id"), outcome)
    else:
        reason = _known(REASONS_EN, outcome.get("reason_id"), outcome, lang) or _plain(outcome.get("reason"))
    gate = str(outcome.get("failed_gate"))
    return say(
        key,
        lang,
        what=_what(outcome, lang),
        state=state,
        gate=(GATES_DE if lang == "de" else GATES_EN).get(gate, gate),
        why=(f": {reason}" if state == "dry_run" else f" ({reason})") if reason and state in _WITH_REASON else "",
    )


def _plain(reason: Any) -> Any:
    """Return a gate's reason without the gate's own prefix ("blocked by policy: "), which the sentence says."""
    return reason.removeprefix("blocked by policy: ") if isinstance(reason, str) else reason


def other_line(outcome: Mapping[str, Any], lang: str = "en") -> str:
    """One sentence for an authorization request's or a refused action's outcome in ``lang``."""
    reason = _german(outcome.get("reason_id"), outcome) if lang == "de" else outcome.get("reason")
    why = f" ({reason})" if reason else ""
    if outcome.get("kind") == REFUSAL:
        action, target = str(outcome.get("action")), outcome.get("target")
        if action in REFUSED_ACTIONS:
            what = REFUSED_ACTIONS[action][1 if lang == "de" else 0].format(target=target)
        else:  # an action type in words ("SOME_TOOL" → "Some tool")
            what = " ".join(str(part) for part in (action.replace("_", " ").capitalize(), target) if part)
        return say("refusal", lang, what=what, why=why)
    key = "authorization.pending" if outcome.get("outcome") == "pending" else "authorization.denied"
    return say(key, lang, request_id=outcome.get("request_id"), why=why)


def appliance_line(outcome: Mapping[str, Any], lang: str = "en") -> str:
    """Return the sentences for a command that switches an appliance on, in ``lang``: what ran, and its plan.

    Executed: switched on now (or ``already_on``), and the planned run it replaces (``withdrawn``); otherwise the
    command's own sentence.
    Then the plan that stands (``plan``), if any: the next run after a withdrawn plan.
    """
    name, withdrawn, plan = outcome.get("appliance"), outcome.get("withdrawn"), outcome.get("plan")
    if outcome.get("outcome") != "executed":
        first = command_line(outcome, lang)
    elif outcome.get("already_on"):
        first = say("appliance.already_on", lang, appliance=name)
    elif withdrawn:
        start, end = (local_time(withdrawn.get(k), lang) for k in ("start_local", "end_local"))
        first = say("appliance.started_withdrawn", lang, appliance=name, start=start, end=end)
    else:
        first = say("appliance.started", lang, appliance=name)
    if not plan:
        return first
    start, end = (local_time(plan.get(k), lang) for k in ("start_local", "end_local"))
    key = "appliance.next_run" if withdrawn else "appliance.plan_stands"
    return f"{first} {say(key, lang, appliance=name, start=start, end=end)}"


def _line(outcome: Mapping[str, Any], lang: str) -> str:
    kind = outcome.get("kind")
    if kind == COMMAND:
        return appliance_line(outcome, lang) if outcome.get("appliance") else command_line(outcome, lang)
    return plan_line(outcome, lang) if kind == PLAN else other_line(outcome, lang)


def report(outcomes: Sequence[Mapping[str, Any]], lang: str = "en", stopped: str | None = None) -> str:
    """Return the summary of a run in ``lang``.

    One sentence per outcome in order, then ``stopped`` (why the run stopped, already in ``lang``) if given; "Nothing
    was done." when both are empty.
    """
    lines = [_line(o, lang) for o in outcomes]
    if stopped:
        lines.append(stopped)
    return " ".join(lines) or say("nothing_done", lang)


def fulfilled(outcomes: Sequence[Mapping[str, Any]], asked: bool = False, *, answered: bool = True) -> bool:
    """Return whether what was asked happened.

    When device commands or plans were proposed, an action was refused, or the person
    ``asked`` for something (their request reads into requested actions), at least one command executed or waits
    for confirmation, a plan was stored, cancelled or kept, or an authorization request waits for an administrator
    (a plan refused for a request that asked for none, "don't schedule the dishwasher", is no success).
    Otherwise a question: fulfilled when ``answered`` (a model's own answer, or an action besides FINISH ran; the
    offline planner finishing at once understood nothing and did nothing).
    """
    if not asked and not any(o.get("kind") in (COMMAND, PLAN, REFUSAL) for o in outcomes):
        return answered
    return any(o.get("outcome") in _EFFECTIVE.get(str(o.get("kind")), ()) for o in outcomes)


# Claims of an action in a model's closing text (English and German). A state ("the door is locked", "das Licht ist
# an") is no claim; a first-person or passive report of an action is ("I unlocked", "has been turned on", "is now on",
# "Ich habe ... eingeschaltet", "wurde geöffnet", "ist jetzt aus").
_PAST = (
    r"(turned|switched|unlocked|opened|closed|locked|set|started|stopped|scheduled|planned|cancell?ed|charged|"
    r"dimmed|brightened|activated|deactivated|enabled|disabled|executed|triggered|adjusted|changed|lowered|raised|"
    r"paused|resumed|pressed)"
)
_PARTICIPLES = frozenset(
    {
        "eingeschaltet",
        "ausgeschaltet",
        "angeschaltet",
        "abgeschaltet",
        "angemacht",
        "ausgemacht",
        "geöffnet",
        "aufgemacht",
        "geschlossen",
        "zugemacht",
        "verriegelt",
        "entriegelt",
        "abgeschlossen",
        "aufgeschlossen",
        "zugesperrt",
        "aufgesperrt",
        "gestartet",
        "gestoppt",
        "angehalten",
        "geplant",
        "eingeplant",
        "gesetzt",
        "gestellt",
        "eingestellt",
        "storniert",
        "gelöscht",
        "abgebrochen",
        "aktiviert",
        "deaktiviert",
        "gedimmt",
        "geladen",
        "ausgeführt",
        "gedrückt",
        "erledigt",
    }
)
_CLAIMS = tuple(
    re.compile(p, re.IGNORECASE)
    for p in (
        rf"\b(i|we)('ve| have)?(\s+\w+){{0,2}}?\s+{_PAST}\b",
        rf"\b(has|have|had) been\s+(\w+\s+)?{_PAST}\b",
        rf"\b(was|were)\s+(just\s+|successfully\s+)?{_PAST}\b",
        rf"\b(is|are)\s+now\s+(on|off|open|closed|locked|unlocked|running|charging|{_PAST})\b",
        r"^\s*(done|erledigt)\b",
        (
            rf"\b(ist|sind)\s+(jetzt|nun|soeben|gerade)\s+(\S+\s+){{0,4}}?"
            rf"({'|'.join(sorted(_PARTICIPLES))}|an|aus|offen|zu)\b"
        ),
    )
)


def _german_perfect(sentence: str) -> bool:
    """Return a German perfect or passive of an action in ``sentence``, in any word order.

    That is "ich/wir" with "habe/haben" and a participle ("Ich habe das Licht eingeschaltet"), or "wurde(n)" and one
    ("Die Tür wurde geöffnet").
    """
    words = set(re.findall(r"\w+", sentence.casefold()))
    if not words & _PARTICIPLES:
        return False
    return bool(words & {"wurde", "wurden"}) or bool(words & {"ich", "wir"} and words & {"habe", "hab", "haben"})


def claims_action(text: str) -> bool:
    """Return True when ``text`` (a model's closing summary) reports an action as done, in English or German.

    Examples: "I unlocked the front door", "The light has been turned on", "The kettle is now on", "Done.", "Ich habe
    das Licht eingeschaltet", "Die Tür wurde geöffnet", "Das Licht ist jetzt aus". Each sentence is read on its own; a
    description of a state ("the door is locked") or a recommendation ("start it at 02:00") is no claim.
    """
    sentences = re.split(r"[.!?;\n]+", text.replace("’", "'"))
    return any(_german_perfect(s) or any(p.search(s) for p in _CLAIMS) for s in sentences)
