"""The automation triggers and conditions, run by Home Assistant's automation engine while time moves on.

Time walks slot boundary by slot boundary (the frozen clock moved, then the timers due fired), as a running Home
Assistant lives through them. Each automation calls ``test.automation`` with ``now()`` and the trigger's variables,
so a test sees the instant its action ran. Expected instants come from the bundled sample documents read here, from
brute force over prices the test gives a price sensor, or from the plan a schedule call stored.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import UTC, datetime, timedelta
from pathlib import Path
import re
from typing import Any
import xml.etree.ElementTree as ET
from zoneinfo import ZoneInfo

from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_fire_time_changed, async_mock_service
import yaml

from homeassistant.core import HomeAssistant, ServiceCall
from homeassistant.helpers import condition as ha_condition, entity_registry as er, trigger as ha_trigger
from homeassistant.helpers.translation import async_get_translations
from homeassistant.setup import async_setup_component

from custom_components.agentic_hems.const import DEFAULT_OPTIONS, DOMAIN
from custom_components.agentic_hems.validation import vol

from .conftest import NOW, TZ
from .oracles import be_60m_hourly_eur_per_kwh

LOCAL = ZoneInfo(TZ)
SLOT = timedelta(minutes=15)
PACKAGE = Path(__file__).parents[2] / "custom_components" / DOMAIN
MIX = Path(__file__).parents[1] / "fixtures" / "entsoe" / "BE_60M_15M_mix.xml"
NS = {"d": "urn:iec62325.351:tc57wg16:451-3:publicationdocument:7:3"}
RECORD = {"at": "{{ now().isoformat() }}", "id": "{{ trigger.id }}"}


@pytest.fixture(autouse=True)
async def automations_off(hass: HomeAssistant) -> AsyncGenerator[None]:
    """Turn the automations off after each test: their triggers' waits end with them."""
    yield
    if hass.services.has_service("automation", "turn_off"):
        await hass.services.async_call("automation", "turn_off", {"entity_id": "all"}, blocking=True)


def local(day: int, hour: int, minute: int = 0) -> datetime:
    """A local time in November 2026 (Brussels, UTC+1 all month), as UTC."""
    return datetime(2026, 11, day, hour, minute, tzinfo=LOCAL).astimezone(UTC)


def mix_first_day_eur_per_kwh() -> list[float]:
    """The 96 quarter-hours of BE_60M_15M_mix.xml's first period, EUR/kWh (curve A03: a missing position repeats
    the one before)."""
    period = ET.parse(MIX).getroot().findall(".//d:Period", NS)[0]
    given = {
        int(p.find("d:position", NS).text): float(p.find("d:price.amount", NS).text)
        for p in period.findall("d:Point", NS)
    }
    prices, last = [], None
    for position in range(1, 97):
        last = given.get(position, last)
        prices.append(last / 1000)
    return prices


def sample_slots() -> dict[datetime, float]:
    """EUR/kWh by slot start (UTC) of the sample as loaded at NOW: today BE_60M's hours, tomorrow the mix's day."""
    hourly = be_60m_hourly_eur_per_kwh()
    today = {local(29, 0) + SLOT * k: hourly[k // 4] for k in range(96)}
    return today | {local(30, 0) + SLOT * k: price for k, price in enumerate(mix_first_day_eur_per_kwh())}


def crossings(slots: dict[datetime, float | None], after: datetime, direction: str, threshold: float) -> list[tuple]:
    """(moment, price, previous price) of every boundary after ``after`` where the price crosses ``threshold``
    between two known prices."""
    found = []
    starts = sorted(slots)
    for before, moment in zip(starts, starts[1:]):
        previous, price = slots[before], slots[moment]
        if moment <= after or previous is None or price is None:
            continue
        if (direction == "above" and previous <= threshold < price) or (
            direction == "below" and previous >= threshold > price
        ):
            found.append((moment, price, previous))
    return found


async def walk_to(hass: HomeAssistant, freezer: FrozenDateTimeFactory, end: datetime) -> None:
    """Live through every slot boundary after now up to ``end``."""
    now = datetime.now(UTC)
    moment = now.replace(minute=now.minute - now.minute % 15, second=0, microsecond=0) + SLOT
    while moment <= end:
        freezer.move_to(moment)
        async_fire_time_changed(hass, moment)
        await hass.async_block_till_done()
        moment += SLOT


async def automate(hass: HomeAssistant, *rules: dict[str, Any]) -> list[ServiceCall]:
    """Set up one automation per rule (``id``, ``trigger``, optional ``conditions`` and ``data``); returns the calls."""
    calls = async_mock_service(hass, "test", "automation")
    automations = [
        {
            "id": rule["id"],
            "mode": "parallel",
            "triggers": [{**rule["trigger"], "id": rule["id"]}],
            "conditions": rule.get("conditions", []),
            "actions": [{"action": "test.automation", "data": {**RECORD, **rule.get("data", {})}}],
        }
        for rule in rules
    ]
    assert await async_setup_component(hass, "automation", {"automation": automations})
    await hass.async_block_till_done()
    return calls


def fired(calls: list[ServiceCall], rule_id: str, key: str = "at") -> list[str]:
    return [call.data[key] for call in calls if call.data["id"] == rule_id]


def iso(moment: datetime) -> str:
    return moment.astimezone(LOCAL).isoformat()


async def schedule(hass: HomeAssistant, start: datetime, deadline: datetime, minutes: int) -> None:
    await hass.services.async_call(
        DOMAIN,
        "schedule",
        {"appliance": "dishwasher", "duration_min": minutes, "earliest_start": start, "deadline": deadline},
        blocking=True,
    )
    await hass.async_block_till_done()


def cheapest_start(slots: dict[datetime, float], start: datetime, end: datetime, count: int) -> datetime:
    """Brute force: the start of the cheapest run of ``count`` slots within [start, end), the earliest of equals."""
    starts = [s for s in sorted(slots) if start <= s and s + SLOT * count <= end]
    return min(starts, key=lambda s: (round(sum(slots[s + SLOT * i] for i in range(count)), 9), s))


# ------------------------------------------------------------------------------------------------ plans


async def test_a_replan_moves_the_run_start_and_end_triggers(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    device_id = er.async_get(hass).async_get("binary_sensor.dishwasher_run_now").device_id
    calls = await automate(
        hass,
        {
            "id": "start",
            "trigger": {"trigger": "agentic_hems.plan_started", "target": {"device_id": device_id}},
            "data": {"run": "{{ trigger.appliance }} {{ trigger.start.isoformat() }}"},
        },
        {
            "id": "end",
            "trigger": {
                "trigger": "agentic_hems.plan_ended",
                "target": {"entity_id": "binary_sensor.dishwasher_run_now"},
            },
        },
    )
    slots = sample_slots()
    first = cheapest_start(slots, local(29, 20, 30), local(29, 22), 4)
    await schedule(hass, local(29, 20, 30), local(29, 22), 60)
    assert hass.states.get("binary_sensor.dishwasher_run_now").attributes["start"] == first.isoformat()
    await walk_to(hass, freezer, first - SLOT)
    assert calls == []

    # Moved later before it started: the old start passes without firing, the new start and end fire.
    later = cheapest_start(slots, local(29, 22), local(29, 23, 45), 4)
    assert later > first
    await schedule(hass, local(29, 22), local(29, 23, 59), 60)
    await walk_to(hass, freezer, later + 4 * SLOT)
    assert fired(calls, "start") == [iso(later)]
    assert fired(calls, "start", "run") == [f"Dishwasher {iso(later)}"]
    assert fired(calls, "end") == [iso(later + 4 * SLOT)]


async def test_plan_running_condition(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    calls = await automate(
        hass,
        {
            "id": "running",
            "trigger": {"trigger": "event", "event_type": "probe"},
            "conditions": [
                {"condition": "agentic_hems.plan_running", "target": {"entity_id": "binary_sensor.dishwasher_run_now"}}
            ],
        },
    )
    await schedule(hass, local(29, 21), local(29, 22), 30)  # one run, 21:00-21:30 (its only 30 minutes)
    for moment in (local(29, 20, 45), local(29, 21), local(29, 21, 15), local(29, 21, 30)):
        await walk_to(hass, freezer, moment)
        hass.bus.async_fire("probe")
        await hass.async_block_till_done()
    assert fired(calls, "running") == [iso(local(29, 21)), iso(local(29, 21, 15))]


# ------------------------------------------------------------------------------------------------ prices


@pytest.mark.parametrize(("direction", "threshold"), [("below", 0.06), ("above", 0.055)])
async def test_price_crossing_fires_at_the_boundary_the_sample_documents_give(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, freezer: FrozenDateTimeFactory, direction: str, threshold: float
) -> None:
    moment, price, previous = crossings(sample_slots(), NOW, direction, threshold)[0]
    calls = await automate(
        hass,
        {
            "id": "cross",
            "data": {"price": "{{ trigger.price }}", "previous": "{{ trigger.previous_price }}"},
            "trigger": {
                "trigger": "agentic_hems.price_crossed_threshold",
                "options": {"direction": direction, "threshold": threshold},
            },
        },
    )
    await walk_to(hass, freezer, moment - 2 * SLOT)
    # The entry reloads on the way (an options change would do it): the trigger follows the new runtime.
    assert await hass.config_entries.async_reload(loaded_entry.entry_id)
    await hass.async_block_till_done()
    await walk_to(hass, freezer, moment - SLOT)
    assert calls == []
    await walk_to(hass, freezer, moment)
    assert fired(calls, "cross") == [iso(moment)]
    assert float(calls[0].data["price"]) == pytest.approx(price)
    assert float(calls[0].data["previous"]) == pytest.approx(previous)


async def test_cheapest_window_of_today_follows_the_new_day(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    """Today's cheapest hour (04:00) has passed at NOW; at midnight the sample lays BE_60M on the new today."""
    hourly = be_60m_hourly_eur_per_kwh()
    new_today = {local(30, 0) + SLOT * k: hourly[k // 4] for k in range(96)}
    expected = cheapest_start(new_today, local(30, 0), local(30, 23) + 4 * SLOT, 4)
    calls = await automate(
        hass,
        {
            "id": "window",
            "data": {"end": "{{ trigger.end.isoformat() }}", "mean": "{{ trigger.mean_price }}"},
            "trigger": {
                "trigger": "agentic_hems.cheapest_window_started",
                "options": {"minutes": 60, "scope": "today"},
            },
        },
    )
    await walk_to(hass, freezer, expected)
    assert fired(calls, "window") == [iso(expected)]
    assert fired(calls, "window", "end") == [iso(expected + 4 * SLOT)]
    assert float(calls[0].data["mean"]) == pytest.approx(new_today[expected])


async def test_price_among_cheapest_ranks_the_sample_day(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, freezer: FrozenDateTimeFactory
) -> None:
    """At 20:05 the 20:00 slot's rank in the day, by price then time, comes from BE_60M's hours."""
    today = {start: price for start, price in sample_slots().items() if start < local(30, 0)}
    rank = sum(1 for start, price in today.items() if (price, start) < (today[local(29, 20)], local(29, 20)))
    assert 0 < rank < 95
    calls = await automate(
        hass,
        *(
            {
                "id": f"cheapest_{n}",
                "trigger": {"trigger": "event", "event_type": "probe"},
                "conditions": [{"condition": "agentic_hems.price_among_cheapest", "options": {"slots": n}}],
            }
            for n in (rank, rank + 1)
        ),
    )
    hass.bus.async_fire("probe")
    await hass.async_block_till_done()
    assert fired(calls, f"cheapest_{rank + 1}") == [NOW.isoformat()]
    assert fired(calls, f"cheapest_{rank}") == []


# ----------------------------------------------------------------------------------- a price sensor's prices


def sensor_entry() -> MockConfigEntry:
    return MockConfigEntry(
        domain=DOMAIN,
        title="Price sensor",
        unique_id="sensor_prices",
        data={"price_source": "sensor", "price_entity": "sensor.prices"},
        options=dict(DEFAULT_OPTIONS),
        version=1,
        minor_version=1,
    )


async def sensor_prices(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory, hourly: dict[datetime, float | None]
) -> None:
    """Set up the sensor entry at NOW on a price sensor giving ``hourly`` (EUR/kWh by local hour start, UTC) for the
    local 29th and 30th; None is a price the sensor does not give."""
    freezer.move_to(NOW)
    await hass.config.async_set_time_zone(TZ)
    assert await async_setup_component(hass, "homeassistant", {})

    def items(day: int) -> list[dict[str, Any]]:
        return [
            {
                "start": iso(local(day, h)),
                "end": iso(local(day, h) + timedelta(hours=1)),
                "value": hourly[local(day, h)],
            }
            for h in range(24)
        ]

    hass.states.async_set(
        "sensor.prices", "0.1", {"unit_of_measurement": "EUR/kWh", "raw_today": items(29), "raw_tomorrow": items(30)}
    )
    entry = sensor_entry()
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()


def by_quarter(hourly: dict[datetime, float | None]) -> dict[datetime, float | None]:
    return {hour + SLOT * q: price for hour, price in hourly.items() for q in range(4)}


async def test_unknown_prices_never_cross_a_threshold_and_never_rank_cheap(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """No price from 00:00 to 03:00 on the 30th: neither the fall into the gap nor the rise out of it is a crossing."""
    hourly: dict[datetime, float | None] = {local(d, h): 0.10 for d in (29, 30) for h in range(24)}
    hourly |= {local(30, 0): None, local(30, 1): None, local(30, 2): None, local(30, 3): 0.02, local(30, 5): 0.02}
    hourly |= {local(29, h): None for h in range(12)}  # the sensor does not give the 29th's morning either
    await sensor_prices(hass, freezer, hourly)
    calls = await automate(
        hass,
        {
            "id": "below",
            "trigger": {
                "trigger": "agentic_hems.price_crossed_threshold",
                "options": {"direction": "below", "threshold": 0.05},
            },
        },
        {
            "id": "above",
            "trigger": {
                "trigger": "agentic_hems.price_crossed_threshold",
                "options": {"direction": "above", "threshold": 0.05},
            },
        },
        {"id": "window", "trigger": {"trigger": "agentic_hems.cheapest_window_started", "options": {"minutes": 60}}},
        *(
            {
                "id": f"cheapest_{n}",
                "trigger": {"trigger": "event", "event_type": "probe"},
                "conditions": [{"condition": "agentic_hems.price_among_cheapest", "options": {"slots": n}}],
            }
            for n in (80, 81)
        ),
    )
    # At 20:05 on the 29th all 48 known slots cost 0.10: 20:00 ranks 32nd of them (earlier first), and the 48 unknown
    # morning slots might all be cheaper: it is surely among the 81 cheapest, not surely among the 80.
    known = sorted(s for s, p in by_quarter(hourly).items() if p is not None and s < local(30, 0))
    assert known.index(local(29, 20)) + 48 == 80
    hass.bus.async_fire("probe")
    await hass.async_block_till_done()
    assert fired(calls, "cheapest_81") == [NOW.isoformat()] and fired(calls, "cheapest_80") == []

    quarters = by_quarter(hourly)
    await walk_to(hass, freezer, local(30, 6))
    for direction, expected in (("above", [local(30, 4), local(30, 6)]), ("below", [local(30, 5)])):
        assert [moment for moment, _, _ in crossings(quarters, NOW, direction, 0.05)] == expected
        assert fired(calls, direction) == [iso(moment) for moment in expected]
    # Neither day is fully priced, so neither has a cheapest hour (taken as zero, the gap would have won at 00:00).
    assert fired(calls, "window") == []


async def test_cheapest_window_of_today_and_of_the_horizon(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> None:
    hourly: dict[datetime, float | None] = {local(d, h): 0.20 for d in (29, 30) for h in range(24)}
    hourly |= {local(29, 22): 0.05, local(30, 3): 0.01, local(30, 4): 0.02, local(30, 9): 0.015}
    await sensor_prices(hass, freezer, hourly)
    quarters = by_quarter(hourly)
    calls = await automate(
        hass,
        {"id": "today", "trigger": {"trigger": "agentic_hems.cheapest_window_started", "options": {"minutes": 60}}},
        {
            "id": "horizon",
            "trigger": {
                "trigger": "agentic_hems.cheapest_window_started",
                "options": {"minutes": 100, "scope": "horizon"},
            },
        },
    )
    today = [
        cheapest_start(quarters, local(29, 0), local(30, 0), 4),
        cheapest_start(quarters, local(30, 0), local(30, 23) + 4 * SLOT, 4),
    ]
    horizon = cheapest_start(quarters, local(29, 0), local(30, 23) + 4 * SLOT, 7)  # 100 minutes: 7 slots
    assert today == [local(29, 22), local(30, 3)] and horizon == local(30, 3)
    await walk_to(hass, freezer, local(30, 10))
    assert fired(calls, "today") == [iso(moment) for moment in today]
    assert fired(calls, "horizon") == [iso(horizon)]


# ------------------------------------------------------------------------------------ validation, descriptions


VALID = [
    {"platform": "agentic_hems.price_crossed_threshold", "options": {"direction": "above", "threshold": 0.1}},
    {"platform": "agentic_hems.cheapest_window_started", "options": {"minutes": 60}},
    {"platform": "agentic_hems.plan_started", "target": {"entity_id": "binary_sensor.dishwasher_run_now"}},
]


@pytest.mark.parametrize(
    "config",
    [
        {**VALID[0], "options": {"direction": "sideways", "threshold": 0.1}},
        {**VALID[0], "options": {"direction": "above", "threshold": "nan"}},
        {**VALID[1], "options": {"minutes": 5}},
        {**VALID[1], "options": {"minutes": 60, "config_entry_id": "nope"}},
        {"platform": "agentic_hems.plan_started"},
        {"platform": "agentic_hems.no_such_trigger"},
    ],
)
async def test_invalid_trigger_configs_are_refused(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, config: dict
) -> None:
    valid = await ha_trigger.async_validate_trigger_config(hass, VALID)
    assert [conf.get("options") for conf in valid] == [VALID[0]["options"], {"minutes": 60, "scope": "today"}, None]
    with pytest.raises(vol.Invalid):
        await ha_trigger.async_validate_trigger_config(hass, [config])


async def test_descriptions_translations_and_icons_cover_every_trigger_and_condition(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    assert await async_setup_component(hass, "automation", {})
    for kind, helper in (("triggers", ha_trigger), ("conditions", ha_condition)):
        described = yaml.safe_load((PACKAGE / f"{kind}.yaml").read_text(encoding="utf-8"))
        keys = {key for key in described if not key.startswith(".")}
        loaded = await helper.async_get_all_descriptions(hass)
        assert {key for key in loaded if key.startswith(f"{DOMAIN}.")} == {f"{DOMAIN}.{key}" for key in keys}
        icons = json_file("icons.json")[kind]
        assert set(icons) == keys
        for lang in ("en", "de"):
            texts = await async_get_translations(hass, lang, kind, {DOMAIN})
            for key in keys:
                prefix = f"component.{DOMAIN}.{kind}.{key}"
                assert texts[f"{prefix}.name"] and texts[f"{prefix}.description"]
                for field, spec in (described[key] or {}).get("fields", {}).items():
                    assert texts[f"{prefix}.fields.{field}.name"] and texts[f"{prefix}.fields.{field}.description"]
                    if select := spec["selector"].get("select"):
                        options = json_file(f"translations/{lang}.json")["selector"][select["translation_key"]][
                            "options"
                        ]
                        assert set(options) == set(select["options"])


def json_file(name: str) -> dict[str, Any]:
    import json

    return json.loads((PACKAGE / name).read_text(encoding="utf-8"))


EN_EXCEPTIONS = json_file("translations/en.json")["exceptions"]


@pytest.mark.parametrize(
    ("condition", "key"),
    [
        ({"condition": "agentic_hems.price_among_cheapest"}, "automation_slots"),
        ({"condition": "agentic_hems.price_among_cheapest", "options": {}}, "automation_slots"),
        ({"condition": "agentic_hems.price_among_cheapest", "options": {"slots": 0}}, "automation_slots"),
        ({"condition": "agentic_hems.price_among_cheapest", "options": {"slots": "many"}}, "automation_slots"),
        ({"condition": "agentic_hems.price_among_cheapest", "options": {"slots": 4, "config_entry_id": "x"}},
         "entry_not_found"),
        ({"condition": "agentic_hems.battery_planned"}, "automation_mode"),
        ({"condition": "agentic_hems.battery_planned", "options": {"mode": "boil"}}, "automation_mode"),
        ({"condition": "agentic_hems.plan_running"}, "automation_target"),
    ],
)
@pytest.mark.parametrize("command", ["test_condition", "subscribe_condition", "execute_script"])
async def test_the_editor_live_test_names_what_to_fill_in(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, hass_ws_client: Any, condition: dict, key: str, command: str
) -> None:
    """The automation editor's live test of a condition not filled in yet gets the field's translated error, as a
    schema error: what HA's editor, its live tests and YAML loaders expect."""
    assert await async_setup_component(hass, "automation", {})
    client = await hass_ws_client(hass)
    body = {"sequence": [condition]} if command == "execute_script" else {"condition": condition}
    await client.send_json_auto_id({"type": command, **body})
    msg = await client.receive_json()
    assert not msg["success"]
    if msg["error"]["code"] == "unknown_command":  # HA 2026.4 (the oldest supported) has no subscribe_condition
        assert command == "subscribe_condition"
        pytest.skip(f"this Home Assistant has no {command} command")
    assert msg["error"]["code"] == "invalid_format"
    expected = EN_EXCEPTIONS[key]["message"].format(entry_id="x").rstrip(".")
    assert msg["error"]["message"].startswith(expected)


@pytest.mark.parametrize(
    ("condition", "options"),
    [
        ({"slots": 4, "config_entry_id": None}, {"slots": 4}),
        ({"slots": 4, "config_entry_id": ""}, {"slots": 4}),
        ({"mode": "idle", "battery": ""}, {"mode": "idle"}),
    ],
)
async def test_fields_the_editor_left_empty_count_as_not_given(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, condition: dict, options: dict
) -> None:
    kind = "price_among_cheapest" if "slots" in condition else "battery_planned"
    valid = await ha_condition.async_validate_condition_config(
        hass, {"condition": f"agentic_hems.{kind}", "options": condition}
    )
    assert valid["options"] == options


@pytest.mark.parametrize(
    ("trigger", "key"),
    [
        ({"trigger": "agentic_hems.cheapest_window_started", "options": {"minutes": -30}}, "automation_minutes"),
        ({"trigger": "agentic_hems.cheapest_window_started", "options": {"minutes": 2895}}, "automation_minutes"),
        ({"trigger": "agentic_hems.cheapest_window_started"}, "automation_minutes"),
        ({"trigger": "agentic_hems.price_crossed_threshold", "options": {"direction": "below"}}, "automation_threshold"),
        ({"trigger": "agentic_hems.price_crossed_threshold", "options": {"threshold": 0.1, "direction": "up"}},
         "automation_direction"),
        ({"trigger": "agentic_hems.battery_mode_changed", "options": {"to": "boil"}}, "automation_mode"),
        ({"trigger": "agentic_hems.plan_started"}, "automation_target"),
    ],
)
async def test_the_editor_names_a_trigger_field_out_of_range(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, hass_ws_client: Any, trigger: dict, key: str
) -> None:
    """The editor's check of a trigger (``validate_config``) names the field and its range in the translated text
    (a window length of -30 is refused at once, saying why, not only on save)."""
    assert await async_setup_component(hass, "automation", {})
    client = await hass_ws_client(hass)
    await client.send_json_auto_id({"type": "validate_config", "triggers": [trigger]})
    msg = await client.receive_json()
    expected = EN_EXCEPTIONS[key]["message"].rstrip(".")
    assert msg["result"]["triggers"]["valid"] is False
    assert msg["result"]["triggers"]["error"].startswith(expected)


async def test_the_window_length_field_offers_only_its_range(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """The length field's number box runs from 15 to 2880 minutes in 15-minute steps, as the trigger accepts."""
    assert await async_setup_component(hass, "automation", {})
    described = await ha_trigger.async_get_all_descriptions(hass)
    number = described["agentic_hems.cheapest_window_started"]["fields"]["minutes"]["selector"]["number"]
    assert (number["min"], number["max"], number["step"]) == (15, 2880, 15)
    for minutes, valid in ((15, True), (2880, True), (14, False), (2881, False), (-30, False)):
        config = {"platform": "agentic_hems.cheapest_window_started", "options": {"minutes": minutes}}
        if valid:
            await ha_trigger.async_validate_trigger_config(hass, [config])
        else:
            with pytest.raises(vol.Invalid):
                await ha_trigger.async_validate_trigger_config(hass, [config])


async def test_a_condition_refused_in_yaml_is_a_schema_error(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """YAML loaders (template entities' conditions among them) catch only schema errors: the translated refusal is
    one, with the text naming the field."""
    with pytest.raises(vol.Invalid, match="Enter how many of the day's cheapest 15-minute slots count"):
        await ha_condition.async_validate_condition_config(
            hass, {"condition": "agentic_hems.price_among_cheapest", "options": {"slots": 101}}
        )


@pytest.mark.parametrize(
    ("config", "key"),
    [
        ({"condition": "agentic_hems.price_among_cheapest", "options": {"slots": 2.9}}, "automation_slots"),
        ({"condition": "agentic_hems.price_among_cheapest", "options": {"slots": True}}, "automation_slots"),
        ({"condition": "agentic_hems.plan_running", "target": {}}, "automation_target"),
        ({"condition": "agentic_hems.plan_running", "target": {"entity_id": [], "device_id": []}}, "automation_target"),
        ({"platform": "agentic_hems.cheapest_window_started", "options": {"minutes": 60.5}}, "automation_minutes"),
        ({"platform": "agentic_hems.price_crossed_threshold", "options": {"threshold": True, "direction": "above"}},
         "automation_threshold"),
        ({"platform": "agentic_hems.plan_started", "target": {"entity_id": []}}, "automation_target"),
    ],
    ids=["slots-2.9", "slots-true", "no-target", "empty-target", "minutes-60.5", "threshold-true", "trigger-no-target"],
)
async def test_a_fraction_a_boolean_or_an_empty_target_is_refused_not_bent(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, config: dict, key: str
) -> None:
    """``slots: 2.9`` counted as 2, ``true`` as 1 slot or 1.0 per kWh, ``minutes: 60.5`` as 60, and a target of
    nothing saved a trigger that never fires and a condition that never passes: each is the field's translated error."""
    expected = EN_EXCEPTIONS[key]["message"].rstrip(".")
    with pytest.raises(vol.Invalid, match=f"^{re.escape(expected)}"):
        if "condition" in config:
            await ha_condition.async_validate_condition_config(hass, config)
        else:
            await ha_trigger.async_validate_trigger_config(hass, [config])


async def test_whole_numbers_as_text_or_float_and_options_null_are_read_as_meant(
    hass: HomeAssistant, loaded_entry: MockConfigEntry
) -> None:
    for slots in ("4", 4.0, 4):
        valid = await ha_condition.async_validate_condition_config(
            hass, {"condition": "agentic_hems.price_among_cheapest", "options": {"slots": slots}}
        )
        assert valid["options"] == {"slots": 4} and type(valid["options"]["slots"]) is int
    (valid,) = await ha_trigger.async_validate_trigger_config(
        hass, [{"platform": "agentic_hems.battery_mode_changed", "options": None}]  # was "expected a mapping"
    )
    assert valid["options"] == {}
