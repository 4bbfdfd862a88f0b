"""What a loaded entry owns, and how it is built and started.

:class:`RuntimeData` holds the entry's managers and ``AgenticHemsConfigEntry`` is the entry typed with it.
:func:`async_build_runtime` constructs each manager with its collaborators and loads what it stored;
:func:`async_start_runtime` starts their timers and listeners, each stopped when the entry unloads.
"""

from __future__ import annotations

from collections.abc import Callable, Coroutine, Iterable
from dataclasses import dataclass
from typing import Any

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import Event, EventStateChangedData, HomeAssistant, callback
from homeassistant.helpers import device_registry as dr
from homeassistant.helpers.event import async_track_state_change_event
from homeassistant.util import dt as dt_util

from .assistant.assistant import Assistant
from .cards.websocket import async_entry_unloaded
from .const import (
    BATTERY_APPROVAL,
    CONF_ASK_DAILY,
    CONF_ASK_HOURLY,
    CONF_ASK_PER_MINUTE,
    CONF_GATED_ENTITIES,
    CONF_NOTIFY_SERVICE,
    CONF_POWER_LIMIT_KW,
    CONF_PRICE_ENTITY,
    CONF_PRICE_SOURCE,
    DEFAULT_ASSISTANT_OPTIONS,
    DEFAULT_CONTROL_OPTIONS,
    DOMAIN,
    SOURCE_SENSOR,
)
from .control.assist_exposure import AssistExposureRepairs, async_follow_gated_renames
from .control.manager import ControlManager
from .control.settings import control_settings, controlled_entity_ids
from .coordinator import PriceCoordinator
from .entity import async_migrate_appliance_devices, entry_device_info
from .grid_ha.audit_log import AuditLog
from .grid_ha.manager import GridManager
from .grid_ha.records import GridRecords
from .grid_ha.site import SETPOINT, home_site
from .planning.appliances import configured_appliances
from .planning.home_approval import HomeSetpoints
from .planning.home_config import HomeConfig, home_config
from .planning.home_manager import HomePlanManager
from .planning.manager import PlanManager
from .planning.scheduler import async_track_slots
from .planning.switch_ons import async_track_switch_ons
from .price_sources import source_for_entry
from .scheduling.appliance import Appliance
from .security.ratelimit import RateLimiter


@dataclass
class RuntimeData:
    """Everything a loaded entry owns."""

    coordinator: PriceCoordinator
    planner: PlanManager
    control: ControlManager
    assistant: Assistant
    audit: AuditLog
    grid: GridManager
    device_id: str  # the entry's device in the device registry
    home: HomePlanManager | None = None  # the whole-home plan, with a battery subentry or a PV forecast configured


type AgenticHemsConfigEntry = ConfigEntry[RuntimeData]


def _setpoints(
    hass: HomeAssistant, records: GridRecords, home: HomeConfig, appliances: Iterable[Appliance]
) -> HomeSetpoints:
    """Return the Policy gate's setpoint authority over the batteries', heat pumps' and EV chargers' setpoints.

    Approved requests alone set them in approval mode; the home plan's scheduled commands set them in automatic mode.
    """
    controlled = home.control_entities()
    if home.battery_control == BATTERY_APPROVAL:  # the whole-home plan's EV currents are asked for too
        currents = {a.charger.current_entity for a in appliances if a.charger} if home.active else set()
        return HomeSetpoints(hass, records, controlled | currents)
    return HomeSetpoints(hass, records, frozenset(), automatic=controlled)


async def async_build_runtime(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> RuntimeData:
    """Construct every manager with its collaborators, load what it stored and register the entry's device.

    What is stored: cached prices, plans, device control and traces, runs, the audit chain, grid requests.

    Raises:
        OSError: the audit file cannot be read.

    """
    options = {**DEFAULT_CONTROL_OPTIONS, **DEFAULT_ASSISTANT_OPTIONS, **entry.options}
    coordinator = PriceCoordinator(hass, entry, source_for_entry(hass, entry))
    await coordinator.async_load()
    appliances = configured_appliances(hass, entry)
    planner = PlanManager(
        hass, entry.entry_id, coordinator, appliances, power_limit_kw=float(options[CONF_POWER_LIMIT_KW])
    )
    await planner.async_load()
    audit = AuditLog(hass, entry.entry_id)
    await audit.async_load()
    entry.async_on_unload(audit.async_unload)
    site = home_site(options, appliances)
    records = GridRecords(hass, entry.entry_id, audit, site.entities.get(SETPOINT))
    home = home_config(hass, entry)
    control = ControlManager(
        hass,
        entry.entry_id,
        control_settings(hass, entry, options),
        controlled_entity_ids(appliances.values(), options) | home.control_entities(),
        appliances=tuple(appliances.values()),
        gated=frozenset(options.get(CONF_GATED_ENTITIES) or ()),
        notify_service=options.get(CONF_NOTIFY_SERVICE) or None,
        audit=audit,
        halt=audit.halts,
        setpoints=_setpoints(hass, records, home, appliances.values()),
    )
    await control.async_load()
    limits = (int(options[CONF_ASK_DAILY]), int(options[CONF_ASK_HOURLY]), int(options[CONF_ASK_PER_MINUTE]))
    assistant = Assistant(hass, entry, RateLimiter(*limits), options)
    await assistant.async_load()
    grid = GridManager(hass, entry.entry_id, options, site, coordinator, control=control, audit=audit, records=records)
    await grid.async_load()
    device = dr.async_get(hass).async_get_or_create(config_entry_id=entry.entry_id, **entry_device_info(entry))
    async_migrate_appliance_devices(hass, entry)
    home_plan = (
        HomePlanManager(
            hass, home, coordinator=coordinator, planner=planner, control=control, records=records, grid=grid
        )
        if home.active
        else None
    )
    return RuntimeData(
        home=home_plan,
        coordinator=coordinator,
        planner=planner,
        control=control,
        assistant=assistant,
        audit=audit,
        grid=grid,
        device_id=device.id,
    )


async def async_start_runtime(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> None:
    """Start device control, the slot scheduler and the prices, load the SG Ready heat pumps' block times, and plan.

    A market source (ENTSO-E, Nord Pool) whose first refresh served the cache fetches what is due in the background,
    so the network never blocks start-up; a local sensor or the bundled sample was read by the first refresh.
    """
    runtime = entry.runtime_data
    coordinator, planner = runtime.coordinator, runtime.planner
    # an approved plan's current slot after a restart mid-slot (a slot already issued is never issued twice)
    entry.async_create_background_task(hass, runtime.grid.async_execute_due(dt_util.utcnow()), f"{DOMAIN} grid resume")
    entry.async_on_unload(runtime.control.async_start())
    control = runtime.control
    exposure = AssistExposureRepairs(hass, entry.entry_id, control.view, lambda: control.keeper.settings.rules)
    entry.async_on_unload(exposure.async_start())
    entry.async_on_unload(async_follow_gated_renames(hass, entry.entry_id))
    entry.async_on_unload(lambda: async_entry_unloaded(hass, entry.entry_id))
    entry.async_on_unload(async_track_slots(hass, entry))
    entry.async_on_unload(async_track_switch_ons(hass, planner))
    entry.async_on_unload(coordinator.async_start())

    @callback
    def _prices_updated() -> None:
        entry.async_create_background_task(hass, planner.async_replan_due(), f"{DOMAIN} replan")

    entry.async_on_unload(coordinator.async_add_listener(_prices_updated))
    if entry.data[CONF_PRICE_SOURCE] == SOURCE_SENSOR:

        @callback
        def _sensor_changed(event: Event[EventStateChangedData]) -> None:
            entry.async_create_background_task(hass, coordinator.async_fetch_now(), f"{DOMAIN} sensor")

        entry.async_on_unload(async_track_state_change_event(hass, [entry.data[CONF_PRICE_ENTITY]], _sensor_changed))

    # network: fetch what is still due in the background, unless the first refresh fetched and backs off
    if coordinator.source.daily_publication and coordinator.update_interval is None:
        entry.async_create_background_task(hass, coordinator.async_refresh(), f"{DOMAIN} first refresh")
    await planner.async_replan_due()
    if runtime.home is not None:  # the SG Ready heat pumps' block times, kept across restarts, before the first plan
        await runtime.home.sg_blocks.async_load()
        entry.async_on_unload(runtime.home.sg_blocks.async_flush)
        entry.async_on_unload(runtime.home.async_start())
        entry.async_create_background_task(hass, runtime.home.async_replan(execute=True), f"{DOMAIN} home plan")


def reload_on_change(
    entry: AgenticHemsConfigEntry,
) -> Callable[[HomeAssistant, AgenticHemsConfigEntry], Coroutine[Any, Any, None]]:
    """Return the entry's update listener, which reloads the entry once when it changed.

    A change is one of its data (reconfigure, reauth, the options flow's provider), options or appliance
    subentries. What it runs with is taken now, so call it before any await of the
    set-up: a subentry added meanwhile still triggers a reload.

    The flows only update the entry (``async_update_and_abort``): with an update listener, HA 2026.12 no longer lets
    a flow reload the entry itself (``async_update_reload_and_abort``).
    """
    settings = _settings(entry)

    async def _async_changed(hass: HomeAssistant, updated: AgenticHemsConfigEntry) -> None:
        nonlocal settings
        if (current := _settings(updated)) != settings:
            settings = current  # the options flow updates data and options: one reload for both
            hass.config_entries.async_schedule_reload(updated.entry_id)

    return _async_changed


def _settings(entry: AgenticHemsConfigEntry) -> tuple[object, ...]:
    """Return what the flows change and a loaded entry runs with: data, options and the appliance subentries."""
    return (
        dict(entry.data),
        dict(entry.options),
        {sid: (sub.title, dict(sub.data)) for sid, sub in entry.subentries.items()},
    )
