"""Agentic HEMS: day-ahead prices to optimal appliance plans (DESIGN.md; issue 2)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
import functools
from datetime import datetime, timedelta
from typing import Any

from homeassistant.config_entries import ConfigEntry
from homeassistant.core import Context, Event, EventStateChangedData, HomeAssistant, callback
from homeassistant.helpers import config_validation as cv, device_registry as dr, issue_registry as ir
from homeassistant.helpers.event import async_track_state_change_event, async_track_time_change
from homeassistant.helpers.storage import Store
from homeassistant.helpers.typing import ConfigType
from homeassistant.loader import async_get_integration
from homeassistant.util import dt as dt_util

from .const import (
    CONF_ASK_DAILY,
    CONF_ASK_HOURLY,
    CONF_ASK_PER_MINUTE,
    CONF_CONFIRM_MINUTES,
    CONF_INCLUDE_APPLIANCES,
    CONF_NOTIFY_SERVICE,
    CONF_POLICY_RULES,
    CONF_POWER_LIMIT_KW,
    CONF_PRICE_ENTITY,
    CONF_PRICE_SOURCE,
    CONF_WAIT_S,
    DEFAULT_ASSISTANT_OPTIONS,
    DEFAULT_CONTROL_OPTIONS,
    DOMAIN,
    LOGGER,
    MEASUREMENT_OPTIONS,
    PLATFORMS,
    SOURCE_SCHEDULER,
    SOURCE_SENSOR,
    STORAGE_VERSION,
)
from .assistant import Assistant
from .cards import async_register_frontend
from .audit_log import AuditLog
from .control import ControlManager
from .coordinator import PriceCoordinator
from .entity import entry_device_info
from .gates.keeper import Settings
from .gates.models import PolicyAction
from .grid.contracts import generate_audit_record
from .gates.models import SOURCE_GRID
from .grid_manager import GridManager
from .gates.tables import MAX_RISK, PolicyRule, effective_policy, validate_rules
from .planner import PlanManager
from .price_sources import source_for_entry
from .scheduling.appliance import Appliance
from .services import async_setup_services
from .security.ratelimit import RateLimiter
from .services_assistant import async_setup_assistant_services
from .services_control import async_setup_control_services
from .services_grid import async_setup_grid_services
from .validation import vol
from .websocket import async_entry_unloaded, async_setup_websocket

CONFIG_SCHEMA = cv.config_entry_only_config_schema(DOMAIN)


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


type AgenticHemsConfigEntry = ConfigEntry[RuntimeData]


async def async_setup(hass: HomeAssistant, config: ConfigType) -> bool:
    """Register the service actions once for all entries."""
    async_setup_services(hass)
    async_setup_control_services(hass)
    async_setup_assistant_services(hass)
    async_setup_grid_services(hass)
    async_setup_websocket(hass)
    integration = await async_get_integration(hass, DOMAIN)
    await async_register_frontend(hass, str(integration.version))
    return True


async def async_setup_entry(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> bool:
    """Load cached prices and plans, plan, and start the entities.

    A market source (ENTSO-E, Nord Pool) with a cached price for now fetches in the background, so the network never
    blocks start-up; without one, ``coordinator.async_load`` fetches first and fails the set-up when that fails
    (``ConfigEntryNotReady``). A local sensor or the bundled sample is read before the entities start (the sample
    parses its documents in an executor).
    """
    settings = _settings(entry)  # taken before any await: a subentry added meanwhile still triggers a reload

    async def _async_settings_changed(hass: HomeAssistant, updated: ConfigEntry) -> None:
        """Data (reconfigure, reauth, the options flow's provider), options or appliances changed: reload, once.

        The flows only update the entry (``async_update_and_abort``): with an update listener, HA 2026.12 no longer
        lets a flow reload the entry itself (``async_update_reload_and_abort``)."""
        nonlocal settings
        if (current := _settings(updated)) != settings:
            settings = current  # the options flow updates data and options: one reload for both
            hass.config_entries.async_schedule_reload(updated.entry_id)

    entry.async_on_unload(entry.add_update_listener(_async_settings_changed))
    coordinator = PriceCoordinator(hass, entry, source_for_entry(hass, entry))
    await coordinator.async_load()
    appliances = _appliances(hass, entry)
    planner = PlanManager(
        hass, entry.entry_id, coordinator, appliances, power_limit_kw=float(entry.options[CONF_POWER_LIMIT_KW])
    )
    await planner.async_load()
    options = {**DEFAULT_CONTROL_OPTIONS, **DEFAULT_ASSISTANT_OPTIONS, **entry.options}
    rules = _policy(hass, entry, options[CONF_POLICY_RULES])
    control = ControlManager(
        hass,
        entry.entry_id,
        Settings(
            wait_s=float(options[CONF_WAIT_S]),
            confirm_ttl=timedelta(minutes=float(options[CONF_CONFIRM_MINUTES])),
            rules=rules,
            include_appliances=bool(options[CONF_INCLUDE_APPLIANCES]),
        ),
        # the site's controlled entities: the appliances' and the battery setpoint the grid plans set
        frozenset(a.entity_id for a in appliances.values()) | frozenset(
            filter(None, [options.get(MEASUREMENT_OPTIONS["battery.setpoint"])])
        ),
        notify_service=options.get(CONF_NOTIFY_SERVICE) or None,
    )
    await control.async_load()
    control.appliances = lambda: tuple(planner.appliances.values())  # names the request may use (intent binding)
    assistant = Assistant(
        hass,
        entry,
        RateLimiter(int(options[CONF_ASK_DAILY]), int(options[CONF_ASK_HOURLY]), int(options[CONF_ASK_PER_MINUTE])),
        options,
    )
    await assistant.async_load()
    audit = AuditLog(hass, entry.entry_id)
    await audit.async_load()
    entry.async_on_unload(audit.async_unload)
    control.audit = functools.partial(generate_audit_record, audit)
    control.keeper.halt = lambda source: (
        "the audit chain is broken" if source == SOURCE_GRID and audit.broken else None
    )
    grid = GridManager(hass, entry.entry_id, options, appliances, coordinator, control, audit)
    await grid.async_load()
    control.keeper.setpoints = grid  # the battery setpoint: approved requests only (the Policy gate)
    # an approved plan's current slot after a restart mid-slot (a slot already issued is never issued twice)
    entry.async_create_background_task(hass, grid.async_execute_due(dt_util.utcnow()), f"{DOMAIN} grid resume")
    device = dr.async_get(hass).async_get_or_create(config_entry_id=entry.entry_id, **entry_device_info(entry))
    entry.runtime_data = RuntimeData(
        coordinator=coordinator, planner=planner, control=control, assistant=assistant, audit=audit, grid=grid,
        device_id=device.id,
    )
    entry.async_on_unload(control.async_start())
    entry.async_on_unload(lambda: async_entry_unloaded(hass, entry.entry_id))
    entry.async_on_unload(
        async_track_time_change(
            hass, _scheduler(hass, entry, planner, control, grid), minute=range(0, 60, 15), second=0
        )
    )

    if (cached := coordinator.cached_data()) is not None:
        coordinator.async_set_updated_data(cached)
    entry.async_on_unload(coordinator.async_start())

    @callback
    def _prices_updated() -> None:
        entry.async_create_background_task(hass, planner.async_replan_due(), f"{DOMAIN} replan")

    entry.async_on_unload(coordinator.async_add_listener(_prices_updated))
    if entry.data[CONF_PRICE_SOURCE] == SOURCE_SENSOR:

        @callback
        def _sensor_changed(event: Event[EventStateChangedData]) -> None:
            entry.async_create_background_task(hass, coordinator.async_fetch_now(), f"{DOMAIN} sensor")

        entry.async_on_unload(
            async_track_state_change_event(hass, [entry.data[CONF_PRICE_ENTITY]], _sensor_changed)
        )

    if coordinator.source.daily_publication:  # network: fetch what is still due in the background
        entry.async_create_background_task(hass, coordinator.async_refresh(), f"{DOMAIN} first refresh")
    else:  # a local sensor or the bundled sample: cheap, so entities start with prices
        await coordinator.async_refresh()
    await planner.async_replan_due()
    await hass.config_entries.async_forward_entry_setups(entry, PLATFORMS)
    return True


def _scheduler(
    hass: HomeAssistant, entry: AgenticHemsConfigEntry, planner: PlanManager, control: ControlManager,
    grid: GridManager,
) -> Callable[[datetime], None]:
    """At each slot boundary, issue every stored plan's start or stop through the gates (source ``scheduler``),
    then replan what has ended (an ended plan waits for its stop, see :class:`.planner.PlanManager`); and issue each
    approved grid plan's slot command (source ``grid``)."""

    @callback
    def _boundary(now: datetime) -> None:
        moment = dt_util.as_utc(now).replace(second=0, microsecond=0)
        grid.expire_requests()
        entry.async_create_task(hass, grid.async_execute_due(moment), f"{DOMAIN} grid slot")
        for appliance_id, intent in planner.transitions_at(moment):
            appliance = planner.appliances[appliance_id]
            entry.async_create_task(
                hass,
                control.async_evaluate(
                    source_agent=SOURCE_SCHEDULER,
                    raw_input=f"{intent} {appliance.name} (plan slot {moment.isoformat()})",
                    candidate={"intent": intent, "device_alias": appliance.entity_id},
                    context=Context(),
                    slot_start=moment,
                ),
                f"{DOMAIN} scheduler {appliance.name}",
            )
        entry.async_create_background_task(hass, planner.async_replan_due(), f"{DOMAIN} replan")

    return _boundary


def _policy(hass: HomeAssistant, entry: ConfigEntry, raw: Any) -> tuple[PolicyRule, ...]:
    """The effective policy. Rules are validated when saved; stored rules that no longer validate (hand-edited)
    fail closed: everything is denied, with a repair issue, rather than silently dropping a user's deny."""
    issue_id = f"policy_invalid_{entry.entry_id}"
    try:
        rules = effective_policy(validate_rules(raw if isinstance(raw, list) else [raw]))
    except vol.Invalid as err:
        LOGGER.error("Stored policy rules are invalid, denying every command: %s", err)
        ir.async_create_issue(
            hass, DOMAIN, issue_id, is_fixable=False, severity=ir.IssueSeverity.ERROR,
            translation_key="policy_invalid", translation_placeholders={"error": str(err)},
        )
        return (PolicyRule("*", "*", 0, MAX_RISK, PolicyAction.DENY, "user"),)
    ir.async_delete_issue(hass, DOMAIN, issue_id)
    return rules


def _appliances(hass: HomeAssistant, entry: ConfigEntry) -> dict[str, Appliance]:
    """The entry's appliances; a malformed subentry is skipped with a repair issue instead of failing the entry."""
    appliances: dict[str, Appliance] = {}
    for subentry_id, subentry in entry.subentries.items():
        issue_id = f"appliance_invalid_{subentry_id}"
        try:
            appliances[subentry_id] = Appliance.from_config(subentry_id, dict(subentry.data))
        except (KeyError, TypeError, ValueError) as err:
            LOGGER.warning("Skipping appliance %s: %s", subentry.title, err)
            ir.async_create_issue(
                hass,
                DOMAIN,
                issue_id,
                is_fixable=False,
                is_persistent=True,
                severity=ir.IssueSeverity.ERROR,
                translation_key="appliance_invalid",
                translation_placeholders={"appliance": subentry.title, "error": str(err)},
            )
        else:
            ir.async_delete_issue(hass, DOMAIN, issue_id)
    return appliances


def _settings(entry: ConfigEntry) -> tuple[object, ...]:
    """What the flows change and a loaded entry runs with: data, options and the appliance subentries."""
    return (
        dict(entry.data),
        dict(entry.options),
        {sid: (sub.title, dict(sub.data)) for sid, sub in entry.subentries.items()},
    )


async def async_unload_entry(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> bool:
    """Unload the platforms and write the traces; timers and listeners go with ``async_on_unload``."""
    if unloaded := await hass.config_entries.async_unload_platforms(entry, PLATFORMS):
        await entry.runtime_data.control.async_flush()
        await entry.runtime_data.assistant.async_flush()
    return unloaded


async def async_remove_entry(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> None:
    """Delete what the entry stored (cached prices, plans, device-control state, traces, runs and the grid toolkit's
    requests); its audit log and the log's anchor are kept as evidence."""
    for name in ("prices", "plans", "control", "traces", "runs", "grid"):
        await Store(hass, STORAGE_VERSION, f"{DOMAIN}.{entry.entry_id}.{name}").async_remove()


async def async_migrate_entry(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> bool:
    """Migrate older entries; version 1.1 is the first, so only newer (downgrades) are refused."""
    if entry.version > 1:
        LOGGER.error("Cannot downgrade %s from version %s.%s", entry.title, entry.version, entry.minor_version)
        return False
    return True
