"""Start-up cost: import time of the integration and resident memory added by setting up one entry.

Run: ``scripts/py314-root .venv/bin/python benchmarks/bench_startup.py``. Each figure is a median over fresh
interpreters, beside a reference measured in the same run and its target; the exit status is 1 when a target is missed.

- import: ``import custom_components.agentic_hems`` after the HA modules every integration shares are loaded, beside
  HA core's ``utility_meter`` imported the same way. Target: at most 100 ms.
- set-up imports: everything HA's loader and the integration import to set an entry up (the package and the platforms
  HA preloads with it, ``async_setup``'s import executor job, the entry's platforms), beside ``utility_meter`` with
  its platforms. Target: none of scipy, openai, pandas, entsoe-py is loaded (they load in the executor jobs that first
  use them).
- setup: VmRSS before and after setting up an entry with three appliances in a test HA instance, after its first
  plan, beside the same HA instance with nothing set up. The set-up probes first import the HA modules a default
  installation (``default_config``) has loaded before a custom integration is set up and that the set-up touches
  (``SHARED_HA``: http, frontend, recorder, logbook, conversation, person, stream...), for ours and the references
  alike; stream brings numpy (whose own share, for an installation without ``default_config``, is printed). A Nord Pool entry (HA core's ``nordpool`` service, stood in by one with its shape) has the
  target of at most 20 MB; its appliances overlap above the power limit, so the first plan is the joint planner's: its own
  search over the runs' starts (``joint_search``) settles it within ``QUICK_WORK`` of work and needs no solver. The same entry with that search turned off
  (``joint.SEARCH``) solves the MILP and loads highspy (whose own share is printed, beside scipy.optimize's,
  which the planners loaded until highspy replaced it). The sample entry parses its bundled ENTSO-E documents with entsoe-py,
  which loads pandas, as an ENTSO-E entry does at its first fetch: its figure is reported with the modules each entry
  loaded.
"""

from __future__ import annotations

import json
from pathlib import Path
import statistics
import subprocess
import sys

ROOT = Path(__file__).resolve().parent.parent
RUNS = 7
SETUP_RUNS = 5
IMPORT_TARGET_MS = 100.0
RSS_TARGET_MB = 20.0
HEAVY = ("scipy", "openai", "pandas", "entsoe", "highspy")
PRELOADED = ("config_flow", "condition", "diagnostics", "logbook", "repairs", "trigger")  # HA's BASE_PRELOAD_PLATFORMS
OURS_AT_SETUP = (
    *PRELOADED,
    "services",
    "cards.frontend",
    "cards.websocket",
    "runtime",
    "assistant.llm_api",  # async_setup's job
    "binary_sensor",
    "conversation",
    "sensor",
    "switch",
    "time",  # the entry's platforms
)
UTILITY_METER_AT_SETUP = ("config_flow", "diagnostics", "sensor", "select")
# HA modules a default installation (default_config) has loaded before any custom integration is set up, and that
# the set-up touches: imported first by the set-up probes, for ours and the references alike
SHARED_HA = (
    "homeassistant.components.http",
    "homeassistant.components.websocket_api",
    "homeassistant.components.frontend",
    "homeassistant.components.recorder",
    "homeassistant.components.history",
    "homeassistant.components.logbook",
    "homeassistant.components.conversation",
    "homeassistant.components.person",
    "homeassistant.components.stream",  # imports numpy
    "homeassistant.helpers.llm",
)

IMPORT_PROBE = """
import importlib, sys, time, json
import homeassistant.config_entries, homeassistant.helpers.update_coordinator, homeassistant.helpers.entity_platform
import homeassistant.helpers.config_validation, homeassistant.helpers.selector, homeassistant.components.sensor
import homeassistant.components.binary_sensor, homeassistant.components.switch, homeassistant.components.time
import homeassistant.helpers.aiohttp_client, homeassistant.helpers.storage, homeassistant.helpers.event
for name in {shared!r}:
    importlib.import_module(name)
start = time.perf_counter()
importlib.import_module({module!r})
for name in {submodules!r}:
    try:
        importlib.import_module({module!r} + "." + name)
    except ModuleNotFoundError as err:  # a platform the integration does not have
        if err.name != {module!r} + "." + name:
            raise
elapsed = time.perf_counter() - start
heavy = sorted(m for m in {heavy!r} if m in sys.modules)
print(json.dumps({{"ms": elapsed * 1000, "heavy": heavy}}))
"""

SETUP_PROBE = """
import asyncio, json, sys, time
from datetime import date, datetime, timedelta
from zoneinfo import ZoneInfo
sys.path.insert(0, {root!r})
from pytest_homeassistant_custom_component.common import MockConfigEntry, async_test_home_assistant
from homeassistant import loader
from homeassistant.config_entries import ConfigEntryState, ConfigSubentryData
from homeassistant.core import SupportsResponse
from homeassistant.setup import async_setup_component
import importlib
for name in {shared!r}:
    importlib.import_module(name)
import custom_components  # this repository's (empty), not phcc's testing one; the integration is imported by the entry

SOURCE = {source!r}
TZ = "Europe/Stockholm"

def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024

def nordpool_stand_in(hass):
    # HA core's nordpool.get_prices_for_date, stood in by a service with its shape: hourly SEK/MWh, UTC ISO strings
    nordpool = MockConfigEntry(domain="nordpool", data={{"areas": ["SE3"], "currency": "SEK"}})
    nordpool.add_to_hass(hass)

    async def get_prices_for_date(call):
        day = date.fromisoformat(call.data["date"])
        start = datetime(day.year, day.month, day.day, tzinfo=ZoneInfo(TZ))
        return {{"SE3": [{{"start": (start + timedelta(hours=h)).astimezone(ZoneInfo("UTC")).isoformat(),
                          "end": (start + timedelta(hours=h + 1)).astimezone(ZoneInfo("UTC")).isoformat(),
                          "price": 100.0 + 10 * ((h * 7) % 24)}} for h in range(24)]}}

    hass.services.async_register("nordpool", "get_prices_for_date", get_prices_for_date,
                                 supports_response=SupportsResponse.ONLY)
    return {{"price_source": "nordpool", "nordpool_entry": nordpool.entry_id, "area": "SE3"}}

async def main():
    async with async_test_home_assistant() as hass:
        hass.data.pop(loader.DATA_CUSTOM_COMPONENTS)
        await hass.config.async_set_time_zone(TZ)
        assert await async_setup_component(hass, "homeassistant", {{}})  # exposure, which Assist's agent reads
        await hass.async_block_till_done()
        data = nordpool_stand_in(hass) if SOURCE.startswith("nordpool") else {{"price_source": "sample"}}
        before = rss_mb()
        setup_ms = 0.0
        if SOURCE != "none":
            start = time.perf_counter()  # the set-up time counts the integration's imports too
            from custom_components.agentic_hems.const import DEFAULT_OPTIONS  # counted: the entry imports it all
            if SOURCE == "nordpool-milp":
                from custom_components.agentic_hems.scheduling import joint
                joint.SEARCH = False
            appliances = [
                dict(name="Dishwasher", kind="dishwasher", entity_id="input_boolean.dw", power_kw=1.8,
                     duration_min=150, contiguous=True, earliest_start="18:00:00", deadline="07:00:00"),
                dict(name="Washing machine", kind="washing_machine", entity_id="input_boolean.wm", power_kw=2.0,
                     duration_min=120, contiguous=True, earliest_start="08:00:00", deadline="20:00:00"),
                dict(name="EV charger", kind="ev_charger", entity_id="input_boolean.ev", power_kw=11.0,
                     energy_kwh=30.0, contiguous=False, earliest_start="17:00:00", deadline="07:00:00"),
            ]
            entry = MockConfigEntry(domain="agentic_hems", data=data, options=DEFAULT_OPTIONS,
                subentries_data=[ConfigSubentryData(data=a, subentry_type="appliance", title=a["name"], unique_id=None)
                                 for a in appliances])
            entry.add_to_hass(hass)
            assert await hass.config_entries.async_setup(entry.entry_id)
            await hass.async_block_till_done(wait_background_tasks=True)  # the first prices and plans
            setup_ms = (time.perf_counter() - start) * 1000
            assert entry.state is ConfigEntryState.LOADED
            # the price and last gate decision sensors, and two per appliance (the five assistant statistics are
            # disabled by default)
            assert len(hass.states.async_entity_ids("sensor")) == 8
            await hass.config_entries.async_unload(entry.entry_id)
        after = rss_mb()
        await hass.async_stop(force=True)
    heavy = sorted(m for m in {heavy!r} if m in sys.modules)
    print(json.dumps({{"mb": after - before, "ms": setup_ms, "heavy": heavy}}))

asyncio.run(main())
"""


MODULES_PROBE = """
import importlib, json
import homeassistant.core
for name in {shared!r}:
    importlib.import_module(name)
def rss_mb():
    for line in open("/proc/self/status"):
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
before = rss_mb()
for name in {modules!r}:
    importlib.import_module(name)
print(json.dumps({{"mb": rss_mb() - before}}))
"""


def probe(code: str) -> dict[str, object]:
    out = subprocess.run([sys.executable, "-c", code], cwd=ROOT, capture_output=True, text=True, check=True)
    found: dict[str, object] = json.loads(out.stdout.strip().splitlines()[-1])
    return found


def median_of(code: str, key: str, runs: int = RUNS) -> tuple[float, dict[str, object]]:
    results = [probe(code) for _ in range(runs)]
    return statistics.median(float(str(r[key])) for r in results), results[-1]


def imports(
    module: str, submodules: tuple[str, ...] = (), shared: tuple[str, ...] = ()
) -> tuple[float, dict[str, object]]:
    code = IMPORT_PROBE.format(module=module, submodules=submodules, heavy=HEAVY, shared=shared)
    return median_of(code, "ms")


def set_up(source: str) -> tuple[float, float, dict[str, object]]:
    """Median RSS added (MB), median set-up time (ms) and the last run's result."""
    code = SETUP_PROBE.format(root=str(ROOT), source=source, heavy=HEAVY, shared=SHARED_HA)
    results = [probe(code) for _ in range(SETUP_RUNS)]
    return (
        statistics.median(float(str(r["mb"])) for r in results),
        statistics.median(float(str(r["ms"])) for r in results),
        results[-1],
    )


def row(case: str, value: float, target: str, reference: str, ref: float | str) -> None:
    ref_text = f"{ref:>10.1f}" if isinstance(ref, float) else f"{ref:>10}"
    print(f"{case:<56}{value:>9.1f}  {target:<10}{reference:<46}{ref_text}")


def main() -> int:
    ours, ours_last = imports("custom_components.agentic_hems")
    ref, _ = imports("homeassistant.components.utility_meter")
    ours_all, ours_all_last = imports("custom_components.agentic_hems", OURS_AT_SETUP, SHARED_HA)
    ref_all, _ = imports("homeassistant.components.utility_meter", UTILITY_METER_AT_SETUP, SHARED_HA)
    highspy_mb, _ = median_of(MODULES_PROBE.format(shared=SHARED_HA, modules=("highspy",)), "mb")
    scipy_mb, _ = median_of(MODULES_PROBE.format(shared=SHARED_HA, modules=("scipy.optimize", "scipy.sparse")), "mb")
    numpy_mb, _ = median_of(MODULES_PROBE.format(shared=(), modules=("numpy",)), "mb")
    nordpool, nordpool_ms, nordpool_last = set_up("nordpool")
    milp, _, milp_last = set_up("nordpool-milp")
    sample, sample_ms, sample_last = set_up("sample")
    idle, _, _ = set_up("none")
    print(f"{'case':<56}{'median':>9}  {'target':<10}{'reference, same run':<46}{'ref':>10}")
    row("import custom_components.agentic_hems (ms)", ours, f"<= {IMPORT_TARGET_MS:.0f}", "import utility_meter", ref)
    row("... and every module imported at set-up (ms)", ours_all, "-", "utility_meter and its platforms", ref_all)
    row(
        "RSS added by a Nord Pool entry, 3 appliances (MB)", nordpool, f"<= {RSS_TARGET_MB:.0f}", "nothing set up", idle
    )
    row("... the same entry solving the MILP (MB)", milp, "-", "nothing set up", idle)
    row("RSS added by a sample (ENTSO-E) entry, 3 appliances (MB)", sample, "-", "nothing set up", idle)
    row("RSS added by importing highspy (MB)", highspy_mb, "-", "(in the MILP entry's figure)", "")
    row("RSS added by importing scipy.optimize and sparse (MB)", scipy_mb, "-", "(no entry loads them now)", "")
    row("RSS added by numpy where stream did not load it (MB)", numpy_mb, "-", "(not in the entries' figures)", "")
    print(
        f"entry set-up with its imports, first prices and plans (median ms): Nord Pool {nordpool_ms:.0f}, sample {sample_ms:.0f}"
    )
    print(
        f"heavy modules loaded by the import: {ours_last['heavy'] or 'none'}; by every set-up import: "
        f"{ours_all_last['heavy'] or 'none'}"
    )
    print(
        f"heavy modules loaded by the Nord Pool entry (executor jobs): {nordpool_last['heavy'] or 'none'}; "
        f"solving the MILP: {milp_last['heavy'] or 'none'}; by the sample entry: {sample_last['heavy'] or 'none'}"
    )
    missed = [
        name
        for name, failed in (
            ("import time", ours > IMPORT_TARGET_MS),
            ("heavy modules at set-up", bool(ours_all_last["heavy"])),
            ("Nord Pool entry RSS", nordpool > RSS_TARGET_MB),
        )
        if failed
    ]
    print(f"missed targets: {', '.join(missed)}" if missed else "every target met")
    return 1 if missed else 0


if __name__ == "__main__":
    sys.exit(main())
