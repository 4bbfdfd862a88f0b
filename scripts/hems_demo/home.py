"""Scenario: the whole-home plan, the mode battery, and the simulated house and battery."""

from __future__ import annotations

import asyncio
import contextlib
import time
from datetime import datetime
from typing import Any

try:
    import aiohttp
except ModuleNotFoundError:  # only for `--help`, which scripts/demo prints with any python3 before it builds the venv
    aiohttp = None  # type: ignore[assignment]

from .client import fill_form, keep_form
from .constants import (
    BATTERY_SETPOINT,
    COP_POINTS,
    DOMAIN,
    ENTITY_DEADLINE_S,
    HEAT_PUMP_CLIMATE,
    HEAT_PUMP_SUBENTRY,
    HOUSE_C_KWH_PER_K,
    HOUSE_HP_KW,
    HOUSE_STEP_S,
    HOUSE_UA_KW_PER_K,
    SG_OFFSET,
    SG_RELAYS,
    SG_TANK_SUBENTRY,
    WEATHER,
)
from .devices import (
    APPLIANCES,
    BATTERY_SUBENTRY,
    HOME_KEYS,
    HOME_OPTIONS,
    MODE_BATTERY_MAX_W,
    MODE_BATTERY_OPTIONS,
    MODE_BATTERY_POWER,
    MODE_BATTERY_SELECT,
    MODE_BATTERY_SUBENTRY,
    PV_FORECAST_SENSOR,
    PV_PEAK_KW,
    TARIFF_OPTIONS,
)
from .fixtures import house_step, pv_forecast
from .process import DemoError, log
from .timefmt import at, fmt_money


class HomeMixin:
    """Scenario: the whole-home plan, the mode battery, and the simulated house and battery. A mixin of :class:`~.demo.Demo`."""

    async def setup_home(self, entry_id: str) -> None:
        """Publish the simulated PV forecast, add the battery through its subentry flow and set the options flow's
        "home" step, then wait for the whole-home plan in the schedule websocket (DemoError when none comes)."""
        forecast = pv_forecast(datetime.now(self.tz))
        await self.client.request(
            "POST", f"/api/states/{PV_FORECAST_SENSOR}", expect=(200, 201),
            json={"state": str(max(f["pv_estimate"] for f in forecast)),
                  "attributes": {"friendly_name": "PV forecast (simulated)", "unit_of_measurement": "kW",
                                 "detailedForecast": forecast}},
        )
        await self.client.drive_flow(
            "battery subentry", "/api/config/config_entries/subentries/flow", [entry_id, "battery"],
            lambda step: fill_form(step, BATTERY_SUBENTRY, "battery"),
        )
        await self.wait_settled(entry_id, [a["name"] for a in APPLIANCES])
        await self.client.drive_flow(
            "battery subentry", "/api/config/config_entries/subentries/flow", [entry_id, "battery"],
            lambda step: fill_form(step, MODE_BATTERY_SUBENTRY, "battery"),
        )
        await self.wait_settled(entry_id, [a["name"] for a in APPLIANCES])
        result = await self.client.drive_flow(
            "options", "/api/config/config_entries/options/flow", entry_id,
            lambda step: keep_form(
                step, {"home": HOME_OPTIONS, "tariff": TARIFF_OPTIONS}.get(step["step_id"], {}), "options flow"
            ),
        )
        if result.get("type") != "create_entry":
            raise DemoError(f"the options flow ended with {result}")
        await self.wait_settled(entry_id, [a["name"] for a in APPLIANCES])
        await self.client.drive_flow(
            "heat pump subentry", "/api/config/config_entries/subentries/flow", [entry_id, "heat_pump"],
            lambda step: {k: v for k, v in HEAT_PUMP_SUBENTRY.items() if k in {f["name"] for f in step["data_schema"]}},
        )
        await self.wait_settled(entry_id, [a["name"] for a in APPLIANCES])
        await self.client.drive_flow(
            "SG Ready tank subentry", "/api/config/config_entries/subentries/flow", [entry_id, "heat_pump"],
            lambda step: {k: v for k, v in SG_TANK_SUBENTRY.items() if k in {f["name"] for f in step["data_schema"]}},
        )
        await self.wait_settled(entry_id, [a["name"] for a in APPLIANCES])
        log(f"  SG Ready tank: contacts {SG_RELAYS[0]} and {SG_RELAYS[1]}, offset {SG_OFFSET} "
            f"(+{SG_TANK_SUBENTRY['sg_ready']['sg_offset_k']} K in states 3 and 4), sensor.tank_temperature, 45-55 °C")
        log(f"  heat pump: {HEAT_PUMP_CLIMATE} (generic thermostat) on sensor.indoor_temperature, {WEATHER} hourly "
            f"forecast, UA {HOUSE_UA_KW_PER_K * 1000:g} W/K, C {HOUSE_C_KWH_PER_K:g} kWh/K, {HOUSE_HP_KW:g} kW, "
            f"COP {COP_POINTS}, day 20-22 °C 06:00-22:00, night 17-22 °C")
        log(f"  home: {PV_FORECAST_SENSOR} (clear sky, {PV_PEAK_KW:g} kW peak), battery subentry "
            f"{BATTERY_SUBENTRY['name']!r} ({BATTERY_SUBENTRY['capacity_kwh']:g} kWh, {BATTERY_SUBENTRY['charge_kw']:g} kW, "
            f"reserve {BATTERY_SUBENTRY['reserve_pct']:g} %), battery control {HOME_OPTIONS['battery_control']}")
        log(f"  grid tariff: capacity {TARIFF_OPTIONS['capacity_price']:g} EUR per kW and month (at least "
            f"{TARIFF_OPTIONS['capacity_min_kw']:g} kW billed), 3 x {TARIFF_OPTIONS['phase_current_a']} A at "
            f"{TARIFF_OPTIONS['nominal_voltage']} V")
        deadline = time.monotonic() + ENTITY_DEADLINE_S
        while time.monotonic() < deadline:
            await asyncio.sleep(1)
            with contextlib.suppress(DemoError):
                (payload,) = await self.client.ws([{"type": f"{DOMAIN}/schedule", "entry_id": entry_id}])
                home = (payload.get("home") or {}) if isinstance(payload, dict) else {}
                if home.get("slots") and all(h.get("slots") for h in home.get("heat_pumps") or [{}]):
                    return
        raise DemoError(f"no whole-home plan within {ENTITY_DEADLINE_S:.0f} s of adding the battery")

    async def show_home(self) -> None:
        """Print the whole-home plan's cost, baseline, saving and its first slots; check it and its entities."""
        (payload,) = await self.client.ws([{"type": f"{DOMAIN}/schedule", "entry_id": self.entry_id}])
        home = payload.get("home") or {}
        self.report["home"] = home
        slots, currency = home.get("slots") or [], home.get("currency") or "EUR"
        log("")
        if not slots or not all(isinstance(home.get(k), (int, float)) for k in ("cost", "baseline", "saving")):
            self.problems.append(f"the whole-home plan is not feasible: {home.get('reason')} {home.get('detail')}")
            log(f"HOME PLAN INFEASIBLE: {home.get('reason')} {home.get('detail') or ''}")
            return
        log(f"Home plan ({len(slots)} slots, times in {self.tz.key}): cost {fmt_money(home['cost'], currency)}  "
            f"baseline {fmt_money(home['baseline'], currency)}  saves {fmt_money(home['saving'], currency)}")
        if bad := [s for s in slots if set(s) - {"start"} != HOME_KEYS]:
            self.problems.append(f"home plan slots lack keys: {bad[0]}")
        for slot in slots[:8]:
            log(f"  {at(datetime.fromisoformat(slot['start']), self.tz)}  battery {slot['battery_kw']:+6.2f} kW  "
                f"SoC {slot['soc_pct']:5.1f} %  PV {slot['pv_kw']:5.2f} kW  load {slot['load_kw']:5.2f} kW  "
                f"grid {slot['import_kw'] - slot['export_kw']:+6.2f} kW")
        self.show_heat_pump(home)
        self.show_home_grid(home, currency)
        for entity_id in (PV_FORECAST_SENSOR, "sensor.battery_soc", BATTERY_SETPOINT, HEAT_PUMP_CLIMATE, WEATHER):
            state = await self.client.request("GET", f"/api/states/{entity_id}", expect=(200, 404))
            if not isinstance(state, dict) or state.get("state") in (None, "unavailable", "unknown"):
                self.problems.append(f"home entity {entity_id} does not exist or has no state")

    async def show_mode_battery(self) -> None:
        """With device control on, plan the home again (plan_home): the garage battery's slot goes through the gates,
        its mode select first, then its power number; check both against the plan and their traces."""
        answer = await self.client.call_service("plan_home", {"config_entry_id": self.entry_id, "replan": True})
        battery = next((b for b in answer.get("batteries") or [] if b.get("name") == MODE_BATTERY_SUBENTRY["name"]), {})
        if not battery.get("battery_kw") or not answer.get("slots"):
            self.problems.append(f"the home plan has no {MODE_BATTERY_SUBENTRY['name']}: {battery}")
            return
        kw = float(battery["battery_kw"][0])
        mode = "charge" if kw > 0.05 else "discharge" if kw < -0.05 else "idle"
        option = MODE_BATTERY_OPTIONS[mode]
        states, traces = {}, {}
        for entity_id in (MODE_BATTERY_SELECT, MODE_BATTERY_POWER):
            states[entity_id] = (await self.client.request("GET", f"/api/states/{entity_id}"))["state"]
            found = await self.client.call_service("get_traces", {"entity_id": entity_id, "limit": 1})
            traces[entity_id] = (found.get("traces") or [{}])[0]
        slot = at(datetime.fromisoformat(answer["slots"][0]["start"]), self.tz)
        log(f"Inverter battery (mode select + power number), slot {slot}: plan {kw:+.2f} kW ({mode})")
        for entity_id, trace in traces.items():
            log(f"  {entity_id} = {states[entity_id]}  last trace: {trace.get('outcome', 'none')} "
                f"{(trace.get('candidate') or {}).get('params', '')}")
        planned = [(s["start"], float(v)) for s, v in zip(answer["slots"], battery["battery_kw"], strict=False)]
        if nxt := next(((start, v) for start, v in planned[1:] if abs(v) > 0.05), None):
            log(f"  next slot that sets the power: {at(datetime.fromisoformat(nxt[0]), self.tz)}, {nxt[1]:+.2f} kW "
                f"({min(round(abs(nxt[1]) * 10) * 100.0, MODE_BATTERY_MAX_W):g} W after its mode)")
        self.report["mode_battery"] = {"kw": kw, "mode": mode, "states": states, "traces": traces}
        if states[MODE_BATTERY_SELECT] != option:
            self.problems.append(f"{MODE_BATTERY_SELECT} shows {states[MODE_BATTERY_SELECT]!r}, not {option!r}")
        power = traces[MODE_BATTERY_POWER]
        watts = min(round(abs(kw) * 10) * 100.0, MODE_BATTERY_MAX_W)  # the power's size in W on its 100 W step
        if mode != "idle" and not (
            float(states[MODE_BATTERY_POWER]) == watts
            and (power.get("outcome"), power.get("source_agent")) == ("executed", "scheduler")
        ):
            self.problems.append(f"{MODE_BATTERY_POWER} is not {watts:g} W set through the gates: {power}")

    def show_home_grid(self, home: dict[str, Any], currency: str) -> None:
        """Print what the capacity tariff and the phase limit mean for the plan; check the plan keeps the limit."""
        grid = home.get("grid") or {}
        limit = grid.get("phase_limit_kw")
        log(f"Grid: peak {grid.get('peak_kw')} kW (month so far {grid.get('peak_so_far_kw')} kW), capacity charge "
            f"{fmt_money(grid.get('capacity_cost'), currency)}, network fees {fmt_money(grid.get('fee_cost'), currency)}"
            f", phase limit {limit} kW")
        worst = max((abs(s.get(k, 0.0)) for s in home["slots"] for k in ("l1_kw", "l2_kw", "l3_kw")), default=None)
        if limit is None or worst is None or worst > limit + 1e-3:
            self.problems.append(f"the home plan does not keep its phase limit: {limit} kW, worst phase {worst} kW")

    async def simulate_house(self) -> None:
        """Move the simulated house every HOUSE_STEP_S: the thermostat's compressor heats, the outdoors cools.

        The indoor sensor then reports often enough for the thermostat's state to stay fresh for the gates (30 s).
        """
        while True:
            await asyncio.sleep(HOUSE_STEP_S)
            with contextlib.suppress(DemoError, aiohttp.ClientError, ValueError, TypeError, KeyError):
                compressor = await self.client.request("GET", "/api/states/input_boolean.heat_pump_compressor")
                indoor = await self.client.request("GET", "/api/states/input_number.indoor_temperature_value")
                weather = await self.client.request("GET", f"/api/states/{WEATHER}")
                temp, kw = house_step(float(indoor["state"]), float(weather["attributes"]["temperature"]),
                                      compressor["state"] == "on", HOUSE_STEP_S / 3600)
                for oid, value in (("indoor_temperature", temp), ("heat_pump_power", kw)):
                    await self.client.request("POST", "/api/services/input_number/set_value",
                                              json={"entity_id": f"input_number.{oid}_value", "value": value})

    async def simulate_battery(self) -> None:
        """Move the battery's SoC stand-in by the setpoint (kW, + charging) every minute, within 0-100 %."""
        capacity = BATTERY_SUBENTRY["capacity_kwh"]
        while True:
            await asyncio.sleep(60)
            with contextlib.suppress(DemoError, aiohttp.ClientError, ValueError, TypeError):
                setpoint = await self.client.request("GET", f"/api/states/{BATTERY_SETPOINT}")
                soc = await self.client.request("GET", "/api/states/input_number.battery_soc_value")
                value = float(soc["state"]) + float(setpoint["state"]) / 60 / capacity * 100
                await self.client.request(
                    "POST", "/api/services/input_number/set_value",
                    json={"entity_id": "input_number.battery_soc_value", "value": round(min(max(value, 0), 100), 2)},
                )
