"""Demo driver: a real Home Assistant with agentic_hems on sample prices and three stand-in appliances.

Run through ``scripts/demo`` (which builds ``.venv`` first). The driver

1. prepares a fresh config directory under ``.demo/`` (``configuration.yaml`` with the home in Europe/Brussels, three
   ``input_boolean`` stand-ins, and ``custom_components/agentic_hems`` linked to this checkout);
2. starts ``.venv/bin/hass -c .demo/config`` on 127.0.0.1:8123 and waits for it (180 s deadline);
3. completes onboarding over the REST API (an owner account whose credentials are printed);
4. sets agentic_hems up through HA's own config flow and appliance subentry flows over REST;
5. calls ``agentic_hems.get_prices`` and ``agentic_hems.plan`` for each appliance and prints the results in local time;
6. checks that every agentic_hems entity exists and is not unavailable, and that every appliance has all its entities;
7. then either leaves HA running for the browser until Ctrl-C, or (``--check``) stops HA and exits 0 only when every
   plan is feasible and every check passed.

Home Assistant always stops when the driver ends (normal exit, error, Ctrl-C, SIGTERM; PDEATHSIG covers SIGKILL).
Only the standard library and aiohttp (which Home Assistant ships) are used.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import ctypes
import importlib.util
import json
import math
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import time
from collections.abc import Callable
from datetime import datetime, timedelta
from datetime import time as dt_time
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

import aiohttp

ROOT = Path(__file__).resolve().parent.parent
DEMO_DIR = ROOT / ".demo"
DOMAIN = "agentic_hems"
HOST = "127.0.0.1"
START_DEADLINE_S = 180.0
ENTITY_DEADLINE_S = 60.0
STOP_GRACE_S = 30.0
SLOT = timedelta(minutes=15)

OWNER_NAME = "Demo Owner"
USERNAME = "demo"
PASSWORD = "agentic-hems"  # a local, throw-away demo instance on 127.0.0.1 only
LANGUAGE = "en"

# input_boolean stand-ins for the real appliances (object id -> friendly name).
STAND_INS = {
    "dishwasher": "Dishwasher",
    "washing_machine": "Washing machine",
    "ev_charger": "EV charger",
    "garage_motor": "Garage motor",
}
# A garage-door template cover (device class garage, risk 4): opening it needs an administrator's confirmation.
GARAGE_DOOR = "cover.garage_door"
ASK_REQUEST = "Schedule all flexible loads"
COVER_YAML = """\
cover:
  - platform: template
    covers:
      garage_door:
        friendly_name: Garage door
        device_class: garage
        value_template: "{{ is_state('input_boolean.garage_motor', 'on') }}"
        open_cover:
          action: input_boolean.turn_on
          target:
            entity_id: input_boolean.garage_motor
        close_cover:
          action: input_boolean.turn_off
          target:
            entity_id: input_boolean.garage_motor
"""

# The config flow's answers, step by step (step_id -> user input).
CONFIG_FLOW_STEPS: dict[str, dict[str, Any]] = {
    "user": {"price_source": "sample"},
    "settings": {"markup": 0.0, "vat_percent": 0.0, "grid_fee": 0.0, "vat_on_negative": True, "power_limit_kw": 11.0},
}

# The appliance subentries. A deadline at or before the earliest start is on the next day, and each window is the next
# one that can still hold the run, so every window lies within the sample prices (local today and tomorrow) whenever
# the demo runs: "ready by 07:00" = any time in the 24 h before the next 07:00, starting now.
APPLIANCES: list[dict[str, Any]] = [
    {
        "name": "Dishwasher",
        "kind": "dishwasher",
        "entity_id": "input_boolean.dishwasher",
        "power_kw": 1.8,
        "duration_min": 150,
        "contiguous": True,
        "earliest_start": "07:00:00",
        "deadline": "07:00:00",
    },
    {
        "name": "Washing machine",
        "kind": "washing_machine",
        "entity_id": "input_boolean.washing_machine",
        "power_kw": 2.0,
        "duration_min": 120,
        "contiguous": True,
        "earliest_start": "18:00:00",
        "deadline": "18:00:00",
    },
    {
        "name": "EV charger",
        "kind": "ev_charger",
        "entity_id": "input_boolean.ev_charger",
        "power_kw": 7.0,  # with the dishwasher and the washer (3.8 kW) it stays under the 11 kW fuse at any hour
        "energy_kwh": 30.0,
        "contiguous": False,
        "earliest_start": "18:00:00",
        "deadline": "07:00:00",
    },
]

# Translation keys of the entities every appliance must have, and of the entry's own entities.
APPLIANCE_KEYS = {"next_start", "planned_cost", "run_now", "ready_by", "automatic_planning"}
ENTRY_KEYS = {"electricity_price", "tomorrow_prices", "last_decision", "allow_device_control"}

CONFIGURATION_YAML = """\
# Written by scripts/demo; regenerated on every run.
homeassistant:
  name: Agentic HEMS demo
  time_zone: Europe/Brussels
  country: BE
  currency: EUR
  unit_system: metric
  language: en

http:
  server_host: {host}
  server_port: {port}

# A small, fast set instead of default_config: the UI, the REST and websocket APIs, and the stand-ins.
{frontend}
config:
api:
history:
logbook:
system_log:

logger:
  default: warning
  logs:
    custom_components.{domain}: debug
    homeassistant.setup: info

input_boolean:
{stand_ins}

{cover}"""


# A log record starts with a timestamp; the rest of its lines are a traceback.
RECORD_START = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")
ONBOARDING_NOISE = re.compile(
    r"components/(radio_browser|met|google_translate)/|integration (radio_browser|met):|for google_translate$"
    r"|camera\.img_util\] Error loading libturbojpeg",
    re.MULTILINE,
)


class DemoError(Exception):
    """A failure with a message meant for the user."""


def log(message: str = "") -> None:
    """Print one line of progress."""
    print(message, flush=True)


# --------------------------------------------------------------------------------------------------------------------
# The Home Assistant process
# --------------------------------------------------------------------------------------------------------------------


def port_owner_hint(port: int) -> str:
    """Best-effort description of who listens on ``port`` (``ss`` output), or ''."""
    with contextlib.suppress(Exception):
        out = subprocess.run(
            ["ss", "-ltnpH", f"sport = :{port}"], capture_output=True, text=True, timeout=5, check=False
        ).stdout.strip()
        if out:
            return f" ({out.splitlines()[0].split()[-1]})"
    return ""


def ensure_port_free(port: int) -> None:
    """Raise DemoError when something already listens on HOST:port."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        probe.settimeout(1)
        if probe.connect_ex((HOST, port)) == 0:
            raise DemoError(
                f"port {port} on {HOST} is busy{port_owner_hint(port)}: stop whatever listens there "
                f"(another scripts/demo?) or pass --port"
            )
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
        # SO_REUSEADDR as HA's server sets it: connections of a previous run in TIME_WAIT must not count as busy.
        probe.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            probe.bind((HOST, port))
        except OSError as err:
            raise DemoError(f"cannot bind {HOST}:{port} ({err}); pass --port to use another port") from err


def pid_alive(pid: int) -> bool:
    """True when a process with ``pid`` exists."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def prepare_config(config_dir: Path, port: int, integration: Path) -> None:
    """Write a fresh config directory (the previous run's is removed)."""
    pid_file = config_dir.parent / "hass.pid"
    if pid_file.exists():
        with contextlib.suppress(ValueError):
            pid = int(pid_file.read_text().strip())
            if pid_alive(pid) and "hass" in Path(f"/proc/{pid}/cmdline").read_text(errors="replace"):
                raise DemoError(
                    f"a demo Home Assistant (pid {pid}) still runs from {config_dir}; stop it first (kill {pid})"
                )
        pid_file.unlink(missing_ok=True)
    if config_dir.exists():
        shutil.rmtree(config_dir)
    (config_dir / "custom_components").mkdir(parents=True)
    (config_dir / "custom_components" / DOMAIN).symlink_to(integration.resolve())
    stand_ins = "\n".join(f"  {oid}:\n    name: {name}" for oid, name in STAND_INS.items())
    if importlib.util.find_spec("hass_frontend") is not None:
        frontend = "frontend:"
    else:  # scripts/bootstrap installs it (requirements_test.txt); without it the APIs still work, the UI does not
        log("note: home-assistant-frontend is not installed, so there is no web UI; run scripts/bootstrap")
        frontend = "# frontend: (home-assistant-frontend is not installed)"
    (config_dir / "configuration.yaml").write_text(
        CONFIGURATION_YAML.format(
            host=HOST, port=port, domain=DOMAIN, stand_ins=stand_ins, frontend=frontend, cover=COVER_YAML
        )
    )


def _set_pdeathsig() -> None:
    """In the child: get SIGTERM when the driver dies, even by SIGKILL (Linux only; best effort)."""
    with contextlib.suppress(Exception):
        ctypes.CDLL("libc.so.6", use_errno=True).prctl(1, signal.SIGTERM)  # PR_SET_PDEATHSIG


class HassProcess:
    """``hass -c CONFIG_DIR`` in its own session; :meth:`stop` is idempotent."""

    def __init__(self, config_dir: Path) -> None:
        self.config_dir = config_dir
        self.run_dir = config_dir.parent
        self.console_path = self.run_dir / "hass-console.log"
        self.proc: subprocess.Popen[bytes] | None = None
        self.started = False

    def start(self) -> None:
        hass = ROOT / ".venv" / "bin" / "hass"
        if not hass.exists():
            raise DemoError(f"{hass} is missing: run scripts/bootstrap")
        with self.console_path.open("wb") as console:
            # --skip-pip: scripts/bootstrap installs every requirement; HA must not pip-install into .venv at runtime
            # (onboarding starts a few core integrations whose packages are absent; they just fail to set up).
            self.proc = subprocess.Popen(
                [str(hass), "-c", str(self.config_dir), "--skip-pip"],
                stdin=subprocess.DEVNULL,
                stdout=console,
                stderr=subprocess.STDOUT,
                cwd=str(self.run_dir),
                start_new_session=True,  # Ctrl-C in the terminal reaches the driver only; it stops HA cleanly
                preexec_fn=_set_pdeathsig,
            )
        self.started = True
        (self.run_dir / "hass.pid").write_text(f"{self.proc.pid}\n")

    @property
    def pid(self) -> int | None:
        return self.proc.pid if self.proc else None

    def exited(self) -> int | None:
        """HA's exit code once it has exited, else None."""
        return self.proc.poll() if self.proc else None

    def stop(self) -> None:
        """SIGTERM (HA shuts down cleanly), then SIGKILL the whole session after STOP_GRACE_S."""
        proc, self.proc = self.proc, None
        if proc is None:
            return
        if proc.poll() is None:
            with contextlib.suppress(ProcessLookupError):
                proc.send_signal(signal.SIGTERM)
            try:
                proc.wait(STOP_GRACE_S)
            except subprocess.TimeoutExpired:
                log(f"Home Assistant did not stop within {STOP_GRACE_S:.0f} s; killing it")
        # Anything left in HA's session (HA itself after the timeout, or helpers it spawned) goes too.
        with contextlib.suppress(ProcessLookupError, PermissionError):
            os.killpg(proc.pid, signal.SIGKILL)
        with contextlib.suppress(subprocess.TimeoutExpired):
            proc.wait(10)
        (self.run_dir / "hass.pid").unlink(missing_ok=True)

    def log_tail(self, lines: int = 60) -> str:
        """The last ``lines`` lines of home-assistant.log (or of the console output when there is no log).

        Known-harmless records are left out, so the tail shows what matters: the integrations onboarding starts by
        itself (radio_browser, met, google_translate, whose packages are absent under --skip-pip) and libturbojpeg.
        """
        for path in (self.config_dir / "home-assistant.log", self.console_path):
            if path.exists() and path.stat().st_size:
                records: list[list[str]] = []
                for line in path.read_text(errors="replace").splitlines():
                    if RECORD_START.match(line) or not records:
                        records.append([line])
                    else:
                        records[-1].append(line)
                kept = [r for r in records if not ONBOARDING_NOISE.search("\n".join(r))]
                text = [line for record in kept for line in record][-lines:]
                note = f", {len(records) - len(kept)} known-harmless records left out"
                return f"--- last {len(text)} lines of {path}{note} ---\n" + "\n".join(text)
        return "(Home Assistant wrote no log)"


# --------------------------------------------------------------------------------------------------------------------
# Talking to Home Assistant
# --------------------------------------------------------------------------------------------------------------------


class HassClient:
    """REST and websocket calls against the demo instance."""

    def __init__(self, session: aiohttp.ClientSession, base: str) -> None:
        self.session = session
        self.base = base
        self.token: str | None = None

    @property
    def client_id(self) -> str:
        return f"{self.base}/"

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def request(self, method: str, path: str, *, expect: tuple[int, ...] = (200,), **kwargs: Any) -> Any:
        """One REST call; DemoError (with the response body) unless the status is in ``expect``."""
        async with self.session.request(
            method, self.base + path, headers=self._headers(), timeout=aiohttp.ClientTimeout(total=60), **kwargs
        ) as resp:
            body = await resp.text()
            if resp.status not in expect:
                raise DemoError(f"{method} {path} -> HTTP {resp.status}: {body[:2000]}")
            try:
                return json.loads(body) if body else None
            except json.JSONDecodeError:
                return body

    async def wait_http(self, deadline: float, hass: HassProcess) -> None:
        """Wait until HA's HTTP server answers (the onboarding API needs no auth)."""
        last = "no answer yet"
        while time.monotonic() < deadline:
            if (code := hass.exited()) is not None:
                raise DemoError(f"Home Assistant exited with code {code} while starting")
            try:
                async with self.session.get(
                    self.base + "/api/onboarding", timeout=aiohttp.ClientTimeout(total=5)
                ) as resp:
                    if resp.status == 200:
                        return
                    last = f"HTTP {resp.status}"
            except (TimeoutError, aiohttp.ClientError) as err:
                last = type(err).__name__
            await asyncio.sleep(0.5)
        raise DemoError(f"Home Assistant did not answer on {self.base} within {START_DEADLINE_S:.0f} s ({last})")

    async def onboard(self) -> None:
        """Create the owner, log in and finish the remaining onboarding steps."""
        steps = {s["step"]: s["done"] for s in await self.request("GET", "/api/onboarding")}
        if steps.get("user"):
            raise DemoError("onboarding's user step is already done: the config directory was not fresh")
        created = await self.request(
            "POST",
            "/api/onboarding/users",
            json={
                "client_id": self.client_id,
                "name": OWNER_NAME,
                "username": USERNAME,
                "password": PASSWORD,
                "language": LANGUAGE,
            },
        )
        tokens = await self.request(
            "POST",
            "/auth/token",
            data={"grant_type": "authorization_code", "code": created["auth_code"], "client_id": self.client_id},
        )
        self.token = tokens["access_token"]
        await self.request("POST", "/api/onboarding/core_config", json={})
        await self.request("POST", "/api/onboarding/analytics", json={})
        await self.request(
            "POST",
            "/api/onboarding/integration",
            json={"client_id": self.client_id, "redirect_uri": f"{self.base}/?auth_callback=1"},
        )
        steps = {s["step"]: s["done"] for s in await self.request("GET", "/api/onboarding")}
        if not all(steps.values()):
            raise DemoError(f"onboarding is incomplete: {steps}")

    async def wait_running(self, deadline: float, hass: HassProcess) -> dict[str, Any]:
        """Wait until HA reports state RUNNING; return /api/config."""
        config: dict[str, Any] = {}
        while time.monotonic() < deadline:
            if (code := hass.exited()) is not None:
                raise DemoError(f"Home Assistant exited with code {code} while starting")
            config = await self.request("GET", "/api/config")
            if config.get("state") == "RUNNING":
                return config
            await asyncio.sleep(0.5)
        raise DemoError(
            f"Home Assistant did not reach RUNNING within {START_DEADLINE_S:.0f} s (state {config.get('state')!r})"
        )

    async def ws(self, messages: list[dict[str, Any]]) -> list[Any]:
        """Send websocket commands one after another; return their results (DemoError on failure)."""
        results = []
        async with self.session.ws_connect(
            self.base + "/api/websocket", timeout=aiohttp.ClientWSTimeout(ws_close=10)
        ) as conn:
            if (await conn.receive_json(timeout=30)).get("type") != "auth_required":
                raise DemoError("websocket: expected auth_required")
            await conn.send_json({"type": "auth", "access_token": self.token})
            if (reply := await conn.receive_json(timeout=30)).get("type") != "auth_ok":
                raise DemoError(f"websocket auth failed: {reply}")
            for number, message in enumerate(messages, start=1):
                await conn.send_json({"id": number, **message})
                while True:
                    reply = await conn.receive_json(timeout=60)
                    if reply.get("id") == number and reply.get("type") == "result":
                        break
                if not reply.get("success"):
                    raise DemoError(f"websocket {message['type']} failed: {reply.get('error')}")
                results.append(reply.get("result"))
        return results

    async def drive_flow(self, kind: str, start_path: str, handler: Any, answers: Callable[[dict], dict]) -> dict:
        """Run a config or subentry flow over REST to its end; return the final result.

        ``answers(step)`` gives the user input for a form step (the step's JSON as HA returns it).
        """
        result = await self.request("POST", start_path, json={"handler": handler, "show_advanced_options": False})
        for _ in range(10):
            rtype = result.get("type")
            if rtype == "create_entry":
                return result
            if rtype == "abort":
                raise DemoError(
                    f"{kind} flow aborted: {result.get('reason')} {result.get('description_placeholders') or ''}"
                )
            flow_id = result["flow_id"]
            if rtype == "menu":
                raise DemoError(
                    f"{kind} flow shows a menu at step {result.get('step_id')!r}: {result.get('menu_options')}"
                )
            if rtype != "form":
                raise DemoError(f"{kind} flow: unexpected result {result}")
            if result.get("errors"):
                raise DemoError(f"{kind} flow step {result.get('step_id')!r} rejected the input: {result['errors']}")
            data = answers(result)
            step = result
            result = await self.request("POST", f"{start_path}/{flow_id}", json=data, expect=(200, 400))
            if not isinstance(result, dict) or "type" not in result:  # HTTP 400
                hint = ""
                if not isinstance(result, dict):  # a bare "400: Bad Request": vol.Invalid escaped the step handler
                    hint = " (a voluptuous error escaped the flow's step handler, e.g. an invalid selector config)"
                raise DemoError(f"{kind} flow step {step.get('step_id')!r} rejected {data}: {result}{hint}")
        raise DemoError(f"{kind} flow did not finish within 10 steps")

    async def call_service(self, service: str, data: dict[str, Any]) -> Any:
        """Call agentic_hems.<service> for its response."""
        reply = await self.request("POST", f"/api/services/{DOMAIN}/{service}?return_response", json=data)
        if not isinstance(reply, dict) or "service_response" not in reply:
            raise DemoError(f"{DOMAIN}.{service} returned no service_response: {reply}")
        return reply["service_response"]


def fill_form(step: dict[str, Any], wanted: dict[str, Any], what: str) -> dict[str, Any]:
    """Answer a form with the fields of ``wanted`` its schema has; DemoError on a required field we cannot fill."""
    schema = step.get("data_schema") or []
    names = {field["name"] for field in schema}
    missing = [f["name"] for f in schema if f.get("required") and f["name"] not in wanted and "default" not in f]
    if missing:
        raise DemoError(f"{what}: step {step.get('step_id')!r} requires {missing}, which the demo does not know")
    unused = sorted(set(wanted) - names)
    if unused:
        log(f"  note: {what} step {step.get('step_id')!r} has no field(s) {unused}; not sent")
    return {key: value for key, value in wanted.items() if key in names}


# --------------------------------------------------------------------------------------------------------------------
# The demo proper
# --------------------------------------------------------------------------------------------------------------------


def local(iso: str | None, tz: ZoneInfo) -> datetime | None:
    """Parse an ISO datetime and convert it to the home's zone."""
    if not iso:
        return None
    return datetime.fromisoformat(iso).astimezone(tz)


def run_time(appliance: dict[str, Any]) -> timedelta:
    """The load's shortest run, in whole 15-minute slots."""
    if appliance.get("contiguous"):
        minutes = float(appliance["duration_min"])
    else:
        minutes = 60.0 * appliance["energy_kwh"] / appliance["power_kw"]
    return SLOT * math.ceil(minutes / 15.0 - 1e-9)


def next_window(appliance: dict[str, Any], now: datetime, tz: ZoneInfo) -> tuple[datetime, datetime]:
    """The appliance's next daily window that can still hold its run, as the integration computes it.

    Only used to label the baseline ("start now" or a later window start); the plan itself comes from the service.
    """
    earliest, deadline = (
        dt_time.fromisoformat(appliance["earliest_start"]),
        dt_time.fromisoformat(appliance["deadline"]),
    )
    for offset in (-1, 0, 1, 2):
        day = now.astimezone(tz).date() + timedelta(days=offset)
        start = datetime.combine(day, earliest, tzinfo=tz)
        end = datetime.combine(day + timedelta(days=1) if deadline <= earliest else day, deadline, tzinfo=tz)
        start = max(start, now)
        if end - start >= max(run_time(appliance), SLOT):
            return start, end
    raise DemoError(f"no window for {appliance['name']}")


def fmt_money(value: Any, currency: str) -> str:
    if not isinstance(value, (int, float)):
        return f"{value} {currency}"
    text = f"{float(value):.4f}"
    return f"{'0.0000' if text == '-0.0000' else text} {currency}"


class Demo:
    """The steps after HA answers: onboarding, setup, plans, checks."""

    def __init__(self, client: HassClient, args: argparse.Namespace) -> None:
        self.client = client
        self.args = args
        self.problems: list[str] = []
        self.report: dict[str, Any] = {"plans": {}, "prices": None, "entities": [], "gates": {}, "ask": None}
        self.tz = ZoneInfo("UTC")

    async def setup_integration(self) -> str:
        """Create the agentic_hems entry and its appliance subentries; return the entry id."""
        result = await self.client.drive_flow(
            "config",
            "/api/config/config_entries/flow",
            DOMAIN,
            lambda step: fill_form(step, CONFIG_FLOW_STEPS.get(step["step_id"], {}), "config flow"),
        )
        entry = result["result"]
        entry_id = entry["entry_id"]
        log(f"  config entry {entry['title']!r} ({entry_id}): {entry.get('state')}")
        if entry.get("state") != "loaded":
            raise DemoError(
                f"the agentic_hems entry did not load: state {entry.get('state')!r}, reason {entry.get('reason')!r}"
            )
        done: list[str] = []
        for appliance in APPLIANCES:
            await self.client.drive_flow(
                "appliance subentry",
                "/api/config/config_entries/subentries/flow",
                [entry_id, "appliance"],
                lambda step, a=appliance: fill_form(step, a, f"appliance {a['name']!r}"),
            )
            # Adding a subentry reloads the entry; wait for that before adding the next one, as a user would.
            done.append(appliance["name"])
            await self.wait_settled(entry_id, done)
            log(f"  appliance {appliance['name']!r}: {self.describe(appliance)}")
        return entry_id

    @staticmethod
    def describe(appliance: dict[str, Any]) -> str:
        amount = f"{appliance['duration_min']} min" if "duration_min" in appliance else f"{appliance['energy_kwh']} kWh"
        shape = "in one run" if appliance.get("contiguous") else "in any slots"
        window = f"daily {appliance['earliest_start'][:5]} to {appliance['deadline'][:5]}"
        return f"{appliance['power_kw']} kW, {amount} {shape}, {window}"

    async def show_prices(self) -> None:
        prices = await self.client.call_service("get_prices", {})
        slots = prices.get("prices") or []
        values = [s["price"] for s in slots if isinstance(s.get("price"), (int, float)) and math.isfinite(s["price"])]
        if not values:
            self.problems.append(f"get_prices returned no prices: {json.dumps(prices)[:500]}")
            return
        first, last = local(slots[0]["start"], self.tz), local(slots[-1]["end"], self.tz)
        unit = prices.get("unit") or f"{prices.get('currency', '')}/kWh"
        summary = {
            "min": min(values),
            "max": max(values),
            "slots": len(slots),
            "resolution_minutes": prices.get("resolution_minutes"),
            "first": first.isoformat() if first else None,
            "last": last.isoformat() if last else None,
            "sample": prices.get("sample"),
            "source": prices.get("source"),
            "unit": unit,
        }
        self.report["prices"] = summary
        log(
            f"PRICES min {fmt_money(summary['min'], unit)} max {fmt_money(summary['max'], unit)}, "
            f"{len(slots)} slots of {summary['resolution_minutes']} min, "
            f"{first:%a %d %b %H:%M} to {last:%a %d %b %H:%M}, "
            f"source {summary['source']}, sample: {str(summary['sample']).lower()}"
        )

    async def show_plans(self) -> None:
        log("")
        log(f"Plans (times in {self.tz.key}; 'baseline' = starting at the start of the window, i.e. right away):")
        width = max(len(a["name"]) for a in APPLIANCES)
        dearer: list[tuple[str, datetime, datetime, float, float]] = []
        spans: list[tuple[str, datetime, datetime]] = []
        for appliance in APPLIANCES:
            name = appliance["name"]
            window_start, window_end = next_window(appliance, datetime.now(self.tz), self.tz)
            plan = await self.client.call_service("plan", {"appliance": name})
            self.report["plans"][name] = plan
            if not isinstance(plan, dict):
                self.problems.append(f"plan for {name!r} is not a dict: {plan!r}")
                continue
            if not plan.get("feasible"):
                log(f"PLAN {name:<{width}}  INFEASIBLE: {plan.get('reason')} {plan.get('detail') or ''}")
                self.problems.append(f"plan for {name!r} is infeasible: {plan.get('reason')} {plan.get('detail')}")
                continue
            currency = plan.get("currency") or "EUR"
            start, end = local(plan.get("start"), self.tz), local(plan.get("end"), self.tz)
            cost, baseline, savings = plan.get("cost"), plan.get("baseline_cost"), plan.get("savings")
            if start is None or end is None or not start < end:
                self.problems.append(
                    f"plan for {name!r}: start {plan.get('start')} is not before end {plan.get('end')}"
                )
                continue
            if not all(isinstance(v, (int, float)) for v in (cost, baseline)):
                self.problems.append(f"plan for {name!r}: cost {cost!r} or baseline {baseline!r} is not a number")
                continue
            if cost > baseline + 1e-9:
                dearer.append((name, start, end, cost, baseline))
            spans.append((name, start, end))
            if savings is None:
                savings = baseline - cost
            percent = f" ({100 * savings / baseline:.0f}%)" if baseline > 0 else ""
            right_away = "now" if window_start <= datetime.now(self.tz) + SLOT else f"{window_start:%a %H:%M}"
            log(
                f"PLAN {name:<{width}}  start {start:%a %Y-%m-%d %H:%M}  end {end:%a %Y-%m-%d %H:%M}  "
                f"cost {fmt_money(cost, currency)}  baseline {fmt_money(baseline, currency)} (start {right_away})  "
                f"saves {fmt_money(savings, currency)}{percent}"
            )
            log(f"     {'':<{width}}  {self.describe(appliance)}; window {right_away} to {window_end:%a %H:%M}")
        # The baseline ignores the main-fuse limit; a plan may cost more than it only when it shares slots with others.
        for name, start, end, cost, baseline in dearer:
            if any(other != name and s < end and start < e for other, s, e in spans):
                log(f"NOTE {name}: costs more than starting now because the main-fuse limit binds (the baseline ignores it)")
            else:
                self.problems.append(f"plan for {name!r} costs {cost} > baseline (start right away) {baseline}")

    async def show_gates(self) -> None:
        """Turn device control on, preview the scheduler's gate decision for each planned start, and ask to open
        the garage door (which waits for an administrator's confirmation)."""
        log("")
        await self.client.ws([{"type": "homeassistant/expose_entity", "assistants": ["conversation"],
                               "entity_ids": [GARAGE_DOOR], "should_expose": True}])
        await self.client.request("POST", "/api/services/switch/turn_on",
                                  json={"entity_id": f"switch.{DOMAIN}_allow_device_control"})
        log("Device control: ON (switch.agentic_hems_allow_device_control). Gate decisions:")
        for appliance in APPLIANCES:
            plan = self.report["plans"].get(appliance["name"]) or {}
            start = local(plan.get("start"), self.tz)
            if start is None:
                continue
            decision = await self.client.call_service("evaluate_command", {
                "source_agent": "scheduler", "dry_run": True,
                "raw_input": f"start {appliance['name']} at {start:%H:%M} (preview of the scheduled start)",
                "model_candidate": {"intent": "start", "device_alias": appliance["entity_id"]},
            })
            self.report["gates"][appliance["name"]] = decision
            self._log_decision(f"scheduled start {appliance['name']} {start:%a %H:%M}", decision, "dry_run")
        decision = await self.client.call_service("evaluate_command", {
            "source_agent": "demo", "raw_input": "open the garage door",
            "model_candidate": {"intent": "open", "device_alias": "garage door"},
        })
        self.report["gates"]["garage door"] = decision
        self._log_decision("open the garage door", decision, "pending_confirmation")
        if decision.get("outcome") == "pending_confirmation":
            log(f"     confirm it: action agentic_hems.confirm with trace_id {decision['trace_id']} (administrators only)")

    async def show_ask(self) -> None:
        """Answer a typed request through the offline planner (agentic_hems.ask), as a user would in Assist."""
        log("")
        log(f'ASK "{ASK_REQUEST}" (offline planner, no model, no network):')
        answer = await self.client.call_service("ask", {"text": ASK_REQUEST})
        self.report["ask"] = answer
        log(f"     {answer.get('summary')}")
        log(f"     {answer.get('iterations')} iterations, actions: {', '.join(a['type'] for a in answer.get('actions') or [])}")
        if not answer.get("success") or len(answer.get("plans") or []) != len(APPLIANCES):
            self.problems.append(f"ask did not plan every appliance: {answer}")

    def _log_decision(self, what: str, decision: dict[str, Any], wanted: str) -> None:
        gates = decision.get("gate_results") or []
        steps = " ".join(f"{g['gate']}:{'ok' if g['passed'] else 'FAIL'}" for g in gates)
        log(f"GATE {what}: {decision.get('outcome')}  [{steps}]")
        if gates:
            log(f"     {gates[-1]['reason']}")
        if decision.get("outcome") != wanted:
            self.problems.append(f"gate decision for {what}: {decision.get('outcome')}, expected {wanted}")

    async def wait_settled(self, entry_id: str, titles: list[str]) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        """Wait until the entry is loaded (adding a subentry reloads it) with every entity of the given appliances.

        Returns the entity registry entries of agentic_hems and the entry's subentries. Raises DemoError when the
        entry does not settle within ENTITY_DEADLINE_S.
        """
        deadline = time.monotonic() + ENTITY_DEADLINE_S
        while True:
            entries = await self.client.request("GET", f"/api/config/config_entries/entry?domain={DOMAIN}")
            state = next((e.get("state") for e in entries if e.get("entry_id") == entry_id), None)
            registry, subentries = await self.client.ws(
                [
                    {"type": "config/entity_registry/list"},
                    {"type": "config_entries/subentries/list", "entry_id": entry_id},
                ]
            )
            ours = [e for e in registry if e.get("platform") == DOMAIN]
            by_subentry: dict[str | None, set[str]] = {}
            for entity in ours:
                by_subentry.setdefault(entity.get("config_subentry_id"), set()).add(entity.get("translation_key"))
            ids = {s["title"]: s["subentry_id"] for s in subentries if s.get("subentry_type") == "appliance"}
            missing = {title: sorted(APPLIANCE_KEYS - by_subentry.get(ids.get(title), set())) for title in titles}
            missing = {title: keys for title, keys in missing.items() if keys}
            missing_entry = sorted(ENTRY_KEYS - by_subentry.get(None, set()))
            if state == "loaded" and not missing and not missing_entry:
                return ours, subentries
            if time.monotonic() > deadline:
                break
            await asyncio.sleep(0.5)
        details = [f"entry state {state!r}"]
        details += [
            f"appliance {t!r} " + ("has no subentry" if t not in ids else f"lacks entities {k}")
            for t, k in missing.items()
        ]
        if missing_entry:
            details.append(f"the entry lacks entities {missing_entry}")
        raise DemoError(f"agentic_hems did not settle within {ENTITY_DEADLINE_S:.0f} s: " + "; ".join(details))

    async def show_entities(self, ours: list[dict[str, Any]], subentries: list[dict[str, Any]]) -> None:
        """Print every agentic_hems entity's state; each must exist and not be unavailable."""
        titles = {s["subentry_id"]: s["title"] for s in subentries}
        log("")
        log(f"Entities ({len(ours)}):")
        for entity in sorted(ours, key=lambda e: (titles.get(e.get("config_subentry_id"), ""), e["entity_id"])):
            entity_id = entity["entity_id"]
            if entity.get("disabled_by"):
                log(f"  {entity_id:<55} disabled by {entity['disabled_by']}")
                continue
            state = await self.client.request("GET", f"/api/states/{entity_id}", expect=(200, 404))
            value = state.get("state") if isinstance(state, dict) and "state" in state else None
            unit = (state.get("attributes") or {}).get("unit_of_measurement", "") if value is not None else ""
            self.report["entities"].append(
                {
                    "entity_id": entity_id,
                    "translation_key": entity.get("translation_key"),
                    "subentry": titles.get(entity.get("config_subentry_id")),
                    "state": value,
                }
            )
            if value is None:
                self.problems.append(f"{entity_id} is in the entity registry but has no state")
                shown = "NO STATE"
            elif value == "unavailable":
                self.problems.append(f"{entity_id} is unavailable")
                shown = "UNAVAILABLE"
            else:
                shown = f"{value} {unit}".strip()
                if entity.get("translation_key") in ("next_start", "ready_by") and "T" in value:
                    with contextlib.suppress(ValueError):
                        shown = f"{datetime.fromisoformat(value).astimezone(self.tz):%a %H:%M} ({value})"
            log(f"  {entity_id:<55} {shown}")
        for oid in STAND_INS:
            state = await self.client.request("GET", f"/api/states/input_boolean.{oid}", expect=(200, 404))
            if not isinstance(state, dict) or state.get("state") in (None, "unavailable"):
                self.problems.append(f"stand-in input_boolean.{oid} does not exist")

    async def run(self, hass: HassProcess) -> None:
        deadline = time.monotonic() + START_DEADLINE_S
        started = time.monotonic()
        await self.client.wait_http(deadline, hass)
        log(f"HTTP up after {time.monotonic() - started:.1f} s; onboarding the owner account")
        await self.client.onboard()
        config = await self.client.wait_running(deadline, hass)
        self.tz = ZoneInfo(config.get("time_zone") or "UTC")
        log(
            f"Home Assistant {config.get('version')} running after {time.monotonic() - started:.1f} s "
            f"(time zone {self.tz.key}, country {config.get('country')}, currency {config.get('currency')})"
        )
        log("Setting up agentic_hems through its config flow and appliance subentry flows:")
        entry_id = await self.setup_integration()
        ours, subentries = await self.wait_settled(entry_id, [a["name"] for a in APPLIANCES])
        log("")
        await self.show_prices()
        await self.show_plans()
        await self.show_gates()
        await self.show_ask()
        await self.show_entities(ours, subentries)


def print_credentials(base: str) -> None:
    log(f"  URL:      {base}")
    log(f"  Username: {USERNAME}")
    log(f"  Password: {PASSWORD}")


async def wait_for_stop(hass: HassProcess) -> None:
    """Block until Ctrl-C/SIGTERM (handled in main) or until HA exits by itself."""
    while (code := hass.exited()) is None:
        await asyncio.sleep(1)
    raise DemoError(f"Home Assistant exited on its own (code {code})")


async def amain(args: argparse.Namespace, hass: HassProcess) -> int:
    base = f"http://{HOST}:{args.port}"
    shown = hass.config_dir.relative_to(ROOT) if hass.config_dir.is_relative_to(ROOT) else hass.config_dir
    log(f"Agentic HEMS demo: Home Assistant at {base} (config {shown})")
    print_credentials(base)
    hass.start()
    log(f"Started Home Assistant (pid {hass.pid}); waiting for it (deadline {START_DEADLINE_S:.0f} s)")
    async with aiohttp.ClientSession() as session:
        demo = Demo(HassClient(session, base), args)
        try:
            await demo.run(hass)
        finally:
            if args.json:
                Path(args.json).write_text(json.dumps({**demo.report, "problems": demo.problems}, indent=2))
    log("")
    if demo.problems:
        log("CHECK FAILED:")
        for problem in demo.problems:
            log(f"  - {problem}")
        if args.check:
            return 1
    else:
        log("CHECK OK: every plan is feasible, every entity exists and is available.")
        if args.check:
            return 0
    log("")
    log("Home Assistant keeps running; open it in a browser and log in with:")
    print_credentials(base)
    log("Press Ctrl-C to stop it.")
    await wait_for_stop(hass)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0], prog="scripts/demo")
    parser.add_argument(
        "--check", action="store_true", help="headless: print the plans, stop HA, exit 0 only if all is well"
    )
    parser.add_argument(
        "--port", type=int, default=int(os.environ.get("DEMO_PORT", "8123")), help="HTTP port (default 8123)"
    )
    parser.add_argument(
        "--json", metavar="PATH", help="also write the plans, price summary and entities as JSON to PATH"
    )
    parser.add_argument(
        "--dir",
        help="where the config directory, pid file and console log go (default .demo/, or .demo/port-N/ with --port N)",
    )
    parser.add_argument(
        "--integration",
        default=str(ROOT / "custom_components" / DOMAIN),
        help="the integration directory to link into the config (default: this checkout's)",
    )
    args = parser.parse_args()

    run_dir = Path(args.dir) if args.dir else DEMO_DIR if args.port == 8123 else DEMO_DIR / f"port-{args.port}"
    run_dir.mkdir(parents=True, exist_ok=True)
    config_dir = run_dir.resolve() / "config"
    hass = HassProcess(config_dir)

    def on_signal(signum: int, _frame: Any) -> None:
        raise KeyboardInterrupt(signal.Signals(signum).name)

    signal.signal(signal.SIGINT, signal.default_int_handler)  # even when started with SIGINT ignored (e.g. via &)
    signal.signal(signal.SIGTERM, on_signal)
    signal.signal(signal.SIGHUP, on_signal)
    code = 1
    try:
        ensure_port_free(args.port)
        prepare_config(config_dir, args.port, Path(args.integration))
        code = asyncio.run(amain(args, hass))
    except KeyboardInterrupt:
        log("")
        log("Stopping Home Assistant ...")
        code = 130 if args.check else 0
    except DemoError as err:
        log("")
        log(f"DEMO FAILED: {err}")
        code = 1
    finally:
        # Ignore further Ctrl-C while HA shuts down, so it always gets stopped.
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if hass.started:
            hass.stop()
            log("Home Assistant stopped.")
    if code not in (0, 130) and hass.started:
        # After the stop, so that HA has flushed its log (it writes through a queue).
        log(hass.log_tail())
    return code


if __name__ == "__main__":
    sys.exit(main())
