"""The offline planner: a deterministic reader of requests that drives the same actions as a model.

It is the default when no model is configured, so the main job works with no model and no network. It understands
appliance names and their usual words (English and German), "all flexible loads", a deadline ("by 7:30", "before
6 pm", "bis 7 Uhr", "by noon"), "tonight", "tomorrow", "cheapest", "cancel", questions about prices, questions about
an appliance's plan ("when will the dishwasher run?") and "why" questions about a battery or heat pump of the
whole-home plan (``EXPLAIN_DEVICE``: the stored plan; the current slot's reason). It
answers through the loop like a model: one ``ACTION:`` line per turn, reading the Observations for its summary. Given a
reader of device requests (the intent binding's), it also sends the device commands a request asks for that need no
value ("turn on the kitchen light", "schließe das Garagentor"), through the same gates as a model's. An appliance
such a command switches on ("turn on the dishwasher now") is not planned as well: the request asks for this run.
"Turn on everything" (a switch-on of all, with no planning word or time: ``switch_all``) names no device and asks for
no plan; the answer says that nothing was switched on and no plan changed.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
import dataclasses
from dataclasses import dataclass, field
import json
import re
from typing import Any, Literal

from ..gates.models import RequestedAction
from .actions import EVALUATE_COMMAND, EXPLAIN_DEVICE, FINISH, GET_CALENDAR_CONSTRAINT, GET_PRICES, SCHEDULE, Action
from .outcomes import plan_line
from .parser import Reply
from .texts import STEP_ERRORS, STEP_WORDS, local_time, number, say

type IntentKind = Literal["schedule", "cancel", "prices", "why", "switch_all", "unknown"]

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
    r"\b[^.]{0,12}\b(cheap|cheapest|expensive)|strompreis\w*|preise?|wann\b[^.]{0,30}\b(günstig|billig)\w*"
    r"|(electricity|power|strom)\b[^.]{0,20}\b(cheap|expensive|cost|günstig|billig|teuer)\w*)",
    re.IGNORECASE,
)
# a question about a plan ("when will the dishwasher run?", "läuft die Waschmaschine heute?"); "do ..." is a request
_ASKS = re.compile(
    r"^\s*(how|what|when|which|why|where|is|are|will|would|does|did|has|wie|wann|was|welche[rsnm]?|warum|wieso|"
    r"weshalb|wo|ist|sind|hat|läuft|wird)\b",
    re.IGNORECASE,
)
# "turn on everything": a switch-on of all, with no planning word, names no device and asks for no plan
_SWITCH_ON = re.compile(
    r"\b(turn|switch|put)\b.*\bon\b|\b(schalte|schalt|mach|mache)\b.*\b(an|ein)\b|\b(einschalten|anschalten|anmachen)\b",
    re.IGNORECASE,
)
_PLANNING = re.compile(
    r"\b(schedule|plan|run|charge|cheap\w*|optimi[sz]e|planen?|plane|lade|laden|günstig\w*|billig\w*)\b", re.IGNORECASE
)
_WHY = re.compile(r"\b(why|warum|wieso|weshalb)\b", re.IGNORECASE)
_NOW = re.compile(r"\b(right now|now|at the moment|currently|jetzt|gerade|im moment|aktuell)\b", re.IGNORECASE)
_NEGATION = re.compile(r"\b(don'?t|do not|not|never|nicht|no)\s*$")
_EVENING = re.compile(r"\b(tonight|this evening|in the evening|heute abend|abends)\b", re.IGNORECASE)
_START = re.compile(
    r"\b(after|from|not before|starting at|start(?:ing)? at|at|ab|nach|um)\s+(?:(noon|midday|midnight|mittag|"
    r"mitternacht)|(\d{1,2})(?:[:.h](\d{2}))?\s*(am|pm|a\.m\.|p\.m\.|uhr|h|o'?clock)?)(?![\d%])",
    re.IGNORECASE,
)
_DEADLINE = re.compile(
    r"\b(?:by|before|until|till|no later than|ready (?:at|by|for)|finished (?:at|by)|done (?:at|by)|bis|vor|"
    r"spätestens(?: um)?|fertig um)(?:\s+(?:tomorrow|morgen|heute)(?:\s+(?:morning|früh|abend))?)?(?:\s+um)?\s+"
    r"(?:(noon|midday|midnight|mittag|mitternacht)|(\d{1,2})(?:[:.h](\d{2}))?\s*(am|pm|a\.m\.|p\.m\.|uhr|h|o'?clock)?)"
    r"(?![\d%])",
    re.IGNORECASE,
)
_TOMORROW = re.compile(r"(?<!heute )\b(tomorrow|morgen)\b", re.IGNORECASE)  # "heute morgen" is this morning
# device actions the offline planner sends: those that need no value (a brightness or a temperature needs a model)
PLAIN_ACTIONS = frozenset({"turn_on", "turn_off", "open", "close", "lock", "unlock", "press", "start", "stop"})
# value action -> its param and the value units sent as they are ("to 40 %", "auf 21,5 Grad", "at 10 A"); a power
# ("2 kW") is left to a model, which knows the entity's unit
VALUE_ACTIONS = {
    "set_brightness": ("brightness", frozenset({"", "%"})),
    "set_temperature": ("temperature", frozenset({"", "°"})),
    "set_value": ("value", frozenset({"", "%", "A"})),
}
# a command that switches an appliance on now: the request asks for this run, not for a plan
SWITCH_ON = frozenset({"turn_on", "start"})
TOMORROW = "tomorrow "  # a deadline "tomorrow HH:MM" is on the next local day, not at the next such time
NAMED_TIMES = {"noon": "12:00", "midday": "12:00", "mittag": "12:00", "midnight": "00:00", "mitternacht": "00:00"}


@dataclass(frozen=True)
class ApplianceRef:
    """An appliance the planner may name: its ``name`` (as configured), ``kind`` and controlled ``entity_id``."""

    name: str
    kind: str
    entity_id: str = ""


@dataclass(frozen=True)
class Intent:
    """What a request asks for.

    Fields: ``kind``, the appliance names, a deadline "HH:MM" (local) or None, an earliest
    start "HH:MM" or None, ``times`` (appliance -> (deadline, start)) when appliances got different times, and
    ``now`` when a price question is about the current price.
    """

    kind: IntentKind
    appliances: tuple[str, ...] = ()
    deadline: str | None = None
    start: str | None = None
    times: tuple[tuple[str, str | None, str | None], ...] = ()
    now: bool = False
    exact: bool = False  # "at 10 pm": the start is the time itself, not the earliest one


def _mentions(folded: str, appliances: Sequence[ApplianceRef]) -> list[tuple[int, str]]:
    """(position, appliance name) of each mention.

    The longest phrase wins where phrases overlap ("dish washer" is not a washer).
    """
    spans: list[tuple[int, int, str]] = []
    for appliance in appliances:
        for phrase in (appliance.name.casefold(), *KIND_WORDS.get(appliance.kind, ())):
            pattern = rf"(?<![\w-]){re.escape(phrase)}(?![\w-])"
            spans += [(m.start(), m.end(), appliance.name) for m in re.finditer(pattern, folded)]
    taken: list[tuple[int, int]] = []
    found: list[tuple[int, str]] = []
    for start, end, name in sorted(spans, key=lambda s: s[0] - s[1]):  # longest first
        if all(end <= a or start >= b for a, b in taken):
            taken.append((start, end))
            found.append((start, name))
    return sorted(found)


def named_in(text: str, appliances: Sequence[ApplianceRef]) -> frozenset[str]:
    """Return the names of the ``appliances`` that ``text`` names one by one (by name or kind words, not by "all")."""
    return frozenset(name for _, name in _mentions(text.casefold(), appliances))


def _clock(match: re.Match[str], evening: bool, first: int = 1) -> str | None:
    """Return "HH:MM" of a time match (groups from ``first``: named time, hour, minute, suffix).

    Evening context makes 6-11 mean pm.
    """
    named, hour_text, minute_text, suffix_text = (match.group(first + i) for i in range(4))
    if named:
        return NAMED_TIMES[named.lower()]
    hour, minute, suffix = int(hour_text), int(minute_text or 0), (suffix_text or "").lower().replace(".", "")
    if suffix == "pm" and hour < 12:
        hour += 12
    elif suffix == "am" and hour == 12:
        hour = 0
    elif not suffix and evening and 6 <= hour < 12:
        hour += 12
    if hour > 23 or minute > 59:
        return None
    return f"{hour:02d}:{minute:02d}"


def _times(folded: str, mentions: list[tuple[int, str]]) -> list[tuple[int, str, str]]:
    """Return (position, kind, "HH:MM") for every time in ``folded``.

    Kind is ``deadline``, ``start`` (after, from, ab) or ``start_at`` (at, um: an exact start); starts never overlap
    deadlines.
    """
    evening = bool(_EVENING.search(folded))
    day = TOMORROW if _TOMORROW.search(folded) else ""
    found: list[tuple[int, str, str]] = []
    taken: list[tuple[int, int]] = []
    for match in _DEADLINE.finditer(folded):
        if (value := _clock(match, evening)) is not None:
            found.append((match.start(), "deadline", day + value))
        taken.append(match.span())
    for match in _START.finditer(folded):
        if all(match.end() <= a or match.start() >= b for a, b in taken) and (value := _clock(match, evening, 2)):
            exact = match.group(1).lower() in ("at", "um", "starting at", "start at")
            found.append((match.start(), "start_at" if exact else "start", value))
    return sorted(found)


def _cancels(folded: str) -> bool:
    """Return a cancel word that is not negated ("don't cancel ... just run it" schedules)."""
    return any(not _NEGATION.search(folded[max(0, m.start() - 12) : m.start()]) for m in _CANCEL.finditer(folded))


def understand(text: str, appliances: Sequence[ApplianceRef], home_devices: Sequence[ApplianceRef] = ()) -> Intent:
    """Read ``text`` against the configured ``appliances`` (see the module docstring).

    A time belongs to the appliance named last before it (or first after it); one time alone applies to all. A
    "why" question ("why", "warum", "wieso", "weshalb") that names one of the whole-home plan's ``home_devices``
    (batteries and heat pumps, by name or kind words) asks why they do what they do (kind ``why``); so does any
    question naming appliances ("when will the dishwasher run?"), for their stored plans.
    """
    folded = text.casefold()
    if home_devices and _WHY.search(folded):
        asked = {name for _, name in _mentions(folded, home_devices)}
        if asked:
            return Intent("why", tuple(d.name for d in home_devices if d.name in asked))
    mentions = _mentions(folded, appliances)
    named = [a.name for a in appliances if any(name == a.name for _, name in mentions)]
    if not named and _ALL.search(folded):
        if _SWITCH_ON.search(folded) and not _PLANNING.search(folded) and not _times(folded, []):
            return Intent("switch_all")  # names no appliance: nothing to plan, bind or consult
        named = [a.name for a in appliances]
    if not named:
        return Intent("prices", now=bool(_NOW.search(folded))) if _PRICES.search(folded) else Intent("unknown")
    if _ASKS.match(folded):  # "when will the dishwasher run?" asks for its plan, not for a new one
        return Intent("why", tuple(named))
    if _cancels(folded):
        return Intent("cancel", tuple(named))
    times = [
        (at, "start" if kind == "start_at" else kind, value, kind == "start_at")
        for at, kind, value in _times(folded, mentions)
    ]
    exact = any(flag for *_, flag in times)
    deadlines = {value for _, kind, value, _ in times if kind == "deadline"}
    starts = {value for _, kind, value, _ in times if kind == "start"}
    if len(deadlines) <= 1 and len(starts) <= 1:
        return Intent("schedule", tuple(named), next(iter(deadlines), None), next(iter(starts), None), exact=exact)
    per: dict[str, dict[str, str]] = {name: {} for name in named}
    for position, kind, value, _ in times:
        before = [name for at, name in mentions if at < position]
        owner = before[-1] if before else next((name for at, name in mentions if at > position), named[0])
        per.setdefault(owner, {})[kind] = value
    return Intent(
        "schedule",
        tuple(named),
        times=tuple((n, per[n].get("deadline"), per[n].get("start")) for n in named),
        exact=exact,
    )


def _action_line(action: Action) -> str:
    if any(isinstance(value, dict) for value in action.args.values()):  # params: the JSON form
        return json.dumps({"action": action.type, "args": action.args})
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
    EV without an explicit deadline asks for it first); ``lang`` (``en`` or ``de``) is the language of its summary;
    ``devices`` reads the request into the device pairs it asks for (the intent binding's reading), of which the
    :data:`PLAIN_ACTIONS`, and a value action with the one value the request names for it (:data:`VALUE_ACTIONS`),
    become ``EVALUATE_COMMAND`` actions before any appliance is planned.
    """

    appliances: Sequence[ApplianceRef]
    calendar: bool = False
    lang: str = "en"
    devices: Callable[[str], Sequence[RequestedAction]] | None = None
    home_devices: Sequence[ApplianceRef] = ()
    name: str = "offline"
    _queue: list[Action] = field(default_factory=list)
    _started: bool = False
    _now: bool = False

    async def complete(self, messages: Sequence[dict[str, Any]]) -> Reply:
        """Return the next action for the conversation so far."""
        if not self._started:
            self._started = True
            request = next((m["content"] for m in messages if m.get("role") == "user"), "")
            match = _REQUEST.search(request)
            text = match.group(1) if match else request
            intent = understand(text, self.appliances, self.home_devices)
            self._now = intent.now
            commands = self.commands(text)
            intent = self._not_switched_on(intent, commands)
            self._queue = commands if commands and intent.kind == "unknown" else [*commands, *self.plan(intent)]
        observations = _observations(messages)
        if not self._queue:
            summary = summarize(observations, now=self._now, lang=self.lang)
            return Reply(_action_line(Action(FINISH, {"summary": summary})))
        action = self._queue.pop(0)
        if action.type == SCHEDULE and "deadline" not in action.args and observations:
            deadline = observations[-1].get("deadline")
            if observations[-1].get("action") == GET_CALENDAR_CONSTRAINT and deadline:
                action = Action(SCHEDULE, {**action.args, "deadline": deadline})
        if action.type == FINISH:
            prefix = str(action.args.get("summary", ""))
            action = Action(FINISH, {"summary": summarize(observations, prefix, now=self._now, lang=self.lang)})
        return Reply(f"Thought: offline plan, step {len(observations) + 1}.\n{_action_line(action)}")

    def commands(self, text: str) -> list[Action]:
        """Return one ``EVALUATE_COMMAND`` per device pair of ``text`` it can send, in a stable order.

        That is a pair of :data:`PLAIN_ACTIONS`, or of :data:`VALUE_ACTIONS` with the one value the request names for
        its target and action, in a unit sent as it is.
        """
        pairs = sorted(self.devices(text), key=RequestedAction.sort_key) if self.devices is not None else []
        named = Counter((p.target, p.action) for p in pairs)
        found = []
        for pair in pairs:
            args: dict[str, Any] = {"intent": pair.action, "device_alias": pair.target}
            if pair.action in PLAIN_ACTIONS:
                found.append(Action(EVALUATE_COMMAND, args))
            elif (sent := VALUE_ACTIONS.get(pair.action)) and pair.value is not None and pair.unit in sent[1]:
                if named[(pair.target, pair.action)] == 1:  # two values for one target: left to a model
                    found.append(Action(EVALUATE_COMMAND, {**args, "params": {sent[0]: pair.value}}))
        return found

    def _not_switched_on(self, intent: Intent, commands: Sequence[Action]) -> Intent:
        """Return ``intent`` without the appliances that ``commands`` switch on now ("turn on the dishwasher now").

        Such a request asks for this run, not for a plan; with none left the intent is ``unknown`` (the commands alone
        run).
        """
        started = {str(c.args["device_alias"]) for c in commands if c.args.get("intent") in SWITCH_ON}
        entities = {a.name: a.entity_id for a in self.appliances}
        if intent.kind != "schedule" or not started & set(entities.values()):
            return intent
        left = tuple(name for name in intent.appliances if entities.get(name) not in started)
        times = tuple(t for t in intent.times if t[0] in left)
        return dataclasses.replace(intent, kind="schedule" if left else "unknown", appliances=left, times=times)

    def plan(self, intent: Intent) -> list[Action]:
        """Return the actions for ``intent``."""
        kinds = {a.name: a.kind for a in self.appliances}
        if intent.kind == "prices":
            return [Action(GET_PRICES)]
        if intent.kind == "why":
            return [Action(EXPLAIN_DEVICE, {"device": name, "lang": self.lang}) for name in intent.appliances]
        if intent.kind == "unknown":
            names = ", ".join(a.name for a in self.appliances) or say("offline.no_appliances", self.lang)
            return [Action(FINISH, {"summary": say("offline.unknown", self.lang, names=names)})]
        if intent.kind == "switch_all":
            return [Action(FINISH, {"summary": say("offline.switch_all", self.lang)})]
        if intent.kind == "cancel":
            return [Action(SCHEDULE, {"appliance": ", ".join(intent.appliances), "cancel": True})]
        actions = [Action(GET_PRICES)]
        times = {name: (deadline, start) for name, deadline, start in intent.times} or dict.fromkeys(
            intent.appliances, (intent.deadline, intent.start)
        )
        groups: dict[tuple[str | None, str | None], list[str]] = {}
        for name in intent.appliances:
            deadline, start = times.get(name, (None, None))
            if self.calendar and kinds.get(name) == "ev_charger" and deadline is None and start is None:
                actions += [Action(GET_CALENDAR_CONSTRAINT), Action(SCHEDULE, {"appliance": name})]
                continue
            groups.setdefault((deadline, start), []).append(name)
        for index, ((deadline, start), group) in enumerate(groups.items()):
            args: dict[str, Any] = {"appliance": ", ".join(group)}  # together: the optimizer places them jointly
            if deadline:
                args["deadline"] = deadline
            if start:
                args["start_at" if intent.exact else "earliest_start"] = start
            actions.insert(1 + index, Action(SCHEDULE, args))
        return actions


def summarize(observations: Sequence[dict[str, Any]], prefix: str = "", *, now: bool = False, lang: str = "en") -> str:
    """Return one line per plan (or cancellation) in ``lang``.

    After a price question, the cheapest hour follows (and the price now, when asked).
    """
    lines = [prefix] if prefix else []
    for obs in observations:
        if obs.get("action") == SCHEDULE:
            lines.extend(plan_line(plan, lang) for plan in obs.get("plans") or [obs])
        elif obs.get("error"):
            lines.append(_error_line(obs, lang))
        elif obs.get("action") == EXPLAIN_DEVICE:
            lines.extend([plan_line(plan, lang) for plan in obs["plans"]] if "plans" in obs else [_why_line(obs, lang)])
        elif obs.get("action") == GET_PRICES and not any(o.get("action") == SCHEDULE for o in observations):
            cheapest, unit = obs.get("cheapest") or {}, obs.get("unit")
            if now and obs.get("now") is not None:
                lines.append(say("offline.price_now", lang, price=number(obs.get("now"), lang), unit=unit))
            lines.append(
                say(
                    "offline.cheapest",
                    lang,
                    start=local_time(cheapest.get("start_local"), lang),
                    price=number(cheapest.get("price"), lang),
                    low=number(obs.get("min"), lang),
                    high=number(obs.get("max"), lang),
                    unit=unit,
                )
            )
    return " ".join(lines) or say("offline.nothing", lang)


def _error_line(obs: dict[str, Any], lang: str) -> str:
    """Return a failed step's sentence in ``lang``: the step and its error in words ("Planning failed: ...")."""
    pick = 1 if lang == "de" else 0
    action, error = str(obs.get("action")), str(obs.get("error")).rstrip(".")  # the sentence ends with its own
    step = STEP_WORDS[action][pick] if action in STEP_WORDS else action.replace("_", " ").capitalize()
    return say("offline.error", lang, action=step, error=STEP_ERRORS[error][pick] if error in STEP_ERRORS else error)


def _why_line(obs: dict[str, Any], lang: str) -> str:
    """Return the sentence of an ``EXPLAIN_DEVICE`` Observation: what the device does now, until when, then what."""
    device, now = obs.get("device"), obs.get("now")
    if obs.get("then") is None:
        return say("offline.why_all", lang, device=device, now=now)
    return say(
        "offline.why",
        lang,
        device=device,
        now=now,
        until=local_time(obs.get("until_local"), lang),
        then=obs.get("then"),
    )
