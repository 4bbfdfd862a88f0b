"""Gate 3, DeviceResolved: room plus alias resolve to exactly one entity (seed 001 section 4.3; issue 3).

- The room matches an area's id, name or aliases.
- The alias matches an entity's registry aliases, its name, its device's name or its friendly name.
- Matching is exact after :func:`fold` (case, spacing, ``_`` and ``-`` ignored). Nothing is guessed: ambiguity fails
  and lists the alternatives, and :mod:`difflib` similarity only feeds suggestions.
- Candidates are the entities exposed to Assist, plus the appliance-controlled entities when
  ``ctx.include_appliances``; this integration's own entities never.
- ``device_type`` (a domain), when given, narrows the candidates.

On success the gate normalizes: it builds the :class:`NormalizedCommand` with the risk level from
``tables.risk_level`` (the one place risk is assigned) and the service from ``tables.service_for``.
"""

from __future__ import annotations

from dataclasses import dataclass
import difflib
import re

from .models import GateContext, GateResult, ModelCandidate, NormalizedCommand
from .tables import risk_level, service_data, service_for
from .view import AreaInfo, EntityInfo, HaView

NAME = "device_resolved"
MAX_SUGGESTIONS = 5
MAX_ALTERNATIVES = 20
_SPACES = re.compile(r"[\s_\-]+")


def fold(text: str) -> str:
    """Case-folded, with runs of spaces, ``_`` and ``-`` as one space: "Living_Room" -> "living room"."""
    return _SPACES.sub(" ", text.casefold()).strip()


def entity_names(view: HaView, entity: EntityInfo) -> dict[str, str]:
    """Folded name -> which field it came from (``alias``, ``name``, ``device_name``, ``friendly_name``)."""
    names: dict[str, str] = {}
    state = view.state(entity.entity_id)
    for source, values in (
        ("alias", sorted(entity.aliases)),
        ("name", [entity.name]),
        ("device_name", [entity.device_name]),
        ("friendly_name", [state.friendly_name if state else None]),
    ):
        for value in values:
            if value and fold(value) not in names:
                names[fold(value)] = source
    return names


def candidate_ids(view: HaView, include_appliances: bool) -> set[str]:
    """Entity ids the resolver may return: exposed (plus appliance-controlled) minus this integration's own."""
    ids = {entity_id for entity_id in view.entity_ids() if view.should_expose(entity_id)}
    if include_appliances:
        ids |= view.appliance_entity_ids()
    return ids - view.own_entity_ids()


def match_areas(view: HaView, room: str) -> list[AreaInfo]:
    """Areas whose id, name or an alias folds to ``room``."""
    want = fold(room)
    return [a for a in view.areas() if want in {fold(a.area_id), fold(a.name), *(fold(x) for x in a.aliases)}]


@dataclass(frozen=True)
class Resolution:
    """What :func:`resolve` found: ``entity`` when exactly one matched, else the reason and what to offer."""

    entity: EntityInfo | None
    reason: str
    matched_by: str | None
    areas: list[str]
    alternatives: list[dict[str, str | None]]
    suggestions: list[dict[str, str]]
    candidates: int


def _describe(view: HaView, entity: EntityInfo) -> dict[str, str | None]:
    state = view.state(entity.entity_id)
    name = (state.friendly_name if state else None) or entity.name or entity.device_name
    return {"entity_id": entity.entity_id, "name": name, "area_id": entity.area_id}


def resolve(view: HaView, candidate: ModelCandidate, *, include_appliances: bool = True) -> Resolution:
    """Resolve ``candidate.room``/``device_alias``/``device_type`` to one entity (see the module docstring)."""
    pool = [e for eid in sorted(candidate_ids(view, include_appliances)) if (e := view.entity(eid)) is not None]
    if candidate.device_type:
        pool = [e for e in pool if e.domain == candidate.device_type]
    area_ids: list[str] = []
    if candidate.room is not None:
        areas = match_areas(view, candidate.room)
        area_ids = sorted(a.area_id for a in areas)
        if not areas:
            names = {fold(a.name): a.name for a in view.areas()}
            close = difflib.get_close_matches(fold(candidate.room), list(names), n=MAX_SUGGESTIONS, cutoff=0.6)
            return Resolution(
                None, f"room not found: {candidate.room}", None, [], [],
                [{"area": names[c]} for c in close], len(pool),
            )
        pool = [e for e in pool if e.area_id in area_ids]
    matched_by = "room"
    if candidate.device_alias is not None:
        want = fold(candidate.device_alias)
        hits: list[tuple[EntityInfo, str]] = []
        all_names: dict[str, str] = {}
        for entity in pool:
            names = entity_names(view, entity)
            if want in names:
                hits.append((entity, names[want]))
            for name in names:
                all_names.setdefault(name, entity.entity_id)
        if not hits:
            close = difflib.get_close_matches(want, list(all_names), n=MAX_SUGGESTIONS, cutoff=0.6)
            return Resolution(
                None, f"device not found: {candidate.device_alias}", None, area_ids, [],
                [{"name": c, "entity_id": all_names[c]} for c in close], len(pool),
            )
        pool = [entity for entity, _ in hits]
        matched_by = ",".join(sorted({source for _, source in hits}))
    if len(pool) == 1:
        return Resolution(pool[0], f"resolved to {pool[0].entity_id}", matched_by, area_ids, [], [], 1)
    what = candidate.device_alias or candidate.room or ""
    if not pool:
        return Resolution(None, f"device not found: {what}", None, area_ids, [], [], 0)
    alternatives = [_describe(view, e) for e in pool[:MAX_ALTERNATIVES]]
    listed = ", ".join(str(a["entity_id"]) for a in alternatives)
    return Resolution(None, f"ambiguous: {what} matches {len(pool)} entities ({listed})", matched_by, area_ids, alternatives, [], len(pool))


def normalize(candidate: ModelCandidate, entity: EntityInfo, *, appliance: bool, source_agent: str) -> NormalizedCommand:
    """The trusted command for ``entity``; the risk level comes from ``tables.risk_level``."""
    return NormalizedCommand(
        intent=candidate.intent,
        entity_id=entity.entity_id,
        domain=entity.domain,
        device_class=entity.device_class,
        service=service_for(entity.domain, candidate.intent, appliance=appliance),
        data=service_data(candidate.intent, candidate.params),
        params=dict(candidate.params),
        risk_level=risk_level(entity.domain, entity.device_class, appliance=appliance),
        appliance=appliance,
        source_agent=source_agent,
    )


def evaluate(ctx: GateContext) -> GateResult:
    """Pass when exactly one entity matches; sets ``ctx.entity`` and ``ctx.command``.

    Evidence: ``room``, ``alias``, ``device_type``, ``areas`` (matched area ids), ``entity_id``, ``matched_by``,
    ``confidence`` (1.0 for an exact match, else 0.0), ``candidates`` (pool size after filters), ``alternatives``
    (on ambiguity) and ``suggestions`` (similar names on a miss), ``risk_level`` on success.
    """
    assert ctx.candidate is not None  # the schema gate ran
    found = resolve(ctx.view, ctx.candidate, include_appliances=ctx.include_appliances)
    evidence: dict[str, object] = {
        "room": ctx.candidate.room,
        "alias": ctx.candidate.device_alias,
        "device_type": ctx.candidate.device_type,
        "areas": found.areas,
        "entity_id": found.entity.entity_id if found.entity else None,
        "matched_by": found.matched_by,
        "confidence": 1.0 if found.entity else 0.0,
        "candidates": found.candidates,
        "alternatives": found.alternatives,
        "suggestions": found.suggestions,
    }
    if found.entity is None:
        return GateResult(NAME, False, found.reason, evidence)
    appliance = ctx.include_appliances and found.entity.entity_id in ctx.view.appliance_entity_ids()
    ctx.entity = found.entity
    ctx.command = normalize(ctx.candidate, found.entity, appliance=appliance, source_agent=ctx.source_agent)
    evidence["risk_level"] = ctx.command.risk_level
    evidence["appliance"] = appliance
    return GateResult(NAME, True, found.reason, evidence)
