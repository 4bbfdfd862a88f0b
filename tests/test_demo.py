"""End to end: ``scripts/demo --check`` starts a real Home Assistant, sets agentic_hems up and plans three appliances.

The demo runs as a subprocess (its own Home Assistant on a free 127.0.0.1 port), so pytest's socket blocking does not
apply. It takes about ten seconds; deselect it with ``--deselect tests/test_demo.py`` or ``-k "not demo"``.
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
from datetime import datetime
from pathlib import Path
from zoneinfo import ZoneInfo

ROOT = Path(__file__).resolve().parent.parent
APPLIANCES = ("Dishwasher", "Washing machine", "EV charger")

PLAN_LINE = re.compile(
    r"^PLAN (?P<name>.+?)\s+start \w{3} (?P<start>\d{4}-\d\d-\d\d \d\d:\d\d)"
    r"\s+end \w{3} (?P<end>\d{4}-\d\d-\d\d \d\d:\d\d)"
    r"\s+cost (?P<cost>-?\d+\.\d+) (?P<currency>[A-Z]{3})\s+baseline (?P<baseline>-?\d+\.\d+) [A-Z]{3} \(start [^)]+\)"
    r"\s+saves (?P<savings>-?\d+\.\d+) [A-Z]{3}"
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
        timeout=600,
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
