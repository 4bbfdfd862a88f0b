"""The Home Assistant process: its config directory, port checks, start and stop, log tail."""

from __future__ import annotations

import contextlib
import ctypes
import importlib.util
import json
import os
import shutil
import signal
import socket
import subprocess
import sys
from pathlib import Path

try:
    import aiohttp
except ModuleNotFoundError:  # only for `--help`, which scripts/demo prints with any python3 before it builds the venv
    aiohttp = None  # type: ignore[assignment]

from .constants import CASE_SOURCE, DOMAIN, HOST, STAND_INS, STOP_GRACE_S
from .devices import CONFIGURATION_YAML, KNOWN_NOISE, RECORD_START
from .fixtures import grid_yaml


def known_noise(record: str) -> bool:
    """True for a log record that log_tail leaves out (see KNOWN_NOISE)."""
    if f"'{DOMAIN}'" in record or "custom_components" in record:
        return False
    return KNOWN_NOISE.search(record) is not None


class DemoError(Exception):
    """A failure with a message meant for the user."""


def log(message: str = "") -> None:
    """Print one line of progress."""
    print(message, flush=True)


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


def has_http_config_store() -> bool:
    """True when the installed HA keeps its HTTP settings in storage (``homeassistant/components/http/config.py``),
    found without importing HA."""
    spec = importlib.util.find_spec("homeassistant")
    roots = list(spec.submodule_search_locations or []) if spec else []
    return any((Path(root) / "components" / "http" / "config.py").exists() for root in roots)


def http_config(config_dir: Path, port: int) -> str:
    """Serve on HOST:port only: the configuration.yaml section, and ``.storage/http``.

    HA 2026.10 keeps its HTTP settings in ``.storage/http`` and migrates a YAML ``http:`` section once, as a *pending*
    config: the frontend then asks the administrator to confirm it (a dialog over every page), a repair says that the
    YAML is deprecated (it stops working in 2027.2), and an unconfirmed config reverts after 5 minutes, restarting HA
    on the default port and all interfaces. So with such an HA the demo writes no YAML; it writes the store in its
    version-1 form (just the settings; HA validates it, fills in the defaults and migrates it on start). HA 2026.4
    reads YAML (its version-1 store only remembers the last working settings for recovery mode, and is rewritten).
    """
    settings = {"server_host": [HOST], "server_port": port}
    storage = config_dir / ".storage"
    storage.mkdir(exist_ok=True)
    (storage / "http").write_text(json.dumps({"version": 1, "key": "http", "data": settings}, indent=2))
    if has_http_config_store():
        return "# http: in .storage/http (HA 2026.10 stores its HTTP settings; see http_config in scripts/hems_demo/process.py)"
    return f"http:\n  server_host: {HOST}\n  server_port: {port}\n"


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
    # The Siemens dishwasher's integration: the demo's stand-in for HA core's home_connect (home_connect.py).
    stand_in = Path(__file__).resolve().parent / "home_connect_stand_in"
    (config_dir / "custom_components" / "home_connect").symlink_to(stand_in)
    stand_ins = "\n".join(f"  {oid}:\n    name: {name}" for oid, name in STAND_INS.items())
    if importlib.util.find_spec("hass_frontend") is not None:
        frontend = "frontend:"
    else:  # scripts/bootstrap installs it (requirements_test.txt); without it the APIs still work, the UI does not
        log("note: home-assistant-frontend is not installed, so there is no web UI; run scripts/bootstrap")
        frontend = "# frontend: (home-assistant-frontend is not installed)"
    (config_dir / "configuration.yaml").write_text(
        CONFIGURATION_YAML.format(
            http=http_config(config_dir, port), domain=DOMAIN, stand_ins=stand_ins, frontend=frontend,
            grid=grid_yaml(),
        )
    )
    networks = config_dir / DOMAIN / "networks"
    networks.mkdir(parents=True)
    shutil.copy(CASE_SOURCE, networks / CASE_SOURCE.name)


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
        # The venv's own interpreter (scripts/demo runs this driver in it), not its `hass` script, whose #! line names
        # the path the venv was created at (a copied venv or another mount of it would fail to start).
        if importlib.util.find_spec("homeassistant") is None:
            raise DemoError(f"Home Assistant is not installed for {sys.executable}: run scripts/bootstrap")
        with self.console_path.open("wb") as console:
            # --skip-pip: scripts/bootstrap installs every requirement; HA must not pip-install into .venv at runtime
            # (onboarding starts a few core integrations whose packages are absent; they just fail to set up).
            self.proc = subprocess.Popen(
                [sys.executable, "-m", "homeassistant", "-c", str(self.config_dir), "--skip-pip"],
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

        Known-harmless records (KNOWN_NOISE) are left out, so the tail shows what matters: the integrations and core
        components HA starts by itself whose packages are absent under --skip-pip.
        """
        for path in (self.config_dir / "home-assistant.log", self.console_path):
            if path.exists() and path.stat().st_size:
                records: list[list[str]] = []
                for line in path.read_text(errors="replace").splitlines():
                    if RECORD_START.match(line) or not records:
                        records.append([line])
                    else:
                        records[-1].append(line)
                kept = [r for r in records if not known_noise("\n".join(r))]
                text = [line for record in kept for line in record][-lines:]
                note = f", {len(records) - len(kept)} known-harmless records left out"
                return f"--- last {len(text)} lines of {path}{note} ---\n" + "\n".join(text)
        return "(Home Assistant wrote no log)"
