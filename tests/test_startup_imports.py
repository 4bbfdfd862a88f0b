"""Start-up cost, structurally (not timed): no module of the integration imports a heavy library at module level.

Each check runs in a fresh interpreter, so what earlier tests imported does not count. scipy, openai, pandas and
entsoe-py are imported inside the executor jobs that first need them; numpy and the rest of the integration are
imported by ``async_setup``'s import executor job, so importing the package itself loads only HA's modules and
``const``. ``benchmarks/bench_startup.py`` measures the times and memory.
"""

from __future__ import annotations

import json
from pathlib import Path
import subprocess
import sys

ROOT = Path(__file__).parent.parent
HEAVY = ("scipy", "openai", "pandas", "entsoe", "highspy")

PROBE = """
import importlib, json, pkgutil, sys
import custom_components.agentic_hems as pkg
package_only = sorted(m for m in sys.modules if m.startswith(pkg.__name__ + "."))
numpy_after_package = "numpy" in sys.modules
names = [info.name for info in pkgutil.walk_packages(pkg.__path__, pkg.__name__ + ".")]
first_heavy = {}
for name in names:
    importlib.import_module(name)
    for heavy in HEAVY:
        if heavy in sys.modules and heavy not in first_heavy:
            first_heavy[heavy] = name
print(json.dumps({"package_only": package_only, "numpy": numpy_after_package, "modules": names,
                  "first_heavy": first_heavy}))
"""


def _probe() -> dict[str, object]:
    code = f"HEAVY = {HEAVY!r}\n{PROBE}"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    found: dict[str, object] = json.loads(result.stdout.strip().splitlines()[-1])
    return found


def test_no_module_imports_a_heavy_library() -> None:
    """Importing every module of the integration (platforms, flows, planners, grid) loads none of the heavy ones."""
    found = _probe()
    modules = found["modules"]
    assert isinstance(modules, list)
    # the walk reached the platforms HA imports at set-up and the modules that imported scipy or openai before
    for name in ("config_flow", "sensor", "conversation", "grid.dispatch", "grid.contingency", "assistant.llm"):
        assert f"custom_components.agentic_hems.{name}" in modules
    assert found["first_heavy"] == {}


def test_package_import_loads_only_const() -> None:
    """``import custom_components.agentic_hems`` (HA's loader's first job) loads only ``const``, not numpy."""
    found = _probe()
    assert found["package_only"] == ["custom_components.agentic_hems.const"]
    assert found["numpy"] is False


SETUP_PROBE = """
import asyncio, importlib.abc, json, sys, threading
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_test_home_assistant
from homeassistant import loader
from homeassistant.config_entries import ConfigEntryState, ConfigSubentryData
from homeassistant.setup import async_setup_component

first = {}  # heavy module -> imported on the event loop's thread (the main thread)

class Watch(importlib.abc.MetaPathFinder):
    def find_spec(self, name, path, target=None):
        if name in HEAVY and name not in first:
            first[name] = threading.current_thread() is threading.main_thread()

sys.meta_path.insert(0, Watch())
import custom_components.agentic_hems  # watched: a module-level import of a heavy library counts as on the loop
from custom_components.agentic_hems.assistant.llm import async_client
from custom_components.agentic_hems.const import DEFAULT_OPTIONS
from custom_components.agentic_hems.scheduling import joint
joint.SEARCH = False  # the MILP plans the two loads, not the search over few start combinations

async def main():
    async with async_test_home_assistant() as hass:  # the loop runs on the main thread
        hass.data.pop(loader.DATA_CUSTOM_COMPONENTS)
        assert await async_setup_component(hass, "homeassistant", {})
        await hass.config.async_set_time_zone("Europe/Brussels")  # the sample prices' zone (the default is US/Pacific)
        # both want the cheapest night slots, together above the 11 kW limit: the joint MILP (highspy) plans them
        loads = [
            dict(name="Dishwasher", kind="dishwasher", entity_id="input_boolean.dw", power_kw=1.8, duration_min=150,
                 contiguous=True, earliest_start="18:00:00", deadline="07:00:00"),
            dict(name="EV charger", kind="ev_charger", entity_id="input_boolean.ev", power_kw=11.0, energy_kwh=30.0,
                 contiguous=False, earliest_start="17:00:00", deadline="07:00:00"),
        ]
        entry = MockConfigEntry(domain="agentic_hems", data={"price_source": "sample"}, options=DEFAULT_OPTIONS,
            subentries_data=[ConfigSubentryData(data=load, subentry_type="appliance", title=load["name"],
                                                unique_id=None) for load in loads])
        entry.add_to_hass(hass)
        assert await hass.config_entries.async_setup(entry.entry_id)
        await hass.async_block_till_done(wait_background_tasks=True)  # sample prices (entsoe-py), a plan (highspy)
        assert entry.state is ConfigEntryState.LOADED
        await async_client(hass, "http://127.0.0.1:9/v1", None)  # builds the client only: nothing is sent
        plan = hass.states.get("sensor.dishwasher_planned_cost")
        await hass.config_entries.async_unload(entry.entry_id)
        await hass.async_stop(force=True)
    print(json.dumps({"first": first, "planned": plan is not None and plan.state not in ("unknown", "unavailable")}))

asyncio.run(main())
"""


def test_heavy_libraries_are_first_imported_in_the_executor() -> None:
    """Setting up a sample entry (entsoe-py, pandas, a joint MILP with highspy) and a model client (openai) imports each
    heavy library in an executor thread, never on the event loop's thread; the planners load no scipy."""
    code = f"HEAVY = {HEAVY!r}\n{SETUP_PROBE}"
    result = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    found = json.loads(result.stdout.strip().splitlines()[-1])
    assert found["planned"] is True
    assert found["first"] == dict.fromkeys(("openai", "pandas", "entsoe", "highspy"), False)
