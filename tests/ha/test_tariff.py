"""The grid tariff and connection in Home Assistant: the settings ``home_config`` reads, the fees and phase limits of
a curve, the month's peak from the recorder's statistics and the holidays of a calendar."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
import json
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from freezegun.api import FrozenDateTimeFactory
import numpy as np
import pytest
import yaml
from pytest_homeassistant_custom_component.common import (
    MockConfigEntry,
    MockModule,
    MockPlatform,
    mock_integration,
    mock_platform,
)
from pytest_homeassistant_custom_component.components.recorder.common import (
    async_wait_recording_done,
    do_adhoc_statistics,
)

from homeassistant.components.calendar import CalendarEntity, CalendarEvent
from homeassistant.components.recorder import Recorder
from homeassistant.config_entries import SOURCE_USER, ConfigEntryState, ConfigSubentryData
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util

from custom_components.agentic_hems.const import DOMAIN
from custom_components.agentic_hems.planning.home_config import home_config
from custom_components.agentic_hems.planning.home_view import home_payload
from custom_components.agentic_hems.planning.home_inputs import async_grid_terms, grid_terms, phases_of
from custom_components.agentic_hems.planning.tariff_source import async_holidays, async_month_peak
from custom_components.agentic_hems.prices.curve import PriceCurve
from custom_components.agentic_hems.scheduling.home_model import HomePlan

from .conftest import APPLIANCES, NOW, sample_entry
from .test_home_plan import BATTERY as HOME_BATTERY, _house, home_entry

BRUSSELS = ZoneInfo("Europe/Brussels")
TRANSLATIONS = Path(__file__).parents[2] / "custom_components" / "agentic_hems" / "translations"
MODULE3 = {
    "bands": {"low": 0.0345, "standard": 0.0862, "high": 0.1084},
    "default": "standard",
    "windows": [
        {"band": "low", "days": "mon-sun", "from": "01:00", "to": "04:00", "quarters": [1, 4]},
        {"band": "high", "days": "mon-sun", "from": "17:00", "to": "19:00", "quarters": [1, 4]},
    ],
}
TARIFF = {
    "tariff_bands": MODULE3, "capacity_price": 4.5, "capacity_min_kw": 2.5, "import_power_entity": "sensor.grid_import",
    "holiday_calendar": "calendar.holidays", "phase_count": "3", "phase_current_a": 25, "nominal_voltage": 230,
}
TARIFF_FORM = {**TARIFF, "tariff_bands": yaml.safe_dump(MODULE3)}  # as the form sends it: the bands as YAML text
BATTERY = {
    "name": "Garage battery", "capacity_kwh": 10.0, "charge_kw": 3.0, "discharge_kw": 3.0,
    "soc_entity": "sensor.garage_soc", "phase": "L2",
}


def entry_with(options: dict[str, Any], washer_phase: str | None = "L3") -> MockConfigEntry:
    """The sample entry with ``options``, a battery on L2 and the washer on ``washer_phase`` (None: not stored)."""
    entry = sample_entry(**options)
    subentries = dict(entry.subentries)
    washer = dict(APPLIANCES["washer"]) | ({"phase": washer_phase} if washer_phase else {})
    entry = MockConfigEntry(
        domain=DOMAIN, title=entry.title, data=dict(entry.data), options=dict(entry.options),
        subentries_data=[
            *(ConfigSubentryData(data=washer if sid == "washer" else dict(sub.data), subentry_id=sid,
                                 subentry_type=sub.subentry_type, title=sub.title, unique_id=None)
              for sid, sub in subentries.items()),
            ConfigSubentryData(data=BATTERY, subentry_id="bat1", subentry_type="battery", title="Garage battery",
                               unique_id=None),
        ],
    )
    return entry


def issue_error(hass: HomeAssistant, key: str) -> str | None:
    """The error text of the repair issue ``home_config_invalid_<key>``, None when there is none."""
    issue = ir.async_get(hass).async_get_issue(DOMAIN, f"home_config_invalid_{key}")
    return None if issue is None else issue.translation_placeholders["error"]


async def test_home_config_reads_the_tariff_the_connection_and_the_phases(hass: HomeAssistant) -> None:
    """Every stored setting comes back; the EV without a stored phase is three-phase, the dishwasher L1."""
    entry = entry_with(TARIFF)
    entry.add_to_hass(hass)
    config = home_config(hass, entry)
    assert config.tariff is not None and dict(config.tariff.fees) == MODULE3["bands"]
    assert (config.capacity_price, config.capacity_min_kw) == (4.5, 2.5)
    assert (config.import_power_entity, config.holiday_calendar) == ("sensor.grid_import", "calendar.holidays")
    assert (config.phase_count, config.phase_current_a, config.nominal_voltage) == (3, 25.0, 230.0)
    assert config.device_phases == {"dishwasher": "L1", "washer": "L3", "ev": "three-phase", "bat1": "L2"}
    assert issue_error(hass, "tariff") is None


async def test_invalid_settings_raise_the_issue_and_fall_back(hass: HomeAssistant) -> None:
    """Overlapping bands drop the fees (the connection still holds); a bad phase count drops the phase limits; an
    unknown appliance phase falls back to its default; fixing the settings clears the issues."""
    bad_bands = {**MODULE3, "windows": [*MODULE3["windows"], {"band": "low", "from": "18:00", "to": "20:00"}]}
    entry = entry_with({**TARIFF, "tariff_bands": bad_bands}, washer_phase="L4")
    entry.add_to_hass(hass)
    config = home_config(hass, entry)
    assert (config.tariff, config.capacity_price, config.import_power_entity) == (None, 0.0, None)
    assert config.phase_current_a == 25.0
    assert issue_error(hass, "tariff") == (
        "grid fees: window 3 (low) overlaps a window of band 'high' on mon at 18:00 in month 1")
    assert config.device_phases["washer"] == "L1"
    assert issue_error(hass, "washer") == "phase 'L4' is not one of L1, L2, L3, three-phase"

    hass.config_entries.async_update_entry(entry, options={**entry.options, "tariff_bands": MODULE3,
                                                           "phase_count": "2"})
    config = home_config(hass, entry)
    assert config.tariff is not None and config.phase_current_a is None
    assert issue_error(hass, "tariff") is not None and issue_error(hass, "tariff").startswith("connection: ")
    hass.config_entries.async_update_entry(entry, options={**entry.options, "phase_count": "1"})
    assert home_config(hass, entry).phase_count == 1 and issue_error(hass, "tariff") is None


async def test_grid_terms_of_a_curve_over_a_month_boundary(hass: HomeAssistant) -> None:
    """From 23:00 to 02:00 Brussels time on 31 January: four January slots then eight February ones; the last four
    (01:00-02:00) are in the low band. January's floor is the peak so far (3.2 kW above the 2.5 kW minimum),
    February's the minimum. 25 A x 230 V is 5.75 kW per phase."""
    entry = entry_with(TARIFF)
    entry.add_to_hass(hass)
    config = home_config(hass, entry)
    curve = PriceCurve(start=datetime(2026, 1, 31, 22, tzinfo=UTC), resolution=timedelta(minutes=15),
                       prices=np.full(12, 0.2))
    fees, phases = grid_terms(config, curve, 3.2, tz=BRUSSELS)
    assert fees is not None and phases is not None
    assert fees.energy_fee.tolist() == [0.0862] * 8 + [0.0345] * 4
    assert fees.month is not None and fees.month.tolist() == [0] * 4 + [1] * 8
    assert (fees.capacity_price, fees.peak_floor_kw) == (4.5, (3.2, 2.5))
    assert phases.limit_kw == pytest.approx(5.75)
    assert dict(phases.assignment) == {"dishwasher": "L1", "washer": "L3", "ev": "3", "bat1": "L2"}
    kept = phases_of(phases, ["washer", "bat1"])  # what a plan without the dishwasher and the EV may name
    assert kept is not None and dict(kept.assignment) == {"washer": "L3", "bat1": "L2"} and kept.limit_kw == 5.75
    assert phases_of(None, ["washer"]) is None

    hass.config_entries.async_update_entry(entry, options={**entry.options, "phase_count": "1", "capacity_price": 0,
                                                           "tariff_bands": None, "phase_current_a": 40})
    fees, phases = grid_terms(home_config(hass, entry), curve, 3.2, tz=BRUSSELS)
    assert fees is None and phases is not None and phases.limit_kw == pytest.approx(9.2)
    assert dict(phases.assignment) == dict.fromkeys(["dishwasher", "washer", "ev", "bat1", "pv", "base"], "L1")
    hass.config_entries.async_update_entry(entry, options={**entry.options, "capacity_price": 4.5})
    fees, _ = grid_terms(home_config(hass, entry), curve, 1.0, tz=BRUSSELS)
    assert fees is not None and fees.energy_fee.tolist() == [0.0] * 12 and fees.peak_floor_kw == (2.5, 2.5)


async def record_import(hass: HomeAssistant) -> datetime:
    """Record import power in W every 5 minutes from 30 minutes before a past local month starts (9 kW, then the
    month's values) and compile the 5-minute statistics; returns the month's start (UTC)."""
    assert await async_setup_component(hass, "sensor", {})
    local = dt_util.as_local(dt_util.utcnow())
    first = (local.replace(day=1) - timedelta(days=40)).replace(day=1, hour=0, minute=0, second=0, microsecond=0)
    start = first.astimezone(UTC)
    values_kw = [9.0] * 6 + [2.0, 4.0, 6.0, 1.0, 1.0, 1.0, 3.0, 3.0, 3.0, 8.0, -1.0, 0.0]
    attributes = {"unit_of_measurement": "W", "device_class": "power", "state_class": "measurement"}
    for i, value in enumerate([*values_kw, 0.0]):
        moment = start + timedelta(minutes=5 * (i - 6))
        hass.states.async_set("sensor.grid_import", str(value * 1000), attributes, timestamp=moment.timestamp())
    await async_wait_recording_done(hass)
    for i in range(len(values_kw)):
        do_adhoc_statistics(hass, period="5minute", start=start + timedelta(minutes=5 * (i - 6)))
    await async_wait_recording_done(hass)
    return start


async def test_month_peak_from_the_recorders_five_minute_statistics(
    recorder_mock: Recorder, hass: HomeAssistant, tz: str
) -> None:
    """The 9 kW of the previous month does not count; the quarter hours of the month average 2, 4, 6 kW to 4; 1 kW;
    3 kW; 8 kW, an export and 0 to 2.67: the peak is 4 kW."""
    start = await record_import(hass)
    now = start + timedelta(hours=2)
    assert await async_month_peak(hass, "sensor.grid_import", now) == pytest.approx(4.0)
    assert await async_month_peak(hass, "sensor.grid_import", start - timedelta(minutes=1)) == pytest.approx(9.0)
    assert await async_month_peak(hass, "sensor.unknown", now) is None


async def test_grid_terms_read_the_peak_and_the_holidays_from_home_assistant(
    recorder_mock: Recorder, hass: HomeAssistant, tz: str
) -> None:
    """The month's 4 kW peak so far is the capacity floor; the day that is a holiday in the calendar takes the Sunday
    band, the next day its own weekday's; without the import sensor the floor is the minimum, and a note says so."""
    start = await record_import(hass)
    now = start + timedelta(hours=2)
    holiday = dt_util.as_local(now).date()
    await setup_calendar(hass, [CalendarEvent(start=holiday, end=holiday + timedelta(days=1), summary="Holiday")])
    bands = {"bands": {"weekday": 0.1, "sunday": 0.01}, "holidays_as_sunday": True, "windows": [
        {"band": "weekday", "days": "mon-sat", "from": "00:00", "to": "24:00"},
        {"band": "sunday", "days": "sun", "from": "00:00", "to": "24:00"}]}
    entry = entry_with({**TARIFF, "tariff_bands": bands, "holiday_calendar": "calendar.holidays"})
    entry.add_to_hass(hass)
    config = home_config(hass, entry)
    curve = PriceCurve(start=now, resolution=timedelta(hours=1), prices=np.full(72, 0.2))  # three days: one is neither a holiday nor a Sunday
    fees, phases, note = await async_grid_terms(hass, config, curve, now)
    assert fees is not None and phases is not None and note is None
    expected = [0.01 if (d := dt_util.as_local(s)).date() == holiday or d.weekday() == 6 else 0.1
                for s in curve.slot_starts()]
    assert fees.energy_fee.tolist() == expected and 0.1 in expected
    assert fees.peak_floor_kw == (pytest.approx(4.0),)

    hass.config_entries.async_update_entry(entry, options={**entry.options, "import_power_entity": None})
    fees, _, note = await async_grid_terms(hass, home_config(hass, entry), curve, now)
    assert fees is not None and fees.peak_floor_kw == (2.5,)
    assert note == "no month's peak so far from the import power sensor: the capacity charge starts at the minimum"


class Holidays(CalendarEntity):
    """A calendar with the given events."""

    _attr_name = "Holidays"

    def __init__(self, events: list[CalendarEvent]) -> None:
        """Hold ``events``."""
        self._events = events

    @property
    def event(self) -> CalendarEvent | None:
        """No current event."""
        return None

    async def async_get_events(self, hass: HomeAssistant, start_date: datetime, end_date: datetime
                               ) -> list[CalendarEvent]:
        """The events."""
        return self._events


async def setup_calendar(hass: HomeAssistant, events: list[CalendarEvent]) -> None:
    """Set up ``calendar.holidays`` with ``events``."""
    async def setup_platform(hass: HomeAssistant, config: Any, add_entities: Any, discovery_info: Any = None) -> None:
        add_entities([Holidays(events)])

    mock_integration(hass, MockModule("holiday_test"))
    mock_platform(hass, "holiday_test.calendar", MockPlatform(async_setup_platform=setup_platform))
    assert await async_setup_component(hass, "calendar", {"calendar": {"platform": "holiday_test"}})
    await hass.async_block_till_done()


async def test_holidays_from_a_calendar(hass: HomeAssistant, tz: str) -> None:
    """An all-day event over two days gives both dates; a timed one its local date; a missing calendar none."""
    await setup_calendar(hass, [
        CalendarEvent(start=date(2026, 12, 25), end=date(2026, 12, 27), summary="Christmas"),
        CalendarEvent(start=datetime(2027, 1, 1, 0, 30, tzinfo=BRUSSELS), end=datetime(2027, 1, 1, 1, 0, tzinfo=BRUSSELS),
                      summary="New Year"),
    ])
    start, end = datetime(2026, 12, 20, tzinfo=UTC), datetime(2027, 1, 5, tzinfo=UTC)
    assert await async_holidays(hass, "calendar.holidays", start, end) == {
        date(2026, 12, 25), date(2026, 12, 26), date(2027, 1, 1)}
    assert await async_holidays(hass, "calendar.none", start, end) == set()


async def through_to_tariff(hass: HomeAssistant, entry: MockConfigEntry) -> dict[str, Any]:
    """An options flow through init, control, grid and home as they are; returns the tariff form."""
    result = await hass.config_entries.options.async_init(entry.entry_id)
    for step in ("init", "control", "grid", "home"):
        assert result["step_id"] == step
        result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["step_id"] == "tariff"
    return result


def error_template(lang: str) -> str:
    """The tariff step's band error in ``lang``."""
    strings = json.loads((TRANSLATIONS / f"{lang}.json").read_text(encoding="utf-8"))
    return str(strings["options"]["error"]["invalid_tariff"])


async def test_the_tariff_step_checks_the_bands_and_stores_what_home_config_reads(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """Overlapping bands are a field error with the schedule's own sentence in the translated message; valid settings
    are stored and read back; an empty form suggests a three-phase 230 V connection; cleared fields are dropped."""
    result = await through_to_tariff(hass, loaded_entry)
    suggested = {str(k): (k.description or {}).get("suggested_value") for k in result["data_schema"].schema}
    assert suggested == {"tariff_bands": None, "capacity_price": 0.0, "capacity_min_kw": 0.0,
                         "import_power_entity": None, "holiday_calendar": None, "phase_count": "3",
                         "phase_current_a": None, "nominal_voltage": 230.0}
    bad = {**MODULE3, "windows": [*MODULE3["windows"], {"band": "low", "from": "18:00", "to": "20:00"}]}
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {**TARIFF, "tariff_bands": yaml.safe_dump(bad)})
    assert result["step_id"] == "tariff" and result["errors"] == {"tariff_bands": "invalid_tariff"}
    sentence = "window 3 (low) overlaps a window of band 'high' on mon at 18:00 in month 1"
    assert result["description_placeholders"]["error"] == sentence
    assert error_template("en").format(error=sentence).startswith("The network fee bands are not valid: window 3")
    assert error_template("de").format(error=sentence).startswith("Die Netzentgelt-Zeitfenster sind ungültig: window 3")
    assert "tariff_bands" not in loaded_entry.options

    result = await hass.config_entries.options.async_configure(result["flow_id"], TARIFF_FORM)
    assert result["step_id"] == "assistant"
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done(wait_background_tasks=True)
    assert {k: loaded_entry.options[k] for k in TARIFF} == TARIFF
    config = home_config(hass, loaded_entry)
    assert config.tariff is not None and config.tariff.default == "standard" and config.capacity_price == 4.5
    assert (config.phase_count, config.phase_current_a, config.holiday_calendar) == (3, 25.0, "calendar.holidays")

    result = await through_to_tariff(hass, loaded_entry)
    suggested = {str(k): (k.description or {}).get("suggested_value") for k in result["data_schema"].schema}
    assert {**suggested, "tariff_bands": yaml.safe_load(suggested["tariff_bands"])} == TARIFF  # the saved bands as YAML
    kept = {"capacity_price": 4.5, "phase_count": "1", "nominal_voltage": 230}  # the frontend leaves cleared ones out
    result = await hass.config_entries.options.async_configure(result["flow_id"], kept)
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done(wait_background_tasks=True)
    assert not {"tariff_bands", "capacity_min_kw", "import_power_entity", "holiday_calendar",
                "phase_current_a"} & set(loaded_entry.options)
    config = home_config(hass, loaded_entry)
    assert (config.tariff, config.capacity_min_kw, config.phase_count, config.phase_current_a) == (None, 0.0, 1, None)


async def test_devices_store_their_phase(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """An appliance stores the phase picked; a battery form suggests three-phase and stores L3 when picked; the plan
    reads both, with the EV (nothing stored) three-phase."""
    appliance = {**APPLIANCES["washer"], "name": "Dryer", "entity_id": "input_boolean.dryer", "earliest_start": "08:00",
                 "deadline": "20:00", "phase": "L2"}
    result = await hass.config_entries.subentries.async_init((loaded_entry.entry_id, "appliance"),
                                                           context={"source": SOURCE_USER})
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], appliance)
    assert result["type"] is FlowResultType.CREATE_ENTRY and result["data"]["phase"] == "L2"
    await hass.async_block_till_done(wait_background_tasks=True)
    result = await hass.config_entries.subentries.async_init((loaded_entry.entry_id, "battery"),
                                                           context={"source": SOURCE_USER})
    suggested = {str(k): (k.description or {}).get("suggested_value") for k in result["data_schema"].schema}
    assert suggested["phase"] == "three-phase"
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {**BATTERY, "phase": "L3"})
    assert result["type"] is FlowResultType.CREATE_ENTRY and result["data"]["phase"] == "L3"
    await hass.async_block_till_done(wait_background_tasks=True)
    ids = {sub.title: sid for sid, sub in loaded_entry.subentries.items()}
    phases = home_config(hass, loaded_entry).device_phases
    assert phases == {"dishwasher": "L1", "washer": "L1", "ev": "three-phase", ids["Dryer"]: "L2",
                      ids["Garage battery"]: "L3"}


BOILER = {"name": "Boiler", "kind": "generic", "entity_id": "input_boolean.boiler", "power_kw": 3.0,
          "duration_min": 60, "contiguous": True, "earliest_start": "18:00:00", "deadline": "07:00:00", "phase": "L1"}


async def home_plan(hass: HomeAssistant, freezer: FrozenDateTimeFactory, appliances: dict[str, dict[str, Any]],
                    **options: Any) -> MockConfigEntry:
    """The home plan's entry (its battery, PV and sample prices) with ``appliances`` and ``options``, set up at NOW."""
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    solar = await _house(hass)
    entry = home_entry(solar.entry_id, **options)
    entry = MockConfigEntry(
        domain=DOMAIN, title=entry.title, unique_id="sample", data=dict(entry.data), options=dict(entry.options),
        subentries_data=[
            *(ConfigSubentryData(data=data, subentry_id=key, subentry_type="appliance", title=data["name"],
                                 unique_id=None) for key, data in appliances.items()),
            ConfigSubentryData(data=HOME_BATTERY, subentry_id="battery1", subentry_type="battery",
                               title="Home battery", unique_id=None),
        ],
    )
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done(wait_background_tasks=True)
    return entry


async def replanned(hass: HomeAssistant, entry: MockConfigEntry, **options: Any) -> HomePlan:
    """The home plan after ``options`` are changed (the entry reloads)."""
    hass.config_entries.async_update_entry(entry, options={**entry.options, **options})
    await hass.async_block_till_done(wait_background_tasks=True)
    return current_plan(entry)


def current_plan(entry: MockConfigEntry) -> HomePlan:
    """The entry's current home plan."""
    result = entry.runtime_data.home.result
    assert result is not None and result.plan is not None, result
    return result.plan


async def test_a_capacity_tariff_flattens_the_ev_charging(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> None:
    """Without a capacity charge the EV charges at its full 11 kW in the cheapest slots (an 11 kW import peak); at 20 EUR
    per kW and month above the 2.5 kW minimum it delivers the same 30 kWh without importing more than 2.5 kW: the EV
    then draws at most 2.5 kW plus the battery's 3 kW discharge."""
    entry = await home_plan(hass, freezer, {"ev": APPLIANCES["ev"]})
    before = current_plan(entry)
    after = await replanned(hass, entry, capacity_price=20.0, capacity_min_kw=2.5)
    hours = before.resolution / timedelta(hours=1)
    for plan in (before, after):
        assert float(plan.load_kw["ev"].sum()) * hours == pytest.approx(30.0)
    assert float(before.load_kw["ev"].max()) == pytest.approx(11.0) and before.peak_kw == pytest.approx(11.0)
    assert float(after.import_kw.max()) <= 2.5 + 1e-6 and after.peak_floor_kw == 2.5
    assert float(after.load_kw["ev"].max()) <= 5.5 + 1e-6 and after.capacity_cost == pytest.approx(0.0, abs=1e-6)
    grid = home_payload_of(entry)["grid"]  # what the card, plan_home and get_home_plan show
    assert (grid["peak_so_far_kw"], grid["peak_kw"]) == (2.5, round(after.peak_kw, 3))
    assert (grid["capacity_cost"], grid["phase_limit_kw"]) == (0.0, None)


def home_payload_of(entry: MockConfigEntry) -> dict[str, Any]:
    """The home part of the schedule websocket's answer (the payload plan_home and get_home_plan return too)."""
    return home_payload(entry.runtime_data.home.result, entry.runtime_data.home.config) or {}


def runs(plan: HomePlan, minutes: dict[str, int]) -> dict[str, tuple[datetime, datetime]]:
    """Each appliance's planned run as (start, end)."""
    return {name: (start, start + timedelta(minutes=m)) for name, m in minutes.items()
            if (start := plan.starts[name]) is not None}


async def test_a_phase_limit_moves_an_appliance(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> None:
    """The dishwasher (1.8 kW) and the boiler (3 kW) are both on L1: without a phase limit they start together in the
    cheapest slot; at 16 A x 230 V = 3.68 kW per phase they cannot run together (the battery's 1 kW per phase of
    discharge still leaves 3.8 kW on L1), so one of them moves and L1 stays under 3.68 kW."""
    entry = await home_plan(hass, freezer, {"dishwasher": {**APPLIANCES["dishwasher"], "phase": "L1"},
                                            "boiler": BOILER})
    minutes = {"dishwasher": 150, "boiler": 60}
    before = runs(current_plan(entry), minutes)
    assert before["dishwasher"][0] == before["boiler"][0]
    plan = await replanned(hass, entry, phase_current_a=16)
    after = runs(plan, minutes)
    (first, first_end), (second, _) = sorted(after.values())
    assert first_end <= second and after != before
    assert float(plan.phase_kw["L1"].max()) <= 3.68 + 1e-6
    payload = home_payload_of(entry)  # what the card, plan_home and get_home_plan show
    assert payload["grid"]["phase_limit_kw"] == 3.68
    assert [slot["l1_kw"] for slot in payload["slots"]] == [round(float(v), 3) for v in plan.phase_kw["L1"]]


async def test_the_tariff_step_refuses_a_nested_or_quoted_holiday_flag(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    """A holiday flag nested 300 lists deep (which HA could not store) or written as the text "false" is a field
    error with the schedule's own sentence; nothing is stored."""
    deep: Any = True
    for _ in range(300):
        deep = [deep]
    result = await through_to_tariff(hass, loaded_entry)
    for flag, sentence in (
        (deep, "the band schedule is too large: more than 8 nesting levels"),
        ("false", "holidays_as_sunday must be true or false (without quotes), got 'false'"),
    ):
        result = await hass.config_entries.options.async_configure(
            result["flow_id"], {**TARIFF, "tariff_bands": yaml.safe_dump({**MODULE3, "holidays_as_sunday": flag})})
        assert result["step_id"] == "tariff" and result["errors"] == {"tariff_bands": "invalid_tariff"}
        assert result["description_placeholders"]["error"] == sentence
    assert "tariff_bands" not in loaded_entry.options


async def test_a_stored_schedule_of_too_many_bands_is_a_repair_issue(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """Stored options with 33 bands, or 33000 (beyond the band table's int16 index), set up without fees and with
    the repair issue naming the problem."""
    freezer.move_to(NOW)
    for count, problem in ((33, "at most 32 bands, got 33"),
                           (33000, "the band schedule is too large: more than 1000 entries in all")):
        bands = {"bands": {f"b{i}": 0.01 for i in range(count)}, "default": "b0",
                 "windows": [{"band": f"b{count - 1}", "from": "00:00", "to": "01:00"}]}
        entry = sample_entry(tariff_bands=bands)
        entry.add_to_hass(hass)
        assert await hass.config_entries.async_setup(entry.entry_id)
        await hass.async_block_till_done()
        assert entry.state is ConfigEntryState.LOADED
        assert home_config(hass, entry).tariff is None
        assert issue_error(hass, "tariff") == f"grid fees: {problem}"
        assert await hass.config_entries.async_unload(entry.entry_id)


async def test_holidays_are_clipped_to_the_horizon(hass: HomeAssistant, tz: str) -> None:
    """An event from year 1 to 9999 gives only the horizon's dates; events before or after it give none."""
    await setup_calendar(hass, [
        CalendarEvent(start=date(1, 1, 1), end=date(9999, 12, 31), summary="Forever"),
        CalendarEvent(start=date(2026, 12, 1), end=date(2026, 12, 3), summary="Before"),
        CalendarEvent(start=date(9999, 12, 30), end=date(9999, 12, 31), summary="After"),
    ])
    start, end = datetime(2026, 12, 20, 12, tzinfo=UTC), datetime(2026, 12, 23, 12, tzinfo=UTC)
    assert await async_holidays(hass, "calendar.holidays", start, end) == {
        date(2026, 12, 20), date(2026, 12, 21), date(2026, 12, 22), date(2026, 12, 23)}


async def test_a_typo_in_the_fee_bands_keeps_the_saved_bands(hass: HomeAssistant) -> None:
    """Band text that is not YAML is an error naming its line; the form keeps the text, the saved bands stay (an
    object selector would send nothing for such text, and the step would drop the bands)."""
    entry = sample_entry(**TARIFF)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    result = await through_to_tariff(hass, entry)
    typo = "bands:\n  low: 0.03\n  high: [0.1\ndefault: low\n"  # the list on line 3 is not closed
    result = await hass.config_entries.options.async_configure(result["flow_id"], {**TARIFF, "tariff_bands": typo})
    assert (result["step_id"], result["errors"]) == ("tariff", {"tariff_bands": "yaml_invalid"})
    placeholders = result["description_placeholders"]
    assert {k: placeholders[k] for k in ("error", "line", "problem")} == {
        "error": "", "line": "4", "problem": "expected ',' or ']', but got ':'"}
    suggested = {str(k): (k.description or {}).get("suggested_value") for k in result["data_schema"].schema}
    assert suggested["tariff_bands"] == typo
    hass.config_entries.options.async_abort(result["flow_id"])
    assert entry.options["tariff_bands"] == MODULE3
    assert home_config(hass, entry).tariff is not None


@pytest.mark.parametrize(
    ("changes", "field", "english"),
    [
        ({"phase_current_a": 1000}, "phase_current_a", "Enter the main fuse's current from 6 to 250 A per phase."),
        ({"phase_current_a": 5}, "phase_current_a", "Enter the main fuse's current from 6 to 250 A per phase."),
        ({"nominal_voltage": 50}, "nominal_voltage", "Enter a voltage from 100 to 400 V between phase and neutral."),
        ({"capacity_price": 500}, "capacity_price", "Enter a capacity price from 0 to 100 per kW and month."),
        ({"capacity_min_kw": -1}, "capacity_min_kw", "Enter a minimum billed peak from 0 to 50 kW."),
    ],
    ids=["fuse-1000-a", "fuse-5-a", "voltage", "capacity-price", "billed-peak"],
)
async def test_the_tariff_step_names_the_range_of_a_number_outside_it(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, changes: dict[str, Any], field: str, english: str
) -> None:
    """Each number of the step has a home's range, named in its translated error; nothing is
    stored."""
    before = dict(loaded_entry.options)
    result = await through_to_tariff(hass, loaded_entry)
    result = await hass.config_entries.options.async_configure(result["flow_id"], {**TARIFF_FORM, **changes})
    assert (result["step_id"], list(result["errors"])) == ("tariff", [field])
    strings = json.loads((TRANSLATIONS / "en.json").read_text(encoding="utf-8"))["options"]["error"]
    assert strings[result["errors"][field]].format(**result["description_placeholders"]) == english
    hass.config_entries.options.async_abort(result["flow_id"])
    assert dict(loaded_entry.options) == before


async def test_fee_band_text_with_unquoted_times_and_a_band_named_twice(hass: HomeAssistant) -> None:
    """``from: 17:00`` unquoted is the time 17:00 (YAML 1.1 read the base-60 number 1020, refused as "'1020' is not a
    time of day"); a band named twice is an error with its line (PyYAML kept the last fee silently)."""
    entry = sample_entry(**TARIFF)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    result = await through_to_tariff(hass, entry)
    twice = "bands:\n  low: 0.0345\n  low: 0.345\ndefault: low\n"
    result = await hass.config_entries.options.async_configure(result["flow_id"], {**TARIFF, "tariff_bands": twice})
    assert (result["step_id"], result["errors"]) == ("tariff", {"tariff_bands": "yaml_invalid"})
    assert (result["description_placeholders"]["line"], result["description_placeholders"]["problem"]) == (
        "3", "found duplicate key 'low'")
    unquoted = yaml.safe_dump(MODULE3).replace("'", "")
    assert "from: 17:00" in unquoted and yaml.safe_load(unquoted)["windows"][1]["from"] == 1020  # YAML 1.1's reading
    result = await hass.config_entries.options.async_configure(result["flow_id"], {**TARIFF, "tariff_bands": unquoted})
    assert result["step_id"] == "assistant"
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert entry.options["tariff_bands"] == MODULE3
    await hass.async_block_till_done()  # the reload the new options start, then an unload: no check left pending
    assert await hass.config_entries.async_unload(entry.entry_id)
