"""Gate 3, DeviceResolved: room plus alias resolve to exactly one entity.

- The room matches an area's id, name or aliases.
- The alias matches an entity's registry aliases, its name, its device's name, its friendly name or its entity_id
  (what the scheduler and outside agents that know the id pass).
- Matching is exact after :func:`fold` (case, spacing, ``_`` and ``-`` ignored). Nothing is guessed: ambiguity fails
  and lists the alternatives, and :mod:`difflib` similarity only feeds suggestions.
- Candidates are the entities exposed to Assist (``view.should_expose``, which also counts the devices a person
  hid from Assist for the gates alone), plus the appliance-controlled entities when ``ctx.include_appliances``; this
  integration's own entities never.
- ``device_type`` (a domain), when given, narrows the candidates.

On success the gate normalizes: it builds the :class:`NormalizedCommand` with the risk level from
``tables.risk_level`` (the one place risk is assigned) and the service from ``tables.service_for``.
"""

from __future__ import annotations

from dataclasses import dataclass
import difflib
import re

from .actions import ACTIONS, action_data, action_for
from .models import GateContext, GateResult, ModelCandidate, NormalizedCommand
from .tables import risk_level, service_data, service_for
from .view import EntityInfo, HaView

NAME = "device_resolved"
MAX_SUGGESTIONS = 5
MAX_ALTERNATIVES = 20
_SPACES = re.compile(r"[\s_\-]+")


def fold(text: str) -> str:
    """Case-folded, with runs of spaces, ``_`` and ``-`` as one space: "Living_Room" -> "living room"."""
    return _SPACES.sub(" ", text.casefold()).strip()


def entity_names(view: HaView, entity: EntityInfo) -> dict[str, str]:
    """Map each folded name of ``entity`` to the field it came from.

    Fields: ``alias``, ``name``, ``device_name``, ``friendly_name``, ``entity_id``.
    """
    names: dict[str, str] = {}
    state = view.state(entity.entity_id)
    for source, values in (
        ("alias", sorted(entity.aliases)),
        ("name", [entity.name]),
        ("device_name", [entity.device_name]),
        ("friendly_name", [state.friendly_name if state else None]),
        ("entity_id", [entity.entity_id]),
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


@dataclass(frozen=True)
class ResolverIndex:
    """Everything :func:`resolve` needs, folded once: a resolution is then a few dict lookups.

    Build it with :meth:`build`; it is a snapshot, so the shell rebuilds it when the entity, device or area registry,
    exposure, the appliance subentries or a ``friendly_name`` change (or passes none and pays O(entities) per call).

    Attributes:
        include_appliances: the option it was built with.
        entities: candidate entity_id -> record (exposed plus appliance-controlled, minus own).
        names: folded name -> [(entity_id, source)] over the candidates, sorted by entity_id.
        names_of: candidate entity_id -> its folded names.
        by_area: area_id -> sorted candidate entity_ids.
        area_keys: folded area id, name or alias -> area_ids.
        area_names: folded area name -> area name (for suggestions).
        appliances: the appliance-controlled entity ids.

    """

    include_appliances: bool
    entities: dict[str, EntityInfo]
    names: dict[str, list[tuple[str, str]]]
    names_of: dict[str, tuple[str, ...]]
    by_area: dict[str, list[str]]
    area_keys: dict[str, set[str]]
    area_names: dict[str, str]
    appliances: frozenset[str]

    @classmethod
    def build(cls, view: HaView, *, include_appliances: bool = True) -> ResolverIndex:
        """Index ``view`` (O(entities + areas))."""
        entities = {
            eid: e for eid in sorted(candidate_ids(view, include_appliances)) if (e := view.entity(eid)) is not None
        }
        names: dict[str, list[tuple[str, str]]] = {}
        names_of: dict[str, tuple[str, ...]] = {}
        by_area: dict[str, list[str]] = {}
        for eid, entity in entities.items():
            own = entity_names(view, entity)
            names_of[eid] = tuple(own)
            for name, source in own.items():
                names.setdefault(name, []).append((eid, source))
            if entity.area_id is not None:
                by_area.setdefault(entity.area_id, []).append(eid)
        area_keys: dict[str, set[str]] = {}
        area_names: dict[str, str] = {}
        for area in view.areas():
            area_names.setdefault(fold(area.name), area.name)
            for key in (area.area_id, area.name, *area.aliases):
                area_keys.setdefault(fold(key), set()).add(area.area_id)
        appliances = view.appliance_entity_ids() if include_appliances else frozenset()
        return cls(include_appliances, entities, names, names_of, by_area, area_keys, area_names, appliances)


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


def _alias_not_found(idx: ResolverIndex, alias: str, pool: list[str] | None, area_ids: list[str]) -> Resolution:
    """Return the "device not found" resolution for ``alias`` with the closest names in ``pool`` (None: all)."""
    if pool is None:
        names = {name: matches[0][0] for name, matches in idx.names.items()}
    else:
        names = {}
        for eid in pool:
            for name in idx.names_of[eid]:
                names.setdefault(name, eid)
    close = difflib.get_close_matches(fold(alias), list(names), n=MAX_SUGGESTIONS, cutoff=0.6)
    return Resolution(
        None,
        f"device not found: {alias}",
        None,
        area_ids,
        [],
        [{"name": c, "entity_id": names[c]} for c in close],
        len(idx.entities if pool is None else pool),
    )


def resolve(
    view: HaView, candidate: ModelCandidate, *, include_appliances: bool = True, index: ResolverIndex | None = None
) -> Resolution:
    """Resolve ``candidate.room``/``device_alias``/``device_type`` to one entity (see the module docstring).

    ``index`` (built with the same ``include_appliances``) makes this O(matches); without one it is built here.
    """
    idx = index if index is not None else ResolverIndex.build(view, include_appliances=include_appliances)
    pool: list[str] | None = None  # None: every candidate (not materialized on the fast path)
    area_ids: list[str] = []
    if candidate.room is not None:
        area_ids = sorted(idx.area_keys.get(fold(candidate.room), ()))
        if not area_ids:
            close = difflib.get_close_matches(fold(candidate.room), list(idx.area_names), n=MAX_SUGGESTIONS, cutoff=0.6)
            return Resolution(
                None,
                f"room not found: {candidate.room}",
                None,
                [],
                [],
                [{"area": idx.area_names[c]} for c in close],
                0,
            )
        pool = sorted(eid for area_id in area_ids for eid in idx.by_area.get(area_id, ()))
    if candidate.device_type:
        pool = [
            eid for eid in (idx.entities if pool is None else pool) if idx.entities[eid].domain == candidate.device_type
        ]
    matched_by = "room"
    if candidate.device_alias is not None:
        want = fold(candidate.device_alias)
        allowed = None if pool is None else set(pool)
        hits = [(eid, src) for eid, src in idx.names.get(want, ()) if allowed is None or eid in allowed]
        if not hits:
            return _alias_not_found(idx, candidate.device_alias, pool, area_ids)
        pool = sorted({eid for eid, _ in hits})
        matched_by = ",".join(sorted({source for _, source in hits}))
    found = sorted(idx.entities) if pool is None else pool
    if len(found) == 1:
        return Resolution(idx.entities[found[0]], f"resolved to {found[0]}", matched_by, area_ids, [], [], 1)
    what = candidate.device_alias or candidate.room or ""
    if not found:
        return Resolution(None, f"device not found: {what}", None, area_ids, [], [], 0)
    alternatives = [_describe(view, idx.entities[eid]) for eid in found[:MAX_ALTERNATIVES]]
    listed = ", ".join(str(a["entity_id"]) for a in alternatives)
    return Resolution(
        None,
        f"ambiguous: {what} matches {len(found)} entities ({listed})",
        matched_by,
        area_ids,
        alternatives,
        [],
        len(found),
    )


def normalize(
    candidate: ModelCandidate, entity: EntityInfo, *, appliance: bool, source_agent: str
) -> NormalizedCommand:
    """Return the trusted command for ``entity``; the risk level comes from ``tables.risk_level``.

    An allow-listed action's intent (:mod:`.actions`) is that action on the entity's device (``device_id`` from the
    registry), or no service at all when the entity is not its integration's.
    """
    action = action_for(entity, candidate.intent)
    if action is not None:
        service, data = action.service, action_data(action, entity, candidate.params)
    elif candidate.intent in ACTIONS:
        service, data = None, {}
    else:
        service = service_for(entity.domain, candidate.intent, appliance=appliance)
        data = service_data(candidate.intent, candidate.params)
    return NormalizedCommand(
        intent=candidate.intent,
        entity_id=entity.entity_id,
        domain=entity.domain,
        device_class=entity.device_class,
        service=service,
        data=data,
        params=dict(candidate.params),
        risk_level=risk_level(entity.domain, entity.device_class, appliance=appliance),
        appliance=appliance,
        source_agent=source_agent,
        action_domain=action.domain if action is not None else None,
    )


def evaluate(ctx: GateContext) -> GateResult:
    """Pass when exactly one entity matches; sets ``ctx.entity`` and ``ctx.command``.

    Evidence: ``room``, ``alias``, ``device_type``, ``areas`` (matched area ids), ``entity_id``, ``matched_by``,
    ``confidence`` (1.0 for an exact match, else 0.0), ``candidates`` (pool size after filters), ``alternatives``
    (on ambiguity) and ``suggestions`` (similar names on a miss), ``risk_level`` on success.
    """
    assert ctx.candidate is not None  # the schema gate ran
    index = ctx.index if ctx.index is not None and ctx.index.include_appliances == ctx.include_appliances else None
    found = resolve(ctx.view, ctx.candidate, include_appliances=ctx.include_appliances, index=index)
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
    appliances = index.appliances if index is not None else ctx.view.appliance_entity_ids()
    appliance = ctx.include_appliances and found.entity.entity_id in appliances
    # The index is a snapshot for resolution; capabilities are read live.
    entity = ctx.view.entity(found.entity.entity_id) if index is not None else found.entity
    if entity is None:
        evidence["entity_id"] = None
        return GateResult(NAME, False, f"{found.entity.entity_id} is no longer known", evidence)
    ctx.entity = entity
    ctx.command = normalize(ctx.candidate, entity, appliance=appliance, source_agent=ctx.source_agent)
    evidence["risk_level"] = ctx.command.risk_level
    evidence["appliance"] = appliance
    return GateResult(NAME, True, found.reason, evidence)
