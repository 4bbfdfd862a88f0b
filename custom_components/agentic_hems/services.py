"""Service actions: get_prices, plan, schedule, clear_schedule (registered once in ``async_setup``)."""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

import voluptuous as vol

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse, SupportsResponse, callback
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import config_validation as cv
from homeassistant.util import dt as dt_util

from .const import (
    ATTR_APPLIANCE,
    ATTR_CONFIG_ENTRY_ID,
    CONF_CONTIGUOUS,
    CONF_DEADLINE,
    CONF_DURATION_MIN,
    CONF_EARLIEST_START,
    CONF_ENERGY_KWH,
    CONF_POWER_KW,
    DOMAIN,
)
from .scheduling import Plan, plan_contiguous, plan_energy
from .scheduling.appliance import Appliance, next_window

if TYPE_CHECKING:
    from . import AgenticHemsConfigEntry
    from .coordinator import PriceData

SERVICE_GET_PRICES = "get_prices"
SERVICE_PLAN = "plan"
SERVICE_SCHEDULE = "schedule"
SERVICE_CLEAR_SCHEDULE = "clear_schedule"

ENTRY_SCHEMA = {vol.Optional(ATTR_CONFIG_ENTRY_ID): cv.string}
LOAD_SCHEMA = vol.Schema(
    {
        **ENTRY_SCHEMA,
        vol.Optional(ATTR_APPLIANCE): cv.string,
        vol.Optional(CONF_POWER_KW): vol.All(vol.Coerce(float), vol.Range(min=0.01, max=1000)),
        vol.Exclusive(CONF_DURATION_MIN, "amount"): vol.All(vol.Coerce(float), vol.Range(min=1, max=7 * 24 * 60)),
        vol.Exclusive(CONF_ENERGY_KWH, "amount"): vol.All(vol.Coerce(float), vol.Range(min=0.001, max=10000)),
        vol.Optional(CONF_EARLIEST_START): cv.datetime,
        vol.Optional(CONF_DEADLINE): cv.datetime,
        vol.Optional(CONF_CONTIGUOUS): cv.boolean,
    }
)
SCHEDULE_SCHEMA = LOAD_SCHEMA.extend({vol.Required(ATTR_APPLIANCE): cv.string})
CLEAR_SCHEMA = vol.Schema({**ENTRY_SCHEMA, vol.Required(ATTR_APPLIANCE): cv.string})


def _invalid(key: str, **placeholders: str) -> ServiceValidationError:
    return ServiceValidationError(
        translation_domain=DOMAIN, translation_key=key, translation_placeholders=placeholders or None
    )


def _entry(hass: HomeAssistant, call: ServiceCall) -> AgenticHemsConfigEntry:
    """The entry named by ``config_entry_id``, or the only loaded one."""
    if entry_id := call.data.get(ATTR_CONFIG_ENTRY_ID):
        entry = hass.config_entries.async_get_entry(entry_id)
        if entry is None or entry.domain != DOMAIN:
            raise _invalid("entry_not_found", entry_id=entry_id)
        if entry.state is not ConfigEntryState.LOADED:
            raise _invalid("entry_not_loaded", entry_id=entry_id)
        return entry
    loaded = hass.config_entries.async_loaded_entries(DOMAIN)
    if not loaded:
        raise _invalid("no_entry_loaded")
    if len(loaded) > 1:
        raise _invalid("entry_required")
    return loaded[0]


def _prices(entry: AgenticHemsConfigEntry) -> PriceData:
    if (data := entry.runtime_data.coordinator.data) is None:
        raise _invalid("no_prices")
    return data


def _appliance(entry: AgenticHemsConfigEntry, key: str) -> Appliance:
    """Find an appliance by subentry id or (case-insensitive) name."""
    appliances = entry.runtime_data.planner.appliances
    if key in appliances:
        return appliances[key]
    for appliance in appliances.values():
        if appliance.name.casefold() == key.casefold():
            return appliance
    raise _invalid("appliance_not_found", appliance=key)


def _aware(moment: datetime) -> datetime:
    """Naive datetimes from automations are local time."""
    if moment.tzinfo is None:
        moment = moment.replace(tzinfo=dt_util.get_default_time_zone())
    return dt_util.as_utc(moment)


async def _async_plan(hass: HomeAssistant, entry: AgenticHemsConfigEntry, data: dict[str, Any]) -> Plan:
    """Plan the appliance or ad-hoc load in ``data``; raises ServiceValidationError on bad input."""
    curve = _prices(entry).total
    planner = entry.runtime_data.planner
    appliance = _appliance(entry, data[ATTR_APPLIANCE]) if ATTR_APPLIANCE in data else None
    overrides = {k for k in (CONF_POWER_KW, CONF_DURATION_MIN, CONF_ENERGY_KWH, CONF_CONTIGUOUS) if k in data}
    if appliance is not None and not overrides and CONF_EARLIEST_START not in data and CONF_DEADLINE not in data:
        return await planner.async_plan(appliance, curve, deadline=planner.deadline_for(appliance.appliance_id))

    power_kw = data.get(CONF_POWER_KW, appliance.power_kw if appliance else None)
    duration = data.get(CONF_DURATION_MIN)
    energy = data.get(CONF_ENERGY_KWH)
    if appliance is not None and duration is None and energy is None:
        duration, energy = appliance.duration_min, appliance.energy_kwh
    contiguous = data.get(CONF_CONTIGUOUS, appliance.contiguous if appliance else energy is None)
    if power_kw is None or (contiguous and duration is None) or (not contiguous and energy is None):
        raise _invalid("missing_load_fields")

    now = dt_util.utcnow()
    if appliance is not None and CONF_DEADLINE not in data:
        start, deadline = next_window(
            appliance.earliest_start, planner.deadline_for(appliance.appliance_id), now=now, tz=dt_util.get_default_time_zone()
        )
        start = _aware(data[CONF_EARLIEST_START]) if CONF_EARLIEST_START in data else start
    elif CONF_DEADLINE in data:
        start = _aware(data.get(CONF_EARLIEST_START, now))
        deadline = _aware(data[CONF_DEADLINE])
    else:
        raise _invalid("missing_load_fields")
    if deadline <= start:
        raise _invalid("deadline_before_start")
    name = appliance.name if appliance else "ad hoc"
    if contiguous:
        return await hass.async_add_executor_job(
            lambda: plan_contiguous(
                curve, power_kw=power_kw, duration_min=duration, earliest_start=start, deadline=deadline, name=name
            )
        )
    return await hass.async_add_executor_job(
        lambda: plan_energy(
            curve, max_power_kw=power_kw, energy_kwh=energy, earliest_start=start, deadline=deadline, name=name
        )
    )


def _response(entry: AgenticHemsConfigEntry, plan: Plan, appliance_id: str | None) -> dict[str, Any]:
    return {**plan.as_dict(), "appliance": appliance_id, "sample": _prices(entry).sample}


@callback
def async_setup_services(hass: HomeAssistant) -> None:
    """Register the integration's service actions."""

    async def get_prices(call: ServiceCall) -> ServiceResponse:
        entry = _entry(hass, call)
        data = _prices(entry)
        curve = data.total
        step = curve.resolution
        return {
            "unit": f"{curve.currency}/kWh",
            "currency": curve.currency,
            "resolution_minutes": int(step.total_seconds() // 60),
            "source": curve.source,
            "sample": data.sample,
            "prices": [
                {"start": s.isoformat(), "end": (s + step).isoformat(), "price": p}
                for s, p in zip(curve.slot_starts(), curve.as_dict()["prices"], strict=True)
            ],
        }

    async def plan(call: ServiceCall) -> ServiceResponse:
        entry = _entry(hass, call)
        result = await _async_plan(hass, entry, dict(call.data))
        key = call.data.get(ATTR_APPLIANCE)
        return _response(entry, result, _appliance(entry, key).appliance_id if key else None)

    async def schedule(call: ServiceCall) -> ServiceResponse:
        entry = _entry(hass, call)
        appliance = _appliance(entry, call.data[ATTR_APPLIANCE])
        result = await _async_plan(hass, entry, dict(call.data))
        if not result.feasible:
            raise _invalid("plan_infeasible", appliance=appliance.name, reason=result.detail or str(result.reason))
        await entry.runtime_data.planner.async_store_plan(appliance.appliance_id, result)
        return _response(entry, result, appliance.appliance_id) if call.return_response else None

    async def clear_schedule(call: ServiceCall) -> None:
        entry = _entry(hass, call)
        appliance = _appliance(entry, call.data[ATTR_APPLIANCE])
        await entry.runtime_data.planner.async_clear_plan(appliance.appliance_id)

    hass.services.async_register(
        DOMAIN, SERVICE_GET_PRICES, get_prices, schema=vol.Schema(ENTRY_SCHEMA), supports_response=SupportsResponse.ONLY
    )
    hass.services.async_register(DOMAIN, SERVICE_PLAN, plan, schema=LOAD_SCHEMA, supports_response=SupportsResponse.ONLY)
    hass.services.async_register(
        DOMAIN, SERVICE_SCHEDULE, schedule, schema=SCHEDULE_SCHEMA, supports_response=SupportsResponse.OPTIONAL
    )
    hass.services.async_register(DOMAIN, SERVICE_CLEAR_SCHEDULE, clear_schedule, schema=CLEAR_SCHEMA)
