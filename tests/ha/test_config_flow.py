"""Config flow: sources, settings, options, reconfigure, reauth and appliance subentries, against HA's flow managers.

ENTSO-E answers come from ``aioclient_mock`` (HA's shared aiohttp session), so the real request building and status
handling of ``prices.entsoe.async_fetch_day_ahead`` run; only the socket is fake.
"""

from __future__ import annotations

from collections.abc import Generator
from datetime import UTC, datetime, timedelta
import json
import logging
from pathlib import Path
import re
import threading
from typing import Any
from unittest.mock import AsyncMock, patch
from urllib.parse import parse_qs

from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.test_util.aiohttp import AiohttpClientMocker
import voluptuous as vol
import yaml

from homeassistant.config_entries import SOURCE_USER, ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.data_entry_flow import FlowResultType, InvalidData
from homeassistant.helpers import config_validation as cv
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util

from custom_components.agentic_hems.flow import policy as policy_module
from custom_components.agentic_hems.flow.checks import validate_appliance
from custom_components.agentic_hems.flow.schemas import nordpool_schema
from custom_components.agentic_hems.gates.tables import validate_rules
from custom_components.agentic_hems.const import DEFAULT_ASSISTANT_OPTIONS, DEFAULT_CONTROL_OPTIONS, DEFAULT_OPTIONS, DOMAIN
from custom_components.agentic_hems.orchestrator.loop import ModelAuthError, ModelError
from custom_components.agentic_hems.prices.entsoe import API_URL
from custom_components.agentic_hems.prices.formula import PriceFormula

from .conftest import APPLIANCES, NOW, sample_entry

try:  # how the flow API serializes a form's schema: probatio on HA 2026.9+, voluptuous_serialize before
    from probatio import to_field_list as serialize
except ImportError:
    from voluptuous_serialize import convert as serialize
from .test_coordinator import BOTH_DAYS

BE_60M = (Path(__file__).parent.parent / "fixtures" / "entsoe" / "BE_60M.xml").read_text(encoding="utf-8")
ACK_NS = "urn:iec62325.351:tc57wg16:451-1:acknowledgementdocument:7:0"
SETTINGS = {"markup": 0.015, "vat_percent": 21, "grid_fee": 0.0842, "vat_on_negative": False, "power_limit_kw": 9.2}
PRICE_SENSOR = "sensor.agentic_hems_electricity_price"
# What the whole-home plan's options step stores when submitted untouched: its required fields' defaults.
# The control step as the frontend sends it: the policy rules are YAML text, left out when the field is empty.
CONTROL_FORM = {k: v for k, v in DEFAULT_CONTROL_OPTIONS.items() if k != "policy_rules"}
HOME_FORM_DEFAULTS = {
    "export_price_mode": "fixed", "export_fixed_price": 0.0, "export_spot_factor": 1.0, "export_spot_fee": 0.0,
    "battery_control": "approval", "mpc_soc_threshold_pct": 5.0, "mpc_pv_threshold_kw": 0.5, "mpc_temp_threshold_c": 1.0,
}
HOME_BATTERY = {"name": "House battery", "capacity_kwh": 10.0, "charge_kw": 5.0, "discharge_kw": 5.0,
                "soc_entity": "sensor.house_battery_soc"}


def acknowledgement(text: str, code: str = "999") -> str:
    """An ENTSO-E Acknowledgement_MarketDocument with one reason."""
    return (
        f'<?xml version="1.0" encoding="UTF-8"?>\n<Acknowledgement_MarketDocument xmlns="{ACK_NS}">'
        "<mRID>ack</mRID><createdDateTime>2026-11-29T19:05:00Z</createdDateTime>"
        f"<Reason><code>{code}</code><text>{text}</text></Reason></Acknowledgement_MarketDocument>"
    )


NO_DATA = acknowledgement(
    "No matching data found for Data item Day-ahead Prices [12.1.D] (10YBE----------2, 10YBE----------2) "
    "and interval 2026-11-28T23:00:00.000Z/2026-11-29T23:00:00.000Z."
)


@pytest.fixture
def mock_setup_entry() -> Generator[AsyncMock]:
    """Entries created or reloaded by a flow set up instantly, without fetching prices."""
    with patch("custom_components.agentic_hems.async_setup_entry", return_value=True) as mock:
        yield mock


@pytest.fixture
async def frozen(hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory) -> None:
    """Brussels time at NOW, so the validation request covers 2026-11-29 local (23:00 to 23:00 UTC)."""
    freezer.move_to(NOW)


def query(aioclient_mock: AiohttpClientMocker, index: int = -1) -> dict[str, str]:
    """The query parameters of a recorded request (each given once)."""
    method, url, _data, _headers = aioclient_mock.mock_calls[index]
    assert method.upper() == "GET"
    assert f"{url.scheme}://{url.host}{url.path}" == API_URL
    return {key: values[0] for key, values in parse_qs(url.query_string).items() if len(values) == 1}


def schema_values(result: dict[str, Any]) -> dict[str, tuple[Any, Any]]:
    """``{field: (default, suggested value)}`` of a form's schema."""
    values: dict[str, tuple[Any, Any]] = {}
    for key in result["data_schema"].schema:
        default = key.default() if key.default is not vol.UNDEFINED else None
        values[str(key)] = (default, (key.description or {}).get("suggested_value"))
    return values


def entsoe_entry(zone: str = "BE", api_key: str = "old-token") -> MockConfigEntry:
    """An ENTSO-E entry as the flow creates it."""
    return MockConfigEntry(
        domain=DOMAIN,
        title=f"ENTSO-E {zone}",
        unique_id=f"entsoe_{zone}",
        data={"price_source": "entsoe", "api_key": api_key, "bidding_zone": zone},
        options=dict(DEFAULT_OPTIONS),
        version=1,
        minor_version=1,
    )


async def start(hass: HomeAssistant, source: str) -> dict[str, Any]:
    """Start a user flow and pick ``source``."""
    result = await hass.config_entries.flow.async_init(DOMAIN, context={"source": SOURCE_USER})
    return await hass.config_entries.flow.async_configure(result["flow_id"], {"price_source": source})


# --- user → source → settings -------------------------------------------------------------------------------------


async def test_sample_creates_entry(hass: HomeAssistant, mock_setup_entry: AsyncMock) -> None:
    """Sample prices skip the source step; the settings become the options, VAT kept in percent as typed."""
    result = await hass.config_entries.flow.async_init(DOMAIN, context={"source": SOURCE_USER})
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "user"
    assert schema_values(result) == {"price_source": ("sample", None)}

    result = await hass.config_entries.flow.async_configure(result["flow_id"], {"price_source": "sample"})
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "settings"
    assert {key: default for key, (default, _) in schema_values(result).items()} == DEFAULT_OPTIONS

    result = await hass.config_entries.flow.async_configure(result["flow_id"], SETTINGS)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "Sample prices"
    assert result["data"] == {"price_source": "sample"}
    assert result["options"] == {
        "markup": 0.015,
        "vat_percent": 21.0,
        "grid_fee": 0.0842,
        "vat_on_negative": False,
        "power_limit_kw": 9.2,
    }
    entry = result["result"]
    assert entry.unique_id == "sample"
    assert entry.options["vat_percent"] == 21.0  # percent, not the 0.21 fraction
    await hass.async_block_till_done()
    assert mock_setup_entry.call_count == 1
    assert entry.state is ConfigEntryState.LOADED


@pytest.mark.parametrize("flow", ["config", "options"])
async def test_settings_out_of_range_rejected(hass: HomeAssistant, mock_setup_entry: AsyncMock, flow: str) -> None:
    """VAT is a percentage from 0 to 100, the power limit 0.5-100 kW, markup and fee -10-10 per kWh: the rest is a
    field error naming the range in words, the typed value kept; nothing is created or saved."""
    en = json.loads((Path(__file__).parents[2] / "custom_components" / DOMAIN / "translations" / "en.json").read_text())
    entry = sample_entry()
    if flow == "config":
        result = await start(hass, "sample")
    else:
        entry.add_to_hass(hass)
        result = await hass.config_entries.options.async_init(entry.entry_id)
    manager = hass.config_entries.flow if flow == "config" else hass.config_entries.options
    for field, value, english in (
        ("vat_percent", 101, "Enter a VAT rate from 0 to 100 %."),
        ("power_limit_kw", 0.1, "Enter a household power limit from 0.5 to 100 kW."),
        ("power_limit_kw", 1e6, "Enter a household power limit from 0.5 to 100 kW."),
        ("markup", 11, "Enter a markup from -10 to 10 per kWh."),
        ("grid_fee", -10.5, "Enter a grid fee from -10 to 10 per kWh."),
    ):
        result = await manager.async_configure(result["flow_id"], {**SETTINGS, field: value})
        ((error_field, error),) = result["errors"].items()
        assert (result["step_id"], error_field) == ("settings" if flow == "config" else "init", field)
        assert en[flow]["error"][error].format(**result["description_placeholders"]) == english
        assert schema_values(result)[field][0] == value  # what was typed, to correct
    assert hass.config_entries.async_entries(DOMAIN) == ([] if flow == "config" else [entry])
    assert dict(entry.options) == DEFAULT_OPTIONS


async def test_sample_twice_aborts(hass: HomeAssistant) -> None:
    """Only one sample entry."""
    sample_entry().add_to_hass(hass)
    result = await start(hass, "sample")
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"


# --- ENTSO-E ------------------------------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("zone", "eic", "sequence"),
    [("BE", "10YBE----------2", None), ("DE_LU", "10Y1001A1001A82H", "1")],
)
async def test_entsoe_creates_entry(
    hass: HomeAssistant,
    frozen: None,
    aioclient_mock: AiohttpClientMocker,
    mock_setup_entry: AsyncMock,
    zone: str,
    eic: str,
    sequence: str | None,
) -> None:
    """A key that returns a real A44 document is accepted after exactly one A44 request for today."""
    aioclient_mock.get(API_URL, text=BE_60M)
    result = await start(hass, "entsoe")
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "entsoe"
    assert result["errors"] == {}
    assert aioclient_mock.call_count == 0

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"api_key": "good-token", "bidding_zone": zone}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "settings"
    assert aioclient_mock.call_count == 1
    expected = {
        "securityToken": "good-token",
        "documentType": "A44",
        "contract_MarketAgreement.type": "A01",
        "in_Domain": eic,
        "out_Domain": eic,
        "periodStart": "202611282300",
        "periodEnd": "202611292300",
    }
    if sequence is not None:
        expected["classificationSequence_AttributeInstanceComponent.position"] = sequence
    assert query(aioclient_mock) == expected

    result = await hass.config_entries.flow.async_configure(result["flow_id"], dict(DEFAULT_OPTIONS))
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == f"ENTSO-E {zone}"
    assert result["data"] == {"price_source": "entsoe", "api_key": "good-token", "bidding_zone": zone}
    assert result["options"] == DEFAULT_OPTIONS
    assert result["result"].unique_id == f"entsoe_{zone}"


@pytest.mark.parametrize(
    ("answer", "error"),
    [
        ({"status": 401, "text": "Unauthorized"}, "invalid_auth"),
        ({"exc": TimeoutError()}, "cannot_connect"),
        ({"status": 503, "text": "<html>maintenance</html>"}, "cannot_connect"),
        ({"status": 400, "text": acknowledgement("Amount of requested data exceeds allowed limit")}, "cannot_connect"),
    ],
    ids=["401", "timeout", "503", "400-refused"],
)
async def test_entsoe_errors_then_retry(
    hass: HomeAssistant,
    frozen: None,
    aioclient_mock: AiohttpClientMocker,
    mock_setup_entry: AsyncMock,
    answer: dict[str, Any],
    error: str,
) -> None:
    """A failed check shows the error with the typed values kept; the next good answer moves on."""
    aioclient_mock.get(API_URL, **answer)
    result = await start(hass, "entsoe")
    user_input = {"api_key": "the-token", "bidding_zone": "NL"}
    result = await hass.config_entries.flow.async_configure(result["flow_id"], user_input)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "entsoe"
    assert result["errors"] == {"base": error}
    assert schema_values(result) == {"api_key": (None, "the-token"), "bidding_zone": (None, "NL")}
    assert query(aioclient_mock)["in_Domain"] == "10YNL----------L"

    aioclient_mock.clear_requests()
    aioclient_mock.get(API_URL, text=BE_60M)
    result = await hass.config_entries.flow.async_configure(result["flow_id"], user_input)
    assert result["step_id"] == "settings"
    result = await hass.config_entries.flow.async_configure(result["flow_id"], SETTINGS)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"] == {"price_source": "entsoe", "api_key": "the-token", "bidding_zone": "NL"}


async def test_entsoe_blank_key_is_refused_without_a_request(
    hass: HomeAssistant, frozen: None, aioclient_mock: AiohttpClientMocker, mock_setup_entry: AsyncMock
) -> None:
    """A key of blanks is an error on the key field before anything is sent; a real key then goes on."""
    aioclient_mock.get(API_URL, text=BE_60M)
    result = await start(hass, "entsoe")
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {"api_key": "   ", "bidding_zone": "BE"})
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "entsoe"
    assert result["errors"] == {"api_key": "api_key_empty"}
    assert aioclient_mock.call_count == 0

    result = await hass.config_entries.flow.async_configure(result["flow_id"], {"api_key": " k ", "bidding_zone": "BE"})
    assert result["step_id"] == "settings"
    assert query(aioclient_mock)["securityToken"] == "k"


async def test_entsoe_unexpected_failure_leaves_a_form(
    hass: HomeAssistant,
    frozen: None,
    aioclient_mock: AiohttpClientMocker,
    mock_setup_entry: AsyncMock,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """A failure the check does not expect is logged with its traceback and shown as "unknown"; a retry goes on."""
    with patch(
        "custom_components.agentic_hems.flow.checks.async_fetch_day_ahead", side_effect=RuntimeError("boom")
    ):
        result = await start(hass, "entsoe")
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {"api_key": "k", "bidding_zone": "BE"}
        )
    assert result["type"] is FlowResultType.FORM and result["errors"] == {"base": "unknown"}
    [record] = [r for r in caplog.records if r.name == "custom_components.agentic_hems"]
    assert record.levelno == logging.ERROR and record.exc_info is not None
    assert record.getMessage() == "Unexpected error while checking the ENTSO-E API key"

    aioclient_mock.get(API_URL, text=BE_60M)
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {"api_key": "k", "bidding_zone": "BE"})
    assert result["step_id"] == "settings"
    result = await hass.config_entries.flow.async_configure(result["flow_id"], SETTINGS)
    assert result["type"] is FlowResultType.CREATE_ENTRY


async def test_entsoe_not_published_yet_is_accepted(
    hass: HomeAssistant, frozen: None, aioclient_mock: AiohttpClientMocker, mock_setup_entry: AsyncMock
) -> None:
    """HTTP 400 with the "no matching data" acknowledgement means the key works but prices are not out yet."""
    aioclient_mock.get(API_URL, status=400, text=NO_DATA)
    result = await start(hass, "entsoe")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"api_key": "early-token", "bidding_zone": "BE"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "settings"
    assert aioclient_mock.call_count == 1
    result = await hass.config_entries.flow.async_configure(result["flow_id"], SETTINGS)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["data"]["api_key"] == "early-token"
    assert result["options"]["vat_percent"] == 21.0


async def test_entsoe_unique_per_zone(
    hass: HomeAssistant, frozen: None, aioclient_mock: AiohttpClientMocker, mock_setup_entry: AsyncMock
) -> None:
    """A configured zone aborts before any request; another zone goes on."""
    entsoe_entry("BE").add_to_hass(hass)
    aioclient_mock.get(API_URL, text=BE_60M)
    result = await start(hass, "entsoe")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"api_key": "good-token", "bidding_zone": "BE"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"
    assert aioclient_mock.call_count == 0

    result = await start(hass, "entsoe")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"api_key": "good-token", "bidding_zone": "FR"}
    )
    assert result["step_id"] == "settings"
    assert query(aioclient_mock)["in_Domain"] == "10YFR-RTE------C"
    result = await hass.config_entries.flow.async_configure(result["flow_id"], SETTINGS)
    assert result["result"].unique_id == "entsoe_FR"
    assert sorted(e.unique_id for e in hass.config_entries.async_entries(DOMAIN)) == ["entsoe_BE", "entsoe_FR"]


async def test_entsoe_unknown_zone_rejected(hass: HomeAssistant) -> None:
    """The zone dropdown only takes the ENTSO-E zones."""
    result = await start(hass, "entsoe")
    with pytest.raises(InvalidData) as err:
        await hass.config_entries.flow.async_configure(result["flow_id"], {"api_key": "k", "bidding_zone": "XX"})
    assert set(err.value.schema_errors) == {"bidding_zone"}


# --- Nord Pool ----------------------------------------------------------------------------------------------------


@pytest.fixture
def nordpool(hass: HomeAssistant) -> MockConfigEntry:
    """A core Nord Pool entry for SE3 in SEK."""
    entry = MockConfigEntry(domain="nordpool", data={"areas": ["SE3"], "currency": "SEK"})
    entry.add_to_hass(hass)
    return entry


async def test_nordpool_creates_entry(
    hass: HomeAssistant, nordpool: MockConfigEntry, mock_setup_entry: AsyncMock
) -> None:
    """An area of the chosen entry (any case) is stored upper-cased."""
    result = await start(hass, "nordpool")
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "nordpool"
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"nordpool_entry": nordpool.entry_id, "area": "se3"}
    )
    assert result["step_id"] == "settings"
    result = await hass.config_entries.flow.async_configure(result["flow_id"], SETTINGS)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "Nord Pool SE3"
    assert result["data"] == {"price_source": "nordpool", "nordpool_entry": nordpool.entry_id, "area": "SE3"}
    assert result["result"].unique_id == f"nordpool_{nordpool.entry_id}_SE3"

    result = await start(hass, "nordpool")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"nordpool_entry": nordpool.entry_id, "area": "SE3"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"


async def test_nordpool_errors(hass: HomeAssistant, nordpool: MockConfigEntry) -> None:
    """An area the entry lacks, an unknown entry id and an entry of another integration are form errors.

    ConfigEntrySelector only checks for a string, so unknown ids reach the step.
    """
    other = sample_entry()
    other.add_to_hass(hass)
    result = await start(hass, "nordpool")
    cases = [
        ({"nordpool_entry": nordpool.entry_id, "area": "SE4"}, {"area": "area_not_in_entry"}),
        ({"nordpool_entry": "01JUNKNOWNENTRY", "area": "SE3"}, {"nordpool_entry": "nordpool_entry_missing"}),
        ({"nordpool_entry": other.entry_id, "area": "SE3"}, {"nordpool_entry": "nordpool_entry_missing"}),
    ]
    for user_input, errors in cases:
        result = await hass.config_entries.flow.async_configure(result["flow_id"], user_input)
        assert result["type"] is FlowResultType.FORM
        assert result["step_id"] == "nordpool"
        assert result["errors"] == errors
        assert schema_values(result)["nordpool_entry"] == (None, user_input["nordpool_entry"])
    assert [e.unique_id for e in hass.config_entries.async_entries(DOMAIN)] == ["sample"]


# --- price sensor -------------------------------------------------------------------------------------------------


def price_sensor(hass: HomeAssistant, entity_id: str) -> None:
    """A HACS-Nord-Pool-shaped price sensor: raw_today with hourly {start, end, value} in EUR/kWh for HA's today."""
    start = dt_util.as_utc(dt_util.start_of_local_day())
    end = dt_util.as_utc(dt_util.start_of_local_day(dt_util.now().date() + timedelta(days=1)))
    hours = (end - start) // timedelta(hours=1)
    raw = [
        {"start": (start + timedelta(hours=h)).isoformat(), "end": (start + timedelta(hours=h + 1)).isoformat(), "value": 0.1}
        for h in range(hours)
    ]
    hass.states.async_set(entity_id, "0.1", {"unit_of_measurement": "EUR/kWh", "raw_today": raw, "raw_tomorrow": []})


async def test_sensor_must_hold_prices(hass: HomeAssistant, mock_setup_entry: AsyncMock) -> None:
    """A sensor without price attributes, or a missing one, is refused with a form error."""
    hass.states.async_set("sensor.backup_state", "idle", {})
    result = await start(hass, "sensor")
    for entity_id in ("sensor.backup_state", "sensor.missing"):
        result = await hass.config_entries.flow.async_configure(result["flow_id"], {"price_entity": entity_id})
        assert result["type"] is FlowResultType.FORM
        assert result["errors"] == {"price_entity": "not_a_price_sensor"}
    assert hass.config_entries.async_entries(DOMAIN) == []


async def test_sensor_creates_entry_and_duplicate_aborts(hass: HomeAssistant, mock_setup_entry: AsyncMock) -> None:
    """One entry per price sensor."""
    price_sensor(hass, "sensor.spot_price")
    result = await start(hass, "sensor")
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "sensor"
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {"price_entity": "sensor.spot_price"})
    assert result["step_id"] == "settings"
    result = await hass.config_entries.flow.async_configure(result["flow_id"], SETTINGS)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "Prices from sensor.spot_price"
    assert result["data"] == {"price_source": "sensor", "price_entity": "sensor.spot_price"}
    assert result["result"].unique_id == "sensor_sensor.spot_price"

    result = await start(hass, "sensor")
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {"price_entity": "sensor.spot_price"})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"


# --- options ------------------------------------------------------------------------------------------------------


async def test_options_change_the_price(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """The options form shows the current values; saving them reloads the entry with the new formula."""
    before = hass.states.get(PRICE_SENSOR)
    spot = before.attributes["spot_price"]
    assert float(before.state) == pytest.approx(spot)  # default options: total == spot
    old_runtime = loaded_entry.runtime_data

    result = await hass.config_entries.options.async_init(loaded_entry.entry_id)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "init"
    assert {key: default for key, (default, _) in schema_values(result).items()} == DEFAULT_OPTIONS

    new = {"markup": 0.015, "vat_percent": 21, "grid_fee": 0.0842, "vat_on_negative": True, "power_limit_kw": 9.2}
    result = await hass.config_entries.options.async_configure(result["flow_id"], new)
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "control"
    assert {key: default for key, (default, _) in schema_values(result).items()} == {
        **DEFAULT_CONTROL_OPTIONS, "notify_service": None, "policy_rules": None,  # no rules: the field shows its example
        "gated_entities": None,
    }
    result = await hass.config_entries.options.async_configure(result["flow_id"], CONTROL_FORM)
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "grid"
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "home"
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "tariff"
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "assistant"
    assistant = {k: v for k, v in DEFAULT_ASSISTANT_OPTIONS.items() if not k.startswith("llm_") and k != "daily_cost_cap"}
    result = await hass.config_entries.options.async_configure(result["flow_id"], assistant)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()

    assert dict(loaded_entry.options) == {
        **new, "vat_percent": 21.0, **DEFAULT_CONTROL_OPTIONS, **HOME_FORM_DEFAULTS, **assistant
    }
    assert loaded_entry.state is ConfigEntryState.LOADED
    assert loaded_entry.runtime_data is not old_runtime  # reloaded
    assert loaded_entry.runtime_data.coordinator.formula == PriceFormula(
        markup=0.015, vat=0.21, grid_fee=0.0842, vat_on_negative=True
    )
    after = hass.states.get(PRICE_SENSOR)
    assert after.attributes["spot_price"] == spot
    assert round(float(after.state), 9) == round((spot + 0.015) * 1.21 + 0.0842, 9)

    result = await hass.config_entries.options.async_init(loaded_entry.entry_id)
    assert {key: default for key, (default, _) in schema_values(result).items()} == {**new, "vat_percent": 21.0}


async def test_options_validate_policy_rules(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """A malformed rule is refused with its index and reason, and nothing is saved; a valid one is saved."""
    before = dict(loaded_entry.options)
    result = await hass.config_entries.options.async_init(loaded_entry.entry_id)
    result = await hass.config_entries.options.async_configure(result["flow_id"], DEFAULT_OPTIONS)
    one = {"operation": "open", "device_type": "cover", "risk_min": 4, "risk_max": 4, "action": "deny"}
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {**CONTROL_FORM, "policy_rules": yaml.safe_dump(one)}  # a rule, not a list of rules
    )
    assert result["errors"] == {"policy_rules": "policy_not_a_list"}
    bad = [{"operation": "open", "device_type": "cover", "action": "allow"},
           {"operation": "open", "device_type": "cover", "risk_min": 5, "risk_max": 2, "action": "allow"}]
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {**CONTROL_FORM, "policy_rules": yaml.safe_dump(bad)}
    )
    assert result["type"] is FlowResultType.FORM and result["errors"] == {"policy_rules": "policy_rule_order"}
    assert result["description_placeholders"] == {"number": "2"}  # counted from 1, as people count
    for rule, error, placeholders in (
        ({**bad[1], "colour": "red"}, "policy_rule_unknown_key",
         {"number": "1", "key": "colour", "keys": "operation, device_type, risk_min, risk_max, action"}),
        ({"operation": "open", "action": "deny"}, "policy_rule_missing", {"number": "1", "key": "device_type"}),
        ({**bad[0], "action": "maybe"}, "policy_rule_not_an_option",
         {"number": "1", "key": "action", "options": "allow, confirm, deny"}),
        ({**bad[0], "risk_max": 9}, "policy_rule_risk", {"number": "1", "key": "risk_max", "maximum": "5"}),
        ("open the door", "policy_rule_not_a_mapping", {"number": "1"}),
    ):
        result = await hass.config_entries.options.async_configure(
            result["flow_id"], {**CONTROL_FORM, "policy_rules": yaml.safe_dump([rule])}
        )
        assert (result["errors"], result["description_placeholders"]) == ({"policy_rules": error}, placeholders)
    assert dict(loaded_entry.options) == before
    good = [{"operation": "open", "device_type": "cover", "risk_min": 4, "risk_max": 4, "action": "deny"}]
    result = await hass.config_entries.options.async_configure(
        result["flow_id"], {**CONTROL_FORM, "policy_rules": yaml.safe_dump(good), "notify_service": "notify.phone"}
    )
    assert result["step_id"] == "grid"
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["step_id"] == "home"
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["step_id"] == "tariff"
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["step_id"] == "assistant"
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    assert loaded_entry.options["policy_rules"] == good and loaded_entry.options["notify_service"] == "notify.phone"
    rules = loaded_entry.runtime_data.control.keeper.settings.rules
    assert rules[0].as_dict() == {**good[0], "source": "user"}


DENY_COVERS = [{"operation": "open", "device_type": "cover", "action": "deny"}]
# The saved rule and a second one whose "*" lost its quotes: YAML reads "*" as an alias there (line 4).
UNQUOTED_STAR = "- operation: open\n  device_type: cover\n  action: deny\n- operation: *\n  device_type: lock\n"
BAD_INDENT = "- operation: open\n  device_type: cover\n action: deny\n"  # line 3 is indented by one space


@pytest.mark.parametrize(
    ("text", "line", "problem"),
    [
        (UNQUOTED_STAR, "4", "expected alphabetic or numeric character, but found '\\n'"),
        (BAD_INDENT, "3", "expected <block end>, but found '<block mapping start>'"),
    ],
)
async def test_a_typo_in_the_policy_rules_keeps_the_saved_rules(
    hass: HomeAssistant, text: str, line: str, problem: str
) -> None:
    """Text that is not YAML is an error naming its line, the form keeps the typed text, and the saved rules stay
    (an object selector would send nothing for such text, and the step would save no rules)."""
    entry = sample_entry(policy_rules=DENY_COVERS)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    result = await hass.config_entries.options.async_init(entry.entry_id)
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert yaml.safe_load(schema_values(result)["policy_rules"][1]) == DENY_COVERS  # the saved rules, as YAML text
    result = await hass.config_entries.options.async_configure(result["flow_id"], {**CONTROL_FORM, "policy_rules": text})
    assert (result["step_id"], result["errors"]) == ("control", {"policy_rules": "yaml_invalid"})
    assert result["description_placeholders"] == {"line": line, "problem": problem}
    assert schema_values(result)["policy_rules"][1] == text  # what was typed, to correct
    hass.config_entries.options.async_abort(result["flow_id"])
    assert entry.options["policy_rules"] == DENY_COVERS
    assert entry.runtime_data.control.keeper.settings.rules[0].as_dict()["action"] == "deny"


async def test_the_policy_rules_round_trip_and_clear_only_when_emptied(hass: HomeAssistant) -> None:
    """The saved rules' text submitted unchanged saves the same rules; an emptied field (the frontend leaves it out)
    saves none."""
    rules = [*DENY_COVERS, {"operation": "*", "device_type": "lock", "risk_min": 2, "risk_max": 5, "action": "confirm"}]
    entry = sample_entry(policy_rules=rules)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    for form, saved in ((None, rules), ({}, [])):
        result = await hass.config_entries.options.async_init(entry.entry_id)
        result = await hass.config_entries.options.async_configure(result["flow_id"], {})
        shown = schema_values(result)["policy_rules"][1]
        typed = {"policy_rules": shown} if form is None else form
        result = await hass.config_entries.options.async_configure(result["flow_id"], {**CONTROL_FORM, **typed})
        for step in ("grid", "home", "tariff", "assistant"):
            assert result["step_id"] == step
            result = await hass.config_entries.options.async_configure(result["flow_id"], {})
        assert result["type"] is FlowResultType.CREATE_ENTRY
        await hass.async_block_till_done()
        assert entry.options["policy_rules"] == saved


async def test_an_overlong_policy_text_is_refused_unparsed(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    result = await hass.config_entries.options.async_init(loaded_entry.entry_id)
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    text = "# " + "x" * 20_000
    result = await hass.config_entries.options.async_configure(result["flow_id"], {**CONTROL_FORM, "policy_rules": text})
    assert result["errors"] == {"policy_rules": "yaml_too_long"}
    assert result["description_placeholders"] == {"maximum": "20000"}


LLM_URL = "http://llm.local:8080/v1"


async def through_to_assistant(hass: HomeAssistant, entry: MockConfigEntry, grid: dict[str, Any]) -> dict[str, Any]:
    """An options flow with the current settings and control, ``grid`` on the grid step and the home plan's
    defaults; returns the assistant form."""
    result = await hass.config_entries.options.async_init(entry.entry_id)
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["step_id"] == "grid"
    result = await hass.config_entries.options.async_configure(result["flow_id"], grid)
    assert result["step_id"] == "home"
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["step_id"] == "tariff"
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    assert result["type"] is FlowResultType.FORM and result["step_id"] == "assistant"
    return result


async def test_options_model_provider_and_grid_twin(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """The provider's model list is fetched: an unreachable provider, a rejected key and an empty list are form
    errors; a list leads to the model step. Its URL and key go to the entry data, the rest to the options; a blank URL
    later returns to the offline planner, and blank optional fields drop what they held."""
    grid = {"pv_peak_kw": 6.5, "grid_power_entity": "sensor.grid_power"}
    result = await through_to_assistant(hass, loaded_entry, grid)
    provider = {"llm_base_url": f" {LLM_URL}/ ", "llm_api_key": " sk-1 ", "calendar_entity": "calendar.family"}
    models = AsyncMock(side_effect=[ModelError("unreachable"), ModelAuthError("bad key"), [], ["big", "small"]])
    with patch("custom_components.agentic_hems.flow.checks.async_list_models", models):
        for error in ({"llm_base_url": "cannot_connect"}, {"llm_api_key": "invalid_auth"}, {"llm_base_url": "no_models"}):
            result = await hass.config_entries.options.async_configure(result["flow_id"], provider)
            assert result["type"] is FlowResultType.FORM and result["step_id"] == "assistant"
            assert result["errors"] == error
        result = await hass.config_entries.options.async_configure(result["flow_id"], provider)
    assert [call.args[1:] for call in models.await_args_list] == [(LLM_URL, "sk-1")] * 4
    assert result["step_id"] == "model" and result["description_placeholders"] == {"count": "2"}
    assert frontend_opens(result) == []
    assert schema_values(result)["llm_model"] == ("big", None)  # none chosen yet: the first of the list
    model = {"llm_model": "small", "llm_price_input": 0.5, "llm_price_output": 1.5, "daily_cost_cap": 2.0}
    result = await hass.config_entries.options.async_configure(result["flow_id"], model)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    assert dict(loaded_entry.data) == {"price_source": "sample", "llm_base_url": LLM_URL, "llm_api_key": "sk-1"}
    assert {k: loaded_entry.options[k] for k in (*grid, *model, "calendar_entity")} == {
        **grid, **model, "calendar_entity": "calendar.family"
    }
    assert loaded_entry.state is ConfigEntryState.LOADED

    result = await through_to_assistant(hass, loaded_entry, {})
    assert schema_values(result)["llm_base_url"] == (None, LLM_URL)
    result = await hass.config_entries.options.async_configure(result["flow_id"], {"llm_base_url": ""})
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    assert dict(loaded_entry.data) == {"price_source": "sample"}  # the offline planner: no provider, no key
    dropped = {*grid, "llm_model", "calendar_entity"}
    assert not dropped & set(loaded_entry.options)
    assert loaded_entry.options["daily_cost_cap"] == 2.0  # what the form does not show stays


# --- reconfigure --------------------------------------------------------------------------------------------------


async def test_reconfigure_sample_aborts(hass: HomeAssistant) -> None:
    """The sample has no source settings."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    result = await entry.start_reconfigure_flow(hass)
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "nothing_to_reconfigure"


async def test_reconfigure_entsoe(
    hass: HomeAssistant, frozen: None, aioclient_mock: AiohttpClientMocker, mock_setup_entry: AsyncMock
) -> None:
    """A rejected key is an error and changes nothing; a good one moves the entry to the new zone and reloads it."""
    entry = entsoe_entry("BE", "old-token")
    entry.add_to_hass(hass)
    aioclient_mock.get(API_URL, params={"securityToken": "bad-token"}, status=401)
    aioclient_mock.get(API_URL, params={"securityToken": "new-token"}, text=BE_60M)

    result = await entry.start_reconfigure_flow(hass)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "reconfigure"
    assert schema_values(result) == {"api_key": (None, "old-token"), "bidding_zone": (None, "BE")}

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"api_key": "bad-token", "bidding_zone": "NL"}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "invalid_auth"}
    assert schema_values(result) == {"api_key": (None, "bad-token"), "bidding_zone": (None, "NL")}
    assert entry.data["api_key"] == "old-token"

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"api_key": "new-token", "bidding_zone": "NL"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert query(aioclient_mock)["in_Domain"] == "10YNL----------L"
    assert dict(entry.data) == {"price_source": "entsoe", "api_key": "new-token", "bidding_zone": "NL"}
    assert entry.title == "ENTSO-E NL"
    assert entry.unique_id == "entsoe_NL"
    await hass.async_block_till_done()
    assert mock_setup_entry.call_count == 1

    # The old zone is free again.
    result = await start(hass, "entsoe")
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"api_key": "new-token", "bidding_zone": "BE"}
    )
    assert result["step_id"] == "settings"


async def test_reconfigure_entsoe_to_a_taken_zone_aborts(
    hass: HomeAssistant, aioclient_mock: AiohttpClientMocker
) -> None:
    """Moving to a zone another entry has would make two entries for one zone."""
    entry = entsoe_entry("BE")
    entry.add_to_hass(hass)
    entsoe_entry("NL").add_to_hass(hass)
    result = await entry.start_reconfigure_flow(hass)
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"api_key": "old-token", "bidding_zone": "NL"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "already_configured"
    assert aioclient_mock.call_count == 0
    assert dict(entry.data) == {"price_source": "entsoe", "api_key": "old-token", "bidding_zone": "BE"}
    assert entry.unique_id == "entsoe_BE"


async def test_reconfigure_nordpool(hass: HomeAssistant, mock_setup_entry: AsyncMock) -> None:
    """The area is checked against the Nord Pool entry like at creation, and stored upper-cased."""
    nordpool = MockConfigEntry(domain="nordpool", data={"areas": ["SE3", "SE4"], "currency": "SEK"})
    nordpool.add_to_hass(hass)
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Nord Pool SE3",
        unique_id=f"nordpool_{nordpool.entry_id}_SE3",
        data={"price_source": "nordpool", "nordpool_entry": nordpool.entry_id, "area": "SE3"},
        options=dict(DEFAULT_OPTIONS),
    )
    entry.add_to_hass(hass)
    result = await entry.start_reconfigure_flow(hass)
    assert schema_values(result) == {"nordpool_entry": (None, nordpool.entry_id), "area": (None, "SE3")}

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"nordpool_entry": nordpool.entry_id, "area": "SE2"}
    )
    assert result["errors"] == {"area": "area_not_in_entry"}
    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"nordpool_entry": "gone", "area": "SE4"}
    )
    assert result["errors"] == {"nordpool_entry": "nordpool_entry_missing"}
    assert entry.data["area"] == "SE3"

    result = await hass.config_entries.flow.async_configure(
        result["flow_id"], {"nordpool_entry": nordpool.entry_id, "area": "se4"}
    )
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert dict(entry.data) == {"price_source": "nordpool", "nordpool_entry": nordpool.entry_id, "area": "SE4"}
    await hass.async_block_till_done()  # the reload runs while setup is still mocked
    assert entry.title == "Nord Pool SE4"
    assert entry.unique_id == f"nordpool_{nordpool.entry_id}_SE4"


async def test_reconfigure_sensor(hass: HomeAssistant, mock_setup_entry: AsyncMock) -> None:
    """A new price entity; options stay."""
    entry = MockConfigEntry(
        domain=DOMAIN,
        title="Prices from sensor.old",
        unique_id="sensor_sensor.old",
        data={"price_source": "sensor", "price_entity": "sensor.old"},
        options={**DEFAULT_OPTIONS, "vat_percent": 6.0},
    )
    entry.add_to_hass(hass)
    result = await entry.start_reconfigure_flow(hass)
    assert result["step_id"] == "reconfigure"
    assert schema_values(result) == {"price_entity": (None, "sensor.old")}
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {"price_entity": "sensor.new"})
    assert result["errors"] == {"price_entity": "not_a_price_sensor"}
    price_sensor(hass, "sensor.new")
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {"price_entity": "sensor.new"})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    assert dict(entry.data) == {"price_source": "sensor", "price_entity": "sensor.new"}
    assert entry.title == "Prices from sensor.new"
    assert entry.unique_id == "sensor_sensor.new"
    assert entry.options["vat_percent"] == 6.0


# --- reauth -------------------------------------------------------------------------------------------------------


async def test_reauth_entsoe(
    hass: HomeAssistant, frozen: None, aioclient_mock: AiohttpClientMocker, mock_setup_entry: AsyncMock
) -> None:
    """A new key is checked against the entry's zone; only the key changes."""
    entry = entsoe_entry("DK_1", "expired-token")
    entry.add_to_hass(hass)
    aioclient_mock.get(API_URL, params={"securityToken": "bad-token"}, status=401)
    aioclient_mock.get(API_URL, params={"securityToken": "fresh-token"}, status=400, text=NO_DATA)

    result = await entry.start_reauth_flow(hass)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "reauth_confirm"
    assert result["description_placeholders"]["zone"] == "DK_1"
    assert result["errors"] == {}

    result = await hass.config_entries.flow.async_configure(result["flow_id"], {"api_key": "bad-token"})
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"base": "invalid_auth"}
    assert query(aioclient_mock)["in_Domain"] == "10YDK-1--------W"
    assert entry.data["api_key"] == "expired-token"

    result = await hass.config_entries.flow.async_configure(result["flow_id"], {"api_key": "fresh-token"})
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reauth_successful"
    assert query(aioclient_mock)["securityToken"] == "fresh-token"
    assert dict(entry.data) == {"price_source": "entsoe", "api_key": "fresh-token", "bidding_zone": "DK_1"}
    assert entry.unique_id == "entsoe_DK_1"
    assert entry.title == "ENTSO-E DK_1"
    await hass.async_block_till_done()
    assert mock_setup_entry.call_count == 1


async def test_reauth_llm(hass: HomeAssistant, mock_setup_entry: AsyncMock) -> None:
    """The model provider rejected the key: a new one is checked against the provider's model list; only the key
    changes, and the entry (not loaded here) is reloaded by the flow."""
    entry = sample_entry({"llm_base_url": LLM_URL, "llm_api_key": "sk-old"}, llm_model="big")
    entry.add_to_hass(hass)
    models = AsyncMock(side_effect=[ModelAuthError("bad key"), ["big"]])
    with patch("custom_components.agentic_hems.flow.checks.async_list_models", models):
        result = await entry.start_reauth_flow(hass, data={"llm": True})
        assert result["type"] is FlowResultType.FORM and result["step_id"] == "reauth_llm"
        assert result["description_placeholders"]["url"] == LLM_URL
        result = await hass.config_entries.flow.async_configure(result["flow_id"], {"llm_api_key": "sk-wrong"})
        assert result["errors"] == {"llm_api_key": "invalid_auth"}
        assert entry.data["llm_api_key"] == "sk-old"
        result = await hass.config_entries.flow.async_configure(result["flow_id"], {"llm_api_key": " sk-new "})
    assert result["type"] is FlowResultType.ABORT and result["reason"] == "reauth_successful"
    assert [call.args[1:] for call in models.await_args_list] == [(LLM_URL, "sk-wrong"), (LLM_URL, "sk-new")]
    assert dict(entry.data) == {"price_source": "sample", "llm_base_url": LLM_URL, "llm_api_key": "sk-new"}
    await hass.async_block_till_done()
    assert mock_setup_entry.call_count == 1


async def test_reconfigure_and_reauth_of_a_loaded_entry(
    hass: HomeAssistant, frozen: None, aioclient_mock: AiohttpClientMocker, caplog: pytest.LogCaptureFixture
) -> None:
    """A loaded entry is only updated by the flows (reconfigure, reauth of the ENTSO-E key and of the model
    provider's): its update listener reloads it, once each time (HA 2026.12 refuses a flow that reloads an entry with
    an update listener)."""
    assert await async_setup_component(hass, "homeassistant", {})
    aioclient_mock.get(API_URL, text=BOTH_DAYS)
    entry = entsoe_entry("BE", "old-token")
    entry.add_to_hass(hass)
    hass.config_entries.async_update_entry(entry, data={**entry.data, "llm_base_url": LLM_URL, "llm_api_key": "sk-1"})
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    caplog.clear()

    with (
        caplog.at_level(logging.WARNING, logger="homeassistant.helpers.frame"),  # HA's reports of deprecated use
        patch.object(hass.config_entries, "async_reload", wraps=hass.config_entries.async_reload) as reload,
    ):
        result = await entry.start_reconfigure_flow(hass)
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {"api_key": "new-token", "bidding_zone": "BE"}
        )
        assert result["reason"] == "reconfigure_successful"
        await hass.async_block_till_done()
        assert reload.call_count == 1
        assert entry.state is ConfigEntryState.LOADED
        assert entry.runtime_data.coordinator.source.api_key == "new-token"

        result = await entry.start_reauth_flow(hass)
        assert result["step_id"] == "reauth_confirm"
        result = await hass.config_entries.flow.async_configure(result["flow_id"], {"api_key": "fresh-token"})
        assert result["reason"] == "reauth_successful"
        await hass.async_block_till_done()
        assert reload.call_count == 2
        assert entry.state is ConfigEntryState.LOADED
        assert entry.runtime_data.coordinator.source.api_key == "fresh-token"

        with patch("custom_components.agentic_hems.flow.checks.async_list_models", AsyncMock(return_value=["big"])):
            result = await entry.start_reauth_flow(hass, data={"llm": True})
            result = await hass.config_entries.flow.async_configure(result["flow_id"], {"llm_api_key": "sk-2"})
        assert result["reason"] == "reauth_successful"
        await hass.async_block_till_done()
        assert reload.call_count == 3
        assert entry.state is ConfigEntryState.LOADED and entry.data["llm_api_key"] == "sk-2"
    assert [query(aioclient_mock, i)["securityToken"] for i in range(len(aioclient_mock.mock_calls))] == [
        "old-token", "new-token", "fresh-token"  # the set-up, then each flow's check (the reloads use the cache)
    ]
    assert "update listener" not in caplog.text


# --- appliance subentries -----------------------------------------------------------------------------------------

BOILER = {
    "name": "Boiler",
    "kind": "heat_pump",
    "entity_id": "switch.boiler",
    "power_kw": 3.0,
    "duration_min": 90,
    "contiguous": True,
    "earliest_start": "22:00:00",
    "deadline": "06:00:00",
}
BATTERY = {
    "name": "Home battery",
    "kind": "battery",
    "entity_id": "select.battery_mode",
    "power_kw": 2.5,
    "energy_kwh": 5.0,
    "contiguous": False,
    "earliest_start": "00:00:00",
    "deadline": "06:00:00",
}


async def add_appliance(hass: HomeAssistant, entry: MockConfigEntry, user_input: dict[str, Any]) -> dict[str, Any]:
    """Open the add-appliance form and submit ``user_input``."""
    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, "appliance"), context={"source": SOURCE_USER}
    )
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "user"
    return await hass.config_entries.subentries.async_configure(result["flow_id"], user_input)


async def test_add_contiguous_appliance(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """A contiguous load is stored with its duration, and is planned after the reload."""
    result = await add_appliance(hass, loaded_entry, BOILER)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "Boiler"
    stored = dict(BOILER)
    assert result["data"] == {**stored, "duration_min": 90.0}
    await hass.async_block_till_done()

    (subentry,) = [s for s in loaded_entry.subentries.values() if s.title == "Boiler"]
    assert subentry.subentry_type == "appliance"
    assert dict(subentry.data) == {**stored, "duration_min": 90.0}
    assert loaded_entry.state is ConfigEntryState.LOADED
    appliances = loaded_entry.runtime_data.planner.appliances
    assert sorted(a.name for a in appliances.values()) == ["Boiler", "Dishwasher", "EV charger", "Washing machine"]
    assert appliances[subentry.subentry_id].kind == "heat_pump"


async def test_add_split_appliance(hass: HomeAssistant) -> None:
    """A load that can be split is stored with its energy and no duration."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    result = await add_appliance(hass, entry, BATTERY)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    assert result["title"] == "Home battery"
    assert result["data"] == BATTERY
    (subentry,) = [s for s in entry.subentries.values() if s.title == "Home battery"]
    assert "duration_min" not in subentry.data
    assert subentry.data["energy_kwh"] == 5.0


@pytest.mark.parametrize(
    ("changes", "errors"),
    [
        ({"duration_min": None}, {"duration_min": "duration_required"}),
        ({"contiguous": False, "energy_kwh": None}, {"energy_kwh": "energy_required"}),
        ({"name": " dishWASHER "}, {"name": "name_exists"}),
        (
            {"earliest_start": "7:00", "deadline": "+6:00"},
            {"earliest_start": "invalid_time", "deadline": "invalid_time"},
        ),
        ({"name": "ev charger", "duration_min": None}, {"name": "name_exists", "duration_min": "duration_required"}),
        ({"duration_min": 2000, "earliest_start": "08:00:00", "deadline": "09:00:00"}, {"deadline": "window_too_short"}),
        (
            {"contiguous": False, "duration_min": None, "power_kw": 11, "energy_kwh": 200, "earliest_start": "18:00:00",
             "deadline": "07:00:00"},
            {"deadline": "window_too_short"},
        ),
        ({"energy_kwh": 4.5}, {"energy_kwh": "duration_and_energy"}),
        ({"contiguous": False, "energy_kwh": 4.5}, {"energy_kwh": "duration_and_energy"}),
        ({"power_kw": None}, {"power_kw": "power_required"}),
        ({"power_kw": 0}, {"power_kw": "power_out_of_range"}),
        ({"power_kw": 100.5, "duration_min": 3000}, {"power_kw": "power_out_of_range", "duration_min": "duration_out_of_range"}),
        ({"contiguous": False, "duration_min": None, "energy_kwh": 0.001}, {"energy_kwh": "energy_out_of_range"}),
        ({"power_kw": 50.01}, {"power_kw": "power_out_of_range"}),  # no household load draws more than 50 kW
        ({"contiguous": False, "duration_min": None, "energy_kwh": 200.5}, {"energy_kwh": "energy_out_of_range"}),
    ],
    ids=["no-duration", "no-energy", "name-exists", "non-iso-time", "two-errors", "run-too-long", "energy-too-much",
         "both-amounts", "both-amounts-split", "no-power", "power-zero", "over-the-limits", "energy-too-small",
         "power-above-50", "energy-above-200"],
)
async def test_add_appliance_errors(hass: HomeAssistant, changes: dict[str, Any], errors: dict[str, str]) -> None:
    """Form errors name the field; nothing is stored; the typed values are suggested back.

    TimeSelector accepts what ``cv.time`` parses ("7:00", "+6:00"), but the planner reads ISO times, so the flow
    refuses those.
    """
    entry = sample_entry()
    entry.add_to_hass(hass)
    user_input = {k: v for k, v in {**BOILER, **changes}.items() if v is not None}
    result = await add_appliance(hass, entry, user_input)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "user"
    assert result["errors"] == errors
    assert schema_values(result)["name"] == (None, user_input["name"])
    assert sorted(entry.subentries) == sorted(APPLIANCES)


@pytest.mark.parametrize("bad", ["25:00", "7", "noon", "07:00:00.5"])
async def test_time_selector_rejects_non_times(hass: HomeAssistant, bad: str) -> None:
    """What is no time of day at all fails schema validation before the step runs."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    result = await hass.config_entries.subentries.async_init(
        (entry.entry_id, "appliance"), context={"source": SOURCE_USER}
    )
    with pytest.raises(InvalidData) as err:
        await hass.config_entries.subentries.async_configure(result["flow_id"], {**BOILER, "deadline": bad})
    assert set(err.value.schema_errors) == {"deadline"}


def test_validate_appliance_accepts_iso_times() -> None:
    """The data the selectors send (HH:MM:SS) and HH:MM both pass."""
    errors, _ = validate_appliance({**BOILER, "earliest_start": "22:00", "deadline": "06:00:00"})
    assert errors == {}


def test_validate_appliance_trims_the_name() -> None:
    """Surrounding blanks go; a blank name is refused (a trimmed duplicate: test_add_appliance_errors)."""
    errors, data = validate_appliance({**BOILER, "name": "  Boiler "})
    assert (errors, data["name"]) == ({}, "Boiler")
    assert validate_appliance({**BOILER, "name": "   "})[0] == {"name": "name_empty"}


async def test_reconfigure_appliance(hass: HomeAssistant) -> None:
    """The form starts from the stored data; saving replaces data and title (switching to a split load)."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    result = await entry.start_subentry_reconfigure_flow(hass, "washer")
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "reconfigure"
    suggested = {key: value for key, (_, value) in schema_values(result).items() if value is not None}
    assert suggested == APPLIANCES["washer"]

    new = {**APPLIANCES["washer"], "name": "Washer", "contiguous": False, "energy_kwh": 1.2, "deadline": "21:30"}
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], new)
    assert result["type"] is FlowResultType.FORM
    assert result["errors"] == {"energy_kwh": "duration_and_energy"}  # the duration must be cleared, as in the form
    del new["duration_min"]
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], new)
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "reconfigure_successful"
    subentry = entry.subentries["washer"]
    assert subentry.title == "Washer"
    assert dict(subentry.data) == {**new, "deadline": "21:30:00"}  # stored with seconds, as before
    assert entry.subentries["dishwasher"].data == APPLIANCES["dishwasher"]


async def test_reconfigure_appliance_keeps_its_own_name(hass: HomeAssistant) -> None:
    """Its own name (in another case) is no clash."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    result = await entry.start_subentry_reconfigure_flow(hass, "ev")
    new = {**APPLIANCES["ev"], "name": "EV Charger", "power_kw": 7.4}
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], new)
    assert result["step_id"] == "reconfigure_charger"  # an EV charger that can be split: its setpoint next
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], {})
    assert result["reason"] == "reconfigure_successful"
    assert entry.subentries["ev"].title == "EV Charger"
    assert entry.subentries["ev"].data["power_kw"] == 7.4


@pytest.mark.parametrize(
    ("changes", "errors"),
    [
        ({"name": "washing MACHINE"}, {"name": "name_exists"}),
        ({"contiguous": True}, {"duration_min": "duration_required"}),
        ({"energy_kwh": None}, {"energy_kwh": "energy_required"}),
        ({"earliest_start": "5:00"}, {"earliest_start": "invalid_time"}),
    ],
    ids=["name-of-another", "no-duration", "no-energy", "non-iso-time"],
)
async def test_reconfigure_appliance_errors(
    hass: HomeAssistant, changes: dict[str, Any], errors: dict[str, str]
) -> None:
    """Reconfigure validates like adding; the subentry stays as it was."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    result = await entry.start_subentry_reconfigure_flow(hass, "ev")
    user_input = {k: v for k, v in {**APPLIANCES["ev"], **changes}.items() if v is not None}
    result = await hass.config_entries.subentries.async_configure(result["flow_id"], user_input)
    assert result["type"] is FlowResultType.FORM
    assert result["step_id"] == "reconfigure"
    assert result["errors"] == errors
    assert schema_values(result)["name"] == (None, user_input["name"])
    assert entry.subentries["ev"].title == "EV charger"
    assert dict(entry.subentries["ev"].data) == APPLIANCES["ev"]


async def test_two_nordpool_entries_may_share_an_area(hass: HomeAssistant, mock_setup_entry: AsyncMock) -> None:
    """A EUR and a SEK Nord Pool entry for the same area each get their own agentic_hems entry."""
    entries = []
    for currency in ("EUR", "SEK"):
        nordpool = MockConfigEntry(domain="nordpool", data={"areas": ["SE3"], "currency": currency})
        nordpool.add_to_hass(hass)
        result = await start(hass, "nordpool")
        result = await hass.config_entries.flow.async_configure(
            result["flow_id"], {"nordpool_entry": nordpool.entry_id, "area": "SE3"}
        )
        result = await hass.config_entries.flow.async_configure(result["flow_id"], SETTINGS)
        assert result["type"] is FlowResultType.CREATE_ENTRY
        entries.append(result["result"].unique_id)
    assert len(set(entries)) == 2


# --- what HA's frontend can open ---------------------------------------------------------------------------------

# Selectors for which HA's frontend (20260930, and 20260325 of HA 2026.4) computes an empty starting value of its own
# (``computeInitialHaFormData``); a required field with any other selector, e.g. ``config_entry``, and neither a
# default nor a suggested value makes the frontend throw "Selector ... not supported in initial form data": the dialog
# then stays greyed out.
FRONTEND_FILLS = frozenset({
    "action", "addon", "area", "attribute", "boolean", "choose", "color_rgb", "color_temp", "condition", "constant",
    "country", "date", "datetime", "device", "duration", "entity", "file", "icon", "label", "language", "media",
    "number", "numeric_threshold", "object", "select", "serial_port", "state", "target", "template", "text", "theme",
    "time", "trigger",
})


def frontend_opens(result: dict[str, Any]) -> list[str]:
    """The fields of a form that HA's frontend could not start (see FRONTEND_FILLS), as the flow API serializes it."""
    assert result["type"] is FlowResultType.FORM, result
    stuck = []
    for field in serialize(result["data_schema"], custom_serializer=cv.custom_serializer):
        suggested = (field.get("description") or {}).get("suggested_value")
        if field.get("required") and "default" not in field and suggested is None:
            if "selector" in field and next(iter(field["selector"])) not in FRONTEND_FILLS:
                stuck.append(f"{result['step_id']}.{field['name']}")
    return stuck


async def test_every_form_opens_in_the_frontend(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, nordpool: MockConfigEntry
) -> None:
    """Each step of the config flow, reconfigure, the options and the appliance and battery flows gives the frontend a starting
    value for every required field it cannot fill itself; the Nord Pool step suggests the first entry and its area."""
    forms = [await start(hass, source) for source in ("entsoe", "nordpool", "sensor")]
    assert schema_values(forms[1])["nordpool_entry"] == (None, nordpool.entry_id)
    assert schema_values(forms[1])["area"] == (None, "SE3")
    hass.states.async_set("sensor.backup_state", "idle", {})
    forms.append(await hass.config_entries.flow.async_configure(forms[2]["flow_id"], {"price_entity": "sensor.backup_state"}))
    for entry in (entsoe_entry(), MockConfigEntry(domain=DOMAIN, unique_id="np", data={
        "price_source": "nordpool", "nordpool_entry": nordpool.entry_id, "area": "SE3"})):
        entry.add_to_hass(hass)
        forms.append(await entry.start_reconfigure_flow(hass))
    result = await hass.config_entries.options.async_init(loaded_entry.entry_id)
    for step in ("init", "control", "grid", "home", "tariff", "assistant"):
        assert result["step_id"] == step
        forms.append(result)
        if step != "assistant":
            result = await hass.config_entries.options.async_configure(result["flow_id"], {
                "init": SETTINGS, "control": CONTROL_FORM, "grid": {}, "home": {}, "tariff": {}}[step])
    for subentry_type in ("appliance", "battery"):
        forms.append(await hass.config_entries.subentries.async_init(
            (loaded_entry.entry_id, subentry_type), context={"source": SOURCE_USER}))
    forms.append(await loaded_entry.start_subentry_reconfigure_flow(hass, "dishwasher"))
    result = await hass.config_entries.subentries.async_configure(forms[-2]["flow_id"], HOME_BATTERY)
    assert result["type"] is FlowResultType.CREATE_ENTRY
    await hass.async_block_till_done()
    (battery_id,) = [sid for sid, sub in loaded_entry.subentries.items() if sub.subentry_type == "battery"]
    forms.append(await loaded_entry.start_subentry_reconfigure_flow(hass, battery_id))
    assert len(forms) == 16
    assert [stuck for form in forms for stuck in frontend_opens(form)] == []
    bare = {"type": FlowResultType.FORM, "step_id": "nordpool", "data_schema": nordpool_schema()}
    assert frontend_opens(bare) == ["nordpool.nordpool_entry"]  # the form as it was, which the frontend cannot open


async def test_nordpool_without_an_entry_says_so(hass: HomeAssistant) -> None:
    """Without a core Nord Pool entry there is nothing to pick: the flow ends with a translated reason."""
    result = await start(hass, "nordpool")
    assert result["type"] is FlowResultType.ABORT
    assert result["reason"] == "nordpool_not_set_up"


@pytest.mark.parametrize(
    ("country", "zone"),
    [("BE", "BE"), ("DE", "DE_LU"), ("LU", "DE_LU"), ("AT", "AT"), ("NL", "NL"), ("SE", "SE_1"), ("NO", "NO_1"),
     ("DK", "DK_1"), ("IT", "IT_CALA"), ("US", None), (None, None)],
)
async def test_bidding_zone_starts_at_the_country(hass: HomeAssistant, country: str | None, zone: str | None) -> None:
    """The zone field suggests the zone of HA's country (the first of several), none for a country without one."""
    hass.config.country = country
    result = await start(hass, "entsoe")
    assert schema_values(result)["bidding_zone"] == (None, zone)


async def test_rejected_sensor_stays_picked(hass: HomeAssistant) -> None:
    """A sensor refused as a price source is suggested back, so the picker still shows it."""
    hass.states.async_set("sensor.backup_state", "idle", {})
    result = await start(hass, "sensor")
    result = await hass.config_entries.flow.async_configure(result["flow_id"], {"price_entity": "sensor.backup_state"})
    assert result["errors"] == {"price_entity": "not_a_price_sensor"}
    assert schema_values(result)["price_entity"] == (None, "sensor.backup_state")


async def test_appliance_form_prefills_no_number_and_hides_seconds(hass: HomeAssistant) -> None:
    """The numbers start empty (no 0.01 kW), the time pickers ask for hours and minutes and start at 00:00 and
    07:00; the form's placeholders name each number's limits for its errors."""
    entry = sample_entry()
    entry.add_to_hass(hass)
    result = await hass.config_entries.subentries.async_init((entry.entry_id, "appliance"), context={"source": SOURCE_USER})
    fields = {f["name"]: f for f in serialize(result["data_schema"], custom_serializer=cv.custom_serializer)}
    for key in ("power_kw", "duration_min", "energy_kwh"):
        assert not fields[key].get("required") and "default" not in fields[key], key
    assert fields["power_kw"]["selector"]["number"]["min"] == 0.01
    for key, default in (("earliest_start", "00:00"), ("deadline", "07:00")):
        assert fields[key]["selector"] == {"time": {"no_second": True}}
        assert fields[key]["default"] == default
    assert result["description_placeholders"] == {
        "power_kw_min": "0.01", "power_kw_max": "50", "duration_min_min": "1", "duration_min_max": "2880",
        "energy_kwh_min": "0.01", "energy_kwh_max": "200",
    }


@pytest.mark.parametrize("language", ["en", "de"])
def test_policy_rules_example_is_a_valid_policy(language: str) -> None:
    """The example under the policy rules field (a YAML block in its help text) is a policy the options accept."""
    path = Path(__file__).parents[2] / "custom_components" / DOMAIN / "translations" / f"{language}.json"
    help_text = json.loads(path.read_text())["options"]["step"]["control"]["data_description"]["policy_rules"]
    block = re.search(r"```yaml\n(.*?)```", help_text, re.DOTALL)
    assert block, help_text
    rules = yaml.safe_load(block.group(1))
    assert len(validate_rules(rules)) == len(rules) == 2


@pytest.mark.parametrize(
    ("typed", "english"),
    [
        ({"pv_peak_kw": 1000}, "Enter a PV peak power from 0 to 100 kW."),
        ({"battery_capacity_kwh": 1e9}, "Enter a battery capacity from 0 to 250 kWh."),
        ({"battery_power_kw": -1}, "Enter a battery power from 0 to 50 kW."),
    ],
    ids=["pv", "battery-capacity", "battery-power"],
)
async def test_the_grid_step_names_the_range_of_a_home_twin_number(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, typed: dict[str, float], english: str
) -> None:
    """The home twin's numbers have a home's ranges, named in the translated error; the form keeps
    what was typed; nothing is saved."""
    before = dict(loaded_entry.options)
    result = await hass.config_entries.options.async_init(loaded_entry.entry_id)
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    result = await hass.config_entries.options.async_configure(result["flow_id"], CONTROL_FORM)
    result = await hass.config_entries.options.async_configure(result["flow_id"], typed)
    ((field, error),) = result["errors"].items()
    assert (result["step_id"], field) == ("grid", next(iter(typed)))
    errors = json.loads((Path(__file__).parents[2] / "custom_components" / DOMAIN / "translations" / "en.json")
                        .read_text())["options"]["error"]
    assert errors[error].format(**result["description_placeholders"]) == english
    assert schema_values(result)[field][1] == typed[field]
    hass.config_entries.options.async_abort(result["flow_id"])
    assert dict(loaded_entry.options) == before


@pytest.mark.parametrize(
    ("text", "placeholders"),
    [
        ("[" * 5000 + "]" * 5000, {"line": "?", "problem": "nested too deeply"}),  # deeper than the parser recurses
        ("- a\n- b\n: c\n", {"line": "3", "problem": "expected <block end>, but found ':'"}),
    ],
    ids=["nested", "stray-colon"],
)
async def test_policy_text_the_parser_cannot_read_is_an_error_not_a_crash(
    hass: HomeAssistant, loaded_entry: MockConfigEntry, text: str, placeholders: dict[str, str]
) -> None:
    result = await hass.config_entries.options.async_init(loaded_entry.entry_id)
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    result = await hass.config_entries.options.async_configure(result["flow_id"], {**CONTROL_FORM, "policy_rules": text})
    assert (result["errors"], result["description_placeholders"]) == ({"policy_rules": "yaml_invalid"}, placeholders)


async def test_a_rule_key_typed_twice_is_an_error_not_the_last_one(hass: HomeAssistant) -> None:
    """A second ``action`` in one rule is refused with its line; PyYAML kept the last one silently, so a careless
    edit of a saved deny rule saved an allowing one."""
    entry = sample_entry(policy_rules=DENY_COVERS)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    result = await hass.config_entries.options.async_init(entry.entry_id)
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    text = "- operation: open\n  device_type: cover\n  action: deny\n  action: allow\n"
    result = await hass.config_entries.options.async_configure(result["flow_id"], {**CONTROL_FORM, "policy_rules": text})
    assert (result["step_id"], result["errors"]) == ("control", {"policy_rules": "yaml_invalid"})
    assert result["description_placeholders"] == {"line": "4", "problem": "found duplicate key 'action'"}
    hass.config_entries.options.async_abort(result["flow_id"])
    assert entry.options["policy_rules"] == DENY_COVERS


async def test_the_policy_text_is_parsed_off_the_event_loop(hass: HomeAssistant, loaded_entry: MockConfigEntry) -> None:
    """20,000 characters of nested YAML take PyYAML seconds (quadratic in the nesting): the step parses them in an
    executor thread, not on the event loop."""
    threads: list[str] = []
    parse = policy_module.parse_yaml_text

    def recording(text: Any) -> Any:
        threads.append(threading.current_thread().name)
        return parse(text)

    result = await hass.config_entries.options.async_init(loaded_entry.entry_id)
    result = await hass.config_entries.options.async_configure(result["flow_id"], {})
    with patch.object(policy_module, "parse_yaml_text", recording):
        result = await hass.config_entries.options.async_configure(
            result["flow_id"], {**CONTROL_FORM, "policy_rules": yaml.safe_dump(DENY_COVERS)}
        )
    assert result["step_id"] == "grid"
    assert len(threads) == 1 and threads[0] != threading.main_thread().name
