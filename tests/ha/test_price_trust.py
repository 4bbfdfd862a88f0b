"""Prices you can trust, in a real Home Assistant: refetch, replan, repair issues, entities and translated texts.

An ENTSO-E entry (BE) with one EV charger, against the API mocked by :class:`.test_coordinator.FakeEntsoe`, at
frozen Brussels times in November 2026 (CET). Today, 2026-11-29, is the real BE_60M.xml; tomorrow is an hourly
series written here, so every oracle below is worked out by hand from these numbers.
"""

from __future__ import annotations

from datetime import datetime, timedelta
import re
from typing import Any
from zoneinfo import ZoneInfo

from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.test_util.aiohttp import AiohttpClientMocker

from homeassistant.config_entries import ConfigEntryState, ConfigSubentryData
from homeassistant.const import STATE_OFF, STATE_ON
from homeassistant.core import HomeAssistant, ServiceCall, ServiceResponse, SupportsResponse
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.translation import async_get_translations
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util

from custom_components.agentic_hems.const import DEFAULT_OPTIONS, DOMAIN
from custom_components.agentic_hems.scheduling import Reason

from .conftest import APPLIANCES
from .test_coordinator import (
    PRICE,
    TODAY_SERIES,
    TODAY_START,
    TOMORROW_END,
    TOMORROW_KNOWN,
    TOMORROW_START,
    FakeEntsoe,
    advance,
    document,
    local,
    set_up,
)

TODAY, TOMORROW = "2026-11-29", "2026-11-30"
NEXT_START, RUN_NOW, COST = "sensor.ev_charger_next_start", "binary_sensor.ev_charger_run_now", "sensor.ev_charger_planned_cost"
# Tomorrow's real prices, EUR/MWh by local hour: the cheapest hours of the EV's night (until 07:00) are 04, 05 and 06.
GOOD = [95.0, 96.0, 97.0, 98.0, 30.0, 31.0, 32.0] + [60.0 + h for h in range(7, 24)]
MINUTE = timedelta(minutes=1)


def tomorrow_series(values: list[Any]) -> str:
    """An hourly A03 series over tomorrow (BE_60M.xml's layout) with ``values`` at positions 1..24."""
    series = TODAY_SERIES.replace(TOMORROW_START, TOMORROW_END).replace(TODAY_START, TOMORROW_START)
    amounts = iter(values)
    return re.sub(r"<price\.amount>[^<]*</price\.amount>", lambda _: f"<price.amount>{next(amounts)}</price.amount>", series)


def tomorrow_document(values: list[Any]) -> str:
    return document(TODAY_SERIES, tomorrow_series(values))


@pytest.fixture
def api(aioclient_mock: AiohttpClientMocker) -> FakeEntsoe:
    return FakeEntsoe(aioclient_mock)


def ev_entry() -> MockConfigEntry:
    """An ENTSO-E BE entry with the EV charger (11 kW, 30 kWh, 17:00 to 07:00) as its only appliance."""
    ev = APPLIANCES["ev"]
    return MockConfigEntry(
        domain=DOMAIN,
        title="ENTSO-E BE",
        unique_id="entsoe_BE",
        data={"price_source": "entsoe", "api_key": "k", "bidding_zone": "BE"},
        options=dict(DEFAULT_OPTIONS),
        subentries_data=[ConfigSubentryData(data=ev, subentry_id="ev", subentry_type="appliance", title=ev["name"], unique_id=None)],
        version=1,
        minor_version=1,
    )


def attributes(hass: HomeAssistant, entity_id: str) -> dict[str, Any]:
    state = hass.states.get(entity_id)
    assert state is not None, f"{entity_id} does not exist"
    return dict(state.attributes)


def tomorrow_kw(hass: HomeAssistant) -> dict[int, float]:
    """The EV's planned kW per quarter-hour of tomorrow (index from local midnight), where it is not 0, from its
    stored plan (the schedule card's data)."""
    (entry,) = hass.config_entries.async_loaded_entries(DOMAIN)
    plan = entry.runtime_data.planner.states["ev"].plan
    midnight = dt_util.as_utc(dt_util.start_of_local_day(dt_util.now().date() + timedelta(days=1)))
    return {i: round(float(kw), 6) for i, kw in enumerate(plan.power_on(midnight, 96)) if kw}


def hours(*spec: tuple[int, list[float]]) -> dict[int, float]:
    """kW per quarter-hour index from ``(local hour, [kW of its quarters])``."""
    return {4 * hour + q: kw for hour, kws in spec for q, kw in enumerate(kws) if kw}


# 30 kWh at 11 kW: ten full quarter-hours (27.5 kWh) and 2.5 kWh (10 kW) in the eleventh; equal prices fill earliest.
ON_GOOD_PRICES = hours((4, [11.0] * 4), (5, [11.0] * 4), (6, [11.0, 11.0, 10.0]))
ON_ZEROS = hours((0, [11.0] * 4), (1, [11.0] * 4), (2, [11.0, 11.0, 10.0]))
GOOD_COST = (11 * 4 * 0.25 * 30 + 11 * 4 * 0.25 * 31 + (11 + 11 + 10) * 0.25 * 32) / 1000  # EUR


def price_issues(hass: HomeAssistant) -> list[ir.IssueEntry]:
    return [issue for (domain, _), issue in ir.async_get(hass).issues.items() if domain == DOMAIN]


# --- refetch and replan -------------------------------------------------------------------------------------------


async def test_a_day_of_zeros_is_refetched_and_the_plan_moves_onto_the_real_prices(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    """Tomorrow all 0.0 at 20:05: doubtful, so the EV plan says so; at the 20:10 refetch real prices replace it."""
    freezer.move_to(local(20, 5))
    api.serve(tomorrow_document([0.0] * 24))
    await set_up(hass, ev_entry())
    assert api.calls == [local(20, 5)]
    assert hass.states.get(TOMORROW_KNOWN).state == STATE_OFF  # a doubtful day is not "available"
    price = attributes(hass, PRICE)
    assert price["prices_trust"] == {TODAY: "known", TOMORROW: "doubtful"}
    assert price["price_issues"] == {TOMORROW: ["zero_day"]}
    assert tomorrow_kw(hass) == ON_ZEROS
    plan = attributes(hass, NEXT_START)
    assert plan["reason"] == "doubtful_prices"
    assert "every price is exactly 0" in plan["detail"] and TOMORROW in plan["detail"]
    assert float(hass.states.get(COST).state) == 0.0

    api.serve(tomorrow_document(GOOD))
    await advance(hass, freezer, local(20, 9), MINUTE)
    assert api.calls == [local(20, 5)]  # the backoff's first step is 5 minutes
    await advance(hass, freezer, local(21, 30), MINUTE)
    assert api.calls == [local(20, 5), local(20, 10)]  # then every slot is known: no further fetch
    assert hass.states.get(TOMORROW_KNOWN).state == STATE_ON
    price = attributes(hass, PRICE)
    assert price["prices_trust"] == {TODAY: "known", TOMORROW: "known"} and price["price_issues"] == {}
    assert tomorrow_kw(hass) == ON_GOOD_PRICES  # replanned onto tomorrow's cheapest hours
    plan = attributes(hass, NEXT_START)
    assert plan["reason"] == "optimal" and plan["detail"] == ""
    assert float(hass.states.get(COST).state) == pytest.approx(GOOD_COST, abs=1e-6)
    assert price_issues(hass) == []  # one unusable delivery raises nothing


@pytest.mark.parametrize(
    ("values", "trust", "issue"),
    [
        (GOOD[:20] + [0.0] * 4, "doubtful", "zero_tail"),  # 20:00 to 24:00 all 0: placeholders at the end
        (GOOD[:10] + ["INF"] + GOOD[11:], "unknown", "bad_value"),  # one price not finite: the day is refused
    ],
    ids=["zero_tail", "refused"],
)
async def test_a_doubtful_or_refused_tomorrow_is_refetched_with_backoff(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe, values: list[Any], trust: str, issue: str
) -> None:
    freezer.move_to(local(14, 0))
    api.serve(tomorrow_document(values))
    await set_up(hass, ev_entry())
    await advance(hass, freezer, local(14, 40), MINUTE)
    assert api.calls == [local(14, 0), local(14, 5), local(14, 15), local(14, 35)]  # +5, +10, +20
    assert attributes(hass, PRICE)["prices_trust"] == {TODAY: "known", TOMORROW: trust}
    assert attributes(hass, PRICE)["price_issues"] == {TOMORROW: [issue]}
    assert hass.states.get(TOMORROW_KNOWN).state == STATE_OFF

    api.serve(tomorrow_document(GOOD))
    await advance(hass, freezer, local(18, 0), MINUTE)
    assert api.calls[4:] == [local(15, 15)]  # +40, then known: the backoff ends
    assert attributes(hass, PRICE)["prices_trust"] == {TODAY: "known", TOMORROW: "known"}
    assert hass.states.get(TOMORROW_KNOWN).state == STATE_ON
    assert attributes(hass, PRICE)["tomorrow"][4 * 5]["price"] == pytest.approx(0.031)  # 05:00, 31 EUR/MWh


# --- repair issues -------------------------------------------------------------------------------------------------


async def test_a_source_that_keeps_delivering_zeros_raises_a_repair_issue_until_real_prices_arrive(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    """20:05 and 20:10 both deliver tomorrow (3 h 50 min away) as zeros: the second raises the issue."""
    freezer.move_to(local(20, 5))
    api.serve(tomorrow_document([0.0] * 24))
    entry = await set_up(hass, ev_entry())
    assert price_issues(hass) == []
    await advance(hass, freezer, local(20, 10), MINUTE)
    (issue,) = price_issues(hass)
    assert issue.issue_id == f"prices_{entry.entry_id}_{TOMORROW}_zero_day"
    assert issue.translation_key == "prices_zero_day"
    assert issue.severity is ir.IssueSeverity.WARNING and not issue.is_fixable and not issue.is_persistent
    placeholders = issue.translation_placeholders or {}
    assert placeholders["source"] == "ENTSO-E BE" and placeholders["day"] == TOMORROW
    assert "every price is exactly 0" in placeholders["detail"]
    en = await async_get_translations(hass, "en", "issues", {DOMAIN})
    de = await async_get_translations(hass, "de", "issues", {DOMAIN})
    key = f"component.{DOMAIN}.issues.prices_zero_day.title"
    assert en[key].format(**placeholders) == "ENTSO-E BE: every price for 2026-11-30 is 0"
    assert de[key].format(**placeholders) == "ENTSO-E BE: jeder Preis für 2026-11-30 ist 0"

    api.serve(tomorrow_document(GOOD))
    await advance(hass, freezer, local(20, 20), MINUTE)  # the retry after 10 minutes brings real prices
    assert len(api.calls) == 3
    assert price_issues(hass) == []


async def test_an_issue_waits_until_the_day_is_near_and_goes_when_the_day_has_passed(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    """Zeros for tomorrow all afternoon: no issue while tomorrow is more than 6 hours away, then one until it ends."""
    freezer.move_to(local(14, 0))
    api.serve(tomorrow_document([0.0] * 24))
    entry = await set_up(hass, ev_entry())
    await advance(hass, freezer, local(17, 59), MINUTE)
    assert api.calls == [local(14, 0), local(14, 5), local(14, 15), local(14, 35), local(15, 15), local(16, 15), local(17, 15)]
    assert price_issues(hass) == []  # seven deliveries of zeros, but tomorrow is more than 6 hours away
    await advance(hass, freezer, local(18, 15), MINUTE)
    assert api.calls[7:] == [local(18, 15)]  # capped at 60 minutes
    assert [issue.issue_id for issue in price_issues(hass)] == [f"prices_{entry.entry_id}_{TOMORROW}_zero_day"]

    # Nov 30 is today now, still all zeros: the issue stays through the day and goes when it has passed.
    await advance(hass, freezer, local(23, 45, day=30), timedelta(minutes=15))
    assert [issue.issue_id for issue in price_issues(hass)] == [f"prices_{entry.entry_id}_{TOMORROW}_zero_day"]
    await advance(hass, freezer, datetime(2026, 12, 1, 0, 1, tzinfo=ZoneInfo("Europe/Brussels")), MINUTE)
    assert price_issues(hass) == []


async def test_unloading_the_entry_deletes_its_issues(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    freezer.move_to(local(20, 5))
    api.serve(tomorrow_document([0.0] * 24))
    entry = await set_up(hass, ev_entry())
    await advance(hass, freezer, local(20, 10), MINUTE)
    assert len(price_issues(hass)) == 1
    assert await hass.config_entries.async_unload(entry.entry_id)
    assert price_issues(hass) == []


# --- what the texts say --------------------------------------------------------------------------------------------


@pytest.mark.parametrize("with_tomorrow", [False, True], ids=["every_day_refused", "today_refused"])
async def test_prices_refused_for_now_is_its_own_translated_error(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe, with_tomorrow: bool
) -> None:
    """Today holds an INF price (tomorrow good or absent): set-up is retried with ``prices_refused``, naming today."""
    freezer.move_to(local(14, 0))
    series = TODAY_SERIES.replace("<price.amount>64.98</price.amount>", "<price.amount>INF</price.amount>")
    api.serve(document(series, tomorrow_series(GOOD)) if with_tomorrow else document(series))
    entry = ev_entry()
    entry.add_to_hass(hass)
    await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.SETUP_RETRY
    assert entry.error_reason_translation_key == "prices_refused"
    placeholders = entry.error_reason_translation_placeholders or {}
    assert placeholders["source"] == "ENTSO-E BE" and placeholders["days"] == TODAY
    assert "not a finite price" in placeholders["reason"] and "2026-11-28T23:00Z" in placeholders["reason"]
    de = await async_get_translations(hass, "de", "exceptions", {DOMAIN})
    message = de[f"component.{DOMAIN}.exceptions.prices_refused.message"].format(**placeholders)
    assert message.startswith("ENTSO-E BE hat für 2026-11-29 keinen verwendbaren Preis geliefert: ")


async def test_plan_reasons_are_translated(hass: HomeAssistant) -> None:
    """Every plan reason the next-start sensor shows has a state text in English and German."""
    for lang in ("en", "de"):
        texts = await async_get_translations(hass, lang, "entity", {DOMAIN})
        prefix = f"component.{DOMAIN}.entity.sensor.next_start.state_attributes.reason.state."
        assert {key.removeprefix(prefix) for key in texts if key.startswith(prefix)} == {str(r) for r in Reason}
    assert texts[f"{prefix}doubtful_prices"] == "Auf zweifelhaften Preisen geplant"


async def test_the_plan_service_and_ask_say_doubtful_prices(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory, api: FakeEntsoe
) -> None:
    freezer.move_to(local(20, 5))
    assert await async_setup_component(hass, "homeassistant", {})
    api.serve(tomorrow_document([0.0] * 24))
    await set_up(hass, ev_entry())
    plan = await hass.services.async_call(DOMAIN, "plan", {"appliance": "EV charger"}, blocking=True, return_response=True)
    assert plan is not None and plan["reason"] == "doubtful_prices" and "every price is exactly 0" in plan["detail"]
    response = await hass.services.async_call(
        DOMAIN, "ask", {"text": "Schedule the EV charger"}, blocking=True, return_response=True
    )
    (outcome,) = [o for o in response["outcomes"] if o.get("kind") == "plan"]
    assert outcome["reason"] == "doubtful_prices" and "every price is exactly 0" in outcome["detail"]
    # Starting at once (20:15) costs 3 x 2.75 kWh at 86.85, 4 x 2.75 at 69.59, 3 x 2.75 + 2.5 at 57.42 EUR/MWh.
    baseline = (3 * 2.75 * 86.85 + 4 * 2.75 * 69.59 + (3 * 2.75 + 2.5) * 57.42) / 1000
    assert f"{baseline:.4f}" == "2.0993"
    assert "EV charger: Mon 00:00 to Mon 02:45, 0.00 EUR (saves 2.10 EUR; planned on doubtful prices)." in response["summary"]


# --- Nord Pool: each day checked for the date asked -----------------------------------------------------------------


async def test_a_nord_pool_answer_for_another_day_is_refused_for_the_day_asked(
    hass: HomeAssistant, freezer: FrozenDateTimeFactory
) -> None:
    """Asked for Nov 30, the service answers with Nov 29's prices (a stale answer): Nov 30 is refused as wrong_day.

    Read by the items' own dates, the answer would only repeat Nov 29 and leave Nov 30 silently missing.
    """
    stockholm = ZoneInfo("Europe/Stockholm")
    await hass.config.async_set_time_zone("Europe/Stockholm")
    freezer.move_to(datetime(2026, 11, 29, 14, 5, tzinfo=stockholm))
    nordpool = MockConfigEntry(domain="nordpool", data={"areas": ["SE3"], "currency": "SEK"})
    nordpool.add_to_hass(hass)
    start = datetime(2026, 11, 29, tzinfo=stockholm)
    today = [
        {"start": (start + timedelta(hours=h)).isoformat(), "end": (start + timedelta(hours=h + 1)).isoformat(), "price": 100.0 + h}
        for h in range(24)
    ]
    asked: list[str] = []

    async def get_prices_for_date(call: ServiceCall) -> ServiceResponse:
        asked.append(call.data["date"])
        return {"SE3": today}  # whatever the date asked

    hass.services.async_register("nordpool", "get_prices_for_date", get_prices_for_date, supports_response=SupportsResponse.ONLY)
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Nord Pool SE3",
        unique_id=f"nordpool_{nordpool.entry_id}_SE3",
        data={"price_source": "nordpool", "nordpool_entry": nordpool.entry_id, "area": "SE3"},
        options=DEFAULT_OPTIONS,
        version=1,
        minor_version=1,
    )
    await set_up(hass, entry)
    assert asked == [TODAY, TOMORROW]
    price = attributes(hass, PRICE)
    assert price["prices_trust"] == {TODAY: "known", TOMORROW: "unknown"}
    assert price["price_issues"] == {TOMORROW: ["wrong_day"]}
    assert float(hass.states.get(PRICE).state) == pytest.approx(0.114)  # 14:05 local, 114 SEK/MWh
    assert hass.states.get(TOMORROW_KNOWN).state == STATE_OFF
    curve = entry.runtime_data.coordinator.spot
    note = curve.note_at(curve.index_of(datetime(2026, 11, 30, 12, tzinfo=stockholm)))
    assert note is not None and note.detail == "SE3 2026-11-30: holds an item at 2026-11-28T23:00Z"
