"""Automation conditions: the price is among the day's cheapest, a planned run runs, a battery's planned mode.

The price now is among the day's N cheapest slots; an appliance's plan is running now; a home battery is planned to
charge, discharge or idle now. Each reads what is current when checked: the entry's total price (an unknown price is never cheap), the targeted
appliances' plans, the whole-home plan. An entry that is not loaded passes none.
"""

from __future__ import annotations

from abc import abstractmethod
from collections.abc import Callable
from typing import Any, ClassVar

from homeassistant.const import CONF_OPTIONS
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ConditionErrorMessage, HomeAssistantError
from homeassistant.helpers.condition import Condition, ConditionConfig
from homeassistant.helpers.typing import ConfigType
from homeassistant.util import dt as dt_util

from .automation_rules import (
    ENTRY_OPTION,
    among_cheapest,
    async_validate_automation,
    battery_modes,
    loaded_runtime,
    price_entry_id,
    targeted_appliances,
    whole_number,
)
from .battery_trigger import CONF_BATTERY
from .prices import floor_slot
from .scheduling.home_explain import MODES
from .trigger import APPLIANCE_SCHEMA
from .validation import vol

CONF_SLOTS = "slots"
CONF_MODE = "mode"

CHEAPEST_SCHEMA = vol.Schema(
    {
        vol.Required(CONF_OPTIONS): {
            **ENTRY_OPTION,
            vol.Required(CONF_SLOTS): vol.All(whole_number, vol.Range(min=1, max=100)),
        }
    }
)
BATTERY_SCHEMA = vol.Schema(
    {
        vol.Required(CONF_OPTIONS): {
            **ENTRY_OPTION,
            vol.Optional(CONF_BATTERY): vol.All(str, vol.Length(min=1)),
            vol.Required(CONF_MODE): vol.In(MODES),
        }
    }
)


def _entry_id(hass: HomeAssistant, options: dict[str, Any]) -> str:
    """Return the entry the options name (else the only one); raises ConditionErrorMessage when none fits."""
    try:
        return price_entry_id(hass, options)
    except HomeAssistantError as err:
        raise ConditionErrorMessage("agentic_hems", str(err)) from err


class HemsCondition(Condition):
    """A condition checked by :meth:`passes`, on every supported Home Assistant release.

    Version-specific: HA 2026.4 asks a condition for its checker (``async_get_checker``); later releases make the
    condition the checker and call ``_async_check``. Each calls :meth:`passes`. Drop ``async_get_checker`` when the
    oldest supported release calls ``_async_check``.
    """

    schema: ClassVar[Any]
    has_options: ClassVar[bool] = True  # options to fill in (missing ones count as empty)

    @classmethod
    async def async_validate_config(cls, hass: HomeAssistant, config: ConfigType) -> ConfigType:
        """Validate ``options`` and ``target`` (:func:`.automation_rules.async_validate_automation`).

        Raises:
            vol.Invalid: with the translated text naming the field to fill in; the automation editor and its live
                test show it as the condition's error.

        """
        return await async_validate_automation(hass, cls.schema, config, has_options=cls.has_options)

    def __init__(self, hass: HomeAssistant, config: ConditionConfig) -> None:
        """Keep the options and the target."""
        super().__init__(hass, config)
        self.options: dict[str, Any] = config.options or {}
        self.target: dict[str, Any] = config.target or {}

    @abstractmethod
    def passes(self) -> bool:
        """Return whether the condition holds now."""

    def _async_check(self, **kwargs: Any) -> bool:
        """Check the condition (Home Assistant after 2026.4)."""
        return self.passes()

    async def async_get_checker(self) -> Callable[..., bool]:
        """Return the checker (Home Assistant 2026.4)."""
        return lambda **kwargs: self.passes()


class PriceAmongCheapestCondition(HemsCondition):
    """The price of the current slot is among the ``slots`` cheapest of the local day (ranked by price, then time)."""

    schema = CHEAPEST_SCHEMA

    def passes(self) -> bool:
        """Rank the current slot in its day; a slot of the day without a price might be cheaper and counts against it.

        Raises:
            ConditionErrorMessage: no entry fits (``config_entry_id`` names none, or several entries and none named).

        """
        runtime = loaded_runtime(self._hass, _entry_id(self._hass, self.options))
        if runtime is None or runtime.coordinator.data is None:
            return False
        return among_cheapest(runtime.coordinator.data.total, dt_util.utcnow(), self.options[CONF_SLOTS])


class PlanRunningCondition(HemsCondition):
    """A targeted appliance's plan has power in the current slot."""

    schema = APPLIANCE_SCHEMA
    has_options = False

    def passes(self) -> bool:
        """Return True when the plan of one of the targeted appliances runs now."""
        now = dt_util.utcnow()
        for entry_id, appliance_id in targeted_appliances(self._hass, self.target):
            runtime = loaded_runtime(self._hass, entry_id)
            state = runtime.planner.states.get(appliance_id) if runtime else None
            if state is not None and state.plan is not None and state.plan.is_running(now):
                return True
        return False


class BatteryPlannedCondition(HemsCondition):
    """A home battery (``battery``: its name or subentry id; else any) is planned to be in ``mode`` now.

    The mode is the one the whole-home plan in force gives the current slot (charge above 0.05 kW, discharge below
    -0.05 kW, else idle); without a plan, none passes.
    """

    schema = BATTERY_SCHEMA

    def passes(self) -> bool:
        """Return True when one of the chosen batteries has ``mode`` in the current slot's plan.

        Raises:
            ConditionErrorMessage: no entry fits (``config_entry_id`` names none, or several entries and none named).

        """
        runtime = loaded_runtime(self._hass, _entry_id(self._hass, self.options))
        home = runtime.home if runtime else None
        if home is None or home.result is None:
            return False
        slot = floor_slot(dt_util.utcnow())
        modes = battery_modes(home.result.plan, home.config, slot, self.options.get(CONF_BATTERY))
        return any(m.mode == self.options[CONF_MODE] for m in modes)


CONDITIONS: dict[str, type[Condition]] = {
    "price_among_cheapest": PriceAmongCheapestCondition,
    "plan_running": PlanRunningCondition,
    "battery_planned": BatteryPlannedCondition,
}


async def async_get_conditions(hass: HomeAssistant) -> dict[str, type[Condition]]:
    """Return the integration's conditions by key (``agentic_hems.<key>`` in an automation)."""
    return CONDITIONS
