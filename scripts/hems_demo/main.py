"""Command line and report: options, the run, the JSON report and the exit code."""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import signal
from pathlib import Path
from typing import Any

try:
    import aiohttp
except ModuleNotFoundError:  # only for `--help`, which scripts/demo prints with any python3 before it builds the venv
    aiohttp = None  # type: ignore[assignment]

from . import __doc__ as PACKAGE_DOC
from .client import HassClient
from .constants import DEMO_DIR, DOMAIN, HOST, PASSWORD, ROOT, START_DEADLINE_S, USERNAME
from .demo import Demo
from .devices import DASHBOARD_TITLE, DASHBOARD_URL_PATH
from .process import DemoError, HassProcess, ensure_port_free, log, prepare_config


def print_credentials(base: str) -> None:
    log(f"  URL:      {base}")
    log(f"  Username: {USERNAME}")
    log(f"  Password: {PASSWORD}")
    log(f"  Cards:    {base}/{DASHBOARD_URL_PATH} (the {DASHBOARD_TITLE!r} dashboard)")


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
        demo.config_dir = hass.config_dir
        try:
            await demo.run(hass)
            if not args.check:  # the battery simulation outlives the 30-minute access token
                (token,) = await demo.client.ws(
                    [{"type": "auth/long_lived_access_token", "client_name": "demo battery", "lifespan": 30}]
                )
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
        log("CHECK OK: every plan is feasible, every entity exists and is available, every grid call answered as "
            "expected.")
        if args.check:
            return 0
    log("")
    log("Home Assistant keeps running; open it in a browser and log in with:")
    print_credentials(base)
    log("Press Ctrl-C to stop it.")
    async with aiohttp.ClientSession() as session:
        client = HassClient(session, base)
        client.token = token
        demo_home = Demo(client, args)
        battery = asyncio.create_task(demo_home.simulate_battery())
        house = asyncio.create_task(demo_home.simulate_house())
        try:
            await wait_for_stop(hass)
        finally:
            battery.cancel()
            house.cancel()
    return 0


def parse_args() -> argparse.Namespace:
    """The command line's options (``scripts/demo --help``)."""
    parser = argparse.ArgumentParser(
        description=(PACKAGE_DOC or "").split("\n\n")[0],
        prog="scripts/demo",
        epilog="Without --check, Home Assistant keeps running for the browser until Ctrl-C. AGENTIC_HEMS_HA=oldest "
        "runs the oldest supported Home Assistant release. The first run installs the venv (scripts/bootstrap).",
    )
    parser.add_argument(
        "--check", action="store_true",
        help="headless: print the plans, wait for the EV charger's next slot boundary (up to 16.5 min), stop HA, "
        "exit 0 only if all is well"
    )
    parser.add_argument(
        "--port", type=int, default=int(os.environ.get("DEMO_PORT", "8123")),
        help="HTTP port (default: $DEMO_PORT, else 8123)"
    )
    parser.add_argument(
        "--json", metavar="PATH", help="also write the plans, price summary and entities as JSON to PATH"
    )
    parser.add_argument(
        "--dir",
        help="where the config directory, pid file and console log go (default .demo/, or .demo/port-N/ with --port N)",
    )
    parser.add_argument(
        "--no-program-dishwasher", action="store_true",
        help="leave out the two program dishwashers with their own delayed start (the Bosch through its start-in number "
        "and start button, the Siemens through the home_connect stand-in's action; the browser tests count the others)",
    )
    parser.add_argument(
        "--integration",
        default=str(ROOT / "custom_components" / DOMAIN),
        help="the integration directory to link into the config (default: this checkout's)",
    )
    return parser.parse_args()


def main() -> int:
    """Run the demo; returns the exit code (0 when all is well, 130 after Ctrl-C with --check, else 1)."""
    args = parse_args()
    if aiohttp is None:
        raise SystemExit("scripts/hems_demo needs Home Assistant's venv: run scripts/demo")

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
