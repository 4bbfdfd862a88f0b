"""A stand-in for HA core's ``home_connect``, written for scripts/demo only (HA core's needs a Home Connect cloud account).

It is linked into the demo's ``custom_components/home_connect``, which HA lets replace the built-in integration. It
has the shapes of HA core 2026.10's home_connect: one dishwasher device (identifier ``("home_connect", haId)``), a
"Selected program" select whose options are program keys, a "Remote start" binary sensor, an "Operation state" enum
sensor, a "Start in relative" number (s) and the actions ``set_program_and_options`` (``device_id``, ``affects_to``,
``program``, ``b_s_h_common_option_start_in_relative``; no other option) and ``start_selected_program``. No code of
HA core's is copied; the appliance is :class:`Dishwasher`, which moves its operation state as a real one would:
``delayedstart`` with a start-in delay, then ``run`` when the delay runs out, and ``finished`` after :data:`RUN_TIME`.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from datetime import datetime, timedelta
import logging
from typing import Any

from homeassistant.config_entries import ConfigEntry, ConfigEntryState
from homeassistant.const import Platform
from homeassistant.core import HomeAssistant, ServiceCall, callback
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers import config_validation as cv, device_registry as dr
from homeassistant.helpers.event import async_track_point_in_utc_time
from homeassistant.util import dt as dt_util

try:  # HA 2026.9+ validates with probatio (voluptuous' API); older releases with voluptuous
    import probatio as vol  # type: ignore[import-not-found, unused-ignore]
except ImportError:
    import voluptuous as vol  # type: ignore[no-redef, unused-ignore]

DOMAIN = "home_connect"
LOGGER = logging.getLogger(__name__)
PLATFORMS = [Platform.BINARY_SENSOR, Platform.NUMBER, Platform.SELECT, Platform.SENSOR]
CONFIG_SCHEMA = cv.config_entry_only_config_schema(DOMAIN)

HA_ID = "SIEMENS-SN65ZX49CE-68A40E000001"  # a Home Connect appliance id: brand, model, MAC-based serial
PROGRAMS = [
    "dishcare_dishwasher_program_auto_2",
    "dishcare_dishwasher_program_eco_50",
    "dishcare_dishwasher_program_intensiv_70",
    "dishcare_dishwasher_program_quick_45",
]
OPERATION_STATES = [
    "inactive",
    "ready",
    "delayedstart",
    "run",
    "pause",
    "actionrequired",
    "finished",
    "error",
    "aborting",
]
START_IN = "b_s_h_common_option_start_in_relative"  # of core's options, the only one the stand-in takes (s)
MAX_START_IN_S = 86_400
RUN_TIME = timedelta(hours=2)  # every program of the stand-in runs this long, then shows "finished"
DELAY = vol.All(int, vol.Range(min=0))


def _program_or_option(data: dict[str, Any]) -> dict[str, Any]:
    if "program" not in data and START_IN not in data:
        raise ServiceValidationError("set_program_and_options needs a program or at least one option")
    return data


SET_PROGRAM_AND_OPTIONS = vol.All(
    vol.Schema(
        {
            vol.Required("device_id"): str,
            vol.Required("affects_to"): vol.In(["active_program", "selected_program"]),
            vol.Optional("program"): vol.In(PROGRAMS),
            vol.Optional(START_IN): DELAY,
        }
    ),
    _program_or_option,
)
START_SELECTED_PROGRAM = vol.Schema({vol.Required("device_id"): str, vol.Optional(START_IN): DELAY})


@dataclass
class Dishwasher:
    """The simulated appliance: its selected program, operation state and start-in option (remote start always on).

    Entities subscribe with :meth:`listen` and are told after every change.
    """

    hass: HomeAssistant
    selected_program: str = PROGRAMS[0]
    operation: str = "ready"
    start_in_s: int = 0
    listeners: list[Callable[[], None]] = field(default_factory=list)
    timer: Callable[[], None] | None = None

    def listen(self, update: Callable[[], None]) -> Callable[[], None]:
        """Call ``update`` after each change; returns the function that stops it."""
        self.listeners.append(update)
        return lambda: self.listeners.remove(update)

    def changed(self) -> None:
        """Tell the entities."""
        for update in list(self.listeners):
            update()

    def start(self, program: str | None, start_in_s: int | None) -> None:
        """Start ``program`` (None: the selected one) as the appliance does.

        ``start_in_s``: the delay in s (0: now; None: the selected program's start-in option).

        Raises HomeAssistantError while a program is already started.
        """
        if self.operation in ("delayedstart", "run", "pause"):
            raise HomeAssistantError(f"The Siemens dishwasher (stand-in) is busy: {self.operation}")
        self.selected_program = program or self.selected_program
        self.start_in_s = self.start_in_s if start_in_s is None else start_in_s
        if self.start_in_s > 0:
            self.operation = "delayedstart"
            at = dt_util.utcnow() + timedelta(seconds=self.start_in_s)
            self.timer = async_track_point_in_utc_time(self.hass, self._runs, at)
            LOGGER.info("Demo stand-in dishwasher: %s starts by itself at %s", self.selected_program, at.isoformat())
            self.changed()
        else:
            self._runs(dt_util.utcnow())

    @callback
    def _runs(self, now: datetime) -> None:
        """Run the program for RUN_TIME: its delay ran out, or there was none."""
        self.operation, self.start_in_s = "run", 0
        self.timer = async_track_point_in_utc_time(self.hass, self._finished, now + RUN_TIME)
        self.changed()

    @callback
    def _finished(self, _now: datetime) -> None:
        """End the program."""
        self.timer, self.operation = None, "finished"
        self.changed()

    def stop(self) -> None:
        """Forget a pending delayed start (the entry unloads)."""
        if self.timer is not None:
            self.timer()
            self.timer = None


type StandInConfigEntry = ConfigEntry[Dishwasher]


def _dishwasher(hass: HomeAssistant, device_id: str) -> Dishwasher:
    """Return the appliance of ``device_id``; raise ServiceValidationError for any other device."""
    device = dr.async_get(hass).async_get(device_id)
    if device is None or (DOMAIN, HA_ID) not in device.identifiers:
        raise ServiceValidationError(f"{device_id} is not the stand-in's Home Connect appliance")
    entry = hass.config_entries.async_entry_for_domain_unique_id(DOMAIN, HA_ID)  # the config flow's unique id
    if entry is None or entry.state is not ConfigEntryState.LOADED:
        raise ServiceValidationError(f"{device_id}: its Home Connect entry is not loaded")
    dishwasher: Dishwasher = entry.runtime_data
    return dishwasher


async def _set_program_and_options(call: ServiceCall) -> None:
    dishwasher = _dishwasher(call.hass, call.data["device_id"])
    program = call.data.get("program")
    if call.data["affects_to"] == "active_program":  # the options given, else none: the program starts now
        dishwasher.start(program, call.data.get(START_IN, 0))
        return
    dishwasher.selected_program = program or dishwasher.selected_program
    dishwasher.start_in_s = call.data.get(START_IN, dishwasher.start_in_s)
    dishwasher.changed()


async def _start_selected_program(call: ServiceCall) -> None:
    _dishwasher(call.hass, call.data["device_id"]).start(None, call.data.get(START_IN))


async def async_setup(hass: HomeAssistant, config: dict[str, Any]) -> bool:
    """Register the two program actions (as HA core's home_connect does, in async_setup)."""
    hass.services.async_register(
        DOMAIN, "set_program_and_options", _set_program_and_options, schema=SET_PROGRAM_AND_OPTIONS
    )
    hass.services.async_register(
        DOMAIN, "start_selected_program", _start_selected_program, schema=START_SELECTED_PROGRAM
    )
    return True


async def async_setup_entry(hass: HomeAssistant, entry: StandInConfigEntry) -> bool:
    """Set up the dishwasher's device and entities."""
    LOGGER.warning(
        "home_connect here is agentic_hems' demo stand-in (scripts/hems_demo/home_connect_stand_in), "
        "not Home Assistant's Home Connect integration: it simulates one Siemens dishwasher"
    )
    entry.runtime_data = Dishwasher(hass)
    dr.async_get(hass).async_get_or_create(
        config_entry_id=entry.entry_id,
        identifiers={(DOMAIN, HA_ID)},
        name="Siemens dishwasher",
        manufacturer="Siemens",
        model="SN65ZX49CE (demo stand-in)",
    )
    await hass.config_entries.async_forward_entry_setups(entry, PLATFORMS)
    return True


async def async_unload_entry(hass: HomeAssistant, entry: StandInConfigEntry) -> bool:
    """Unload the entities and forget a pending delayed start."""
    entry.runtime_data.stop()
    return await hass.config_entries.async_unload_platforms(entry, PLATFORMS)
