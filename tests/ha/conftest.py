"""Fixtures for HA tests: a sample-price entry with three appliances at a fixed time."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import datetime
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from homeassistant.auth.const import GROUP_ID_ADMIN
from homeassistant.config_entries import ConfigSubentryData
from homeassistant.core import Context, HomeAssistant
from homeassistant.setup import async_setup_component

from custom_components.agentic_hems.const import DEFAULT_OPTIONS, DOMAIN

TZ = "Europe/Brussels"
# 2026-11-29 20:05 local: tonight's window is open, tomorrow's sample prices are known.
NOW = datetime(2026, 11, 29, 20, 5, tzinfo=ZoneInfo(TZ))

APPLIANCES: dict[str, dict[str, Any]] = {
    "dishwasher": {
        "name": "Dishwasher",
        "kind": "dishwasher",
        "entity_id": "input_boolean.dishwasher",
        "power_kw": 1.8,
        "duration_min": 150,
        "contiguous": True,
        "earliest_start": "18:00:00",
        "deadline": "07:00:00",
    },
    "washer": {
        "name": "Washing machine",
        "kind": "washing_machine",
        "entity_id": "input_boolean.washing_machine",
        "power_kw": 2.0,
        "duration_min": 100,
        "contiguous": True,
        "earliest_start": "08:00:00",
        "deadline": "20:00:00",
    },
    "ev": {
        "name": "EV charger",
        "kind": "ev_charger",
        "entity_id": "input_boolean.ev_charger",
        "power_kw": 11.0,
        "energy_kwh": 30.0,
        "contiguous": False,
        "earliest_start": "17:00:00",
        "deadline": "07:00:00",
    },
}


def sample_entry(data: dict[str, Any] | None = None, entry_id: str | None = None, **options: Any) -> MockConfigEntry:
    """A sample-price entry with the three appliances as subentries (``data`` adds to the entry data; ``entry_id``
    fixes the entry's id, else it is random)."""
    return MockConfigEntry(
        domain=DOMAIN,
        entry_id=entry_id,
        title="Sample prices",
        unique_id="sample",
        data={"price_source": "sample", **(data or {})},
        options={**DEFAULT_OPTIONS, **options},
        subentries_data=[
            ConfigSubentryData(
                data=data, subentry_id=key, subentry_type="appliance", title=data["name"], unique_id=None
            )
            for key, data in APPLIANCES.items()
        ],
        version=1,
        minor_version=1,
    )


@pytest.fixture(autouse=True)
def config_dir(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """Each HA test gets its own config folder: the audit log and networks live there, never in the shared one."""
    if "hass" in request.fixturenames and "recorder_mock" not in request.fixturenames:  # the recorder comes first
        request.getfixturevalue("hass").config.config_dir = str(tmp_path / "config")


@pytest.fixture
async def tz(hass: HomeAssistant) -> str:
    """Run the home in Europe/Brussels."""
    await hass.config.async_set_time_zone(TZ)
    return TZ


@pytest.fixture
async def loaded_entry(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory
) -> AsyncGenerator[MockConfigEntry]:
    """The sample entry, set up at NOW (with HA's core integration, as in a real HA: exposure and Assist need it)."""
    freezer.move_to(NOW)
    assert await async_setup_component(hass, "homeassistant", {})
    entry = sample_entry()
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    yield entry


async def admin_context(hass: HomeAssistant) -> Context:
    """A context of an active administrator (the first one, created when there is none): only a person in the admin
    group may turn device control on, confirm, approve."""
    for user in await hass.auth.async_get_users():
        if user.is_admin and user.is_active and not user.system_generated:
            return Context(user_id=user.id)
    return Context(user_id=(await hass.auth.async_create_user("Owner", group_ids=[GROUP_ID_ADMIN])).id)
