"""What the automation triggers and conditions read: their entries and appliances, and moments from prices and plans.

The price triggers and conditions name their config entry with ``config_entry_id`` (the only entry when it is left
out), the appliance ones target an appliance's device or entities (or an area or label holding them). The moments
are computed from the entry's total price (after the price formula, per kWh in the curve's currency) and from the
appliances' plans; an unknown price (NaN, or no price published) never counts as a price. The battery ones read the
modes (charge, discharge, idle) the entry's whole-home plan gives its batteries.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import date, datetime, timedelta
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from homeassistant.config_entries import ConfigEntryState
from homeassistant.const import CONF_OPTIONS, CONF_TARGET
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import HomeAssistantError
from homeassistant.helpers import config_validation as cv, entity_registry as er
from homeassistant.helpers.target import TargetSelection, async_extract_referenced_entity_ids
from homeassistant.helpers.translation import async_get_translations
from homeassistant.util import dt as dt_util

from .const import ATTR_CONFIG_ENTRY_ID, DOMAIN
from .prices import SLOT, PriceCurve, local_day_bounds
from .scheduling import Plan
from .scheduling.home_explain import battery_mode
from .scheduling.home_model import HomePlan
from .scheduling.ties import earliest_cheapest, tie_tolerance
from .scheduling.windows import window_sums
from .validation import vol

if TYPE_CHECKING:
    from .planning.home_config import HomeConfig
    from .runtime import RuntimeData

ENTRY_OPTION = {vol.Optional(ATTR_CONFIG_ENTRY_ID): cv.string}
SCOPE_TODAY = "today"
SCOPE_HORIZON = "horizon"
ABOVE = "above"
BELOW = "below"


@dataclass(frozen=True)
class Window:
    """The cheapest run of slots: ``start`` and ``end`` (aware UTC) and the mean price per kWh over it."""

    start: datetime
    end: datetime
    mean_price: float


def field_error(err: vol.Invalid) -> HomeAssistantError:
    """Return the translated error of the first problem a trigger's or condition's schema reports.

    It names the field to fill in (``automation_slots``, ``automation_mode``, ``automation_battery``,
    ``automation_minutes``, ``automation_threshold``, ``automation_direction``, ``automation_target``), else it is
    ``automation_invalid`` with the schema's own text.
    """
    first = err.errors[0] if isinstance(err, vol.MultipleInvalid) else err
    path = {str(part) for part in first.path}
    key = "automation_invalid"
    if "slots" in path:
        key = "automation_slots"
    elif "mode" in path or "to" in path:
        key = "automation_mode"
    elif "battery" in path:
        key = "automation_battery"
    elif "minutes" in path:
        key = "automation_minutes"
    elif "threshold" in path:
        key = "automation_threshold"
    elif "direction" in path:
        key = "automation_direction"
    elif "target" in path:
        key = "automation_target"
    placeholders = {"error": str(first)} if key == "automation_invalid" else None
    return HomeAssistantError(translation_domain=DOMAIN, translation_key=key, translation_placeholders=placeholders)


async def async_schema_error(hass: HomeAssistant, error: HomeAssistantError) -> vol.Invalid:
    """Return ``error`` (translated) as a schema error carrying its English text.

    Home Assistant's automation editor, its live tests and the YAML loaders (template entities among them) expect a
    trigger's or condition's validation to raise ``vol.Invalid``; the text is this integration's translated one,
    loaded first (validation can run before the entry is set up).
    """
    await async_get_translations(hass, "en", "exceptions", {DOMAIN})
    return vol.Invalid(str(error))


async def async_validate_automation(
    hass: HomeAssistant, schema: vol.Schema, config: dict[str, Any], *, has_options: bool
) -> dict[str, Any]:
    """Return a trigger's or condition's ``config`` validated by ``schema``.

    An option the automation editor left empty (None or "") counts as not given; missing options count as empty
    ones when the schema has options to fill in (``has_options``), so the first field still to fill in is named.
    A ``config_entry_id`` must name an entry of this integration; a ``target`` must name something.

    Raises:
        vol.Invalid: with the translated text of :func:`field_error` or ``entry_not_found``.

    """
    options = config.get(CONF_OPTIONS)
    if isinstance(options, dict) or (options is None and has_options):
        config = {**config, CONF_OPTIONS: {k: v for k, v in (options or {}).items() if v not in (None, "")}}
    elif options is None:  # "options: null" of a trigger or condition whose options are all optional
        config = {k: v for k, v in config.items() if k != CONF_OPTIONS}
    try:
        validated: dict[str, Any] = schema(config)
        _check_target(validated)
        if (validated.get(CONF_OPTIONS) or {}).get(ATTR_CONFIG_ENTRY_ID):
            price_entry_id(hass, validated[CONF_OPTIONS])  # an entry of another integration, or none
    except vol.Invalid as err:
        raise await async_schema_error(hass, field_error(err)) from err
    except HomeAssistantError as err:
        raise await async_schema_error(hass, err) from err
    return validated


def _check_target(config: dict[str, Any]) -> None:
    """Raise vol.Invalid (at ``target``) when ``config`` has a target naming nothing: it would never fire or pass."""
    if (target := config.get(CONF_TARGET)) is not None and not any(target.values()):
        raise vol.Invalid("no appliance chosen", path=[CONF_TARGET])


def whole_number(value: Any) -> int:
    """Return ``value`` (an int, a float or text) as the whole number it is; raises vol.Invalid for 2.5, a bool."""
    if isinstance(value, bool):
        raise vol.Invalid("expected a whole number, not true or false")
    number = real_number(value)
    if not number.is_integer():
        raise vol.Invalid(f"expected a whole number, got {value}")
    return int(number)


def real_number(value: Any) -> float:
    """Return ``value`` (an int, a float or text) as a float; raises vol.Invalid for a bool or text of no number."""
    if isinstance(value, bool):
        raise vol.Invalid("expected a number, not true or false")
    try:
        return float(value)
    except (TypeError, ValueError) as err:
        raise vol.Invalid(f"expected a number, got {value!r}") from err


def loaded_runtime(hass: HomeAssistant, entry_id: str) -> RuntimeData | None:
    """Return the runtime of the loaded entry ``entry_id``, or None (no such entry, or not loaded)."""
    entry = hass.config_entries.async_get_entry(entry_id)
    if entry is None or entry.domain != DOMAIN or entry.state is not ConfigEntryState.LOADED:
        return None
    runtime: RuntimeData = entry.runtime_data
    return runtime


def price_entry_id(hass: HomeAssistant, options: dict[str, Any]) -> str:
    """Return the entry named by ``config_entry_id`` in ``options``, else the only entry of the integration.

    Raises:
        HomeAssistantError: translated ``entry_not_found`` (no such entry), ``no_entry_loaded`` (no entry at all) or
            ``entry_required`` (several entries and none named).

    """
    if entry_id := options.get(ATTR_CONFIG_ENTRY_ID):
        entry = hass.config_entries.async_get_entry(entry_id)
        if entry is None or entry.domain != DOMAIN:
            raise HomeAssistantError(
                translation_domain=DOMAIN,
                translation_key="entry_not_found",
                translation_placeholders={"entry_id": entry_id},
            )
        return str(entry_id)
    entries = hass.config_entries.async_entries(DOMAIN)
    if len(entries) == 1:
        return entries[0].entry_id
    raise HomeAssistantError(
        translation_domain=DOMAIN, translation_key="entry_required" if entries else "no_entry_loaded"
    )


def targeted_appliances(hass: HomeAssistant, target: dict[str, Any]) -> set[tuple[str, str]]:
    """Return ``(entry_id, appliance_id)`` of every appliance whose device or entities ``target`` references.

    An appliance is a config subentry; its entities carry the subentry id in the entity registry.
    """
    selected = async_extract_referenced_entity_ids(hass, TargetSelection(target))
    registry = er.async_get(hass)
    found: set[tuple[str, str]] = set()
    for entity_id in selected.referenced | selected.indirectly_referenced:
        entity = registry.async_get(entity_id)
        if entity and entity.platform == DOMAIN and entity.config_entry_id and entity.config_subentry_id:
            found.add((entity.config_entry_id, entity.config_subentry_id))
    return found


def runs(plan: Plan | None) -> list[tuple[datetime, datetime]]:
    """Return the ``(start, end)`` (aware UTC) of every run of ``plan``: each stretch of slots with power > 0."""
    if plan is None or not plan.feasible:
        return []
    on = np.concatenate(([False], plan.power_kw > 0, [False]))
    edges = [plan.curve_start + plan.resolution * int(i) for i in np.flatnonzero(on[1:] != on[:-1])]
    return list(zip(edges[::2], edges[1::2], strict=True))


def scope_span(curve: PriceCurve, now: datetime, scope: str) -> tuple[datetime, datetime]:
    """Return the slots a cheapest window is sought in: the local day of ``now``, or from its start as far as prices go.

    The horizon ends at the first slot without a price from the start of the local day on (or the curve's end).
    """
    today: date = dt_util.as_local(now).date()
    start, end = local_day_bounds(today, dt_util.get_default_time_zone())
    if scope == SCOPE_TODAY:
        return start, end
    prices = curve.window(start, max(curve.end, start)).prices
    unknown = np.flatnonzero(np.isnan(prices))
    return start, start + SLOT * int(unknown[0] if unknown.size else prices.size)


def cheapest_window(curve: PriceCurve, start: datetime, end: datetime, slots: int) -> Window | None:
    """Return the cheapest run of ``slots`` slots in ``[start, end)``, the earliest of equal ones.

    None when a slot of the span has no price (the cheapest run is not known then) or the span is shorter.
    """
    prices = curve.window(start, end).prices
    if prices.size < slots or np.isnan(prices).any():
        return None
    sums = window_sums(prices, slots)
    first = earliest_cheapest(sums, tie_tolerance(prices, float(slots)))
    begin = start + SLOT * first
    return Window(begin, begin + SLOT * slots, float(sums[first]) / slots)


def crossings(curve: PriceCurve, after: datetime, direction: str, threshold: float) -> list[tuple[datetime, int]]:
    """Return ``(moment, index)`` of each slot start after ``after`` where the price crosses ``threshold``.

    ``above``: the previous slot's price is at most ``threshold`` and this one's is higher; ``below``: the previous
    one is at least ``threshold`` and this one's is lower. Both prices must be known (NaN compares false).
    """
    prices = curve.prices
    before, current = prices[:-1], prices[1:]
    if direction == ABOVE:
        crossed = (before <= threshold) & (current > threshold)
    else:
        crossed = (before >= threshold) & (current < threshold)
    return [(moment, int(i) + 1) for i in np.flatnonzero(crossed) if (moment := curve.slot_start(int(i) + 1)) > after]


def among_cheapest(curve: PriceCurve, now: datetime, slots: int) -> bool:
    """Return True when the slot of ``now`` is surely among the ``slots`` cheapest of its local day.

    Slots are ranked by price, then by time. A slot of the day without a price might be cheaper, so it counts
    against the current one; an unknown current price is never among the cheapest.
    """
    start, end = local_day_bounds(dt_util.as_local(now).date(), dt_util.get_default_time_zone())
    prices = curve.window(start, end).prices
    i = int((now - start) // SLOT)
    if np.isnan(prices[i]):
        return False
    earlier = np.arange(prices.size) < i
    cheaper = int(np.count_nonzero((prices < prices[i]) | ((prices == prices[i]) & earlier)))
    return cheaper + int(np.count_nonzero(np.isnan(prices))) < slots


def slots_for(minutes: float) -> int:
    """Whole 15-minute slots covering ``minutes`` (rounded up, at least one)."""
    return max(1, math.ceil(timedelta(minutes=minutes) / SLOT))


@dataclass(frozen=True)
class BatteryMode:
    """A battery's planned mode in one slot: its subentry id, name, mode (charge, discharge, idle) and power (kW)."""

    battery: str
    name: str
    mode: str
    power_kw: float


def battery_modes(plan: HomePlan | None, config: HomeConfig, slot: datetime, battery: str | None) -> list[BatteryMode]:
    """Return each battery's planned mode in the slot starting at ``slot`` (aware UTC), in the subentries' order.

    ``battery`` keeps only the battery with that subentry id or name (case-insensitive). Empty without a plan, or
    when the plan does not cover ``slot``.
    """
    if plan is None:
        return []
    i = int((slot - plan.start) // plan.resolution)
    if not 0 <= i < plan.import_kw.size:
        return []
    wanted = battery.casefold() if battery else None
    found = []
    for bat in config.batteries:
        if bat.subentry_id in plan.battery_kw and wanted in (None, bat.subentry_id.casefold(), bat.name.casefold()):
            kw = float(plan.battery_kw[bat.subentry_id][i])
            found.append(BatteryMode(bat.subentry_id, bat.name, battery_mode(kw), round(kw, 3) + 0.0))
    return found
