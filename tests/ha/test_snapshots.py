"""Snapshots of every platform's entities (registry entry and state) and of the diagnostics.

The entry has a fixed id and the clock is frozen, so each snapshot is the same on every run and on every supported
Home Assistant release: only the registry fields both releases have are compared.
"""

from __future__ import annotations

from collections.abc import AsyncGenerator, Mapping
import json
from typing import Any

from freezegun.api import FrozenDateTimeFactory
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from pytest_homeassistant_custom_component.components.diagnostics import get_diagnostics_for_config_entry
from pytest_homeassistant_custom_component.syrupy import HomeAssistantSnapshotExtension
from pytest_homeassistant_custom_component.typing import ClientSessionGenerator
from syrupy.assertion import SnapshotAssertion
from syrupy.filters import props

from homeassistant.core import HomeAssistant
from homeassistant.helpers import entity_registry as er
from homeassistant.setup import async_setup_component

from .conftest import NOW, sample_entry

ENTRY_ID = "01JSNAPSHOTENTRY0000000000"
SECRETS = {
    "api_key": "entsoe-key-5f1d9c",
    "llm_api_key": "sk-llm-key-8a7e42",
    "llm_base_url": "https://llm-user:llm-pass-3b9c@llm.example/v1?token=url-token-77d1",
}
REGISTRY_FIELDS = (
    "entity_id", "unique_id", "translation_key", "original_device_class", "entity_category", "disabled_by",
    "capabilities", "unit_of_measurement", "has_entity_name", "original_icon", "supported_features",
)


@pytest.fixture
def snapshot(snapshot: SnapshotAssertion) -> SnapshotAssertion:
    """Home Assistant's snapshot format and folder (``snapshots/`` beside the test)."""
    return snapshot.use_extension(HomeAssistantSnapshotExtension)


@pytest.fixture
async def snapshot_entry(
    hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory
) -> AsyncGenerator[MockConfigEntry]:
    """The sample entry with a fixed id and keys that must stay secret, set up at NOW."""
    freezer.move_to(NOW)
    assert await async_setup_component(hass, "homeassistant", {})
    entry = sample_entry(dict(SECRETS), entry_id=ENTRY_ID)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    yield entry


@pytest.mark.parametrize("platform", ["sensor", "binary_sensor", "switch", "time"])
async def test_platform_snapshot(
    hass: HomeAssistant,
    entity_registry: er.EntityRegistry,
    snapshot_entry: MockConfigEntry,
    snapshot: SnapshotAssertion,
    platform: str,
) -> None:
    """Each entity of the platform: its registry entry and its state with every attribute."""
    entries = sorted(
        (e for e in er.async_entries_for_config_entry(entity_registry, ENTRY_ID) if e.domain == platform),
        key=lambda e: e.entity_id,
    )
    assert entries
    for entry in entries:
        fields = {field: getattr(entry, field) for field in REGISTRY_FIELDS}
        fields["capabilities"] = _plain_keys(entry.capabilities)
        assert fields == snapshot(name=f"{entry.entity_id}-entry")
        state = hass.states.get(entry.entity_id)
        if entry.disabled_by is not None:  # off by default (the run statistics): no state until a user enables it
            assert state is None
            continue
        shown = None if state is None else {"state": state.state, "attributes": _plain_keys(state.attributes)}
        assert shown == snapshot(name=f"{entry.entity_id}-state")


async def test_diagnostics_snapshot(
    hass: HomeAssistant,
    snapshot_entry: MockConfigEntry,
    hass_client: ClientSessionGenerator,  # after the clock is set: its token is issued then
    snapshot: SnapshotAssertion,
) -> None:
    """The diagnostics download, as an administrator gets it; no secret of the entry appears anywhere in it."""
    assert await async_setup_component(hass, "diagnostics", {})
    diagnostics = await get_diagnostics_for_config_entry(hass, hass_client, snapshot_entry)
    assert diagnostics == snapshot(exclude=props("created_at", "modified_at", "entry_id", "fetched_at"))
    serialized = json.dumps(diagnostics)
    secret = snapshot_entry.runtime_data.grid.secret
    for value in (*SECRETS.values(), "llm-user", "llm-pass-3b9c", "url-token-77d1", secret.hex()):
        assert value not in serialized, value
    assert _strings(diagnostics)  # the scan above read real text


def _plain_keys(mapping: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """``mapping`` with its keys as plain strings (HA 2026.10's attribute names are StrEnums, 2026.4's strings)."""
    return None if mapping is None else {str(key): value for key, value in mapping.items()}


def _strings(value: Any) -> list[str]:
    """Every string in ``value``, recursively."""
    if isinstance(value, str):
        return [value]
    if isinstance(value, dict):
        return [s for k, v in value.items() for s in (*_strings(k), *_strings(v))]
    if isinstance(value, list):
        return [s for v in value for s in _strings(v)]
    return []
