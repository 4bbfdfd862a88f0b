"""Shared fixtures: custom integrations enabled for every test that uses HA."""

from __future__ import annotations

import asyncio
import inspect
from pathlib import Path

from hypothesis import settings
import pytest
import pytest_asyncio
from pytest_homeassistant_custom_component import plugins as phcc_plugins

import custom_components.agentic_hems  # noqa: F401 - make HA find this package, not phcc's testing one

# pandas (through entsoe-py) is imported lazily by the integration, in an executor job. On Python 3.14 a first import of
# pandas while freezegun's clock is frozen spins without end, so the test session imports it once before any test.
import entsoe.parsers  # noqa: F401  # isort: skip

# Hypothesis's 200 ms per-example deadline is a timing target, which belongs in benchmarks/: a loaded machine must not
# fail a property.
settings.register_profile("agentic_hems", deadline=None)
settings.load_profile("agentic_hems")


# The oldest supported release's harness (phcc 0.13.325, HA 2026.4.4) has two sync autouse fixtures that call
# asyncio.get_event_loop() before pytest-asyncio's runner has set the test's loop, which raises on Python 3.14. Newer
# phcc declares them as below (an async fixture, and phcc's own cleanup check run under the test's loop).
if not inspect.iscoroutinefunction(inspect.unwrap(phcc_plugins.enable_event_loop_debug)):

    @pytest.fixture(autouse=True)
    async def enable_event_loop_debug() -> None:
        """The test's event loop in debug mode."""
        asyncio.get_running_loop().set_debug(True)

    verify_cleanup = pytest_asyncio.fixture(autouse=True)(inspect.unwrap(phcc_plugins.verify_cleanup))


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


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    """Run the demo's check first: most of its time is a wait for a slot boundary, which then overlaps the other tests
    (pytest-xdist hands the first item to the first worker at once; with ``--dist worksteal`` the other worker takes
    the tests queued behind it)."""
    items.sort(key=lambda item: item.nodeid != "tests/test_demo.py::test_demo_check")
