"""Start-up cost: import time of the integration and resident memory added by setting up one entry.

Run: ``.venv/bin/python benchmarks/bench_startup.py``. Each figure is a median over fresh interpreters, beside a
reference measured in the same run:

- import: ``import custom_components.agentic_hems`` after the HA modules every integration shares are loaded,
  beside importing HA core's ``utility_meter`` (no requirements) the same way;
- setup: VmRSS before and after setting up a sample-price entry with three appliances in a test HA instance
  (the sample source parses its documents with entsoe-py/pandas, which a fetch-based source loads only when the
  first prices arrive), beside the same HA instance with nothing set up.
"""

from __future__ import annotations

import json
from pathlib import Path
import statistics
import subprocess
import sys

ROOT = Path(__file__).resolve().parent.parent
RUNS = 7

IMPORT_PROBE = """
import sys, time, json
import homeassistant.config_entries, homeassistant.helpers.update_coordinator, homeassistant.helpers.entity_platform
import homeassistant.helpers.config_validation, homeassistant.helpers.selector, homeassistant.components.sensor
import homeassistant.components.binary_sensor, homeassistant.components.switch, homeassistant.components.time
import homeassistant.helpers.aiohttp_client, homeassistant.helpers.storage, homeassistant.helpers.event
start = time.perf_counter()
import {module}
elapsed = time.perf_counter() - start
heavy = sorted(m for m in ("pandas", "scipy", "entsoe", "scipy.optimize") if m in sys.modules)
print(json.dumps({{"ms": elapsed * 1000, "heavy": heavy}}))
"""

SETUP_PROBE = """
import asyncio, json, sys
sys.path.insert(0, {root!r})
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_test_home_assistant
from homeassistant import loader
from homeassistant.config_entries import ConfigSubentryData
from homeassistant.setup import async_setup_component
import custom_components.agentic_hems
from custom_components.agentic_hems.const import DEFAULT_OPTIONS

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

async def main(set_up):
    async with async_test_home_assistant() as hass:
        hass.data.pop(loader.DATA_CUSTOM_COMPONENTS)
        await hass.config.async_set_time_zone("Europe/Brussels")
        assert await async_setup_component(hass, "homeassistant", {{}})  # exposure, which Assist's agent reads
        await hass.async_block_till_done()
        before = rss_mb()
        if set_up:
            appliances = [
                dict(name="Dishwasher", kind="dishwasher", entity_id="input_boolean.dw", power_kw=1.8,
                     duration_min=150, contiguous=True, earliest_start="18:00:00", deadline="07:00:00"),
                dict(name="Washing machine", kind="washing_machine", entity_id="input_boolean.wm", power_kw=2.0,
                     duration_min=120, contiguous=True, earliest_start="08:00:00", deadline="20:00:00"),
                dict(name="EV charger", kind="ev_charger", entity_id="input_boolean.ev", power_kw=11.0,
                     energy_kwh=30.0, contiguous=False, earliest_start="17:00:00", deadline="07:00:00"),
            ]
            entry = MockConfigEntry(domain="agentic_hems", data={{"price_source": "sample"}}, options=DEFAULT_OPTIONS,
                subentries_data=[ConfigSubentryData(data=a, subentry_type="appliance", title=a["name"], unique_id=None)
                                 for a in appliances])
            entry.add_to_hass(hass)
            assert await hass.config_entries.async_setup(entry.entry_id)
            await hass.async_block_till_done()
            # the price and last gate decision sensors, and two per appliance (the five assistant statistics are
            # disabled by default)
            assert len(hass.states.async_entity_ids("sensor")) == 8
            await hass.config_entries.async_unload(entry.entry_id)
        after = rss_mb()
        await hass.async_stop(force=True)
    print(json.dumps({{"mb": after - before}}))

asyncio.run(main({set_up}))
"""


def probe(code: str) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    return json.loads(out.stdout.strip().splitlines()[-1])


def median_of(code: str, key: str) -> tuple[float, dict[str, object]]:
    results = [probe(code) for _ in range(RUNS)]
    return statistics.median(float(r[key]) for r in results), results[-1]


def main() -> None:
    ours, ours_last = median_of(IMPORT_PROBE.format(module="custom_components.agentic_hems"), "ms")
    ref, _ = median_of(IMPORT_PROBE.format(module="homeassistant.components.utility_meter"), "ms")
    setup, _ = median_of(SETUP_PROBE.format(root=str(ROOT), set_up=True), "mb")
    idle, _ = median_of(SETUP_PROBE.format(root=str(ROOT), set_up=False), "mb")
    print(f"{'case':<58}{'median':>10}  {'reference':<40}{'ref':>10}")
    print(f"{'import custom_components.agentic_hems (ms)':<58}{ours:>10.1f}  {'import homeassistant.components.utility_meter':<40}{ref:>10.1f}")
    print(f"{'RSS added by one sample entry, 3 appliances (MB)':<58}{setup:>10.1f}  {'same HA instance, nothing set up':<40}{idle:>10.1f}")
    print(f"heavy modules loaded by the import: {ours_last['heavy'] or 'none'}")


if __name__ == "__main__":
    main()
