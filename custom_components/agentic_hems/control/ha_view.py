"""The gates' view of Home Assistant and the actuator Execution calls through.

:class:`HassView` implements :class:`.gates.view.HaView` over the entity, device and area registries, ``hass.states``,
``hass.services`` and Assist exposure. :class:`HassActuator` implements :class:`.gates.execution.Actuator`: a blocking
service call under the caller's context, then a wait for the expected state.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable, Iterable, Mapping
import contextlib
from datetime import datetime
from typing import Any

from homeassistant.components.homeassistant.const import DATA_EXPOSED_ENTITIES
from homeassistant.components.homeassistant.exposed_entities import async_should_expose
from homeassistant.const import ATTR_ENTITY_ID, ATTR_SUPPORTED_FEATURES
from homeassistant.core import Context, Event, EventStateChangedData, HomeAssistant, State, callback
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import area_registry as ar, device_registry as dr, entity_registry as er
from homeassistant.helpers.entity import Entity
from homeassistant.helpers.entity_platform import async_get_platforms
from homeassistant.helpers.event import async_call_later, async_track_state_change_event
from homeassistant.helpers.update_coordinator import CoordinatorEntity
from homeassistant.util import dt as dt_util

from ..const import DOMAIN
from ..gates.actions import ACTION_DOMAINS
from ..gates.execution import ActuationError, state_matches
from ..gates.view import AreaInfo, EntityInfo, StateInfo
from ..validation import vol

CAPABILITY_ATTRIBUTES = ("min_temp", "max_temp", "target_temp_step", "hvac_modes", "min", "max", "step", "options")
ASSISTANT = "conversation"
REFRESHABLE_PLATFORMS = frozenset({"template"})


def state_info(state: State) -> StateInfo:
    """Return a :class:`StateInfo` of an HA state (times are aware UTC)."""
    return StateInfo(
        entity_id=state.entity_id,
        state=state.state,
        attributes=dict(state.attributes),
        last_updated=state.last_updated,
        last_reported=state.last_reported,
    )


class HassView:
    """Live registries and states; each call reads HA now (the resolver index caches what it needs).

    ``appliance_entity_ids`` returns the controlled entities of the site's appliance subentries; ``gated`` are the
    entities hidden from Assist that the gates may still target (the options' "Devices only Agentic HEMS controls").
    ``interlocks``, ``readbacks`` and ``idle_unknown`` (:mod:`..scheduling.program`) become the entities'
    ``requires_on``, ``confirmed_by`` and ``idle_unknown``; ``value_units`` (an EV charger's current entity and its
    profile's unit) their ``value_unit``.
    """

    def __init__(
        self,
        hass: HomeAssistant,
        appliance_entity_ids: Callable[[], frozenset[str]],
        gated: frozenset[str] = frozenset(),
        *,
        interlocks: Mapping[str, tuple[str, ...]] | None = None,
        readbacks: Mapping[str, tuple[str, tuple[str, ...]]] | None = None,
        idle_unknown: frozenset[str] = frozenset(),
        value_units: Mapping[str, str] | None = None,
    ) -> None:
        """Read HA's entity and device registries; ``appliance_entity_ids`` is asked on each use."""
        self.hass = hass
        self._appliances = appliance_entity_ids
        self.gated = gated
        self.interlocks = dict(interlocks or {})
        self.readbacks = dict(readbacks or {})
        self.idle_unknown = idle_unknown
        self.value_units = dict(value_units or {})
        self._entities = er.async_get(hass)
        self._devices = dr.async_get(hass)
        self._areas = ar.async_get(hass)

    def entity_ids(self) -> Iterable[str]:
        """States plus enabled registry entries."""
        ids = set(self.hass.states.async_entity_ids())
        ids.update(e.entity_id for e in self._entities.entities.values() if e.disabled_by is None)
        return ids

    def _entity_object(self, entity_id: str) -> Entity | None:
        """Return the loaded entity object of ``entity_id`` (of any integration), or None.

        HA documents no interface to another integration's entity objects, and only they tell whether an entity
        polls. The public helper ``entity_platform.async_get_platforms`` (HA's reload and template use it) gives an
        integration's platforms; the integration is the registry entry's, or for an entity without one each that set
        up a platform of its domain (``hass.config.components`` lists them as ``<integration>.<domain>``).
        """
        domain = entity_id.split(".", 1)[0]
        if (entry := self._entities.async_get(entity_id)) is not None:
            integrations: Iterable[str] = (entry.platform,)
        else:
            integrations = {c.split(".", 1)[0] for c in self.hass.config.components if c.endswith(f".{domain}")}
        for integration in integrations:
            for platform in async_get_platforms(self.hass, integration):
                if platform.domain == domain and (entity := platform.entities.get(entity_id)) is not None:
                    return entity
        return None

    def _update_mode(self, entity_id: str) -> tuple[bool, bool]:
        """Return ``(polls, pushes)`` for a loaded entity; ``(False, False)`` when HA has no entity object for it.

        It polls when ``homeassistant.update_entity`` really gets a new value: the entity polls its device, its
        coordinator polls it on an interval (``should_poll`` is False, but the update asks the coordinator again), or it
        is a template entity (re-rendered from HA's current states). Otherwise it is push-only (an update would only
        rewrite its cached state, and its integration sends every change), unless its state is assumed (an RF or IR
        device, an optimistic MQTT entity): nothing reports its changes, so it is neither.
        """
        if (entity := self._entity_object(entity_id)) is None:
            return False, False
        platform = entity.platform.platform_name if entity.platform is not None else None
        coordinated = isinstance(entity, CoordinatorEntity) and entity.coordinator.update_interval is not None
        polls = bool(entity.should_poll or coordinated or platform in REFRESHABLE_PLATFORMS)
        return polls, not polls and not entity.assumed_state

    def entity(self, entity_id: str) -> EntityInfo | None:
        """Registry and state together; None when HA knows neither."""
        entry = self._entities.async_get(entity_id)
        state = self.hass.states.get(entity_id)
        if entry is None and state is None:
            return None
        polls, pushes = self._update_mode(entity_id)
        attributes: Mapping[str, Any] = state.attributes if state is not None else {}
        name = aliases = area_id = device_name = device_class = None
        features = attributes.get(ATTR_SUPPORTED_FEATURES)
        color_modes = attributes.get("supported_color_modes")
        capabilities = {k: attributes[k] for k in CAPABILITY_ATTRIBUTES if k in attributes}
        if entry is not None:
            name = entry.name or entry.original_name
            # HA 2026.4 and newer: aliases may hold er.COMPUTED_NAME (the entity's full name); HA resolves them
            aliases = frozenset(alias for alias in er.async_get_entity_aliases(self.hass, entry) if alias)
            area_id = entry.area_id
            device_class = entry.device_class or entry.original_device_class
            if features is None:
                features = entry.supported_features
            registered = dict(entry.capabilities or {})
            color_modes = color_modes or registered.get("supported_color_modes")
            capabilities = {**{k: registered[k] for k in CAPABILITY_ATTRIBUTES if k in registered}, **capabilities}
            if entry.device_id and (device := self._devices.async_get(entry.device_id)) is not None:
                device_name = device.name_by_user or device.name
                area_id = area_id or device.area_id
        return EntityInfo(
            entity_id=entity_id,
            name=name,
            aliases=aliases or frozenset(),
            area_id=area_id,
            device_name=device_name,
            device_class=device_class or attributes.get("device_class"),
            supported_features=int(features or 0),
            supported_color_modes=frozenset(str(m) for m in color_modes or ()),
            capabilities=capabilities,
            polls=polls,
            pushes=pushes,
            requires_on=self.interlocks.get(entity_id, ()),
            confirmed_by=self.readbacks.get(entity_id),
            idle_unknown=entity_id in self.idle_unknown,
            value_unit=self.value_units.get(entity_id),
            platform=entry.platform if entry is not None else None,
            device_id=entry.device_id if entry is not None else None,
        )

    def areas(self) -> Iterable[AreaInfo]:
        """Return the area registry's areas."""
        return [AreaInfo(a.id, a.name, frozenset(a.aliases)) for a in self._areas.async_list_areas()]

    def state(self, entity_id: str) -> StateInfo | None:
        """Return the current state, or None."""
        state = self.hass.states.get(entity_id)
        return state_info(state) if state is not None else None

    def has_service(self, domain: str, service: str) -> bool:
        """``hass.services.has_service``."""
        return self.hass.services.has_service(domain, service)

    def should_expose(self, entity_id: str) -> bool:
        """Exposed to Assist (False while HA's exposure settings are not loaded), or one of the ``gated`` entities."""
        if entity_id in self.gated:
            return True
        if DATA_EXPOSED_ENTITIES not in self.hass.data:
            return False
        return async_should_expose(self.hass, ASSISTANT, entity_id)

    def own_entity_ids(self) -> frozenset[str]:
        """Every entity of this integration (all entries)."""
        return frozenset(e.entity_id for e in self._entities.entities.values() if e.platform == DOMAIN)

    def appliance_entity_ids(self) -> frozenset[str]:
        """Return the controlled entities named in this site's appliance subentries."""
        return self._appliances()


class HassActuator:
    """``hass.services.async_call(..., blocking=True, context=context)`` and a wait for the expected state."""

    def __init__(self, hass: HomeAssistant, context: Context) -> None:
        """Call services as ``context`` (the user the command runs as)."""
        self.hass = hass
        self.context = context

    async def async_call(self, domain: str, service: str, entity_id: str, data: Mapping[str, Any]) -> None:
        """Call the service; HA and validation errors become :class:`ActuationError`.

        An allow-listed integration action (``gates.actions``) targets the device in its data, not ``entity_id``.
        """
        target = {} if domain in ACTION_DOMAINS else {ATTR_ENTITY_ID: entity_id}
        try:
            await self.hass.services.async_call(
                domain, service, {**data, **target}, blocking=True, context=self.context
            )
        except (HomeAssistantError, vol.Invalid, ValueError) as err:
            raise ActuationError(str(err) or type(err).__name__) from err

    async def async_wait_for(self, entity_id: str, expected: Mapping[str, Any], timeout_s: float) -> StateInfo | None:
        """Wait for the first matching state (the current one counts), or None after ``timeout_s``."""
        found = await async_wait_state(
            self.hass, entity_id, lambda state: state_matches(expected, state_info(state)), timeout_s
        )
        return None if found is None else state_info(found)


async def async_wait_state(
    hass: HomeAssistant, entity_id: str, matches: Callable[[State], bool], timeout_s: float
) -> State | None:
    """Wait for the first state of ``entity_id`` that ``matches`` (the current one counts), None after ``timeout_s``."""
    current = hass.states.get(entity_id)
    if current is not None and matches(current):
        return current
    done: asyncio.Future[State | None] = hass.loop.create_future()

    @callback
    def _changed(event: Event[EventStateChangedData]) -> None:
        new = event.data["new_state"]
        if new is not None and not done.done() and matches(new):
            done.set_result(new)

    @callback
    def _timeout(_: datetime) -> None:
        if not done.done():
            done.set_result(None)

    unsubs = (
        async_track_state_change_event(hass, [entity_id], _changed),
        async_call_later(hass, timeout_s, _timeout),  # HA's timer: follows HA time, also in tests
    )
    try:
        return await done
    finally:
        for unsub in unsubs:
            unsub()


async def async_refresh(hass: HomeAssistant, entity_id: str) -> datetime:
    """Ask a polling entity for a fresh state (``homeassistant.update_entity``); returns when it was asked."""
    asked = dt_util.utcnow()
    with contextlib.suppress(HomeAssistantError):  # Freshness then fails: nothing was reported after ``asked``
        await hass.services.async_call("homeassistant", "update_entity", {ATTR_ENTITY_ID: entity_id}, blocking=True)
    return asked
