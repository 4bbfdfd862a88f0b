"""The demo's fixed names and YAML: the home, its stand-ins, meters, heat pump and SG Ready relays."""

from __future__ import annotations

from datetime import timedelta
from pathlib import Path
from typing import Any

try:
    import aiohttp
except ModuleNotFoundError:  # only for `--help`, which scripts/demo prints with any python3 before it builds the venv
    aiohttp = None  # type: ignore[assignment]



ROOT = Path(__file__).resolve().parents[2]


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
    "heat_pump_compressor": "Heat pump compressor",  # the thermostat's heater (the simulated house's heat pump)
    "sg_contact_1": "SG Ready contact 1",  # the outputs of the tank's SG Ready relays (SG_READY_YAML)
    "sg_contact_2": "SG Ready contact 2",
}


# A garage-door template cover (device class garage, risk 4): opening it needs an administrator's confirmation.
GARAGE_DOOR = "cover.garage_door"


ASK_REQUEST = "Schedule all flexible loads"


# How long the garage door's command waits for an administrator (the integration's default is 10 min, which often
# ends before a new user has the browser open); set in the options flow's "control" step.
CONFIRM_MINUTES = 120


# What each gate outcome means, in the terminal's words.
OUTCOME_WORDS = {
    "dry_run": "dry run, not executed",
    "executed": "executed",
    "pending_confirmation": "waits for an administrator's confirmation, not executed yet",
    "blocked": "blocked, not executed",
}


# The template integration's own YAML (HA 2026 rejects `platform: template` under cover:); one item of the
# configuration's single `template:` list, beside the meters' template sensors. default_entity_id pins the entity id.
COVER_TEMPLATE_YAML = """\
  - cover:
      - name: Garage door
        default_entity_id: cover.garage_door
        device_class: garage
        state: "{{ is_state('input_boolean.garage_motor', 'on') }}"
        open_cover:
          action: input_boolean.turn_on
          target:
            entity_id: input_boolean.garage_motor
        close_cover:
          action: input_boolean.turn_off
          target:
            entity_id: input_boolean.garage_motor
"""


# The grid toolkit's home twin: input_number stand-ins for the meters, exposed as template sensors (the
# options' measurement selectors take sensors), and the battery's setpoint (kW, positive = charging) the approved grid
# plan sets through the gates. Values: 2 kW import, 3 kW PV, the battery charging at 1 kW at 50 %; so the house draws
# 2 - (-3) - 1 = 4 kW. (object id -> name, unit, min, max, step, initial value, sensor device class)
METERS: dict[str, tuple[str, str, float, float, float, float, str]] = {
    "grid_power": ("Grid power", "W", -20000, 20000, 1, 2000, "power"),
    "pv_power": ("PV power", "kW", 0, 10, 0.01, 3.0, "power"),
    "battery_power": ("Battery power", "kW", -5, 5, 0.01, 1.0, "power"),
    "battery_soc": ("Battery SoC", "%", 0, 100, 1, 50, "battery"),
    "house_power": ("House power", "kW", 0, 20, 0.01, 4.0, "power"),
}


BATTERY_SETPOINT = "input_number.battery_setpoint"


CASE = "case9"  # tests/fixtures/grid/case9.m, copied to <config>/agentic_hems/networks/ (network_id = file stem)


CASE_SOURCE = ROOT / "tests" / "fixtures" / "grid" / f"{CASE}.m"


# The options flow's "grid" step (the other steps keep their current values).
GRID_OPTIONS: dict[str, Any] = {
    "pv_peak_kw": 8.0,
    "battery_capacity_kwh": 10.0,
    "battery_power_kw": 5.0,
    "grid_power_entity": "sensor.grid_power",
    "house_power_entity": "sensor.house_power",
    "pv_power_entity": "sensor.pv_power",
    "battery_power_entity": "sensor.battery_power",
    "battery_soc_entity": "sensor.battery_soc",
    "battery_setpoint_entity": BATTERY_SETPOINT,
}


# The simulated house (heat pump): its indoor temperature and the heat pump's electrical power as input_number
# stand-ins read by template sensors (like METERS), a template weather entity whose hourly forecast is a mild
# December day (CURRENT_OUTDOOR_C +- 3 K, coldest at 05:00), and a generic thermostat (climate.heat_pump) switching the
# compressor stand-in on the indoor sensor. The driver moves the indoor temperature every 20 s by the first-order
# model below (while HA runs) and adds the heat pump through the real subentry form.
HOUSE_METERS: dict[str, tuple[str, str, float, float, float, float, str]] = {
    "indoor_temperature": ("Indoor temperature", "°C", 0, 40, 0.01, 20.5, "temperature"),
    "heat_pump_power": ("Heat pump power", "kW", 0, 10, 0.01, 0.0, "power"),
    "inverter_battery_soc": ("Inverter battery SoC", "%", 0, 100, 1, 60, "battery"),
    "tank_temperature": ("Tank temperature", "°C", 0, 90, 0.1, 44.0, "temperature"),  # the SG Ready tank, below its band: it runs now
}


WEATHER = "weather.house"


HEAT_PUMP_CLIMATE = "climate.heat_pump"


HOUSE_UA_KW_PER_K, HOUSE_C_KWH_PER_K, HOUSE_HP_KW = 0.15, 8.0, 2.0  # the simulated house and heat pump


HOUSE_STEP_S = 20  # the simulation's step


COP_POINTS = ((-7.0, 2.5), (7.0, 4.0))


OUTDOOR_MEAN_C, OUTDOOR_SWING_C = 4.0, 3.0


OUTDOOR_TEMPLATE = "({m} - {a} * cos(pi * ((h - 5) % 24) / 12)) | round(1)".format(m=OUTDOOR_MEAN_C, a=OUTDOOR_SWING_C)


WEATHER_YAML = f"""\
  - weather:
      - name: House
        default_entity_id: {WEATHER}
        condition: cloudy
        humidity: "80"
        temperature: >-
          {{% set h = now().hour + now().minute / 60 %}}{{{{ {OUTDOOR_TEMPLATE} }}}}
        forecast_hourly: >-
          {{% set ns = namespace(items=[]) %}}{{% set start = now().replace(minute=0, second=0, microsecond=0) %}}
          {{% for i in range(48) %}}{{% set t = start + timedelta(hours=i) %}}{{% set h = t.hour %}}
          {{% set ns.items = ns.items + [{{'datetime': t.isoformat(), 'condition': 'cloudy',
          'temperature': {OUTDOOR_TEMPLATE}}}] %}}{{% endfor %}}{{{{ ns.items }}}}
"""


# A switch no device of the demo controls (an optimistic template switch: it keeps the state it is set to), for the
# forms that need a free control entity (tests/browser's "Add heat pump").
FREE_SWITCH = "switch.hot_water_boost"


FREE_SWITCH_YAML = f"""\
  - switch:
      - name: Hot water boost
        default_entity_id: {FREE_SWITCH}
"""


CLIMATE_YAML = """\
climate:
  - platform: generic_thermostat
    name: Heat pump
    unique_id: demo_heat_pump
    heater: input_boolean.heat_pump_compressor
    target_sensor: sensor.indoor_temperature
    min_temp: 15
    max_temp: 25
    target_temp: 20
    target_temp_step: 0.5
    cold_tolerance: 0.1
    hot_tolerance: 0.1
    initial_hvac_mode: heat
"""


HEAT_PUMP_SUBENTRY: dict[str, Any] = {  # the two steps of "Add heat pump"
    "name": "Heat pump", "store": "space_heating", "control_entity": HEAT_PUMP_CLIMATE,
    "temperature_entity": "sensor.indoor_temperature", "weather_entity": WEATHER,
    "power_entity": "sensor.heat_pump_power", "min_kw": 0.0, "max_kw": HOUSE_HP_KW, "min_run_min": 30,
    "min_off_min": 15, "day_start": "06:00:00", "day_end": "22:00:00", "day_low_c": 20.0, "day_high_c": 22.0,
    "night_low_c": 17.0, "night_high_c": 22.0, "phase": "three-phase",
    "cop_mode": "points", "cop_outdoor_1": COP_POINTS[0][0], "cop_1": COP_POINTS[0][1],
    "cop_outdoor_2": COP_POINTS[1][0], "cop_2": COP_POINTS[1][1], "thermal_model": "manual",
    "ua_w_per_k": HOUSE_UA_KW_PER_K * 1000, "capacity_kwh_per_k": HOUSE_C_KWH_PER_K,
}


HEAT_KEYS = {"heat_pump_planned_power", "heat_pump_planned_temperature"}


# A hot-water heat pump behind SG Ready: two relays (template switches on the sg_contact stand-ins, named like the
# Shelly relays wired to its terminals) and a ViCare-shaped setpoint offset (a number in °C, -13..40, step 1) on an
# input_number; the tank's temperature is a stand-in (HOUSE_METERS). Added through the heat pump form's SG Ready
# section; after device control is on, a replan (plan_home) drives the relays for the current slot through the gates.
SG_RELAYS = ("switch.sg_ready_relay_1", "switch.sg_ready_relay_2")


SG_OFFSET = "number.hot_water_offset"


SG_READY_YAML = "".join(
    f"""\
  - switch:
      - name: SG Ready relay {n}
        default_entity_id: {SG_RELAYS[n - 1]}
        state: "{{{{ is_state('input_boolean.sg_contact_{n}', 'on') }}}}"
        turn_on:
          action: input_boolean.turn_on
          target:
            entity_id: input_boolean.sg_contact_{n}
        turn_off:
          action: input_boolean.turn_off
          target:
            entity_id: input_boolean.sg_contact_{n}
"""
    for n in (1, 2)
) + f"""\
  - number:
      - name: Hot water offset
        default_entity_id: {SG_OFFSET}
        state: "{{{{ states('input_number.hot_water_offset_value') | float(0) }}}}"
        set_value:
          action: input_number.set_value
          target:
            entity_id: input_number.hot_water_offset_value
          data:
            value: "{{{{ value }}}}"
        min: -13
        max: 40
        step: 1
        unit_of_measurement: "°C"
"""


SG_TANK_SUBENTRY: dict[str, Any] = {  # "Add heat pump" for a hot-water tank with the SG Ready section
    "name": "Hot water tank", "store": "hot_water", "control_entity": SG_RELAYS[0],
    "temperature_entity": "sensor.tank_temperature", "weather_entity": WEATHER, "min_kw": 0.0, "max_kw": 1.5,
    "min_run_min": 30, "min_off_min": 15, "day_start": "06:00:00", "day_end": "22:00:00", "day_low_c": 45.0,
    "day_high_c": 55.0, "night_low_c": 45.0, "night_high_c": 55.0, "phase": "L1", "room_temp_c": 18.0,
    "hot_water_kwh": 4.0, "hot_water_hours": ["7", "19"],
    "sg_ready": {"sg_contact_2_entity": SG_RELAYS[1], "sg_offset_entity": SG_OFFSET, "sg_offset_k": 3,
                 "sg_forced": False, "sg_max_block_min": 120},
    "cop_mode": "carnot", "carnot_fraction": 0.4, "flow_temp_c": 55, "thermal_model": "manual",
    "ua_w_per_k": 2.0, "capacity_kwh_per_k": 0.2,
}
