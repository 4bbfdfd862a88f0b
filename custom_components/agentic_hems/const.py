"""Constants shared by the Home Assistant shell."""

from __future__ import annotations

import logging
from typing import Final

from homeassistant.const import Platform

DOMAIN: Final = "agentic_hems"
LOGGER = logging.getLogger(__package__)

PLATFORMS: Final = [Platform.BINARY_SENSOR, Platform.CONVERSATION, Platform.SENSOR, Platform.SWITCH, Platform.TIME]

# Config entry data (the price source).
CONF_PRICE_SOURCE: Final = "price_source"
CONF_BIDDING_ZONE: Final = "bidding_zone"
CONF_NORDPOOL_ENTRY: Final = "nordpool_entry"
CONF_AREA: Final = "area"
CONF_PRICE_ENTITY: Final = "price_entity"

SOURCE_SAMPLE: Final = "sample"
SOURCE_ENTSOE: Final = "entsoe"
SOURCE_NORDPOOL: Final = "nordpool"
SOURCE_SENSOR: Final = "sensor"
PRICE_SOURCES: Final = [SOURCE_SAMPLE, SOURCE_ENTSOE, SOURCE_NORDPOOL, SOURCE_SENSOR]

# Config entry options (the price formula and the household).
CONF_MARKUP: Final = "markup"
CONF_VAT_PERCENT: Final = "vat_percent"
CONF_GRID_FEE: Final = "grid_fee"
CONF_VAT_ON_NEGATIVE: Final = "vat_on_negative"
CONF_POWER_LIMIT_KW: Final = "power_limit_kw"
DEFAULT_OPTIONS: Final = {
    CONF_MARKUP: 0.0,
    CONF_VAT_PERCENT: 0.0,
    CONF_GRID_FEE: 0.0,
    CONF_VAT_ON_NEGATIVE: True,
    CONF_POWER_LIMIT_KW: 11.0,
}

# Config entry options (device control: the gatekeeper's settings).
CONF_WAIT_S: Final = "execution_wait_s"
CONF_CONFIRM_MINUTES: Final = "confirmation_minutes"
CONF_INCLUDE_APPLIANCES: Final = "include_appliances"
CONF_NOTIFY_SERVICE: Final = "notify_service"
CONF_POLICY_RULES: Final = "policy_rules"
# Entities hidden from Assist that the gates may still target (the Assist exposure repair adds them); optional.
CONF_GATED_ENTITIES: Final = "gated_entities"
DEFAULT_CONTROL_OPTIONS: Final = {
    CONF_WAIT_S: 10.0,
    CONF_CONFIRM_MINUTES: 10.0,
    CONF_INCLUDE_APPLIANCES: True,
    CONF_POLICY_RULES: [],
}
# Config entry options (the assistant: the model provider, the calendar, limits and costs).
CONF_ASK_DAILY: Final = "ask_daily_limit"
CONF_ASK_HOURLY: Final = "ask_hourly_limit"
CONF_ASK_PER_MINUTE: Final = "ask_per_user_minute_limit"
CONF_CALENDAR_ENTITY: Final = "calendar_entity"
CONF_CALENDAR_KEYWORD: Final = "calendar_keyword"
CONF_SHARE_CALENDAR_TITLES: Final = "share_calendar_titles"
CONF_LLM_BASE_URL: Final = "llm_base_url"  # entry data
CONF_LLM_API_KEY: Final = "llm_api_key"  # entry data: reauth replaces it
CONF_LLM_MODEL: Final = "llm_model"
CONF_LLM_PRICE_INPUT: Final = "llm_price_input"  # per million prompt tokens
CONF_LLM_PRICE_OUTPUT: Final = "llm_price_output"  # per million completion tokens
CONF_DAILY_COST_CAP: Final = "daily_cost_cap"
REAUTH_LLM: Final = "llm"  # reauth flow data: the model provider's key, not ENTSO-E's
DEFAULT_ASSISTANT_OPTIONS: Final = {
    CONF_ASK_DAILY: 200,
    CONF_ASK_HOURLY: 50,
    CONF_ASK_PER_MINUTE: 20,
    CONF_CALENDAR_KEYWORD: "car",
    CONF_SHARE_CALENDAR_TITLES: False,
    CONF_LLM_PRICE_INPUT: 0.0,
    CONF_LLM_PRICE_OUTPUT: 0.0,
    CONF_DAILY_COST_CAP: 1.0,
}
EVENT_GATE_DECISION: Final = "agentic_hems_gate_decision"
EVENT_RUN_STEP: Final = "agentic_hems_run_step"
EVENT_RUN_FINISHED: Final = "agentic_hems_run_finished"
MAX_TRACES: Final = 500

# Appliance subentries.
SUBENTRY_APPLIANCE: Final = "appliance"
CONF_KIND: Final = "kind"
CONF_POWER_KW: Final = "power_kw"
CONF_DURATION_MIN: Final = "duration_min"
CONF_ENERGY_KWH: Final = "energy_kwh"
CONF_CONTIGUOUS: Final = "contiguous"
CONF_EARLIEST_START: Final = "earliest_start"
CONF_DEADLINE: Final = "deadline"
# An appliance's program profile: the option of its program select, its start button, remote start and operation state.
CONF_PROGRAM: Final = "program"
CONF_START_ENTITY: Final = "start_entity"
CONF_REMOTE_START_ENTITY: Final = "remote_start_entity"
CONF_OPERATION_ENTITY: Final = "operation_entity"
# How a program appliance is started: its select and start button, or home_connect's start action; and whether the
# appliance's own delayed start (home_connect's "start in" option, or a "start in" number) is set once ahead.
CONF_PROGRAM_START: Final = "program_start"
PROGRAM_START_BUTTON: Final = "button"
PROGRAM_START_HOME_CONNECT: Final = "home_connect"
CONF_HOME_CONNECT_DEVICE: Final = "home_connect_device"
CONF_DELAYED_START: Final = "delayed_start"
CONF_DELAY_ENTITY: Final = "delay_entity"
APPLIANCE_KINDS: Final = ["dishwasher", "washing_machine", "ev_charger", "heat_pump", "battery", "generic"]

# ENTSO-E publishes day-ahead results around 12:45-13:00 Europe/Brussels.
PUBLICATION_TZ: Final = "Europe/Brussels"
PUBLICATION_HOUR: Final = 12
PUBLICATION_MINUTE: Final = 45
FETCH_TIMEOUT_S: Final = 120.0
VALIDATE_TIMEOUT_S: Final = 30.0
BACKOFF_MIN: Final = (5, 10, 20, 40, 60)

STORAGE_VERSION: Final = 1

ATTR_CONFIG_ENTRY_ID: Final = "config_entry_id"
ATTR_APPLIANCE: Final = "appliance"

# Config entry options (the grid toolkit): the home twin's assets, measurements and tool scopes.
CONF_PV_PEAK_KW: Final = "pv_peak_kw"
CONF_BATTERY_CAPACITY_KWH: Final = "battery_capacity_kwh"
CONF_BATTERY_POWER_KW: Final = "battery_power_kw"
CONF_GRID_SIMULATE_USERS: Final = "grid_simulate_users"
CONF_GRID_REQUEST_USERS: Final = "grid_request_users"
CONF_GRID_INCIDENT_USERS: Final = "grid_incident_users"
MEASUREMENT_OPTIONS: Final = {  # home twin ``asset.quantity`` -> option holding the HA entity
    "grid.power": "grid_power_entity",
    "house.power": "house_power_entity",
    "pv.power": "pv_power_entity",
    "battery.power": "battery_power_entity",
    "battery.soc": "battery_soc_entity",
    "battery.setpoint": "battery_setpoint_entity",
    "ev_charger.power": "ev_charger_power_entity",
    "heat_pump.power": "heat_pump_power_entity",
}

# The whole-home plan: battery subentries and the entry options it reads (planning.home_config).
SUBENTRY_BATTERY: Final = "battery"
CONF_BATTERY_NAME: Final = "name"
CONF_CAPACITY_KWH: Final = "capacity_kwh"
CONF_SOC_MIN_PCT: Final = "soc_min_pct"
CONF_SOC_MAX_PCT: Final = "soc_max_pct"
CONF_RESERVE_PCT: Final = "reserve_pct"
CONF_CHARGE_KW: Final = "charge_kw"
CONF_DISCHARGE_KW: Final = "discharge_kw"
CONF_CHARGE_EFFICIENCY: Final = "charge_efficiency"
CONF_DISCHARGE_EFFICIENCY: Final = "discharge_efficiency"
CONF_WEAR_COST: Final = "wear_cost"
CONF_SOC_ENTITY: Final = "soc_entity"
CONF_CONTROL_ENTITY: Final = "control_entity"
CONF_CONTROL_MODES: Final = "control_modes"  # a select's options: {"charge": ..., "discharge": ..., "idle": ...}
CONF_POWER_SETPOINT: Final = "power_setpoint_entity"  # a mode select battery's power number (W or kW)
CONF_PV_FORECAST_ENTRIES: Final = "pv_forecast_entries"
CONF_PV_FORECAST_SENSOR: Final = "pv_forecast_sensor"
CONF_HOUSE_POWER_ENTITY: Final = "house_power_entity"
CONF_EXPORT_PRICE_MODE: Final = "export_price_mode"
CONF_EXPORT_FIXED_PRICE: Final = "export_fixed_price"
CONF_EXPORT_SPOT_FACTOR: Final = "export_spot_factor"
CONF_EXPORT_SPOT_FEE: Final = "export_spot_fee"
CONF_EXPORT_LIMIT_KW: Final = "export_limit_kw"
CONF_CURTAILMENT_ENTITY: Final = "curtailment_entity"
CONF_BATTERY_CONTROL: Final = "battery_control"
CONF_MPC_SOC_THRESHOLD_PCT: Final = "mpc_soc_threshold_pct"
CONF_MPC_PV_THRESHOLD_KW: Final = "mpc_pv_threshold_kw"
EXPORT_SPOT: Final = "spot"
EXPORT_FIXED: Final = "fixed"
BATTERY_AUTOMATIC: Final = "automatic"
BATTERY_APPROVAL: Final = "approval"

# The whole-home plan's heat pumps: subentries of type ``heat_pump`` (planning.home_config, flow.heat_pump).
SUBENTRY_HEAT_PUMP: Final = "heat_pump"
CONF_HEAT_STORE: Final = "store"  # what the heat pump heats: STORE_SPACE or STORE_HOT_WATER
STORE_SPACE: Final = "space_heating"
STORE_HOT_WATER: Final = "hot_water"
CONF_TEMPERATURE_ENTITY: Final = "temperature_entity"  # the indoor (or the tank's) temperature sensor
CONF_WEATHER_ENTITY: Final = "weather_entity"  # the outdoor forecast (weather.get_forecasts, hourly)
CONF_HEAT_POWER_ENTITY: Final = "power_entity"  # the heat pump's electrical power (for fitting, on/off times)
CONF_OUTDOOR_ENTITY: Final = "outdoor_entity"  # an outdoor temperature sensor (its recorded history, for fitting)
CONF_HEAT_MIN_KW: Final = "min_kw"
CONF_HEAT_MAX_KW: Final = "max_kw"
CONF_MIN_RUN_MIN: Final = "min_run_min"
CONF_MIN_OFF_MIN: Final = "min_off_min"
CONF_DAY_START: Final = "day_start"
CONF_DAY_END: Final = "day_end"
CONF_DAY_LOW_C: Final = "day_low_c"
CONF_DAY_HIGH_C: Final = "day_high_c"
CONF_NIGHT_LOW_C: Final = "night_low_c"
CONF_NIGHT_HIGH_C: Final = "night_high_c"
CONF_COP_MODE: Final = "cop_mode"  # COP_POINTS or COP_CARNOT
COP_POINTS: Final = "points"
COP_CARNOT: Final = "carnot"
CONF_COP_POINTS: Final = "cop_points"  # [[outdoor °C, COP], ...], 2 or 3 rated points
CONF_CARNOT_FRACTION: Final = "carnot_fraction"
CONF_FLOW_TEMP_C: Final = "flow_temp_c"
CONF_THERMAL_MODEL: Final = "thermal_model"  # MODEL_FIT or MODEL_MANUAL
MODEL_FIT: Final = "fit"
MODEL_MANUAL: Final = "manual"
CONF_UA_W_PER_K: Final = "ua_w_per_k"
CONF_CAPACITY_KWH_PER_K: Final = "capacity_kwh_per_k"
CONF_FIT_RMSE_C: Final = "fit_rmse_c"  # the fit's error when the model was fitted
CONF_GAINS_KW: Final = "gains_kw"  # space heating: constant internal gains (people, appliances), kW
CONF_SOLAR_GAIN: Final = "solar_gain"  # space heating: kW of heat per kW of PV production
CONF_SOLAR_ENTITY: Final = "solar_entity"  # a PV power sensor: the fit's solar input
CONF_ROOM_TEMP_C: Final = "room_temp_c"  # a hot-water tank's surroundings
CONF_HOT_WATER_KWH: Final = "hot_water_kwh"  # heat drawn per day from a tank
CONF_HOT_WATER_HOURS: Final = "hot_water_hours"  # local hours (0-23) the draw is spread over
# SG Ready (two relay contacts; contact 1 is the control entity): contact 2, an optional setpoint-offset number and
# its offset (K) in states 3/4, whether state 4 (forced) may be used, the longest block (min)
CONF_SG_CONTACT_2: Final = "sg_contact_2_entity"
CONF_SG_OFFSET_ENTITY: Final = "sg_offset_entity"
CONF_SG_OFFSET_K: Final = "sg_offset_k"
CONF_SG_FORCED: Final = "sg_forced"
CONF_SG_MAX_BLOCK_MIN: Final = "sg_max_block_min"
CONF_MPC_TEMP_THRESHOLD_C: Final = "mpc_temp_threshold_c"  # option: replan when a store's temperature departs
# Grid tariff and connection (options step "tariff"); the phase of an appliance, EV or battery subentry.
CONF_TARIFF_BANDS: Final = "tariff_bands"  # a band schedule (prices.tariffs.parse_schedule)
CONF_CAPACITY_PRICE: Final = "capacity_price"  # currency per kW of the month's peak, per month
CONF_CAPACITY_MIN_KW: Final = "capacity_min_kw"
CONF_IMPORT_POWER_ENTITY: Final = "import_power_entity"
CONF_HOLIDAY_CALENDAR: Final = "holiday_calendar"
CONF_PHASE_COUNT: Final = "phase_count"  # "1" or "3"
CONF_PHASE_CURRENT_A: Final = "phase_current_a"
CONF_NOMINAL_VOLTAGE: Final = "nominal_voltage"
CONF_PHASE: Final = "phase"
PHASES: Final = ("L1", "L2", "L3", "three-phase")
