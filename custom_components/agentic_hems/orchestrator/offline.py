"""The offline planner: a deterministic reader of requests that drives the same actions as a model (issue 4).

It is the default when no model is configured, so the main job works with no model and no network. It understands
appliance names and their usual words (English and German), "all flexible loads", a deadline ("by 7:30", "before
6 pm", "bis 7 Uhr", "by noon"), "tonight", "tomorrow", "cheapest", "cancel", and questions about prices. It answers
through the loop like a model: one ``ACTION:`` line per turn, reading the Observations for its summary.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field
import json
import re
from typing import Any, Literal

from .actions import FINISH, GET_CALENDAR_CONSTRAINT, GET_PRICES, SCHEDULE, Action
from .parser import Reply

type IntentKind = Literal["schedule", "cancel", "prices", "unknown"]

# Words for each appliance kind (the appliance's own name always counts too).
KIND_WORDS: dict[str, tuple[str, ...]] = {
    "dishwasher": ("dishwasher", "dish washer", "dishes", "spülmaschine", "geschirrspüler", "spüler"),
    "washing_machine": ("washing machine", "washer", "laundry", "washing", "waschmaschine", "wäsche"),
    "ev_charger": ("ev", "car", "electric vehicle", "wallbox", "charger", "e-auto", "auto", "elektroauto", "tesla"),
    "heat_pump": ("heat pump", "heatpump", "wärmepumpe", "heating", "heizung", "hot water", "warmwasser"),
    "battery": ("battery", "home battery", "batterie", "speicher", "akku"),
    "generic": (),
}
_ALL = re.compile(
    r"\b(all|every|each)\b[^.]{0,20}?\b(flexible )?(loads?|appliances?|devices?)\b|\beverything\b|\balle[sn]?\b"
    r"|\b(all|both) of them\b",
    re.IGNORECASE,
)
_CANCEL = re.compile(
    r"\b(cancel|clear|remove|delete|unschedule|don'?t run|do not run|skip|forget|abbrechen|löschen|streichen|"
    r"nicht laufen)\b",
    re.IGNORECASE,
)
_PRICES = re.compile(
    r"\b(prices?|tariffs?|how (much|expensive)|cheapest (time|hour|slot|period|moment)|when is (electricity|power|it)"
    r"\b[^.]{0,12}\b(cheap|cheapest|expensive)|strompreis\w*|preise?|wann\b[^.]{0,30}\b(günstig|billig)\w*)",
    re.IGNORECASE,
)
_DEADLINE = re.compile(
    r"\b(?:by|before|until|till|no later than|ready (?:at|by|for)|finished (?:at|by)|done (?:at|by)|bis|vor|"
    r"spätestens(?: um)?|fertig um)\s+(?:(noon|midday|midnight|mittag|mitternacht)|"
    r"(\d{1,2})(?:[:.h](\d{2}))?\s*(am|pm|a\.m\.|p\.m\.|uhr|h|o'?clock)?)",
    re.IGNORECASE,
)
NAMED_TIMES = {"noon": "12:00", "midday": "12:00", "mittag": "12:00", "midnight": "00:00", "mitternacht": "00:00"}


@dataclass(frozen=True)
class ApplianceRef:
    """An appliance the planner may name: its ``name`` (as configured) and ``kind``."""

    name: str
    kind: str


@dataclass(frozen=True)
class Intent:
    """What a request asks for: ``kind``, the appliance names, and a deadline "HH:MM" (local) or None."""

    kind: IntentKind
    appliances: tuple[str, ...] = ()
    deadline: str | None = None


def _named(folded: str, appliances: Sequence[ApplianceRef]) -> list[str]:
    """Appliances named in ``folded``; the longest phrase wins where phrases overlap ("dish washer" is not a washer)."""
    spans: list[tuple[int, int, str]] = []
    for appliance in appliances:
        for phrase in (appliance.name.casefold(), *KIND_WORDS.get(appliance.kind, ())):
            spans += [(m.start(), m.end(), appliance.name) for m in re.finditer(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", folded)]
    taken: list[tuple[int, int]] = []
    found: set[str] = set()
    for start, end, name in sorted(spans, key=lambda s: s[0] - s[1]):  # longest first
        if all(end <= a or start >= b for a, b in taken):
            taken.append((start, end))
            found.add(name)
    return [a.name for a in appliances if a.name in found]


def parse_deadline(text: str) -> str | None:
    """The first deadline in ``text`` as "HH:MM" (24 h), or None. "by 7" means 07:00, "by 7 pm" 19:00."""
    match = _DEADLINE.search(text)
    if match is None:
        return None
    if match.group(1):
        return NAMED_TIMES[match.group(1).lower()]
    hour, minute, suffix = int(match.group(2)), int(match.group(3) or 0), (match.group(4) or "").lower().replace(".", "")
    if suffix == "pm" and hour < 12:
        hour += 12
    elif suffix == "am" and hour == 12:
        hour = 0
    if hour > 23 or minute > 59:
        return None
    return f"{hour:02d}:{minute:02d}"


def understand(text: str, appliances: Sequence[ApplianceRef]) -> Intent:
    """Read ``text`` against the configured ``appliances`` (see the module docstring)."""
    folded = text.casefold()
    named = _named(folded, appliances)
    if not named and _ALL.search(folded):
        named = [a.name for a in appliances]
    if named:
        kind: IntentKind = "cancel" if _CANCEL.search(folded) else "schedule"
        return Intent(kind, tuple(named), parse_deadline(folded) if kind == "schedule" else None)
    if _PRICES.search(folded):
        return Intent("prices")
    return Intent("unknown")


def _action_line(action: Action) -> str:
    args = "".join(f" | {key}={value}" for key, value in action.args.items())
    return f"ACTION: {action.type}{args}"


def _observations(messages: Sequence[dict[str, Any]]) -> list[dict[str, Any]]:
    found = []
    for message in messages:
        content = message.get("content")
        if message.get("role") in ("user", "tool") and isinstance(content, str) and content.startswith("Observation: "):
            try:
                value = json.loads(content.removeprefix("Observation: "))
            except json.JSONDecodeError:
                continue
            if isinstance(value, dict):
                found.append(value)
    return found


_REQUEST = re.compile(r"<user_request>\n(.*?)\n</user_request>", re.DOTALL)


@dataclass
class OfflinePlanner:
    """A model stand-in: plans the actions of :func:`understand` and replies with them one by one.

    ``kinds`` maps appliance names to kinds; ``calendar`` says whether a calendar constraint is configured (then an
    EV without an explicit deadline asks for it first).
    """

    appliances: Sequence[ApplianceRef]
    calendar: bool = False
    name: str = "offline"
    _queue: list[Action] = field(default_factory=list)
    _started: bool = False

    async def complete(self, messages: Sequence[dict[str, Any]]) -> Reply:
        """The next action for the conversation so far."""
        if not self._started:
            self._started = True
            request = next((m["content"] for m in messages if m.get("role") == "user"), "")
            match = _REQUEST.search(request)
            self._queue = self.plan(understand(match.group(1) if match else request, self.appliances))
        observations = _observations(messages)
        if not self._queue:
            return Reply(_action_line(Action(FINISH, {"summary": summarize(observations)})))
        action = self._queue.pop(0)
        if action.type == SCHEDULE and "deadline" not in action.args and observations:
            deadline = observations[-1].get("deadline")
            if observations[-1].get("action") == GET_CALENDAR_CONSTRAINT and deadline:
                action = Action(SCHEDULE, {**action.args, "deadline": deadline})
        if action.type == FINISH:
            action = Action(FINISH, {"summary": summarize(observations, str(action.args.get("summary", "")))})
        return Reply(f"Thought: offline plan, step {len(observations) + 1}.\n{_action_line(action)}")

    def plan(self, intent: Intent) -> list[Action]:
        """The actions for ``intent``."""
        kinds = {a.name: a.kind for a in self.appliances}
        if intent.kind == "prices":
            return [Action(GET_PRICES)]
        if intent.kind == "unknown":
            names = ", ".join(a.name for a in self.appliances) or "no appliances yet"
            return [Action(FINISH, {"summary": f"I did not understand which appliance to plan. Your appliances: {names}."})]
        if intent.kind == "cancel":
            return [Action(SCHEDULE, {"appliance": ", ".join(intent.appliances), "cancel": True})]
        actions = [Action(GET_PRICES)]
        joint = [n for n in intent.appliances if not (self.calendar and kinds.get(n) == "ev_charger" and not intent.deadline)]
        for name in intent.appliances:
            if name not in joint:  # an EV waits for its calendar deadline
                actions += [Action(GET_CALENDAR_CONSTRAINT), Action(SCHEDULE, {"appliance": name})]
        if joint:  # the others together, so the optimizer places them jointly under the fuse
            args: dict[str, Any] = {"appliance": ", ".join(joint)}
            if intent.deadline:
                args["deadline"] = intent.deadline
            actions.insert(1, Action(SCHEDULE, args))
        return actions


def summarize(observations: Sequence[dict[str, Any]], prefix: str = "") -> str:
    """One line per plan (or cancellation), plus the cheapest hour after a price question."""
    lines = [prefix] if prefix else []
    for obs in observations:
        if obs.get("action") == SCHEDULE:
            for plan in obs.get("plans") or [obs]:
                if plan.get("cancelled"):
                    lines.append(f"{plan.get('appliance')}: plan cleared.")
                elif plan.get("feasible"):
                    lines.append(
                        f"{plan.get('appliance')}: {plan.get('start_local')} to {plan.get('end_local')}, "
                        f"{plan.get('cost')} {plan.get('currency')} (saves {plan.get('savings')})."
                    )
                else:
                    lines.append(f"{plan.get('appliance')}: not planned ({plan.get('reason') or plan.get('error')}).")
        elif obs.get("action") == GET_PRICES and not any(o.get("action") == SCHEDULE for o in observations):
            cheapest = obs.get("cheapest") or {}
            lines.append(
                f"Cheapest slot: {cheapest.get('start_local')} at {cheapest.get('price')} {obs.get('unit')}; "
                f"prices from {obs.get('min')} to {obs.get('max')} {obs.get('unit')}."
            )
        elif obs.get("error"):
            lines.append(f"{obs.get('action')}: {obs.get('error')}")
    return " ".join(lines) or "Nothing to do."
