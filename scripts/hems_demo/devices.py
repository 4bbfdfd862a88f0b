"""The demo's devices and forms: the Bosch dishwasher, the battery, tariffs, appliances, dashboard, configuration.yaml."""

from __future__ import annotations

import re
from datetime import timedelta
from typing import Any

try:
    import aiohttp
except ModuleNotFoundError:  # only for `--help`, which scripts/demo prints with any python3 before it builds the venv
    aiohttp = None  # type: ignore[assignment]

from .constants import BATTERY_SETPOINT, DOMAIN

# A second dishwasher in the entity shapes of HA core's home_connect: a program select whose options are
# program keys, a start button, a "Remote start" binary sensor, an "Operation state" enum sensor (home_connect's
# options: ready, delayedstart, run, finished, ...) and a "Start in" number in seconds (home_connect's
# start_in_relative option), as template entities over input_text helpers. The start button sets the operation state
# to delayedstart while a delay is set and remote start is allowed, else run. Added through "Add appliance" with the
# delayed-start profile after device control is on: at its first slot boundary the scheduler selects the program,
# sets the delay to the planned start and presses start, each through the gates (planning/program_exec.py).
PROGRAM_DW = "Bosch dishwasher"


PROGRAM_DW_OPTIONS = ("dishcare_dishwasher_program_auto_2", "dishcare_dishwasher_program_eco_50",
                      "dishcare_dishwasher_program_quick_45")


PROGRAM_DW_ENTITIES = {"select": "select.bosch_dishwasher_program", "button": "button.bosch_dishwasher_start",
                       "remote": "binary_sensor.bosch_dishwasher_remote_start",
                       "operation": "sensor.bosch_dishwasher_operation_state",
                       "delay": "number.bosch_dishwasher_start_in"}


PROGRAM_DW_MAX_DELAY_S = 86400


PROGRAM_DW_LEAD = timedelta(hours=2)  # the window opens this long after the demo adds it: the start is ahead


PROGRAM_DW_WINDOW = timedelta(hours=8)




PROGRAM_DW_HELPERS_YAML = """\
input_text:
  bosch_program:
    name: Bosch dishwasher program (stand-in)
    initial: dishcare_dishwasher_program_auto_2
  bosch_operation:
    name: Bosch dishwasher operation (stand-in)
    initial: ready
  bosch_remote_start:
    name: Bosch dishwasher remote start allowed (stand-in)
    initial: "on"
  bosch_start_in:
    name: Bosch dishwasher start in (stand-in)
    initial: "0"

"""


PROGRAM_DW_TEMPLATE_YAML = f"""\
  - select:
      - name: Bosch dishwasher program
        default_entity_id: {PROGRAM_DW_ENTITIES['select']}
        state: "{{{{ states('input_text.bosch_program') }}}}"
        options: "{{{{ {list(PROGRAM_DW_OPTIONS)} }}}}"
        select_option:
          action: input_text.set_value
          target:
            entity_id: input_text.bosch_program
          data:
            value: "{{{{ option }}}}"
    button:
      - name: Bosch dishwasher start
        default_entity_id: {PROGRAM_DW_ENTITIES['button']}
        press:
          - condition: state
            entity_id: input_text.bosch_remote_start
            state: "on"
          - action: input_text.set_value
            target:
              entity_id: input_text.bosch_operation
            data:
              value: "{{{{ 'delayedstart' if states('input_text.bosch_start_in') | float(0) > 0 else 'run' }}}}"
    binary_sensor:
      - name: Bosch dishwasher remote start
        default_entity_id: {PROGRAM_DW_ENTITIES['remote']}
        state: "{{{{ is_state('input_text.bosch_remote_start', 'on') }}}}"
    sensor:
      - name: Bosch dishwasher operation state
        default_entity_id: {PROGRAM_DW_ENTITIES['operation']}
        device_class: enum
        state: "{{{{ states('input_text.bosch_operation') }}}}"
    number:
      - name: Bosch dishwasher start in
        default_entity_id: {PROGRAM_DW_ENTITIES['delay']}
        state: "{{{{ states('input_text.bosch_start_in') | float(0) }}}}"
        set_value:
          action: input_text.set_value
          target:
            entity_id: input_text.bosch_start_in
          data:
            value: "{{{{ value | int }}}}"
        min: 0
        max: {PROGRAM_DW_MAX_DELAY_S}
        step: 1
        unit_of_measurement: "s"
"""


# The whole-home plan (battery, PV, export in one MILP): a simulated Solcast-style PV forecast sensor the driver sets
# (a clear-sky curve for the local day and tomorrow), and a battery on the home twin's SoC sensor and setpoint, added
# through the battery subentry flow and the options flow's "home" step over REST, as a person would. The driver moves
# the SoC from the setpoint every minute while HA runs.
PV_FORECAST_SENSOR = "sensor.pv_forecast"


PV_PEAK_KW = 6.0  # the clear-sky curve's noon peak (kW)


SUNRISE_H, SUNSET_H = 8.5, 16.75  # local hours (Brussels in December)


BATTERY_SUBENTRY: dict[str, Any] = {
    "name": "Home battery",
    "capacity_kwh": 10.0,
    "charge_kw": 5.0,
    "discharge_kw": 5.0,
    "reserve_pct": 20.0,
    "soc_entity": "sensor.battery_soc",
    "control_entity": BATTERY_SETPOINT,
}


# A second battery in the shape of HA core's homevolt: a mode select (its battery_mode options) plus a power number
# (its setpoint: 0 to 11000 W in 100 W steps); each slot the mode first, then the planned power's size, through the
# gates.
MODE_BATTERY_OPTIONS = {"charge": "inverter_charge", "discharge": "inverter_discharge", "idle": "idle"}


MODE_BATTERY_MAX_W = 11000


MODE_BATTERY_SELECT, MODE_BATTERY_POWER = "input_select.inverter_battery_mode", "input_number.inverter_battery_power"


MODE_BATTERY_SUBENTRY: dict[str, Any] = {
    "name": "Inverter battery",
    "capacity_kwh": 5.0,
    "charge_kw": 2.5,
    "discharge_kw": 2.5,
    "reserve_pct": 20.0,
    "soc_entity": "sensor.inverter_battery_soc",
    "control_entity": MODE_BATTERY_SELECT,
    **{f"{mode}_option": option for mode, option in MODE_BATTERY_OPTIONS.items()},
    "power_setpoint_entity": MODE_BATTERY_POWER,
}


MODE_BATTERY_SELECT_YAML = (
    "input_select:\n  inverter_battery_mode:\n    name: Inverter battery mode\n    options:\n"
    + "".join(f"      - {o}\n" for o in (*MODE_BATTERY_OPTIONS.values(), "solar_charge", "frequency_reserve"))
    + "    initial: inverter_charge\n\n"
)


MODE_BATTERY_POWER_YAML = (
    "  inverter_battery_power:\n    name: Inverter battery power\n    min: 0\n"
    f'    max: {MODE_BATTERY_MAX_W}\n    step: 100\n    initial: 0\n    unit_of_measurement: "W"\n    mode: box'
)


HOME_OPTIONS: dict[str, Any] = {"pv_forecast_sensor": PV_FORECAST_SENSOR, "battery_control": "automatic"}


# The options flow's "tariff" step: a Flemish-style capacity tariff (EUR per kW of the month's highest 15-minute
# import, at least 2.5 kW billed) on a three-phase 3 x 25 A, 230 V connection (5.75 kW per phase).
TARIFF_OPTIONS: dict[str, Any] = {"capacity_price": 3.37, "capacity_min_kw": 2.5, "phase_count": "3",
                                  "phase_current_a": 25, "nominal_voltage": 230}


HOME_KEYS = {"pv_kw", "load_kw", "battery_kw", "soc_pct", "import_kw", "export_kw", "curtail_kw",
             "l1_kw", "l2_kw", "l3_kw"}


# The grid toolkit's twelve callable tools (the thirteenth, generate_audit_record, runs inside every call).
TOOL_SERVICES = (
    "inspect_grid_state", "retrieve_asset", "run_power_flow", "run_contingency", "run_forecast", "simulate_action",
    "calculate_flexibility", "optimize_dispatch", "validate_constraints", "request_authorization",
    "generate_explanation", "create_incident",
)


# The config flow's answers, step by step (step_id -> user input).
CONFIG_FLOW_STEPS: dict[str, dict[str, Any]] = {
    "user": {"price_source": "sample"},
    "settings": {"markup": 0.0, "vat_percent": 0.0, "grid_fee": 0.0, "vat_on_negative": True, "power_limit_kw": 11.0},
}


# The appliance subentries. A deadline at or before the earliest start is on the next day, and each window is the next
# one that can still hold the run, so every window lies within the sample prices (local today and tomorrow) whenever
# the demo runs: "ready by 07:00" = any time in the 24 h before the next 07:00, starting now.
EV_CHARGER_STEP: dict[str, Any] = {
    "charger_current_entity": "input_number.ev_charger_current",
    "charger_unit": "A",
    "charger_phases": "3",
    "charger_min_a": 6,
    "charger_step_a": 1,
    "charger_voltage_v": 230,
    "charger_phase_entity": "input_select.ev_charger_phases",
    "charger_phase_one": "1-phase",
    "charger_phase_three": "3-phase",
    "charger_phase_interval_min": 15,
}


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
        # the charger step (wallbox shapes: a unitless 6..16 A current number, the stand-in as its pause/resume
        # switch; a phase select): the plan's power becomes the current and the phases at each slot, through the gates
        **EV_CHARGER_STEP,
    },
]


# The EV charger's control profile: its helpers in grid_yaml, checked in show_entities.
EV_CURRENT = "input_number.ev_charger_current"


EV_PHASES = "input_select.ev_charger_phases"


# The Lovelace dashboard with the four cards. ``frontend:`` loads ``lovelace`` in its default storage mode,
# which is what storage dashboards need; no ``lovelace:`` section is written.
DASHBOARD_URL_PATH = "energy-plan"


DASHBOARD_TITLE = "Energy plan"


BUNDLE_URL = f"/{DOMAIN}_frontend/agentic-hems-cards.js"  # custom_components/agentic_hems/cards/frontend.py


CARDS = ("agentic-hems-schedule-card", "agentic-hems-trace-card", "agentic-hems-ask-card", "agentic-hems-runs-card")


DASHBOARD_CONFIG: dict[str, Any] = {
    "title": DASHBOARD_TITLE,
    "views": [{"title": DASHBOARD_TITLE, "path": "plan", "cards": [
        {"type": f"custom:{card}", **({"max_decisions": 20} if card.endswith("trace-card") else {})} for card in CARDS
    ]}],
}


# The integration's brand images (custom_components/agentic_hems/brand/, drawn by scripts/make_brand.py), served by HA's
# brands integration at /api/brands/integration/agentic_hems/<image>: name -> side in pixels.
BRAND_IMAGES = {"icon.png": 256, "icon@2x.png": 512}


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

{http}
# A small, fast set instead of default_config: the UI, the REST and websocket APIs, and the stand-ins.
{frontend}
config:
api:
# history needs the recorder anyway; committing every second gives run_forecast a (short) history to read.
recorder:
  commit_interval: 1
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

{grid}"""


# A log record starts with a timestamp; the rest of its lines are a traceback.
RECORD_START = re.compile(r"^\d{4}-\d\d-\d\d \d\d:\d\d:\d\d")


# Known-harmless records: the integrations onboarding starts by itself (radio_browser, met, google_translate), and the
# core components HA 2026 sets up by itself whose packages are absent under --skip-pip (ffmpeg, camera's turbojpeg;
# infrared and radio_frequency only when scripts/bootstrap could not install theirs, which the demo then notes) with
# those that depend on them (tts, assist_pipeline, ai_task, image_processing, ...).
# A record that names agentic_hems ('agentic_hems', or a custom_components path or logger) is never noise.
KNOWN_NOISE = re.compile(
    r"components/(radio_browser|met|google_translate)/|integration (radio_browser|met|google_translate):"
    r"|for google_translate$"
    r"|camera\.img_util\] Error loading libturbojpeg"
    r"|\[homeassistant\.setup\] (Setup failed for '\w+': (Unable to import component: No module named"
    r"|Could not setup dependencies)|Unable to set up dependencies of '\w+')",
    re.MULTILINE,
)


# Times the services write in UTC: ISO 8601 (gate reasons), "01.12.2026 17:45 UTC", "17:45–18:00 UTC", "17:45 UTC"
# (the grid explanations, which know no time zone).
ISO_UTC = re.compile(r"\d{4}-\d\d-\d\dT\d\d:\d\d(?::\d\d(?:\.\d+)?)?(?:\+00:00|Z)")


DATE_UTC = re.compile(r"(\d\d)\.(\d\d)\.(\d{4}) (\d\d):(\d\d) UTC")


CLOCK_UTC = re.compile(r"(\d\d:\d\d)(?:([–-])(\d\d:\d\d))? UTC")
