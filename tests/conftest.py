"""Shared fixtures: custom integrations enabled for every test that uses HA."""

from __future__ import annotations

from pathlib import Path

import pytest

import custom_components.agentic_hems  # noqa: F401 - make HA find this package, not phcc's testing one

# pandas (through entsoe-py) is imported lazily by the integration, in an executor job. On Python 3.14 a first import of
# pandas while freezegun's clock is frozen spins without end, so the test session imports it once before any test.
import entsoe.parsers  # noqa: F401  # isort: skip


@pytest.fixture(autouse=True)
def auto_enable_custom_integrations(request: pytest.FixtureRequest) -> None:
    """Let HA load custom_components/agentic_hems in every test that has a ``hass``; pure tests stay HA-free."""
    if "hass" in request.fixturenames:
        if "recorder_mock" in request.fixturenames:  # the recorder must start before hass
            request.getfixturevalue("recorder_mock")
        request.getfixturevalue("enable_custom_integrations")


def pytest_ignore_collect(collection_path: Path, config: pytest.Config) -> bool | None:
    """tests/browser runs on its own, without the homeassistant plugin (``scripts/test`` runs both; see its
    conftest)."""
    if collection_path == Path(__file__).parent / "browser" and config.pluginmanager.has_plugin("homeassistant"):
        return True
    return None
