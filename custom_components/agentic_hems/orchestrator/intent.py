"""Intent binding: what a person's request asks for, as (target, action) pairs.

The model proposes, the person decides.

:func:`requested_actions` reads only the person's own text, deterministically, against the site's device names (the
names the DeviceResolved gate resolves: registry aliases, names, device names, friendly names, entity_ids, plus an
appliance's name for its controlled entity) and area names, and the offline planner's reading of appliances
(:func:`.offline.understand`). The Policy gate refuses an ``orchestrator`` command whose pair is not in the set, and
the assistant refuses a SCHEDULE or cancel for an appliance the request did not name. A model can only narrow the set
(by proposing fewer commands); nothing it writes, and no data (calendar titles, entity and appliance names, prices,
tool results), is read here, so nothing can widen it.

- A question ("how many lights are on?", "when is electricity cheapest?", "should I turn on the heater?", "wie
  spät ...") or a request that names no device and no appliance yields nothing.
- A device is named by one of its names, by an area with a device word ("the kitchen light", "das Licht in der
  Küche", and as one German word: "Küchenlicht", "Wohnzimmerlampe", "Garagentor"), by "all" with a device word
  ("turn off all lights"), or by a partial name: a trailing part of one of its names ("the coffee maker" for
  "Siemens Coffee Maker", "die Stehlampe" for "Wohnzimmer Stehlampe") that holds a distinctive word (not a device
  word, verb, article or area word) and that no other device's names contain as whole words. A part that two devices
  share names neither; other parts never match ("the hall lamp" is not "Hallway Lamp", "the kitchen" is not
  "Kitchen light"). A name inside a longer name of another device in the same clause does not count ("the kitchen
  kettle" names "Kitchen Kettle", not "Kettle"). A name or "all" does not name a device of another area than the one
  the clause names: "the ceiling light in the kitchen" is not the living room's ceiling light. A clause with its own
  device verb that names no device names an appliance's controlled entity by the appliance's kind words too
  ("schalte die Spülmaschine jetzt ein", "turn on the dish washer now").
- The action comes from the verbs (only those in the device's domain vocabulary) of the same clause (clauses split
  at "and", "then", commas, "und", "dann"); a clause without a verb takes the previous clause's ("turn on the
  kitchen light and the hall lamp"), and a clause without a device or appliance the previous clause's devices
  ("... then dim it to 30%"; "... and run the dishwasher" starts no light). A negated clause ("don't ...", "do
  not ...") asks for nothing. A clause that puts its device action off to later asks for no device command now: a
  reminder ("remind me to ...", "erinnere mich ...") or a time ("at 6", "at 18:30", "in 2 hours", "tomorrow",
  "tonight", "later", "um 6", "in 2 Stunden", "morgen", "später"); the clauses after it do not take its verb or
  devices. Its appliances are still read for a plan ("run the dishwasher at 6" schedules it).
- Set aside: what a negated clause names, and what the part of a clause after an exclusion, contrast or condition
  names ("except the kitchen lights", "but leave the heater on", "instead of", "unless", "if", "whether", "außer",
  "statt", "wenn", ...; an area alone counts there), is asked for nowhere in the request, whatever "all" says.
- Values are bound too (``.values``): a brightness, temperature or number pair carries each value its clause names
  ("set the boiler to 50 degrees": 50 in the home's unit, "dim the light to 40 %", "charge the car at 10 A", "stelle
  das Wohnzimmer auf 21,5"), or the previous clause's when it takes that clause's verb ("set the kitchen light to 40 %
  and the hall light"); a pair without a value ("make it warmer") lets a model's value through only to a person's
  confirmation (``gates.policy``), and so does a request to warm it ("warm the boiler", "heize den Boiler auf"). A point
  or comma between digits is a decimal, no clause boundary.
- Appliances: "schedule"/"cancel" pairs for the appliances :func:`.offline.understand` finds (by name, kind words
  or "all flexible loads") in the clauses that may plan: not those whose verbs only switch off or stop ("stop
  charging the car"), nor those that name devices and no appliance ("alle Lichter an").

Two tools that reach a person are bound too. ``CALL_AGENT`` consults an appliance's specialist agent only for an
appliance the request names (:func:`advice_targets`; a question counts, advice changes nothing by itself), and the
agent reads the person's own request, never text a model wrote. ``request_authorization`` (a request an
administrator must approve, with a repair issue and a notification) runs from a model's run only when
:func:`asks_for_grid_action`: the request is no question and one of its clauses, not negated, names the battery or
the grid ("battery", "Batterie", "Speicher", "Akku", "grid", "Netz", "dispatch", "setpoint") together with an action
verb ("charge", "discharge", "plan", "schedule", "optimize", "run", "apply", "authorize", "request", "laden",
"entladen", "planen", "freigeben", "beantragen", ...). "Charge the battery tonight" and "Plane den Speicher und
beantrage die Freigabe" ask for one; "run a power flow on the feeder", "show me the grid" and "how full is the
battery?" do not. ``create_incident`` (an incident notifies an administrator) runs from a model's run only when
:func:`asks_for_incident`: "report an incident: the inverter tripped" or "Melde eine Störung" asks for one.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
import re

from ..gates.device_resolved import ResolverIndex, fold
from ..gates.models import RequestedAction
from ..gates.tables import APPLIANCE_INTENTS, INTENT_SERVICES
from .offline import KIND_WORDS, ApplianceRef, named_in, understand
from .values import UNITS_OF, asked_values, values_for

SCHEDULE_ACTION = "schedule"
CANCEL_ACTION = "cancel"

_QUESTION = re.compile(
    r"^\s*(how|what|when|which|why|where|who|whose|is|are|was|were|does|do(?!\s+not\b)|did|has|have|will|would it|should|shall|"
    r"ought|wie|wann|was|welche[rsnm]?|warum|wieso|wo|wer|ist|sind|hat|haben|läuft|brennt|soll|sollte|sollen)\b",
    re.IGNORECASE,
)
# a point or comma between digits is a decimal ("21.5", "21,5"), no clause boundary
_CLAUSES = re.compile(r"[;!?]|(?<!\d)[.,]|[.,](?!\d)|\b(?:and|then|also|und|dann|sowie|außerdem)\b", re.IGNORECASE)
_MINUS = re.compile(r"(?<![\w.,])-(?=\d)")
_MERIDIEM = re.compile(r"\b([ap])\.\s?m\b\.?", re.IGNORECASE)  # "6 a.m." is "6 am": a time, not 6 amperes
_NEGATED = re.compile(r"\b(don'?t|do not|never|nicht|kein\w*|nie)\b", re.IGNORECASE)
# the rest of a clause after one of these is set aside: an exclusion, a contrast, a condition
_ASIDE = re.compile(
    r"\b(?:except|but|not|instead of|rather than|other than|apart from|unless|if|whether|without|außer|statt|anstatt|"
    r"ausser|aber|sondern|ohne|bis auf|falls|wenn|ob)\b",  # folded text: "außer" is "ausser"
    re.IGNORECASE,
)
# a clause that puts its device action off to later (a reminder or a time) asks for no device command now
_LATER = re.compile(
    r"\b(?:remind|reminder|erinnere|erinnerung|tomorrow|tonight|later|morgen|später|spaeter|heute abend"
    r"|this (?:evening|afternoon|morning)"
    r"|(?:at|um)\s+\d{1,2}(?:[:.]\d{2})?(?:\s*(?:am|pm|uhr|h))?\b(?![.,]\d)"  # "at 6.9 kW" is no time
    r"(?!\s*(?:%|°|(?:percent|prozent|degrees?|grad|a|amps?|amperes?|w|watts?|kw|kilowatts?)\b))"
    r"|in \d+\s*(?:min\w*|hours?|h|stunden?|tagen?|days?))",
    re.IGNORECASE,
)
_CANCEL_WORDS = re.compile(  # a negated cancel ("don't cancel it") still asks about the plan
    r"\b(cancel|clear|remove|delete|unschedule|run|skip|forget|abbrechen|löschen|streichen|laufen)\b", re.IGNORECASE
)
_PLANNING = re.compile(r"\b(schedule|plan|charge|run|lade|plane)\w*", re.IGNORECASE)
_OFF = frozenset({"turn_off", "stop", "close", "lock"})

# "set ... to 21.5", "stelle ... auf 21,5": a value for whatever the device sets (a number, a target, a brightness)
_SET_TO = (r"\bset\b.*\bto\s+(?:minus\s+)?\d", r"\b(stelle|setze)\b.*\bauf\s+(?:minus\s+)?\d")
# action -> patterns in a clause (English and German).
VERBS: dict[str, tuple[str, ...]] = {
    "turn_on": (
        r"\b(turn|switch|put)\b.*\bon\b",
        r"\b(turn|switch|put)\s+on\b",
        (
            r"\b(schalte|schalt|mach|mache)\b.*"
            r"\b(an|ein)\b"
        ),
        r"\b(einschalten|anschalten|anmachen)\b",
    ),
    "turn_off": (
        r"\b(turn|switch|put)\b.*\boff\b",
        r"\b(turn|switch|put)\s+off\b",
        (
            r"\b(schalte|schalt|mach|mache)\b"
            r".*\baus\b"
        ),
        r"\b(ausschalten|ausmachen|abschalten)\b",
    ),
    "set_brightness": (r"\b(dim|dimm|dimme|brighten|brightness|helligkeit)\b", r"\d+\s*(%|percent|prozent)", *_SET_TO),
    "set_temperature": (
        r"\b(temperature|temperatur|warmer|cooler|wärmer|kühler|warm|erwärme|erwärmen|aufwärmen|heize)\b",
        r"\d+(?:[.,]\d+)?\s*(°|degrees?|grad)",
        *_SET_TO,
    ),
    "set_hvac_mode": (r"\b(mode|modus|betriebsart)\b",),
    "set_value": (
        *_SET_TO,
        r"\d\s*(?:a|amps?|amperes?|w|watts?|kw|kilowatts?)\b",  # "charge the car at 10 A", "lade mit 2 kW"
    ),
    "open": (r"\b(open|öffne|öffnen|aufmachen|mach\w*\b.*\bauf)\b",),
    "close": (r"\b(close|shut|schließe|schließen|zumachen|mach\w*\b.*\bzu)\b",),
    "lock": (r"(?<!un)\block\b", r"\b(verriegle|verriegeln|abschließen|zusperren|(sperre|schließ\w*)\b.*\bab)\b"),
    "unlock": (r"\bunlock\b", r"\b(entriegle|entriegeln|aufschließen|aufsperren|(sperre|schließ\w*)\b.*\bauf)\b"),
    "press": (r"\b(press|push|drücke|drück|betätige)\b",),
    "start": (r"\b(start|run|starte|starten)\b",),
    "stop": (r"\b(stop|halt|stoppe|stoppen|beende)\b",),
}
# the text is case-folded ("ß" becomes "ss"), so the patterns are too
_VERBS = {
    action: tuple(re.compile(p.replace("ß", "ss"), re.IGNORECASE) for p in patterns)
    for action, patterns in VERBS.items()
}
# device words per domain, for "the kitchen light", "das Licht in der Küche", "all lights"
DEVICE_WORDS: dict[str, tuple[str, ...]] = {
    "light": ("light", "lights", "lamp", "lamps", "licht", "lichter", "lampe", "lampen", "beleuchtung"),
    "switch": ("switch", "switches", "plug", "plugs", "socket", "schalter", "steckdose", "steckdosen"),
    "fan": ("fan", "fans", "ventilator", "lüfter", "lüftung"),
    "climate": ("thermostat", "heating", "heater", "air conditioning", "heizung", "klimaanlage", "klima"),
    "water_heater": (
        "water heater",
        "water heaters",
        "hot water",
        "boiler",
        "boilers",
        "warmwasser",
        "warmwasserspeicher",
    ),
    "cover": (
        "blind",
        "blinds",
        "shutter",
        "shutters",
        "cover",
        "curtain",
        "curtains",
        "rollladen",
        "rolladen",
        "jalousie",
        "rollo",
        "markise",
        "tor",
        "tore",
    ),
    "valve": ("valve", "valves", "ventil"),
    "lock": ("lock", "door lock", "schloss", "türschloss"),
    "vacuum": ("vacuum", "robot vacuum", "staubsauger", "saugroboter"),
    "button": ("button", "taste", "knopf"),
}
_IN = r"\s+(?:in|im|in the|in der|in dem|on the|auf der)\s+(?:the\s+)?"
_JOIN = r"(?:\s*|n|en|s|es|er)"  # area and device word: apart, or one German compound ("Küche-n-licht")
# Words that never make a partial name distinctive: device words, the verbs' own words, articles and connectors.
_FUNCTION_WORDS = frozenset(
    {word for words in DEVICE_WORDS.values() for phrase in words for word in phrase.split()}
    | {
        word
        for patterns in _VERBS.values()
        for p in patterns
        for word in re.findall(r"[^\W\d_]+", re.sub(r"\\\w", " ", p.pattern))
    }
    | {
        "the",
        "all",
        "every",
        "and",
        "then",
        "also",
        "my",
        "our",
        "der",
        "die",
        "das",
        "den",
        "dem",
        "des",
        "ein",
        "eine",
        "einen",
        "alle",
        "und",
        "dann",
        "mein",
        "meine",
        "unser",
        "unsere",
    }
)
_ALL_DEVICE_WORDS = frozenset(w for words in DEVICE_WORDS.values() for w in words)
_DEVICE_WORD = re.compile(
    rf"\b(?:{'|'.join(re.escape(w) for w in sorted(_ALL_DEVICE_WORDS, key=len, reverse=True))})\b"
)


@dataclass(frozen=True)
class KnownDevice:
    """A device the request may name.

    Fields: ``entity_id``, ``domain``, its folded ``names`` and its area's folded ``areas`` (name, id and aliases).
    """

    entity_id: str
    domain: str
    names: tuple[str, ...]
    areas: tuple[str, ...] = ()


def known_devices(index: ResolverIndex, appliance_names: Mapping[str, str] | None = None) -> tuple[KnownDevice, ...]:
    """Return the DeviceResolved gate's candidates as :class:`KnownDevice`.

    ``appliance_names`` (entity_id -> appliance name) adds an appliance's name to its controlled entity's names.
    """
    areas_of: dict[str, list[str]] = {}
    for key, area_ids in index.area_keys.items():
        for area_id in area_ids:
            areas_of.setdefault(area_id, []).append(key)
    extra = appliance_names or {}
    found = []
    for entity_id, entity in index.entities.items():
        names = index.names_of.get(entity_id, ())
        if entity_id in extra:
            names = (*names, fold(extra[entity_id]))
        areas = tuple(sorted(areas_of.get(entity.area_id, ()))) if entity.area_id else ()
        found.append(KnownDevice(entity_id, entity.domain, names, areas))
    return tuple(found)


def is_question(text: str) -> bool:
    """Return True when ``text`` asks something rather than asking for something ("how many lights are on?")."""
    return bool(_QUESTION.match(text))


def _has(clause: str, phrase: str) -> bool:
    return bool(phrase) and re.search(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", clause) is not None


def _words(domain: str) -> str:
    return "|".join(re.escape(w) for w in sorted(DEVICE_WORDS.get(domain, ()), key=len, reverse=True))


def _spans(name: str) -> list[str]:
    """Every run of whole words in ``name`` ("a b c" -> "a", "a b", "a b c", "b", "b c", "c")."""
    words = name.split()
    return [" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1)]


def partial_names(devices: Sequence[KnownDevice]) -> dict[str, tuple[str, ...]]:
    """Return entity_id -> the partial names that name it.

    A partial name is a trailing word run of its names (entity_ids left out) with a distinctive word (three letters or
    more, not a number, not in ``_FUNCTION_WORDS`` or an area's words) that no other device's names contain as whole
    words.
    """
    area_words = {word for device in devices for area in device.areas for word in area.split()}
    holders: dict[str, set[str]] = {}
    for device in devices:
        for name in device.names:
            if "." not in name:
                for span in _spans(name):
                    holders.setdefault(span, set()).add(device.entity_id)

    def distinctive(part: str) -> bool:
        return any(
            len(w) > 2 and not w.isdigit() and w not in _FUNCTION_WORDS and w not in area_words for w in part.split()
        )

    found: dict[str, tuple[str, ...]] = {}
    for device in devices:
        tails = {
            " ".join(name.split()[i:]) for name in device.names if "." not in name for i in range(1, len(name.split()))
        }
        found[device.entity_id] = tuple(sorted(t for t in tails if distinctive(t) and holders[t] == {device.entity_id}))
    return found


def _spans_of(clause: str, names: Iterable[str]) -> list[tuple[int, int]]:
    """Where each of ``names`` stands in ``clause`` as whole words."""
    return [
        m.span()
        for name in names
        if len(name) > 1
        for m in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])", clause)
    ]


def _by_name(clause: str, devices: Sequence[KnownDevice], partial: Mapping[str, Sequence[str]]) -> set[str]:
    """Return the entity_ids of ``devices`` that ``clause`` names by a name or partial name.

    A name that stands inside a longer name of another device there does not count: "the kitchen kettle" names "Kitchen
    Kettle", not "Kettle".
    """
    spans = {d.entity_id: _spans_of(clause, (*d.names, *partial.get(d.entity_id, ()))) for d in devices}
    every = {span for found in spans.values() for span in found}

    def inside(span: tuple[int, int]) -> bool:
        return any(a <= span[0] and span[1] <= b and (a, b) != span for a, b in every)

    return {entity_id for entity_id, found in spans.items() if any(not inside(s) for s in found)}


def _named(clause: str, bare: str, device: KnownDevice, areas: frozenset[str], by_name: bool) -> bool:
    """Return True when ``device`` is named in ``clause`` (folded).

    ``bare`` is the clause without the devices' names. A device is named by an area plus a device word in ``bare``
    (apart or as one German compound), or by a name (``by_name``, :func:`_by_name`) or "all" plus a device word when the
    clause, without the device's own names, names no area of ``areas`` but the device's.
    """
    words = _words(device.domain)
    for area in device.areas if words else ():
        a = re.escape(area)
        if re.search(rf"(?<![\w-]){a}{_JOIN}(?:{words})(?![\w-])|(?<![\w-])(?:{words}){_IN}{a}(?![\w-])", bare):
            return True
    everything = (
        bool(words)
        and re.search(rf"\b(all|every|alle|sämtliche)\b(?:\s+(?:the|of the|die|der))?\s+(?:{words})\b", bare)
        is not None
    )
    if not everything and not by_name:
        return False
    rest = _strip_names(clause, (device,))  # "the kitchen main light" names the kitchen, not the lounge's light
    elsewhere = {area for area in areas if _has(rest, area)}
    return not elsewhere or not elsewhere.isdisjoint(device.areas)


def _strip_names(clause: str, devices: Sequence[KnownDevice]) -> str:
    """``clause`` without the device names it holds (a bare device word is no name here)."""
    for name in sorted({n for d in devices for n in d.names}, key=len, reverse=True):
        if len(name) > 1 and name not in _ALL_DEVICE_WORDS and _has(clause, name):
            clause = re.sub(rf"(?<![\w-]){re.escape(name)}(?![\w-])", " ", clause)
    return clause


def _mentions(text: str, appliance: ApplianceRef) -> bool:
    """``text`` (folded) names ``appliance`` or one of its kind's words."""
    return any(_has(text, word) for word in (fold(appliance.name), *KIND_WORDS.get(appliance.kind, ())))


_GRID_WORDS = re.compile(
    r"\b(batter(?:y|ies)|batterie\w*|speicher\w*|akku\w*|grid|netz\w*|dispatch\w*|setpoints?|"
    r"sollwert\w*)\b"
)
_GRID_VERBS = re.compile(
    r"\b(charge|charging|discharge|discharging|plan|schedule|optimi[sz]e|dispatch|run|apply|execute|use|set|"
    r"authori[sz]e|approve|request|lade|laden|entlade\w*|plane\w*|optimier\w*|nutze\w*|setze|stelle|steuer\w*|"
    r"freigeben|gib\b.*\bfrei|beantrag\w*|genehmig\w*|ausführ\w*|umsetz\w*)\b"
)


def _asks(text: str, words: re.Pattern[str], verbs: re.Pattern[str]) -> bool:
    """Return True when ``text`` is no question and one clause, not negated, holds one of ``words`` and ``verbs``."""
    if is_question(text):
        return False
    clauses = (c for c in _CLAUSES.split(fold(text)) if c and c.strip())
    return any(words.search(c) and verbs.search(c) and not _NEGATED.search(c) for c in clauses)


def asks_for_grid_action(text: str) -> bool:
    """Return True when the person's ``text`` asks for a grid or battery action (see the module docstring).

    This is what lets a model's run call ``request_authorization``.
    """
    return _asks(text, _GRID_WORDS, _GRID_VERBS)


_INCIDENT_WORDS = re.compile(r"\b(incidents?|vorf(?:a|ä)ll\w*|störung\w*|outages?|faults?|ausfall\w*)\b")
_INCIDENT_VERBS = re.compile(
    r"\b(report|create|file|open|log|raise|record|melde\w*|erstelle\w*|eröffne\w*|lege\w*|protokollier\w*)\b"
)


def asks_for_incident(text: str) -> bool:
    """Return True when the person's ``text`` asks to report an incident.

    What lets a model's run call ``create_incident`` (an incident notifies an administrator): no question, and a
    clause, not negated, with an incident word ("incident", "outage", "fault", "Vorfall", "Störung", "Ausfall") and a
    reporting verb ("report", "create", "file", "log", "melde", "erstelle", ...).
    """
    return _asks(text, _INCIDENT_WORDS, _INCIDENT_VERBS)


def advice_targets(text: str, appliances: Sequence[ApplianceRef]) -> frozenset[str]:
    """Return the names of the ``appliances`` whose specialist agent a run may consult.

    Those are the ones the person's ``text`` names (by name, kind words or "all flexible loads",
    :func:`.offline.understand`), a question included.
    """
    return frozenset(understand(text, appliances).appliances)


def _supports(domain: str, action: str) -> bool:
    """Return True when ``action`` is in ``domain``'s vocabulary (start and stop: any appliance's controlled entity)."""
    return action in INTENT_SERVICES.get(domain, {}) or action in APPLIANCE_INTENTS


def _actions(clause: str) -> set[str]:
    return {action for action, patterns in _VERBS.items() if any(p.search(clause) for p in patterns)}


@dataclass
class _Reading:
    """What the clauses read so far ask for.

    Device pairs, the clauses that may plan appliances, the text set aside, and the previous clause's actions and
    devices.
    """

    found: set[RequestedAction] = field(default_factory=set)
    planning: list[str] = field(default_factory=list)
    aside: list[str] = field(default_factory=list)
    actions: set[str] = field(default_factory=set)
    devices: list[KnownDevice] = field(default_factory=list)
    values: tuple[tuple[float, str], ...] = ()  # the previous clause's values ("to 40 %"), for one that takes its verb
    in_aside: bool = False  # the previous clause ended set aside: a following clause without a verb continues it


def _read(
    clause: str,
    devices: Sequence[KnownDevice],
    areas: frozenset[str],
    appliances: Sequence[ApplianceRef],
    *,
    partial: Mapping[str, Sequence[str]],
    reading: _Reading,
    home_unit: str,
) -> None:
    """Read one clause into ``reading`` (see the module docstring)."""
    verbs = _actions(clause)
    if reading.in_aside and not verbs:  # "... except the kitchen and the hall"
        reading.aside.append(clause)
        return
    marker = _ASIDE.search(clause)
    wanted = clause[: marker.start()] if marker else clause
    if marker:
        reading.aside.append(clause[marker.end() :])
    reading.in_aside = marker is not None
    if _NEGATED.search(wanted):
        keeps_plan = _CANCEL_WORDS.search(wanted) is not None  # "don't cancel the dishwasher": the plan is wanted
        (reading.planning if keeps_plan else reading.aside).append(wanted)
        reading.actions, reading.devices, reading.in_aside = set(), [], not keeps_plan
        return
    bare = _strip_names(wanted, devices)
    by_name = _by_name(wanted, devices, partial)
    named = [d for d in devices if _named(wanted, bare, d, areas, d.entity_id in by_name)]
    own = _actions(wanted) or (verbs if marker else set())  # "schalte alle Lichter außer ... aus": the verb ends it
    if own and not named:  # "schalte die Spülmaschine jetzt ein": the appliance's kind word names its entity
        named = _appliance_devices(wanted, devices, appliances)
    actions = own or (reading.actions if named and not _PLANNING.search(wanted) else set())
    if not named and actions and not any(_mentions(wanted, a) for a in appliances):  # "... and run the dishwasher"
        named = reading.devices
    later = _LATER.search(wanted) is not None
    values = asked_values(wanted, home_unit) or (() if own else reading.values)
    if not later:
        reading.found |= {
            pair for d in named for a in actions if _supports(d.domain, a) for pair in _pairs(d, a, values)
        }
    switches_off = (own or (set() if _PLANNING.search(wanted) else actions)) or {"plan"}
    if not switches_off <= _OFF and (any(_mentions(wanted, a) for a in appliances) or not _DEVICE_WORD.search(wanted)):
        reading.planning.append(wanted)
    if later:  # "... at 6 and the kettle": the kettle is not asked for now either
        reading.actions, reading.devices, reading.values = set(), [], ()
    else:
        reading.actions, reading.devices = actions or reading.actions, named or reading.devices
        reading.values = values


def _pairs(device: KnownDevice, action: str, values: tuple[tuple[float, str], ...]) -> list[RequestedAction]:
    """Return the pairs for ``action`` on ``device``: one per value it takes from ``values``, or one without."""
    taken = values_for(action, values) or (values if action in UNITS_OF else ())  # "40 %" for a boiler: refused
    if not taken:
        return [RequestedAction(device.entity_id, action)]
    return [RequestedAction(device.entity_id, action, value, unit) for value, unit in taken]


def _appliance_devices(
    clause: str, devices: Sequence[KnownDevice], appliances: Sequence[ApplianceRef]
) -> list[KnownDevice]:
    """Return the controlled entities of the ``appliances`` that ``clause`` (folded) names by name or kind word.

    An appliance's entity carries the appliance's folded name among its ``names`` (:func:`known_devices`). None when
    the clause holds a device word besides ("the washing machine light" is some light, not the washing machine).
    """
    names = {fold(name) for name in named_in(clause, appliances)}  # the longest phrase wins: "dish washer"
    rest = clause
    for appliance in appliances:
        for phrase in sorted((fold(appliance.name), *KIND_WORDS.get(appliance.kind, ())), key=len, reverse=True):
            rest = re.sub(rf"(?<![\w-]){re.escape(phrase)}(?![\w-])", " ", rest)
    if not names or _DEVICE_WORD.search(rest):
        return []
    return [d for d in devices if not names.isdisjoint(d.names)]


def _set_aside(
    parts: Sequence[str],
    devices: Sequence[KnownDevice],
    areas: frozenset[str],
    appliances: Sequence[ApplianceRef],
    partial: Mapping[str, Sequence[str]],
) -> set[str]:
    """Return the targets ``parts`` name: devices (by name, area, or "all" plus a device word) and appliances."""
    aside: set[str] = set()
    for part in parts:
        bare = _strip_names(part, devices)
        by_name = _by_name(part, devices, partial)
        aside |= {
            d.entity_id
            for d in devices
            if _named(part, bare, d, areas, d.entity_id in by_name) or any(_has(part, a) for a in d.areas)
        }
        aside |= {a.name for a in appliances if _mentions(part, a)}
    return aside


def requested_actions(
    text: str,
    devices: Iterable[KnownDevice] = (),
    appliances: Sequence[ApplianceRef] = (),
    *,
    home_unit: str = "°C",
) -> frozenset[RequestedAction]:
    """Return the (target, action) pairs the person's ``text`` asks for (see the module docstring).

    Device pairs carry the entity_id, a vocabulary intent and, for a value-carrying intent, the value the clause
    names (``.values.asked_values``, temperatures in ``home_unit``, HA's "°C" or "°F"); appliance pairs the
    appliance's name and ``schedule`` or ``cancel``.
    """
    if is_question(text):
        return frozenset()
    devices = tuple(devices)
    areas = frozenset(area for d in devices for area in d.areas)
    partial = partial_names(devices)
    reading = _Reading()
    text = _MERIDIEM.sub(r"\1m", _MINUS.sub("minus ", text.replace("’", "'")))  # folding reads "-" as a space
    for clause in (c.strip() for c in _CLAUSES.split(fold(text)) if c and c.strip()):
        _read(clause, devices, areas, appliances, partial=partial, reading=reading, home_unit=home_unit)
    found = reading.found
    intent = understand(", ".join(reading.planning), appliances)
    if intent.kind in ("schedule", "cancel"):
        action = SCHEDULE_ACTION if intent.kind == "schedule" else CANCEL_ACTION
        found |= {RequestedAction(name, action) for name in intent.appliances}
    aside = _set_aside(reading.aside, devices, areas, appliances, partial)
    return frozenset(pair for pair in found if pair.target not in aside)
