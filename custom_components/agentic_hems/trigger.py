"""Automation triggers: planned runs start or end, cheap windows begin, prices cross, home battery modes change.

Each timed trigger computes its next moment from the appliances' plans or the entry's prices and waits for it with
``async_track_point_in_utc_time``. A new plan or new prices (the plan manager's and the price coordinator's
listeners) move the wait, and an entry that loads, reloads or unloads is followed. At the moment the trigger checks
again with what is current, so a plan that moved no longer fires at its old start. An unknown price never fires.

The battery mode trigger (:mod:`.battery_trigger`) waits for no moment of its own: it listens to the whole-home plan
manager, which replans at each slot boundary, and acts on the first plan made in a new slot.
"""

from __future__ import annotations

from abc import abstractmethod
from datetime import datetime
from functools import partial
from typing import TYPE_CHECKING, Any, ClassVar, Protocol

from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_OPTIONS, CONF_TARGET
from homeassistant.core import CALLBACK_TYPE, HassJob, HomeAssistant, callback
from homeassistant.helpers import config_validation as cv
from homeassistant.helpers.event import async_track_point_in_utc_time
from homeassistant.helpers.trigger import Trigger, TriggerActionRunner, TriggerConfig
from homeassistant.helpers.typing import ConfigType
from homeassistant.util import dt as dt_util

from .automation_rules import (
    ABOVE,
    BELOW,
    ENTRY_OPTION,
    SCOPE_HORIZON,
    SCOPE_TODAY,
    Window,
    async_validate_automation,
    cheapest_window,
    crossings,
    loaded_runtime,
    price_entry_id,
    real_number,
    runs,
    scope_span,
    slots_for,
    targeted_appliances,
    whole_number,
)
from .battery_trigger import BatteryModeTrigger
from .const import DOMAIN
from .prices import SLOT, PriceCurve, local_day_bounds
from .validation import vol

if TYPE_CHECKING:
    from .runtime import AgenticHemsConfigEntry, RuntimeData

CONF_MINUTES = "minutes"
CONF_SCOPE = "scope"
CONF_THRESHOLD = "threshold"
CONF_DIRECTION = "direction"

type Fired = list[tuple[dict[str, Any], str]]  # (trigger variables, description) per firing


class Announcer(Protocol):
    """What announces its changes to listeners: the plan manager, the price coordinator."""

    def async_add_listener(self, update: CALLBACK_TYPE, /) -> CALLBACK_TYPE:
        """Call ``update`` after each change; returns the callback that removes it."""


APPLIANCE_SCHEMA = vol.Schema({vol.Required(CONF_TARGET): cv.TARGET_FIELDS, vol.Optional(CONF_OPTIONS): {}})
WINDOW_SCHEMA = vol.Schema(
    {
        vol.Required(CONF_OPTIONS): {
            **ENTRY_OPTION,
            vol.Required(CONF_MINUTES): vol.All(whole_number, vol.Range(min=15, max=2880)),
            vol.Optional(CONF_SCOPE, default=SCOPE_TODAY): vol.In([SCOPE_TODAY, SCOPE_HORIZON]),
        }
    }
)
THRESHOLD_SCHEMA = vol.Schema(
    {
        vol.Required(CONF_OPTIONS): {
            **ENTRY_OPTION,
            vol.Required(CONF_THRESHOLD): vol.All(real_number, vol.Range(min=-100, max=100)),
            vol.Required(CONF_DIRECTION): vol.In([ABOVE, BELOW]),
        }
    }
)


class TimedTrigger(Trigger):
    """Fires at moments computed from plans or prices, and follows their changes.

    A subclass names the entries it follows, what announces their changes, its next moment after a given one and
    what fires at a moment (checked again then).
    """

    schema: ClassVar[Any]
    has_options: ClassVar[bool] = True  # options to fill in (missing ones count as empty)
    _run_action: TriggerActionRunner

    @classmethod
    async def async_validate_config(cls, hass: HomeAssistant, config: ConfigType) -> ConfigType:
        """Validate ``options`` and ``target``; raises ``vol.Invalid`` with a translated text naming the field."""
        return await async_validate_automation(hass, cls.schema, config, has_options=cls.has_options)

    def __init__(self, hass: HomeAssistant, config: TriggerConfig) -> None:
        """Keep the options and the target."""
        super().__init__(hass, config)
        self.options: dict[str, Any] = config.options or {}
        self.target: dict[str, Any] = config.target or {}
        self._pending: tuple[datetime, CALLBACK_TYPE] | None = None
        self._followed: dict[str, CALLBACK_TYPE] = {}
        self._done = dt_util.utcnow()
        self._job = HassJob(self._fire, f"{DOMAIN} {config.key}")

    @abstractmethod
    def entry_ids(self) -> list[str]:
        """Return the entries whose plans or prices this trigger follows."""

    @abstractmethod
    def announcer(self, runtime: RuntimeData) -> Announcer:
        """Return what announces the changes this trigger follows."""

    @abstractmethod
    def next_moment(self, after: datetime) -> datetime | None:
        """Return the first moment (aware UTC) after ``after`` at which this trigger fires, as things are now."""

    @abstractmethod
    def fired_at(self, moment: datetime) -> Fired:
        """Return what fires at ``moment``, as things are now."""

    async def async_attach_runner(
        self, run_action: TriggerActionRunner, did_not_trigger: object = None
    ) -> CALLBACK_TYPE:
        """Follow the entries and wait for the next moment; returns the callback that detaches.

        ``did_not_trigger`` (passed by newer Home Assistant releases) is not used: these triggers only wait for moments.
        """
        self._run_action = run_action
        self._done = dt_util.utcnow()
        unsubs: list[CALLBACK_TYPE] = []
        for entry_id in self.entry_ids():
            if (entry := self._hass.config_entries.async_get_entry(entry_id)) is not None:
                unsubs.append(entry.async_on_state_change(partial(self._follow, entry)))
                self._follow(entry)
        self._update()

        @callback
        def _detach() -> None:
            for unsub in (*unsubs, *self._followed.values()):
                unsub()
            self._followed.clear()
            if self._pending is not None:
                self._pending[1]()
                self._pending = None

        return _detach

    @callback
    def _follow(self, entry: AgenticHemsConfigEntry) -> None:
        """Listen to the entry's runtime while it is loaded."""
        if (unsub := self._followed.pop(entry.entry_id, None)) is not None:
            unsub()
        if entry.state is ConfigEntryState.LOADED:
            self._followed[entry.entry_id] = self.announcer(entry.runtime_data).async_add_listener(self._update)
        self._update()

    @callback
    def _update(self) -> None:
        """Wait for the next moment; a wait that is due is left to fire (it checks what is current then)."""
        now = dt_util.utcnow()
        if self._pending is not None and self._pending[0] <= now:
            return
        moment = self.next_moment(max(self._done, now))
        if self._pending is not None:
            if self._pending[0] == moment:
                return
            self._pending[1]()
            self._pending = None
        if moment is not None:
            self._pending = (moment, async_track_point_in_utc_time(self._hass, self._job, moment))

    @callback
    def _fire(self, moment: datetime) -> None:
        self._pending = None
        self._done = moment
        for variables, description in self.fired_at(moment):
            self._run_action(variables, description)
        self._update()


class PlanTrigger(TimedTrigger):
    """A targeted appliance's planned run starts (``edge`` 0) or ends (``edge`` 1)."""

    schema = APPLIANCE_SCHEMA
    has_options = False
    edge: ClassVar[int]
    event: ClassVar[str]

    def entry_ids(self) -> list[str]:
        """Every entry of the integration: the target may reach appliances of any of them."""
        return [entry.entry_id for entry in self._hass.config_entries.async_entries(DOMAIN)]

    def announcer(self, runtime: RuntimeData) -> Announcer:
        """Return the plan manager."""
        return runtime.planner

    def _runs(self) -> list[tuple[str, str, str, datetime, datetime]]:
        """``(entry_id, appliance_id, name, start, end)`` of every run the targeted appliances' plans have."""
        found = []
        for entry_id, appliance_id in sorted(targeted_appliances(self._hass, self.target)):
            runtime = loaded_runtime(self._hass, entry_id)
            if runtime is None or (state := runtime.planner.states.get(appliance_id)) is None:
                continue
            name = runtime.planner.appliances[appliance_id].name
            found += [(entry_id, appliance_id, name, start, end) for start, end in runs(state.plan)]
        return found

    def next_moment(self, after: datetime) -> datetime | None:
        """Return the next start (or end) of a targeted appliance's run after ``after``."""
        moments = [(start, end)[self.edge] for _, _, _, start, end in self._runs()]
        return min((moment for moment in moments if moment > after), default=None)

    def fired_at(self, moment: datetime) -> Fired:
        """Return the runs that start (or end) at ``moment``."""
        return [
            (
                {
                    "config_entry_id": entry_id,
                    "appliance_id": appliance_id,
                    "appliance": name,
                    "start": dt_util.as_local(start),
                    "end": dt_util.as_local(end),
                },
                f"{name} planned run {self.event}",
            )
            for entry_id, appliance_id, name, start, end in self._runs()
            if (start, end)[self.edge] == moment
        ]


class PlanStartedTrigger(PlanTrigger):
    """A targeted appliance's planned run starts."""

    edge = 0
    event = "started"


class PlanEndedTrigger(PlanTrigger):
    """A targeted appliance's planned run ends."""

    edge = 1
    event = "ended"


class PriceTrigger(TimedTrigger):
    """A trigger on the total price of one entry (``config_entry_id``, else the only entry)."""

    _entry_id = ""

    async def async_attach_runner(
        self, run_action: TriggerActionRunner, did_not_trigger: object = None
    ) -> CALLBACK_TYPE:
        """Resolve the entry (raises a translated HomeAssistantError when none fits), then attach."""
        self._entry_id = price_entry_id(self._hass, self.options)
        return await super().async_attach_runner(run_action, did_not_trigger)

    def entry_ids(self) -> list[str]:
        """Return the entry whose prices this trigger follows."""
        return [self._entry_id]

    def announcer(self, runtime: RuntimeData) -> Announcer:
        """Return the price coordinator: it publishes at every slot boundary and with new prices."""
        return runtime.coordinator

    def curve(self) -> PriceCurve | None:
        """Return the entry's total price per kWh, or None while it is not loaded or has no prices."""
        runtime = loaded_runtime(self._hass, self._entry_id)
        if runtime is None or runtime.coordinator.data is None:
            return None
        return runtime.coordinator.data.total


class CheapestWindowTrigger(PriceTrigger):
    """The cheapest run of ``minutes`` (whole slots) of the local day, or of the horizon, begins."""

    schema = WINDOW_SCHEMA

    def _window(self, curve: PriceCurve, moment: datetime) -> Window | None:
        slots = slots_for(self.options[CONF_MINUTES])
        return cheapest_window(curve, *scope_span(curve, moment, self.options[CONF_SCOPE]), slots)

    def next_moment(self, after: datetime) -> datetime | None:
        """Return the start of the cheapest window sought now or from the next local midnight on, if after ``after``."""
        if (curve := self.curve()) is None:
            return None
        now = dt_util.utcnow()
        midnight = local_day_bounds(dt_util.as_local(now).date(), dt_util.get_default_time_zone())[1]
        starts = [window.start for at in (now, midnight) if (window := self._window(curve, at)) is not None]
        return min((start for start in starts if start > after), default=None)

    def fired_at(self, moment: datetime) -> Fired:
        """Return the window sought at ``moment`` when it begins then."""
        if (curve := self.curve()) is None or (window := self._window(curve, moment)) is None:
            return []
        if window.start != moment:
            return []
        variables = {
            "config_entry_id": self._entry_id,
            "start": dt_util.as_local(window.start),
            "end": dt_util.as_local(window.end),
            "mean_price": window.mean_price,
            "currency": curve.currency,
            CONF_MINUTES: self.options[CONF_MINUTES],
            CONF_SCOPE: self.options[CONF_SCOPE],
        }
        return [(variables, "cheapest price window started")]


class PriceThresholdTrigger(PriceTrigger):
    """The total price crosses ``threshold`` (per kWh) going ``above`` or ``below`` it, at a slot boundary."""

    schema = THRESHOLD_SCHEMA

    def _crossings(self, curve: PriceCurve, after: datetime) -> list[tuple[datetime, int]]:
        return crossings(curve, after, self.options[CONF_DIRECTION], self.options[CONF_THRESHOLD])

    def next_moment(self, after: datetime) -> datetime | None:
        """Return the first crossing after ``after``."""
        if (curve := self.curve()) is None or not (found := self._crossings(curve, after)):
            return None
        return found[0][0]

    def fired_at(self, moment: datetime) -> Fired:
        """Return the crossing at ``moment``, if the current prices have one there."""
        if (curve := self.curve()) is None:
            return []
        return [
            (
                {
                    "config_entry_id": self._entry_id,
                    "price": float(curve.prices[index]),
                    "previous_price": float(curve.prices[index - 1]),
                    "currency": curve.currency,
                    CONF_THRESHOLD: self.options[CONF_THRESHOLD],
                    CONF_DIRECTION: self.options[CONF_DIRECTION],
                },
                f"price crossed {self.options[CONF_DIRECTION]} {self.options[CONF_THRESHOLD]}",
            )
            for at, index in self._crossings(curve, moment - SLOT)
            if at == moment
        ]


TRIGGERS: dict[str, type[Trigger]] = {
    "plan_started": PlanStartedTrigger,
    "plan_ended": PlanEndedTrigger,
    "cheapest_window_started": CheapestWindowTrigger,
    "price_crossed_threshold": PriceThresholdTrigger,
    "battery_mode_changed": BatteryModeTrigger,
}


async def async_get_triggers(hass: HomeAssistant) -> dict[str, type[Trigger]]:
    """Return the integration's triggers by key (``agentic_hems.<key>`` in an automation)."""
    return TRIGGERS
