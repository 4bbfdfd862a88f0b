"""The automation trigger ``battery_mode_changed``: a home battery's planned mode changes at a slot boundary."""

from __future__ import annotations

from datetime import datetime
from typing import Any, ClassVar

from homeassistant.const import CONF_OPTIONS
from homeassistant.core import CALLBACK_TYPE, HomeAssistant, callback
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers.trigger import Trigger, TriggerActionRunner, TriggerConfig
from homeassistant.helpers.typing import ConfigType
from homeassistant.util import dt as dt_util

from .automation_rules import (
    ENTRY_OPTION,
    BatteryMode,
    async_validate_automation,
    battery_modes,
    loaded_runtime,
    price_entry_id,
)
from .prices import SLOT, floor_slot
from .scheduling.home_explain import MODES
from .validation import vol

CONF_BATTERY = "battery"
CONF_TO = "to"

BATTERY_MODE_SCHEMA = vol.Schema(
    {
        vol.Optional(CONF_OPTIONS, default=dict): {
            **ENTRY_OPTION,
            vol.Optional(CONF_BATTERY): vol.All(cv.string, vol.Length(min=1)),
            vol.Optional(CONF_TO): vol.In(MODES),
        }
    }
)


class BatteryModeTrigger(Trigger):
    """A home battery's planned mode (charge, discharge, idle) changes at a slot boundary.

    It follows the entry's whole-home plan manager (its change listeners), and acts once per slot: on the first plan
    made in that slot. The manager replans at each boundary and announces the plan after it is made, so the trigger
    reads the plan in force at the boundary after that boundary's replan, whichever timer runs first; a replan later
    in the slot does not fire it again. It compares each battery's mode in the new slot with the mode it remembered
    for the slot before (per battery, from the plan then in force; at attach time, from the current plan) and fires
    for each battery whose mode changed (to ``to``, when given). A slot without a plan (no prices, no solution)
    fires nothing and keeps what it remembered.
    """

    schema: ClassVar[Any] = BATTERY_MODE_SCHEMA
    _run_action: TriggerActionRunner

    @classmethod
    async def async_validate_config(cls, hass: HomeAssistant, config: ConfigType) -> ConfigType:
        """Validate ``options``; raises ``vol.Invalid`` with a translated text naming the field."""
        return await async_validate_automation(hass, cls.schema, config, has_options=False)

    def __init__(self, hass: HomeAssistant, config: TriggerConfig) -> None:
        """Keep the options."""
        super().__init__(hass, config)
        self.options: dict[str, Any] = config.options or {}
        self._entry_id = ""
        self._remembered: dict[str, str] = {}  # battery subentry id -> its mode in the last slot handled
        self._slot: datetime | None = None  # the last slot handled
        self._listening: CALLBACK_TYPE | None = None

    async def async_attach_runner(
        self, run_action: TriggerActionRunner, did_not_trigger: object = None
    ) -> CALLBACK_TYPE:
        """Resolve the entry (raises a translated HomeAssistantError when none fits) and follow its home plan."""
        self._run_action = run_action
        self._entry_id = price_entry_id(self._hass, self.options)
        entry = self._hass.config_entries.async_get_entry(self._entry_id)
        assert entry is not None  # price_entry_id found it
        unsub = entry.async_on_state_change(self._follow)
        self._follow()

        @callback
        def _detach() -> None:
            unsub()
            if self._listening is not None:
                self._listening()
                self._listening = None

        return _detach

    def _modes(self, slot: datetime, *, made_in_slot: bool) -> list[BatteryMode] | None:
        """Return the batteries' modes in ``slot`` from the current home plan, None without one.

        With ``made_in_slot`` also None when the plan was not made in ``slot`` (its start is another slot).
        """
        runtime = loaded_runtime(self._hass, self._entry_id)
        home = runtime.home if runtime else None
        plan = home.result.plan if home is not None and home.result is not None else None
        if home is None or plan is None or (made_in_slot and plan.start != slot):
            return None
        return battery_modes(plan, home.config, slot, self.options.get(CONF_BATTERY))

    @callback
    def _follow(self) -> None:
        """Listen to the home plan while the entry is loaded; remember the modes of the current slot."""
        if self._listening is not None:
            self._listening()
            self._listening = None
        runtime = loaded_runtime(self._hass, self._entry_id)
        if runtime is None or runtime.home is None:
            return
        self._listening = runtime.home.async_add_listener(self._changed)
        slot = floor_slot(dt_util.utcnow())
        modes = self._modes(slot, made_in_slot=False)
        if modes is not None:
            self._slot = slot
            self._remembered |= {m.battery: m.mode for m in modes}

    @callback
    def _changed(self) -> None:
        """Handle a new slot on its first plan: fire for each battery whose mode changed."""
        slot = floor_slot(dt_util.utcnow())
        if slot == self._slot or (modes := self._modes(slot, made_in_slot=True)) is None:
            return
        self._slot = slot
        for mode in modes:
            before = self._remembered.get(mode.battery)
            self._remembered[mode.battery] = mode.mode
            if before is None or before == mode.mode or self.options.get(CONF_TO) not in (None, mode.mode):
                continue
            variables = {
                "config_entry_id": self._entry_id,
                "battery": mode.battery,
                "battery_name": mode.name,
                "from": before,
                "to": mode.mode,
                "power_kw": mode.power_kw,
                "start": dt_util.as_local(slot),
                "end": dt_util.as_local(slot + SLOT),
            }
            self._run_action(variables, f"{mode.name} planned to {mode.mode}")
