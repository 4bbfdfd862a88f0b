"""Intent binding: what a person's request asks for, as (target, action) pairs ("the model proposes, the person
decides").

:func:`requested_actions` reads only the person's own text, deterministically, against the site's device names (the
names the DeviceResolved gate resolves: registry aliases, names, device names, friendly names, entity_ids, plus an
appliance's name for its controlled entity) and area names, and the offline planner's reading of appliances
(:func:`.offline.understand`). The Policy gate refuses an ``orchestrator`` command whose pair is not in the set, and
the assistant refuses a SCHEDULE or cancel for an appliance the request did not name. A model can only narrow the set
(by proposing fewer commands); nothing it writes, and no data (calendar titles, entity and appliance names, prices,
tool results), is read here, so nothing can widen it.

- A question ("how many lights are on?", "when is electricity cheapest?", "wie spät ...") or a request that names
  no device and no appliance yields nothing.
- A device is named by one of its names, by an area with a device word ("the kitchen light", "das Licht in der
  Küche", and as one German word: "Küchenlicht", "Wohnzimmerlampe", "Garagentor"), by "all" with a device word
  ("turn off all lights"), or by a partial name: a trailing part of one of its names ("the coffee maker" for
  "Siemens Coffee Maker", "die Stehlampe" for "Wohnzimmer Stehlampe") that holds a distinctive word (not a device
  word, verb, article or area word) and that no other device's names contain as whole words. A part that two devices
  share names neither; other parts never match ("the hall lamp" is not "Hallway Lamp", "the kitchen" is not
  "Kitchen light"). A name inside a longer name of another device in the same clause does not count ("the kitchen
  kettle" names "Kitchen Kettle", not "Kettle").
- The action comes from the verbs (only those in the device's domain vocabulary) of the same clause (clauses split
  at "and", "then", commas, "und", "dann"); a clause without a verb takes the previous clause's ("turn on the
  kitchen light and the hall lamp"), and a clause without a device the previous clause's devices ("... then dim it
  to 30%"). A negated clause ("don't ...") asks for nothing.
- Appliances: "schedule"/"cancel" pairs for the appliances :func:`.offline.understand` finds (by name, kind words
  or "all flexible loads").

Two tools that reach a person are bound too. ``CALL_AGENT`` consults an appliance's specialist agent only for an
appliance the request names (:func:`advice_targets`; a question counts, advice changes nothing by itself), and the
agent reads the person's own request, never text a model wrote. ``request_authorization`` (a request an
administrator must approve, with a repair issue and a notification) runs from a model's run only when
:func:`asks_for_grid_action`: the request is no question and one of its clauses, not negated, names the battery or
the grid ("battery", "Batterie", "Speicher", "Akku", "grid", "Netz", "dispatch", "setpoint") together with an action
verb ("charge", "discharge", "plan", "schedule", "optimize", "run", "apply", "authorize", "request", "laden",
"entladen", "planen", "freigeben", "beantragen", ...). "Charge the battery tonight" and "Plane den Speicher und
beantrage die Freigabe" ask for one; "run a power flow on the feeder", "show me the grid" and "how full is the
battery?" do not.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
import re

from ..gates.device_resolved import ResolverIndex, fold
from ..gates.models import RequestedAction
from ..gates.tables import APPLIANCE_INTENTS, INTENT_SERVICES
from .offline import ApplianceRef, understand

SCHEDULE_ACTION = "schedule"
CANCEL_ACTION = "cancel"

_QUESTION = re.compile(
    r"^\s*(how|what|when|which|why|where|who|whose|is|are|was|were|does|do|did|has|have|will|would it|"
    r"wie|wann|was|welche[rsnm]?|warum|wieso|wo|wer|ist|sind|hat|haben|läuft|brennt)\b",
    re.IGNORECASE,
)
_CLAUSES = re.compile(r"[,;.!?]|\b(?:and|then|also|und|dann|sowie|außerdem)\b", re.IGNORECASE)
_NEGATED = re.compile(r"\b(don'?t|do not|never|nicht|kein\w*|nie)\b", re.IGNORECASE)

# action -> patterns in a clause (English and German).
VERBS: dict[str, tuple[str, ...]] = {
    "turn_on": (r"\b(turn|switch|put)\b.*\bon\b", r"\b(turn|switch|put)\s+on\b", r"\b(schalte|schalt|mach|mache)\b.*"
                r"\b(an|ein)\b", r"\b(einschalten|anschalten|anmachen)\b"),
    "turn_off": (r"\b(turn|switch|put)\b.*\boff\b", r"\b(turn|switch|put)\s+off\b", r"\b(schalte|schalt|mach|mache)\b"
                 r".*\baus\b", r"\b(ausschalten|ausmachen|abschalten)\b"),
    "set_brightness": (r"\b(dim|dimm|dimme|brighten|brightness|helligkeit)\b", r"\d+\s*(%|percent|prozent)"),
    "set_temperature": (r"\b(temperature|temperatur|warmer|cooler|wärmer|kühler)\b",
                        r"\d+(?:[.,]\d+)?\s*(°|degrees?|grad)"),
    "set_hvac_mode": (r"\b(mode|modus|betriebsart)\b",),
    "set_value": (r"\bset\b.*\bto\s+-?\d", r"\b(stelle|setze)\b.*\bauf\s+-?\d"),
    "open": (r"\b(open|öffne|öffnen|aufmachen|mach\w*\b.*\bauf)\b",),
    "close": (r"\b(close|shut|schließe|schließen|zumachen|mach\w*\b.*\bzu)\b",),
    "lock": (r"(?<!un)\block\b", r"\b(verriegle|verriegeln|abschließen|zusperren|(sperre|schließ\w*)\b.*\bab)\b"),
    "unlock": (r"\bunlock\b", r"\b(entriegle|entriegeln|aufschließen|aufsperren|(sperre|schließ\w*)\b.*\bauf)\b"),
    "press": (r"\b(press|push|drücke|drück|betätige)\b",),
    "start": (r"\b(start|run|starte|starten)\b",),
    "stop": (r"\b(stop|halt|stoppe|stoppen|beende)\b",),
}
# the text is case-folded ("ß" becomes "ss"), so the patterns are too
_VERBS = {action: tuple(re.compile(p.replace("ß", "ss"), re.IGNORECASE) for p in patterns)
          for action, patterns in VERBS.items()}
# device words per domain, for "the kitchen light", "das Licht in der Küche", "all lights"
DEVICE_WORDS: dict[str, tuple[str, ...]] = {
    "light": ("light", "lights", "lamp", "lamps", "licht", "lichter", "lampe", "lampen", "beleuchtung"),
    "switch": ("switch", "switches", "plug", "plugs", "socket", "schalter", "steckdose", "steckdosen"),
    "fan": ("fan", "fans", "ventilator", "lüfter", "lüftung"),
    "climate": ("thermostat", "heating", "heater", "air conditioning", "heizung", "klimaanlage", "klima"),
    "cover": ("blind", "blinds", "shutter", "shutters", "cover", "curtain", "curtains", "rollladen", "rolladen",
              "jalousie", "rollo", "markise", "tor", "tore"),
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
    | {word for patterns in _VERBS.values() for p in patterns
       for word in re.findall(r"[^\W\d_]+", re.sub(r"\\\w", " ", p.pattern))}
    | {"the", "all", "every", "and", "then", "also", "my", "our", "der", "die", "das", "den", "dem", "des", "ein",
       "eine", "einen", "alle", "und", "dann", "mein", "meine", "unser", "unsere"}
)


@dataclass(frozen=True)
class KnownDevice:
    """A device the request may name: ``entity_id``, ``domain``, its folded ``names`` and its area's folded
    ``areas`` (name, id and aliases)."""

    entity_id: str
    domain: str
    names: tuple[str, ...]
    areas: tuple[str, ...] = ()


def known_devices(index: ResolverIndex, appliance_names: Mapping[str, str] | None = None) -> tuple[KnownDevice, ...]:
    """The DeviceResolved gate's candidates as :class:`KnownDevice`; ``appliance_names`` (entity_id -> appliance
    name) adds an appliance's name to its controlled entity's names."""
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
    """True when ``text`` asks something rather than asking for something ("how many lights are on?")."""
    return bool(_QUESTION.match(text))


def _words(domain: str) -> str:
    return "|".join(re.escape(w) for w in sorted(DEVICE_WORDS.get(domain, ()), key=len, reverse=True))


def _spans(name: str) -> list[str]:
    """Every run of whole words in ``name`` ("a b c" -> "a", "a b", "a b c", "b", "b c", "c")."""
    words = name.split()
    return [" ".join(words[i:j]) for i in range(len(words)) for j in range(i + 1, len(words) + 1)]


def partial_names(devices: Sequence[KnownDevice]) -> dict[str, tuple[str, ...]]:
    """entity_id -> the partial names that name it: trailing word runs of its names (entity_ids left out) with a
    distinctive word (three letters or more, not a number, not in ``_FUNCTION_WORDS`` or an area's words) that no
    other device's names contain as whole words."""
    area_words = {word for device in devices for area in device.areas for word in area.split()}
    holders: dict[str, set[str]] = {}
    for device in devices:
        for name in device.names:
            if "." not in name:
                for span in _spans(name):
                    holders.setdefault(span, set()).add(device.entity_id)

    def distinctive(part: str) -> bool:
        return any(len(w) > 2 and not w.isdigit() and w not in _FUNCTION_WORDS and w not in area_words
                   for w in part.split())

    found: dict[str, tuple[str, ...]] = {}
    for device in devices:
        tails = {" ".join(name.split()[i:]) for name in device.names if "." not in name
                 for i in range(1, len(name.split()))}
        found[device.entity_id] = tuple(sorted(t for t in tails if distinctive(t) and holders[t] == {device.entity_id}))
    return found


def _spans_of(clause: str, names: Iterable[str]) -> list[tuple[int, int]]:
    """Where each of ``names`` stands in ``clause`` as whole words."""
    return [m.span() for name in names if len(name) > 1
            for m in re.finditer(rf"(?<![\w-]){re.escape(name)}(?![\w-])", clause)]


def _by_area_or_all(clause: str, device: KnownDevice) -> bool:
    """``device`` is named in ``clause`` by an area plus a device word (apart or as one compound), or "all" plus
    one."""
    words = _words(device.domain)
    if not words:
        return False
    for area in device.areas:
        a = re.escape(area)
        if re.search(rf"(?<![\w-]){a}{_JOIN}(?:{words})(?![\w-])|(?<![\w-])(?:{words}){_IN}{a}(?![\w-])", clause):
            return True
    every = rf"\b(all|every|alle|sämtliche)\b(?:\s+(?:the|of the|die|der))?\s+(?:{words})\b"
    return re.search(every, clause) is not None


def _named(clause: str, devices: Sequence[KnownDevice], partial: Mapping[str, Sequence[str]]) -> list[KnownDevice]:
    """The ``devices`` named in ``clause`` (folded). A name (or partial name) that stands inside a longer name of
    another device there does not count: "the kitchen kettle" names "Kitchen Kettle", not "Kettle"."""
    spans = {d.entity_id: _spans_of(clause, (*d.names, *partial.get(d.entity_id, ()))) for d in devices}
    every = {span for found in spans.values() for span in found}

    def inside(span: tuple[int, int]) -> bool:
        return any(a <= span[0] and span[1] <= b and (a, b) != span for a, b in every)

    return [d for d in devices if any(not inside(s) for s in spans[d.entity_id]) or _by_area_or_all(clause, d)]


_GRID_WORDS = re.compile(r"\b(batter(?:y|ies)|batterie\w*|speicher\w*|akku\w*|grid|netz\w*|dispatch\w*|setpoints?|"
                         r"sollwert\w*)\b")
_GRID_VERBS = re.compile(
    r"\b(charge|charging|discharge|discharging|plan|schedule|optimi[sz]e|dispatch|run|apply|execute|use|set|"
    r"authori[sz]e|approve|request|lade|laden|entlade\w*|plane\w*|optimier\w*|nutze\w*|setze|stelle|steuer\w*|"
    r"freigeben|gib\b.*\bfrei|beantrag\w*|genehmig\w*|ausführ\w*|umsetz\w*)\b"
)


def asks_for_grid_action(text: str) -> bool:
    """True when the person's ``text`` asks for a grid or battery action (see the module docstring): what lets a
    model's run call ``request_authorization``."""
    if is_question(text):
        return False
    clauses = (c for c in _CLAUSES.split(fold(text)) if c and c.strip())
    return any(_GRID_WORDS.search(c) and _GRID_VERBS.search(c) and not _NEGATED.search(c) for c in clauses)


def advice_targets(text: str, appliances: Sequence[ApplianceRef]) -> frozenset[str]:
    """The names of the ``appliances`` whose specialist agent a run may consult: those the person's ``text`` names
    (by name, kind words or "all flexible loads", :func:`.offline.understand`), a question included."""
    return frozenset(understand(text, appliances).appliances)


def _supports(domain: str, action: str) -> bool:
    """``action`` is in ``domain``'s vocabulary (start and stop: any appliance's controlled entity)."""
    return action in INTENT_SERVICES.get(domain, {}) or action in APPLIANCE_INTENTS


def _actions(clause: str) -> set[str]:
    return {action for action, patterns in _VERBS.items() if any(p.search(clause) for p in patterns)}


def requested_actions(
    text: str, devices: Iterable[KnownDevice] = (), appliances: Sequence[ApplianceRef] = ()
) -> frozenset[RequestedAction]:
    """The (target, action) pairs the person's ``text`` asks for (see the module docstring): device pairs carry the
    entity_id and a vocabulary intent, appliance pairs the appliance's name and ``schedule`` or ``cancel``."""
    if is_question(text):
        return frozenset()
    devices = tuple(devices)
    partial = partial_names(devices)
    found: set[RequestedAction] = set()
    folded = fold(text.replace("’", "'"))
    previous_actions: set[str] = set()
    previous_devices: list[KnownDevice] = []
    for clause in (c.strip() for c in _CLAUSES.split(folded) if c and c.strip()):
        if _NEGATED.search(clause):
            previous_actions, previous_devices = set(), []
            continue
        named = _named(clause, devices, partial)
        actions = _actions(clause)
        if not actions and named:
            actions = previous_actions
        if not named and actions:
            named = previous_devices
        found |= {RequestedAction(d.entity_id, a) for d in named for a in actions if _supports(d.domain, a)}
        previous_actions, previous_devices = actions or previous_actions, named or previous_devices
    intent = understand(text, appliances)
    if intent.kind in ("schedule", "cancel"):
        action = SCHEDULE_ACTION if intent.kind == "schedule" else CANCEL_ACTION
        found |= {RequestedAction(name, action) for name in intent.appliances}
    return frozenset(found)
