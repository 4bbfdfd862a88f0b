"""How the gates see Home Assistant: plain records and one small protocol.

The shell implements :class:`HaView` over the entity, device and area registries, ``hass.states``,
``hass.services.has_service`` and ``async_should_expose(hass, "conversation", entity_id)``; tests use a fake.
Nothing here imports Home Assistant.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import datetime
from typing import Any, Protocol


@dataclass(frozen=True)
class AreaInfo:
    """An area registry entry: ``area_id``, ``name`` and its ``aliases``."""

    area_id: str
    name: str
    aliases: frozenset[str] = frozenset()


@dataclass(frozen=True, kw_only=True)
class EntityInfo:
    """What the gates know about one entity, registry and capabilities together.

    Attributes:
        entity_id: ``domain.object_id``.
        name: the registry name (user's) or the entity's own name, or None.
        aliases: entity registry aliases.
        area_id: the entity's area, else its device's area, else None.
        device_name: the device's ``name_by_user`` or ``name``, or None.
        device_class: the entity's (user-overridden or original) device class, or None.
        supported_features: the ``supported_features`` bitmask (0 when absent).
        supported_color_modes: lights only; e.g. ``{"brightness"}``, ``{"onoff"}``.
        capabilities: range and option attributes: ``min_temp``, ``max_temp``, ``target_temp_step``,
            ``hvac_modes`` (climate); ``min``, ``max``, ``step`` (number, input_number); ``options`` (select,
            input_select).
        polls: True when ``homeassistant.update_entity`` really gets a new value: the entity
            polls its device, or it is computed from HA's states (a template); push-only entities are never refreshed.
        pushes: True for a loaded push-only entity (it does not poll and is not a template): its integration sends
            every change, so its state is current while it is available, however long ago it last changed. False
            when unknown (no entity object, as in a bare view).
        requires_on: entities that must be ``on`` for a command to this one (an appliance's remote-start sensor).
        confirmed_by: ``(entity_id, states)`` another entity shows once a command to this one took effect (a start
            button's program operation sensor), or None.
        idle_unknown: its ``unknown`` state means idle, not unknown (a program select with no program chosen or
            running, as HA's ``home_connect`` shows it), so commands to it are not refused for it.
        value_unit: the unit of its value when its state names none ("A" for an EV charger's current number: HA's
            ``wallbox`` shows its charging current without a unit), from the device's profile; or None.
        platform: the integration that provides it (its entity registry ``platform``), or None.
        device_id: its device in HA's device registry, or None.

    """

    entity_id: str
    name: str | None = None
    aliases: frozenset[str] = frozenset()
    area_id: str | None = None
    device_name: str | None = None
    device_class: str | None = None
    supported_features: int = 0
    supported_color_modes: frozenset[str] = frozenset()
    capabilities: Mapping[str, Any] = field(default_factory=dict)
    polls: bool = False
    pushes: bool = False
    requires_on: tuple[str, ...] = ()
    confirmed_by: tuple[str, tuple[str, ...]] | None = None
    idle_unknown: bool = False
    value_unit: str | None = None
    platform: str | None = None
    device_id: str | None = None

    @property
    def domain(self) -> str:
        """The HA domain (text before the first dot)."""
        return self.entity_id.split(".", 1)[0]


@dataclass(frozen=True, kw_only=True)
class StateInfo:
    """One state: ``state`` string, ``attributes``, and ``last_updated``/``last_reported`` as aware UTC datetimes.

    ``last_reported`` is when the integration last wrote the state, even unchanged (HA >= 2024.3); None when unknown.
    """

    entity_id: str
    state: str
    attributes: Mapping[str, Any] = field(default_factory=dict)
    last_updated: datetime
    last_reported: datetime | None = None

    @property
    def friendly_name(self) -> str | None:
        """The ``friendly_name`` attribute, if a string."""
        name = self.attributes.get("friendly_name")
        return name if isinstance(name, str) else None


class HaView(Protocol):
    """The gates' only window onto HA. Every method is synchronous and side-effect free."""

    def entity_ids(self) -> Iterable[str]:
        """Every entity id HA knows (registry entries and state-only entities)."""
        ...

    def entity(self, entity_id: str) -> EntityInfo | None:
        """Return the entity's record, or None when unknown."""
        ...

    def areas(self) -> Iterable[AreaInfo]:
        """Every area."""
        ...

    def state(self, entity_id: str) -> StateInfo | None:
        """Return the current state, or None."""
        ...

    def has_service(self, domain: str, service: str) -> bool:
        """``hass.services.has_service(domain, service)``."""
        ...

    def should_expose(self, entity_id: str) -> bool:
        """``async_should_expose(hass, "conversation", entity_id)``, or a device hidden from Assist for the gates alone."""
        ...

    def own_entity_ids(self) -> frozenset[str]:
        """Return this integration's own entities: never resolution candidates."""
        ...

    def appliance_entity_ids(self) -> frozenset[str]:
        """Return the controlled entities named in appliance subentries."""
        ...
