"""End to end: ``scripts/demo --check`` starts a real Home Assistant, sets agentic_hems up and plans three appliances.

The demo runs as a subprocess (its own Home Assistant on a free 127.0.0.1 port), so pytest's socket blocking does not
apply. It takes about ten seconds; deselect it with ``--deselect tests/test_demo.py`` or ``-k "not demo"``.
"""

from __future__ import annotations

import importlib.util
import json
import os
import re
import subprocess
import sys
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
APPLIANCES = ("Dishwasher", "Washing machine", "EV charger")

PLAN_LINE = re.compile(
    r"^PLAN (?P<name>.+?)\s+start \w{3} (?P<start>\d{4}-\d\d-\d\d \d\d:\d\d) CES?T"
    r"\s+end \w{3} (?P<end>\d{4}-\d\d-\d\d \d\d:\d\d) CES?T"
    r"\s+cost (?P<cost>-?\d+\.\d+) (?P<currency>[A-Z]{3})\s+baseline (?P<baseline>-?\d+\.\d+) [A-Z]{3} \(start [^)]+\)"
    r"\s+saves (?P<savings>-?\d+\.\d+) [A-Z]{3}"
)
HOME_LINE = re.compile(
    r"^Home plan \((?P<slots>\d+) slots, times in Europe/Brussels\): cost (?P<cost>-?\d+\.\d+) EUR"
    r"\s+baseline (?P<baseline>-?\d+\.\d+) EUR\s+saves (?P<saving>-?\d+\.\d+) EUR$"
)
GRID_TOOLS = (
    "inspect_grid_state", "retrieve_asset", "run_power_flow", "run_contingency", "run_forecast", "simulate_action",
    "calculate_flexibility", "optimize_dispatch", "validate_constraints", "request_authorization",
    "generate_explanation", "create_incident",
)
# One line per grid toolkit call, in order (the demo's home twin: grid 2 kW import, PV 3 kW, battery charging 1 kW at
# 50 %, so the house draws 4 kW; the MATPOWER case is case9).
GRID_LINES = (
    r"GRID inspect_grid_state home depth 3: grid \+2\.00 kW, house \+4\.00 kW, pv -3\.00 kW, battery \+1\.00 kW "
    r"\(SoC 50 %\), ev_charger n/a; fuse 18\.2 % of 11 kW, panel 0\.99\d+ pu; alarms: none; stale false",
    r"GRID retrieve_asset battery: -5\.\.5 kW, 10 kWh, SoC 10-100 %, bus 2 of home; sensor\.battery_soc = 50\.0 % "
    r"\(available true\)",
    r"GRID inspect_grid_state case9: 9 buses, 9 branches, assets 9 branch, 3 generator, 3 load; alarms: none",
    r"GRID run_power_flow case9 ac: converged true in \d+ iteration\(s\), Vm 0\.9956\.\.1\.0400 pu, "
    r"losses 4\.6410 MW, max loading \d+\.\d % \(newton-raphson.*\)",
    r"GRID run_power_flow case9 dc: converged true .* losses 0\.0000 MW, .*\(dc power flow.*\)",
    r"GRID run_contingency case9 n-1: 9 outages evaluated \(completed true\), 3 violations, "
    r"islanded branches \[1, 4, 7\], worst case: branch 8 out -> max loading 97\.0 %",
    r"GRID run_forecast load 6 h from sensor\.house_power: baseline true \(\S+\), 6 steps of 60 min, median .* kW, "
    r"\d+ history step\(s\)",
    r"GRID calculate_flexibility next 2 h: up \d+\.\d\d kW, down \d+\.\d\d kW \(up/down per asset: .*battery .*\); "
    r"excluded: ev_charger \(no current power measured\)",
    r"GRID optimize_dispatch cost 24 h: optimal, cost (?P<cost>-?\d+\.\d+) EUR vs baseline \(battery idle\) "
    r"(?P<baseline>-?\d+\.\d+) EUR, saves (?P<saves>-?\d+\.\d+) EUR; 96 slots, \d+ battery actions",
    r"GRID simulate_action \(the plan's \d+ signed actions on a fresh home snapshot, 24 h\): valid true, "
    r"constraints ok true, 96 steps, .*",
    r"GRID validate_constraints sim: pass true, 0 violations, .*",
    r"GRID generate_explanation manager en: .*savings.*",
    r"GRID generate_explanation operator de: Plan plan_\w+ \(geringste Kosten, 96 Schritte zu je 15 min, .*\)\.",
    r"GRID request_authorization \d\d:\d\d-\d\d:\d\d CES?T \(the plan's first hour\): pending, expires \d\d:\d\d CES?T",
    r"GRID approve_authorization: approved by Demo Owner; gated command \(source grid\) -> executed "
    r"\[(\w+:ok ?){8}\]",
    r"GRID create_incident warning: incident_\w+, evidence snapshot_\w+, snapshot_\w+",
    r"GRID acknowledge_incident: acknowledged by the owner at \d\d:\d\d:\d\d CES?T",
    r"GRID verify_audit_chain: ok true, (?P<lines>\d+) lines; records: .*",
)
PRICES_LINE = re.compile(
    r"^PRICES min (?P<min>-?\d+\.\d+) \S+ max (?P<max>-?\d+\.\d+) \S+, (?P<slots>\d+) slots"
    r" .* sample: (?P<sample>true|false)$"
)


def _free_port() -> int:
    """A free TCP port on 127.0.0.1, found in a child process (sockets are blocked in this one)."""
    code = "import socket; s = socket.socket(); s.bind(('127.0.0.1', 0)); print(s.getsockname()[1])"
    return int(subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True).stdout)


def test_demo_check(tmp_path: Path) -> None:
    """The demo exits 0, prints a feasible, money-saving plan per appliance, and its JSON report agrees."""
    report_path = tmp_path / "demo.json"
    env = {**os.environ, "PYTHONUNBUFFERED": "1"}
    env.pop("DEMO_PORT", None)
    proc = subprocess.run(
        [
            str(ROOT / "scripts" / "demo"),
            "--check",
            "--port",
            str(_free_port()),
            "--dir",
            str(tmp_path / "demo"),
            "--json",
            str(report_path),
        ],
        capture_output=True,
        text=True,
        timeout=1500,  # set-up, then up to 16.5 min until the EV charger's slot boundary (scripts/hems_demo/ev.py)
        cwd=ROOT,
        env=env,
        check=False,
    )
    output = proc.stdout + proc.stderr
    assert proc.returncode == 0, f"scripts/demo --check exited {proc.returncode}:\n{output}"
    assert "CHECK OK" in proc.stdout, output
    assert "Home Assistant stopped." in proc.stdout, output

    # The printed plans parse, and each is a real plan: start before end, no dearer than starting now unless the
    # main-fuse limit binds (the baseline ignores it; the demo says so in a NOTE line and checks the overlap).
    printed = {m["name"]: m for line in proc.stdout.splitlines() if (m := PLAN_LINE.match(line))}
    assert set(printed) == set(APPLIANCES), output
    for name, match in printed.items():
        start = datetime.strptime(match["start"], "%Y-%m-%d %H:%M")
        end = datetime.strptime(match["end"], "%Y-%m-%d %H:%M")
        # Local wall-clock times; a DST change inside a plan moves the end by at most an hour.
        assert (end - start).total_seconds() > -3600, (name, match.group(0))
        if float(match["cost"]) > float(match["baseline"]) + 1e-4:
            assert f"NOTE {name}: costs more than starting now because the main-fuse limit binds" in output, name
        assert abs(float(match["baseline"]) - float(match["cost"]) - float(match["savings"])) < 1e-3, match.group(0)

    prices_lines = [m for line in proc.stdout.splitlines() if (m := PRICES_LINE.match(line))]
    assert len(prices_lines) == 1, output
    assert prices_lines[0]["sample"] == "true"
    assert float(prices_lines[0]["min"]) <= float(prices_lines[0]["max"])
    assert int(prices_lines[0]["slots"]) >= 92

    # The JSON report holds the service responses themselves.
    report = json.loads(report_path.read_text())
    assert report["problems"] == []
    # No device the policy protects is exposed to Assist, whose own intents would act on it without a gate.
    assert report["assist"] == {"garage_door_exposed": False, "exposure_issues": []}
    assert set(report["plans"]) == set(APPLIANCES)
    for name, plan in report["plans"].items():
        assert plan["feasible"] is True, (name, plan)
        start, end = datetime.fromisoformat(plan["start"]), datetime.fromisoformat(plan["end"])
        assert start.tzinfo is not None and end.tzinfo is not None, plan
        assert start < end, (name, plan)
        assert plan["cost"] <= plan["baseline_cost"] + 1e-9 or f"NOTE {name}:" in output, (name, plan)
        printed_start = datetime.strptime(printed[name]["start"], "%Y-%m-%d %H:%M")
        assert (
            start.astimezone(ZoneInfo("Europe/Brussels")).replace(tzinfo=None, second=0, microsecond=0) == printed_start
        ), name
    assert report["prices"]["sample"] is True
    assert report["prices"]["min"] <= report["prices"]["max"]

    # Device control is on; each scheduled start passes every gate; opening the garage door waits for an admin.
    gates = report["gates"]
    for name in APPLIANCES:
        assert gates[name]["outcome"] == "dry_run", gates[name]
        assert [g["passed"] for g in gates[name]["gate_results"]] == [True] * 8
        assert gates[name]["result"]["plan"]["service"] == "turn_on"
    assert gates["garage door"]["outcome"] == "pending_confirmation"
    assert gates["garage door"]["result"]["plan"]["target"] == {"entity_id": "cover.garage_door"}
    assert "Device control: ON" in output
    # The previews say they did not run; the garage door's command waits two hours, and its notification links to the
    # dashboard whose trace card decides it.
    previews = [line for line in proc.stdout.splitlines() if line.startswith("GATE scheduled start")]
    assert len(previews) == 3 and all(": dry run, not executed  [" in line for line in previews), previews
    assert all("execution:not run" in line and "execution:ok" not in line for line in previews), previews
    garage = gates["garage door"]
    expires = next(g["evidence"]["expires_at"] for g in garage["gate_results"] if "expires_at" in g["evidence"])
    assert report["garage_trace"]["trace_id"] == garage["trace_id"]
    waits = datetime.fromisoformat(expires) - datetime.fromisoformat(report["garage_trace"]["timestamp"])
    assert waits.total_seconds() == 2 * 3600, waits
    (notification,) = [n for n in report["notifications"] if n["notification_id"].endswith(garage["trace_id"])]
    assert "](/energy-plan)" in notification["message"] and garage["trace_id"] in notification["message"]
    assert "**Open Garage door**" in notification["message"] and "cover.garage_door" not in notification["message"]
    # HA sets up infrared and radio_frequency by itself (HA 2026.x); scripts/bootstrap installs their requirements,
    # so a new user's first page shows no "Invalid config". Without them the demo says why.
    invalid = [n for n in report["notifications"] if n["notification_id"] == "invalid_config"]
    if all(importlib.util.find_spec(module) for module in ("infrared_protocols", "rf_protocols")):
        assert invalid == [] and "NOTE Home Assistant shows 'Invalid config'" not in proc.stdout, invalid
    elif invalid:  # an HA release without those platforms (the oldest supported) shows nothing
        assert "infrared" in invalid[0]["message"] and "NOTE Home Assistant shows 'Invalid config'" in proc.stdout
    # Times are local (Europe/Brussels) everywhere, with the zone: no UTC offset or "UTC" in the terminal.
    assert "+00:00" not in proc.stdout and " UTC" not in proc.stdout, output
    # A typed request answered by the offline planner: every appliance scheduled.
    ask = report["ask"]
    assert ask["success"] is True and ask["model"] == "offline"
    assert sorted(p["appliance"] for p in ask["plans"]) == sorted(APPLIANCES)
    assert 'ASK "Schedule all flexible loads"' in output

    entities = report["entities"]
    assert len(entities) >= 5 * len(APPLIANCES), entities
    assert all(e["state"] not in (None, "unavailable") for e in entities), entities
    for name in APPLIANCES:
        keys = {e["translation_key"] for e in entities if e["subentry"] == name}
        assert len(keys) >= 5, (name, keys)

    _check_home(proc.stdout, report)
    _check_program_dishwasher(proc.stdout, report)
    _check_home_connect_dishwasher(proc.stdout, report)
    _check_ev_boundary(proc.stdout, report)

    # The grid toolkit: every service answered against the home twin (options' grid step) and case9.
    assert "GRID toolkit as the owner (admin)" in output and "GRID FAILED" not in output, output
    grid_lines = [line for line in proc.stdout.splitlines() if line.startswith("GRID ") and "toolkit" not in line]
    assert len(grid_lines) == len(GRID_LINES), "\n".join(grid_lines)
    matched = {}
    for pattern, line in zip(GRID_LINES, grid_lines, strict=True):
        match = re.fullmatch(pattern, line)
        assert match, (pattern, line)
        matched.update(match.groupdict())
    assert abs(float(matched["baseline"]) - float(matched["cost"]) - float(matched["saves"])) < 1e-3, matched
    assert float(matched["saves"]) >= 0 and int(matched["lines"]) > 0, matched

    assert report["grid_options"]["battery_setpoint_entity"] == "input_number.battery_setpoint"
    assert report["grid_options"]["grid_power_entity"] == "sensor.grid_power"
    grid = report["grid"]
    assert grid["inspect_home"]["stale"] is False and grid["inspect_home"]["state"]["depth"] == 3
    case9 = json.loads((ROOT / "tests" / "fixtures" / "grid" / "case9.json").read_text())
    assert grid["power_flow_ac"]["converged"] is True and grid["power_flow_dc"]["converged"] is True
    assert abs(grid["power_flow_ac"]["losses_mw"] - case9["ac_pf"]["total_P_losses_MW"]) < 1e-4
    for got, want in zip(grid["power_flow_ac"]["voltages"], case9["ac_pf"]["Vm_pu"], strict=True):
        assert abs(got["vm_pu"] - want) < 1e-6, (got, want)
    contingency = grid["contingency"]
    assert contingency["completed"] is True and contingency["evaluated"] == 9 and contingency["islanded"] == [1, 4, 7]
    assert grid["forecast"]["baseline"] is True and len(grid["forecast"]["series"]["0.5"]) == 6
    plan = grid["plan"]
    assert plan["solver_status"] == "optimal" and len(plan["schedule"]) == 96
    assert plan["cost"] <= plan["baseline_value"] + 1e-9
    assert grid["sim"]["valid"] is True and grid["sim"]["constraint_report"]["ok"] is True
    assert grid["sim"]["plan_id"] == plan["plan_id"]
    assert grid["validation"]["pass"] is True and grid["validation"]["sim_id"] == grid["sim"]["sim_id"]
    assert grid["explanation_en"]["lang"] == "en" and grid["explanation_de"]["lang"] == "de"
    assert grid["request"]["status"] == "pending" and grid["request"]["reasons"] == []
    approved = grid["approved"]
    assert approved["status"] == "approved" and approved["decided_by"] == grid["owner"]
    assert approved["request_id"] == grid["request"]["request_id"] and approved["executed_slots"]
    trace = grid["trace"]
    assert trace["source_agent"] == "grid" and trace["outcome"] == "executed"
    assert trace["entity_id"] == "input_number.battery_setpoint"
    assert [g["passed"] for g in trace["gate_results"]] == [True] * 8
    first = plan["schedule"][0]["batteries"]["battery"]
    assert abs(float(grid["setpoint"]) - (first["charge_kw"] - first["discharge_kw"])) < 1e-3
    assert grid["acknowledged"]["incident_id"] == grid["incident"]["incident_id"]
    assert grid["acknowledged"]["acknowledged_by"] == grid["owner"]
    assert grid["audit"]["ok"] is True and grid["audit"]["lines"] > 0
    # Every tool call left an audit record (generate_audit_record, the thirteenth tool, runs inside each call).
    records = grid["audit_records"]
    assert set(GRID_TOOLS) <= set(records), records
    assert records["authorization"] == 1 and records["incident_acknowledged"] == 1

    # The cards: the frontend imports the bundle as one extra module, and the storage-mode dashboard "Energy plan"
    # holds the four cards.
    assert report["resource"]["type"] == "module", report["resource"]
    assert report["resource"]["url"].startswith("/agentic_hems_frontend/agentic-hems-cards.js?v="), report["resource"]
    dashboard = report["dashboard"]
    assert dashboard["url_path"] == "energy-plan" and dashboard["title"] == "Energy plan", dashboard
    assert dashboard["mode"] == "storage" and dashboard["show_in_sidebar"] is True, dashboard
    assert dashboard["require_admin"] is False and dashboard["url"].endswith("/energy-plan"), dashboard
    assert dashboard["cards"] == [f"custom:agentic-hems-{card}-card" for card in ("schedule", "trace", "ask", "runs")]
    dashboard_line = r"^LOVELACE dashboard 'Energy plan' .*: http://127\.0\.0\.1:\d+/energy-plan$"
    assert re.search(dashboard_line, output, re.MULTILINE), output

    # What HA's frontend needs besides: get_services answers (the UI's first call on every page), the dashboard is a
    # panel, and (HA 2026.10: HTTP settings in storage) nothing is pending, so no confirmation dialog covers the UI.
    frontend = report["frontend"]
    assert {"ask", "evaluate_command", "confirm", "reject"} <= set(frontend["services"]), frontend["services"]
    assert frontend["panel"]["component_name"] == "lovelace" and frontend["panel"]["title"] == "Energy plan"
    if isinstance(frontend["http"], dict) and "stable" in frontend["http"]:
        assert frontend["http"]["pending"] is None and frontend["http"]["active_config_type"] == "stable"
        assert frontend["http"]["stable"]["server_host"] == ["127.0.0.1"], frontend["http"]
    # The brand icons, served by HA's brands integration from custom_components/agentic_hems/brand/ as the frontend
    # asks for them (?token=).
    for image, side in (("icon.png", 256), ("icon@2x.png", 512)):
        served = report["brand"][image]
        assert served["status"] == 200 and served["content_type"] == "image/png", served
        assert served["size"] == [side, side] and served["same_as_file"] is True, served
        line = (rf"^BRAND /api/brands/integration/agentic_hems/{re.escape(image)}: HTTP 200, {side}x{side} PNG, "
                rf"the integration's brand/{re.escape(image)}$")
        assert re.search(line, output, re.MULTILINE), output


def _check_home(stdout: str, report: dict[str, Any]) -> None:
    """The whole-home plan on the simulated PV and two batteries, 10 kWh / 5 kW and the inverter battery's 5 kWh / 2.5 kW
    (reserve 20 %, 95 % each way): the plan's slots give their sum (15 kWh, 7.5 kW)."""
    (line,) = [m for line in stdout.splitlines() if (m := HOME_LINE.match(line))]
    home = report["home"]
    # The saving counts what the plan leaves stored at the end (battery energy, heat in the house) on both sides.
    assert abs(home["baseline_net_cost"] - home["net_cost"] - home["saving"]) < 1e-3, home
    assert (float(line["cost"]), float(line["baseline"]), float(line["saving"])) == (
        home["cost"], home["baseline"], home["saving"]), line.group(0)
    assert float(line["saving"]) >= 0, line.group(0)
    slots = home["slots"]
    assert int(line["slots"]) == len(slots) > 0
    tz = ZoneInfo("Europe/Brussels")
    for slot, after in zip(slots, slots[1:], strict=False):
        start = datetime.fromisoformat(slot["start"])
        assert (datetime.fromisoformat(after["start"]) - start).total_seconds() == 900
        # Energy balance: what comes in (PV kept, import) is what goes out (house, battery charging, export).
        supply = slot["pv_kw"] - slot["curtail_kw"] + slot["import_kw"]
        assert abs(supply - slot["load_kw"] - slot["battery_kw"] - slot["export_kw"]) < 5e-3, slot
        # The batteries' charge moves by their power over 15 min, with 95 % efficiency each way, within 20-100 %.
        kw = slot["battery_kw"]
        kwh = (kw * 0.95 if kw > 0 else kw / 0.95) * 0.25
        assert abs(after["soc_pct"] - slot["soc_pct"] - kwh / 15 * 100) < 0.2, (slot, after)
        assert 20 - 0.1 <= after["soc_pct"] <= 100 + 1e-6 and -7.5 - 1e-6 <= kw <= 7.5 + 1e-6, after
        hour = start.astimezone(tz).hour
        if hour < 8 or hour >= 17:  # the simulated sun is down
            assert slot["pv_kw"] == 0, slot
        elif 10 <= hour < 15:
            assert slot["pv_kw"] > 1, slot
    assert re.search(r"^  \w{3} \d\d:\d\d CES?T  battery\s+[+-]\d+\.\d\d kW  SoC\s+\d+\.\d %", stdout, re.MULTILINE)
    keys = {e["translation_key"] for e in report["entities"] if e["subentry"] == "Home battery"}
    assert {"battery_planned_power", "battery_planned_soc"} <= keys, keys
    # The simulated house's heat pump (generic thermostat, added through "Add heat pump"): planned within its band.
    (heat,) = [h for h in home["heat_pumps"] if h["name"] == "Heat pump"]
    assert len(heat["slots"]) == len(slots), heat
    for slot, row in zip(slots, heat["slots"], strict=True):
        assert row["start"] == slot["start"] and 0 <= row["kw"] <= 2.0 + 1e-6 and slot["load_kw"] >= row["kw"] - 1e-3
        assert row["low_c"] in (17.0, 20.0) and row["high_c"] == 22.0, row
    assert re.search(r"^  \w{3} \d\d:\d\d CES?T  heat pump\s+\d+\.\d\d kW  indoor\s+\d+\.\d\d °C", stdout, re.MULTILINE)
    keys = {e["translation_key"] for e in report["entities"] if e["subentry"] == "Heat pump"}
    assert {"heat_pump_planned_power", "heat_pump_planned_temperature"} <= keys, keys
    # The SG Ready tank (two relays, an offset number): after device control is on, the relays show the slot's state.
    sg = report["sg_ready"]
    running = sg["slots"][0]["kw"] > 1e-3
    assert running and sg["traces"], sg  # the tank starts below its band: the plan runs it now, relay 2 turns on
    assert sg["state"] == 3 and sg["states"]["switch.sg_ready_relay_1"] == "off", sg  # recommended: 0:1
    assert sg["states"]["switch.sg_ready_relay_2"] == "on" and float(sg["states"]["number.hot_water_offset"]) == 3, sg
    assert all(t["outcome"] in ("executed", "dry_run") and t["source_agent"] == "scheduler" for t in sg["traces"])
    assert max(sg["traces"], key=lambda t: t["timestamp"])["outcome"] == "executed", sg["traces"]
    assert re.search(r"^SG Ready tank now: .* = state [123], offset", stdout, re.MULTILINE), stdout
    # The thermostat shows the current slot's target: the temperature at the slot's end while the plan heats, else the
    # comfort floor, on its 0.5 °C step within 15-25 °C.
    climate = report["climate"]
    slot = climate["slot"]
    wanted = min(max(round((slot["temp_c"] if slot["kw"] > 1e-3 else slot["low_c"]) * 2) / 2, 15.0), 25.0)
    assert climate["shown_c"] == wanted == climate["wanted_c"], climate
    assert climate["latest"].get("outcome", "executed") in ("executed", "dry_run"), climate


def _check_program_dishwasher(stdout: str, report: dict[str, Any]) -> None:
    """The Bosch dishwasher (home_connect's shapes, its own delayed start in seconds; added after device control is
    on): its plan starts ahead on a slot boundary, and the new plan set the delayed start at once, each of the three
    commands executed once through the gates, and the appliance waits in "delayedstart". The delay is the planned
    start less a whole minute between the one the form was sent in and the check (recomputed here)."""
    dw = report["program_dishwasher"]
    assert dw["subentry"]["delayed_start"] is True and dw["subentry"]["program"] == "dishcare_dishwasher_program_eco_50"
    planned, armed = datetime.fromisoformat(dw["planned_start"]), datetime.fromisoformat(dw["armed_at"])
    assert planned.minute % 15 == 0 and planned.second == 0 and armed.second == 0, dw
    assert datetime.fromisoformat(dw["added"]) <= armed <= datetime.now(UTC), dw
    assert dw["delay_s"] == (planned - armed).total_seconds(), dw
    assert 7080 <= dw["delay_s"] <= 27960, dw  # the window opens 2 h after it is added and lasts 8 h (2.5 h run)
    assert dw["acted"] == [["select_option", "executed"], ["set_value", "executed"], ["press", "executed"]], dw
    assert [t["entity_id"] for t in sorted(dw["traces"], key=lambda t: t["timestamp"])] == [
        "select.bosch_dishwasher_program", "number.bosch_dishwasher_start_in", "button.bosch_dishwasher_start"], dw
    assert all(t["source_agent"] == "scheduler" for t in dw["traces"]), dw
    assert dw["states"]["operation"] == "delayedstart" and float(dw["states"]["delay"]) == dw["delay_s"], dw
    assert re.search(r"^  planned start \w{3} \d\d:\d\d CES?T; the new plan sets its own delayed start at once$",
                     stdout, re.MULTILINE), stdout
    assert re.search(r"^Bosch dishwasher: select_option executed, set_value executed, press executed; start in \d+ s",
                     stdout, re.MULTILINE), stdout


def _check_home_connect_dishwasher(stdout: str, report: dict[str, Any]) -> None:
    """The Siemens dishwasher on the demo's home_connect stand-in (HA core's shapes; added through its config flow,
    then "Add appliance" with the Home Connect action and its own delayed start, device control on): the new plan sent
    one ``home_connect.set_program_and_options`` through all eight gates as the scheduler's, with the device from HA's
    registry, the program and a start-in option that is the planned start less a whole minute between the one the form
    was sent in and the check (recomputed here); the stand-in reads back ``delayedstart`` and that start-in."""
    dw = report["home_connect_dishwasher"]
    entities = dw["entities"]
    assert entities == {"select": "select.siemens_dishwasher_selected_program",
                        "remote": "binary_sensor.siemens_dishwasher_remote_start",
                        "operation": "sensor.siemens_dishwasher_operation_state",
                        "start_in": "number.siemens_dishwasher_start_in_relative"}, entities
    answers = dw["subentry"]
    assert (answers["program_start"], answers["home_connect_device"], answers["delayed_start"]) == (
        "home_connect", dw["device_id"], True), answers
    planned, armed = datetime.fromisoformat(dw["planned_start"]), datetime.fromisoformat(dw["armed_at"])
    assert planned == datetime.fromisoformat(dw["plan"]["start"]) and dw["plan"]["feasible"] is True, dw["plan"]
    assert planned.minute % 15 == 0 and planned.second == 0 and armed.second == 0 and armed.microsecond == 0, dw
    assert datetime.fromisoformat(dw["added"]) <= armed <= datetime.now(UTC), dw
    assert dw["delay_s"] == (planned - armed).total_seconds(), dw
    assert 7080 <= dw["delay_s"] <= 29760, dw  # the window opens 2 to 2 h 16 min after the minute added, 8 h long (2 h run)
    (trace,) = dw["traces"]
    assert (trace["source_agent"], trace["outcome"], trace["entity_id"]) == (
        "scheduler", "executed", entities["select"]), trace
    assert [g["passed"] for g in trace["gate_results"]] == [True] * 8, trace
    assert trace["command"]["backend_action"] == "home_connect.set_program_and_options", trace
    assert trace["command"]["data"] == {
        "device_id": dw["device_id"], "affects_to": "active_program", "program": "dishcare_dishwasher_program_eco_50",
        "b_s_h_common_option_start_in_relative": dw["delay_s"]}, trace
    assert (trace["execution_result"]["state_before"], trace["execution_result"]["state_after"]) == (
        "ready", "delayedstart"), trace
    assert dw["states"]["operation"] == "delayedstart" and dw["states"]["remote"] == "on", dw
    assert float(dw["states"]["start_in"]) == dw["delay_s"], dw
    assert dw["issues"] == [], dw  # no program_not_started_ / program_delay_kept_ repair for it
    assert "home_connect: the demo's stand-in integration" in stdout, stdout
    assert re.search(r"^Siemens dishwasher: scheduler home_connect\.set_program_and_options executed; start in \d+ s "
                     r"\(from \d\d:\d\d:00 CES?T\), operation state delayedstart, remote start on$", stdout, re.MULTILINE), stdout


def _check_ev_boundary(stdout: str, report: dict[str, Any]) -> None:
    """The EV charger at its slot boundary: asked for 3 kWh in the two slots from the next boundary at least 90 s
    ahead (at most 7 kW, 1.75 kWh a slot), its plan charges in both and nowhere else, the first at 5 kW or more; at
    the boundary the scheduler set the current number to the slot's power (raised by any grid export, at most 7 kW) as
    whole amps on its phases at 230 V (three at 4.14 kW and more, unless the select changed within 15 min), within
    6..16 A, set the phase select to them and started the charger,
    each executed through the gates and read back (recomputed here from the plan and the report's grid reading)."""
    ev = report["ev_boundary"]
    boundary, deadline = datetime.fromisoformat(ev["boundary"]), datetime.fromisoformat(ev["deadline"])
    assert boundary.minute % 15 == 0 and boundary.second == 0 and deadline - boundary == timedelta(minutes=30), ev
    plan = ev["plan"]
    starts = [datetime.fromisoformat(slot["start"]) for slot in plan["slots"]]
    slots = [slot["power_kw"] for slot in plan["slots"]]
    assert plan["feasible"] and starts == [boundary, boundary + timedelta(minutes=15)], plan
    assert abs(sum(slots) * 0.25 - 3.0) < 1e-3 and all(5.0 - 1e-3 <= p <= 7.0 + 1e-6 for p in slots), slots
    drawn = ev["appliances_kw"]  # every appliance's plan in those slots: the EV's and the rest, under the 11 kW fuse
    assert len(drawn) == 2 and all(p - 1e-6 <= kw <= 11.0 + 1e-6 for p, kw in zip(slots, drawn, strict=True)), ev
    kw = min(slots[0] + ev["export_kw"], max(7.0, slots[0]))
    before = ev["phases_before"]  # at 5 kW and more it wants 3 phases, but a select on 1 changed within 15 min stays
    phases = 1 if before["option"] == "1-phase" and before["since_min"] < 15 else 3
    option = f"{phases}-phase"
    amps = min(max(int(kw * 1000 / (phases * 230) + 1e-4), 6), 16)
    assert ev["expected"] == {"kw": round(kw, 6), "phases": phases, "amps": amps, "option": option}, ev["expected"]
    by_entity = {t["entity_id"]: t for t in ev["traces"]}
    current, switch = by_entity["input_number.ev_charger_current"], by_entity["input_boolean.ev_charger"]
    assert current["candidate"]["intent"] == "set_value" and current["candidate"]["params"] == {"value": amps}, current
    assert switch["candidate"]["intent"] == "start" and current["timestamp"] < switch["timestamp"], ev["traces"]
    assert set(by_entity) <= {"input_number.ev_charger_current", "input_boolean.ev_charger",
                              "input_select.ev_charger_phases"}, ev["traces"]
    for trace in ev["traces"]:
        assert (trace["outcome"], trace["source_agent"]) == ("executed", "scheduler"), trace
        (execution,) = [g for g in trace["gate_results"] if g["gate"] == "execution"]
        assert execution["passed"] and execution["evidence"]["verified"] is True, trace
    assert ev["states"] == {"input_number.ev_charger_current": f"{amps:.1f}",
                            "input_select.ev_charger_phases": option, "input_boolean.ev_charger": "on"}, ev
    assert 0 < ev["waited_s"] <= 15 * 60 + 90 + 90, ev["waited_s"]  # to the boundary, then its commands
    assert re.search(r"^EV charger: waiting until \d\d:\d\d:00 CES?T \(the slot boundary\)", stdout, re.MULTILINE), stdout
    assert re.search(rf"^  plan {kw:.2f} kW on {phases} phases = {amps} A; ", stdout, re.MULTILINE), stdout


def test_demo_help_before_anything_is_installed() -> None:
    """``scripts/demo --help`` prints the options (the port and DEMO_PORT among them) and exits 0 without starting,
    preparing or installing anything: its output is argparse's usage and nothing else."""
    proc = subprocess.run(
        [str(ROOT / "scripts" / "demo"), "--help"], capture_output=True, text=True, timeout=60, cwd=ROOT, check=False
    )
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert proc.stdout.startswith("usage: scripts/demo [-h] [--check] [--port PORT]"), proc.stdout
    assert "$DEMO_PORT" in proc.stdout and proc.stderr == "", proc.stdout + proc.stderr


def test_progress_lines_reach_a_pipe() -> None:
    """scripts/demo's progress (building the Debian root, installing the venv: minutes on a first run) reaches stderr
    when it is a pipe, with AGENTIC_HEMS_PROGRESS=1 as scripts/demo exports it; without it (scripts/test) a pipe gets
    nothing, so scripts/test's first line stays its versions line."""
    script = 'set -euo pipefail; . scripts/env.sh; progress "bootstrap (newest HA): installing"'
    env = {key: value for key, value in os.environ.items() if key != "AGENTIC_HEMS_PROGRESS"}
    for flag, expected in (("1", "bootstrap (newest HA): installing\n"), (None, "")):
        proc = subprocess.run(["bash", "-c", script], capture_output=True, text=True, timeout=30, cwd=ROOT, check=False,
                              env={**env, "AGENTIC_HEMS_PROGRESS": flag} if flag else env)
        assert (proc.returncode, proc.stdout, proc.stderr) == (0, "", expected), (flag, proc)
    demo = subprocess.run(["bash", "-c", "grep -c '^export AGENTIC_HEMS_PROGRESS=1$' scripts/demo"], capture_output=True,
                          text=True, timeout=30, cwd=ROOT, check=False)
    assert demo.stdout.strip() == "1", demo  # before it re-runs itself in the Debian root and calls scripts/bootstrap
