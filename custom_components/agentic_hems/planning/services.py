"""The price and plan service actions: get_prices, plan, schedule, clear_schedule, plan_home (the whole-home plan).

Also the loads they plan (:func:`build_load`, which the assistant's SCHEDULE uses too).
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse, SupportsResponse, callback
from homeassistant.helpers import config_validation as cv
from homeassistant.util import dt as dt_util

from ..const import (
    ATTR_APPLIANCE,
    CONF_CONTIGUOUS,
    CONF_DEADLINE,
    CONF_DURATION_MIN,
    CONF_EARLIEST_START,
    CONF_ENERGY_KWH,
    CONF_POWER_KW,
)
from ..orchestrator.texts import language as text_language
from ..people import async_admin
from ..scheduling import LoadSpec, Plan
from ..service_helpers import ENTRY_SCHEMA, aware, entry_for_call, invalid, local_text, register
from ..validation import vol
from .home_view import home_answer

if TYPE_CHECKING:
    from ..coordinator import PriceData
    from ..runtime import AgenticHemsConfigEntry
    from ..scheduling.appliance import Appliance

SERVICE_GET_PRICES = "get_prices"
SERVICE_PLAN = "plan"
SERVICE_SCHEDULE = "schedule"
SERVICE_CLEAR_SCHEDULE = "clear_schedule"
SERVICE_PLAN_HOME = "plan_home"

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
PLAN_HOME_SCHEMA = vol.Schema(
    {**ENTRY_SCHEMA, vol.Optional("replan", default=False): cv.boolean, vol.Optional("language"): vol.In(("en", "de"))}
)


def _prices(entry: AgenticHemsConfigEntry) -> PriceData:
    if (data := entry.runtime_data.coordinator.data) is None:
        raise invalid("no_prices")
    return data


def find_appliance(entry: AgenticHemsConfigEntry, key: str) -> Appliance:
    """Find an appliance by subentry id or (case-insensitive) name."""
    appliances = entry.runtime_data.planner.appliances
    if key in appliances:
        return appliances[key]
    for appliance in appliances.values():
        if appliance.name.casefold() == key.casefold():
            return appliance
    raise invalid("appliance_not_found", appliance=key)


def build_load(entry: AgenticHemsConfigEntry, data: dict[str, Any], appliance: Appliance | None) -> LoadSpec:
    """Return the load to plan: the appliance's next window and settings, with any field in ``data`` taking precedence.

    Raises:
        ServiceValidationError: an ad-hoc load lacks its power, amount or deadline, or the deadline is not after
            the earliest start.

    """
    now = dt_util.utcnow()
    default = entry.runtime_data.planner.load_for(appliance.appliance_id, now) if appliance else None
    power_kw = data.get(CONF_POWER_KW, default.power_kw if default else None)
    duration, energy = data.get(CONF_DURATION_MIN), data.get(CONF_ENERGY_KWH)
    if default is not None and duration is None and energy is None:
        duration, energy = default.duration_min, default.energy_kwh
    contiguous = data.get(CONF_CONTIGUOUS, default.contiguous if default else energy is None)
    if (contiguous and duration is None and energy is not None) or (
        not contiguous and energy is None and duration is not None
    ):
        raise invalid("amount_mismatch")
    amount = duration if contiguous else energy
    deadline = aware(data[CONF_DEADLINE]) if CONF_DEADLINE in data else (default.deadline if default else None)
    if power_kw is None or amount is None or deadline is None:
        raise invalid("missing_load_fields")
    if CONF_EARLIEST_START in data:
        start = aware(data[CONF_EARLIEST_START])
    else:  # the appliance's window, unless the caller set their own deadline: then from now
        start = default.earliest_start if default and CONF_DEADLINE not in data else now
    if deadline <= now:
        raise invalid("deadline_passed", deadline=local_text(deadline))
    if deadline <= start:
        raise invalid("deadline_before_start", deadline=local_text(deadline), earliest_start=local_text(start))
    return LoadSpec(
        appliance.name if appliance else "ad hoc",
        power_kw=power_kw,
        duration_min=amount if contiguous else None,
        energy_kwh=None if contiguous else amount,
        earliest_start=start,
        deadline=deadline,
        contiguous=contiguous,
    )


async def _async_plan(entry: AgenticHemsConfigEntry, data: dict[str, Any], appliance: Appliance | None) -> Plan:
    """Plan the load in ``data`` under the power limit, around the other appliances' plans."""
    curve = _prices(entry).total
    load = build_load(entry, data, appliance)
    exclude = {appliance.appliance_id} if appliance else set()
    planner = entry.runtime_data.planner
    return (await planner.async_plan_loads(curve, [load], exclude=exclude, now=dt_util.utcnow()))[0]


def _response(entry: AgenticHemsConfigEntry, plan: Plan, appliance_id: str | None) -> dict[str, Any]:
    return {**plan.as_dict(), "appliance": appliance_id, "sample": _prices(entry).sample}


async def _plan_home(hass: HomeAssistant, call: ServiceCall) -> dict[str, Any]:
    """Return the whole-home plan: per-slot arrays, costs, reasons, and per battery its arrays and why (en or de).

    Anyone may read it; ``replan`` (plan again now) needs an administrator.
    """
    entry = entry_for_call(hass, call)
    if (home := entry.runtime_data.home) is None:
        raise invalid("home_plan_not_configured")
    if call.data["replan"]:
        if await async_admin(hass, call.context.user_id) is None:
            raise invalid("admin_required_home")
        await home.async_replan(execute=True)
    return home_answer(home, call.data.get("language") or text_language(hass.config.language))


@callback
def async_setup_planning_services(hass: HomeAssistant) -> None:
    """Register get_prices, plan, schedule, clear_schedule and plan_home."""

    async def get_prices(call: ServiceCall) -> ServiceResponse:
        entry = entry_for_call(hass, call)
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
        entry = entry_for_call(hass, call)
        key = call.data.get(ATTR_APPLIANCE)
        appliance = find_appliance(entry, key) if key else None
        result = await _async_plan(entry, dict(call.data), appliance)
        return _response(entry, result, appliance.appliance_id if appliance else None)

    async def schedule(call: ServiceCall) -> ServiceResponse:
        entry = entry_for_call(hass, call)
        appliance = find_appliance(entry, call.data[ATTR_APPLIANCE])
        _prices(entry)
        load = build_load(entry, dict(call.data), appliance)
        result = await entry.runtime_data.planner.async_schedule(appliance.appliance_id, load)
        if not result.feasible:
            raise invalid("plan_infeasible", appliance=appliance.name, reason=result.detail or str(result.reason))
        return _response(entry, result, appliance.appliance_id) if call.return_response else None

    async def clear_schedule(call: ServiceCall) -> ServiceResponse:
        entry = entry_for_call(hass, call)
        appliance = find_appliance(entry, call.data[ATTR_APPLIANCE])
        await entry.runtime_data.planner.async_clear_plan(appliance.appliance_id)
        return None

    register(hass, SERVICE_GET_PRICES, get_prices, vol.Schema(ENTRY_SCHEMA), SupportsResponse.ONLY)
    register(hass, SERVICE_PLAN, plan, LOAD_SCHEMA, SupportsResponse.ONLY)
    register(hass, SERVICE_SCHEDULE, schedule, SCHEDULE_SCHEMA, SupportsResponse.OPTIONAL)
    register(hass, SERVICE_CLEAR_SCHEDULE, clear_schedule, CLEAR_SCHEMA)
    _register_plan_home(hass)


@callback
def _register_plan_home(hass: HomeAssistant) -> None:
    """Register plan_home."""

    async def plan_home(call: ServiceCall) -> ServiceResponse:
        return await _plan_home(hass, call)

    register(hass, SERVICE_PLAN_HOME, plan_home, PLAN_HOME_SCHEMA, SupportsResponse.ONLY)
