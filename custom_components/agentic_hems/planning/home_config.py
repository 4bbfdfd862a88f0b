"""The whole-home plan's configuration: battery subentries (type ``battery``) and the entry options it reads.

:func:`home_config` reads them into a :class:`HomeConfig`. An invalid battery subentry is left out of the plan and an
invalid option falls back to its default; each raises the repair issue ``home_config_invalid_<id>`` (the subentry id,
or ``options``) with the error, which goes when it reads again. Nothing here raises on stored data.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
import math
from typing import TYPE_CHECKING, Any

from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir

from ..const import (
    BATTERY_APPROVAL,
    BATTERY_AUTOMATIC,
    CONF_BATTERY_CONTROL,
    CONF_BATTERY_NAME,
    CONF_CAPACITY_KWH,
    CONF_CAPACITY_MIN_KW,
    CONF_CAPACITY_PRICE,
    CONF_CHARGE_EFFICIENCY,
    CONF_CHARGE_KW,
    CONF_CONTROL_ENTITY,
    CONF_CONTROL_MODES,
    CONF_CURTAILMENT_ENTITY,
    CONF_DISCHARGE_EFFICIENCY,
    CONF_DISCHARGE_KW,
    CONF_EXPORT_FIXED_PRICE,
    CONF_EXPORT_LIMIT_KW,
    CONF_EXPORT_PRICE_MODE,
    CONF_EXPORT_SPOT_FACTOR,
    CONF_EXPORT_SPOT_FEE,
    CONF_HOLIDAY_CALENDAR,
    CONF_HOUSE_POWER_ENTITY,
    CONF_IMPORT_POWER_ENTITY,
    CONF_MPC_PV_THRESHOLD_KW,
    CONF_MPC_SOC_THRESHOLD_PCT,
    CONF_MPC_TEMP_THRESHOLD_C,
    CONF_NOMINAL_VOLTAGE,
    CONF_PHASE,
    CONF_PHASE_COUNT,
    CONF_PHASE_CURRENT_A,
    CONF_POWER_SETPOINT,
    CONF_PV_FORECAST_ENTRIES,
    CONF_PV_FORECAST_SENSOR,
    CONF_RESERVE_PCT,
    CONF_SOC_ENTITY,
    CONF_SOC_MAX_PCT,
    CONF_SOC_MIN_PCT,
    CONF_TARIFF_BANDS,
    CONF_WEAR_COST,
    DOMAIN,
    EXPORT_FIXED,
    EXPORT_SPOT,
    PHASES,
    SUBENTRY_APPLIANCE,
    SUBENTRY_BATTERY,
)
from ..prices.tariffs import BandSchedule, parse_schedule
from ..scheduling.home_model import HomeBattery
from ..validation import describe, vol
from .config_issues import report_invalid as _report
from .heat_config import HeatPumpConfig, heat_pump_configs

if TYPE_CHECKING:
    from ..runtime import AgenticHemsConfigEntry
MODES = ("charge", "discharge", "idle")
_PCT = vol.All(vol.Coerce(float), vol.Range(min=0, max=100))
_POSITIVE = vol.All(vol.Coerce(float), vol.Range(min=0, min_included=False))
_EFFICIENCY = vol.All(vol.Coerce(float), vol.Range(min=0, max=1, min_included=False))
_ENTITY = vol.Any(None, vol.All(str, vol.Match(r"^[a-z_]+\.[a-z0-9_]+$")))
_CONTROL = vol.Any(None, vol.All(str, vol.Match(r"^(number|input_number|select|input_select)\.[a-z0-9_]+$")))
_LIMIT = vol.Any(None, vol.All(str, vol.Match(r"^(number|input_number)\.[a-z0-9_]+$")))  # a PV power limit

BATTERY_SCHEMA = vol.Schema(
    {
        vol.Required(CONF_BATTERY_NAME): vol.All(str, vol.Length(min=1)),
        vol.Required(CONF_CAPACITY_KWH): _POSITIVE,
        vol.Optional(CONF_SOC_MIN_PCT, default=0.0): _PCT,
        vol.Optional(CONF_SOC_MAX_PCT, default=100.0): _PCT,
        vol.Optional(CONF_RESERVE_PCT, default=0.0): _PCT,
        vol.Required(CONF_CHARGE_KW): _POSITIVE,
        vol.Required(CONF_DISCHARGE_KW): _POSITIVE,
        vol.Optional(CONF_CHARGE_EFFICIENCY, default=0.95): _EFFICIENCY,
        vol.Optional(CONF_DISCHARGE_EFFICIENCY, default=0.95): _EFFICIENCY,
        vol.Optional(CONF_WEAR_COST, default=0.0): vol.All(vol.Coerce(float), vol.Range(min=0)),
        vol.Required(CONF_SOC_ENTITY): _ENTITY,
        vol.Optional(CONF_CONTROL_ENTITY, default=None): _CONTROL,
        vol.Optional(CONF_CONTROL_MODES, default=dict): {vol.Optional(mode): str for mode in MODES},
        vol.Optional(CONF_POWER_SETPOINT): _LIMIT,
        vol.Optional(CONF_PHASE): vol.In(PHASES),
    },
    extra=vol.ALLOW_EXTRA,
)

OPTION_DEFAULTS: dict[str, Any] = {
    CONF_PV_FORECAST_ENTRIES: [],
    CONF_PV_FORECAST_SENSOR: None,
    CONF_HOUSE_POWER_ENTITY: None,
    CONF_EXPORT_PRICE_MODE: EXPORT_FIXED,
    CONF_EXPORT_FIXED_PRICE: 0.0,
    CONF_EXPORT_SPOT_FACTOR: 1.0,
    CONF_EXPORT_SPOT_FEE: 0.0,
    CONF_EXPORT_LIMIT_KW: None,
    CONF_CURTAILMENT_ENTITY: None,
    CONF_BATTERY_CONTROL: BATTERY_APPROVAL,
    CONF_MPC_SOC_THRESHOLD_PCT: 5.0,
    CONF_MPC_PV_THRESHOLD_KW: 0.5,
    CONF_MPC_TEMP_THRESHOLD_C: 1.0,
}
_FLOAT = vol.All(vol.Coerce(float), vol.Range(min=-1e6, max=1e6))
OPTION_SCHEMAS: dict[str, Any] = {
    CONF_PV_FORECAST_ENTRIES: [str],
    CONF_PV_FORECAST_SENSOR: _ENTITY,
    CONF_HOUSE_POWER_ENTITY: _ENTITY,
    CONF_EXPORT_PRICE_MODE: vol.In((EXPORT_SPOT, EXPORT_FIXED)),
    CONF_EXPORT_FIXED_PRICE: _FLOAT,
    CONF_EXPORT_SPOT_FACTOR: _FLOAT,
    CONF_EXPORT_SPOT_FEE: _FLOAT,
    CONF_EXPORT_LIMIT_KW: vol.Any(None, vol.All(vol.Coerce(float), vol.Range(min=0))),
    CONF_CURTAILMENT_ENTITY: _LIMIT,
    CONF_BATTERY_CONTROL: vol.In((BATTERY_AUTOMATIC, BATTERY_APPROVAL)),
    CONF_MPC_SOC_THRESHOLD_PCT: vol.All(vol.Coerce(float), vol.Range(min=0, max=100, min_included=False)),
    CONF_MPC_PV_THRESHOLD_KW: _POSITIVE,
    CONF_MPC_TEMP_THRESHOLD_C: _POSITIVE,
}


@dataclass(frozen=True, kw_only=True)
class BatteryConfig:
    """One battery subentry: the :class:`HomeBattery` limits plus where its SoC is read and its power is set.

    ``control_entity`` is a number/input_number (setpoint in kW, positive charging) or a select/input_select whose options
    ``control_modes`` names per mode (charge, discharge, idle); None when the plan only shows the battery.
    """

    subentry_id: str
    name: str
    capacity_kwh: float
    charge_kw: float
    discharge_kw: float
    soc_min_pct: float
    soc_max_pct: float
    reserve_pct: float
    charge_efficiency: float
    discharge_efficiency: float
    wear_cost: float
    soc_entity: str | None
    control_entity: str | None
    control_modes: Mapping[str, str] = field(default_factory=dict)
    phase: str = "three-phase"
    power_setpoint: str | None = None  # a select battery's power number (W or kW), set after its mode (.home_exec)

    def battery(self, soc_pct: float) -> HomeBattery:
        """Return the plan's battery at the measured state of charge (percent, clamped to 0-100)."""
        return HomeBattery(
            name=self.subentry_id,
            capacity_kwh=self.capacity_kwh,
            charge_kw=self.charge_kw,
            discharge_kw=self.discharge_kw,
            initial_soc_pct=min(max(soc_pct, 0.0), 100.0),
            soc_min_pct=self.soc_min_pct,
            soc_max_pct=self.soc_max_pct,
            reserve_pct=self.reserve_pct,
            charge_efficiency=self.charge_efficiency,
            discharge_efficiency=self.discharge_efficiency,
            wear_cost=self.wear_cost,
        )


@dataclass(frozen=True, kw_only=True)
class HomeConfig:
    """The whole-home plan's settings; ``export_limit_kw`` is math.inf for no limit.

    ``curtailment_entity`` is a number/input_number limiting the inverter's PV power (W or kW, its ``max`` meaning no
    limit); when set, the plan may curtail PV and sets it to each slot's planned PV production.
    """

    batteries: tuple[BatteryConfig, ...] = ()
    pv_forecast_entries: tuple[str, ...] = ()
    pv_forecast_sensor: str | None = None
    house_power_entity: str | None = None
    export_price_mode: str = EXPORT_FIXED
    export_fixed_price: float = 0.0
    export_spot_factor: float = 1.0
    export_spot_fee: float = 0.0
    export_limit_kw: float = math.inf
    curtailment_entity: str | None = None
    battery_control: str = BATTERY_APPROVAL
    mpc_soc_threshold_pct: float = 5.0
    mpc_pv_threshold_kw: float = 0.5
    heat_pumps: tuple[HeatPumpConfig, ...] = ()
    mpc_temp_threshold_c: float = 1.0
    tariff: BandSchedule | None = None  # network fee bands
    capacity_price: float = 0.0  # currency per kW of the month's peak, per month
    capacity_min_kw: float = 0.0  # the capacity tariff's minimum billed peak
    import_power_entity: str | None = None  # grid import power, for the month's peak so far
    holiday_calendar: str | None = None  # calendar of public holidays (counted as Sundays where the bands say so)
    phase_count: int = 3
    phase_current_a: float | None = None  # current limit per phase; None: no phase limits
    nominal_voltage: float = 230.0
    device_phases: Mapping[str, str] = field(default_factory=dict)  # subentry id -> "L1".."L3" or "three-phase"

    @property
    def active(self) -> bool:
        """True when the entry has a battery, a heat pump or names a PV forecast: the whole-home plan runs."""
        return bool(self.batteries or self.heat_pumps or self.pv_forecast_entries or self.pv_forecast_sensor)

    def control_entities(self) -> frozenset[str]:
        """Return what the plan's commands set: the batteries' and heat pumps' control entities and the PV limit."""
        limit = {self.curtailment_entity} if self.curtailment_entity else set()
        heat = {e for h in self.heat_pumps for e in h.entities() if e}
        return frozenset({e for b in self.batteries for e in (b.control_entity, b.power_setpoint) if e} | heat | limit)


def parse_battery(subentry_id: str, data: Mapping[str, Any]) -> BatteryConfig:
    """Return the battery of a subentry's data; raises vol.Invalid (a bad value) or ValueError (soc min > max)."""
    valid = BATTERY_SCHEMA(dict(data))
    if valid[CONF_SOC_MIN_PCT] > valid[CONF_SOC_MAX_PCT]:
        raise ValueError("soc_min_pct is above soc_max_pct")
    is_select = str(valid[CONF_CONTROL_ENTITY]).startswith(("select.", "input_select."))
    if is_select and not valid[CONF_CONTROL_MODES]:
        raise ValueError("a select control entity needs control_modes")
    if valid.get(CONF_POWER_SETPOINT) and not is_select:
        raise ValueError("a power setpoint entity needs a mode select as the control entity")
    return BatteryConfig(
        subentry_id=subentry_id,
        name=valid[CONF_BATTERY_NAME],
        capacity_kwh=valid[CONF_CAPACITY_KWH],
        charge_kw=valid[CONF_CHARGE_KW],
        discharge_kw=valid[CONF_DISCHARGE_KW],
        soc_min_pct=valid[CONF_SOC_MIN_PCT],
        soc_max_pct=valid[CONF_SOC_MAX_PCT],
        reserve_pct=valid[CONF_RESERVE_PCT],
        charge_efficiency=valid[CONF_CHARGE_EFFICIENCY],
        discharge_efficiency=valid[CONF_DISCHARGE_EFFICIENCY],
        wear_cost=valid[CONF_WEAR_COST],
        soc_entity=valid[CONF_SOC_ENTITY],
        control_entity=valid[CONF_CONTROL_ENTITY],
        control_modes=dict(valid[CONF_CONTROL_MODES]),
        phase=valid.get(CONF_PHASE, "three-phase"),
        power_setpoint=valid.get(CONF_POWER_SETPOINT),
    )


def parse_options(options: Mapping[str, Any]) -> tuple[dict[str, Any], list[str]]:
    """Return the home options (each bad or missing one at its default) and an English error per bad one."""
    values, errors = dict(OPTION_DEFAULTS), []
    for key, schema in OPTION_SCHEMAS.items():
        if options.get(key) is None:
            continue
        try:
            values[key] = vol.Schema(schema)(options[key])
        except vol.Invalid as err:
            errors.append(f"{key}: {describe(err)}")
    return values, errors


def home_config(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> HomeConfig:
    """Return the entry's whole-home settings; what does not validate is reported (see the module docstring)."""
    batteries = []
    for subentry_id, subentry in entry.subentries.items():
        if subentry.subentry_type != SUBENTRY_BATTERY:
            continue
        try:
            batteries.append(parse_battery(subentry_id, subentry.data))
        except (vol.Invalid, ValueError) as err:
            _report(hass, subentry_id, subentry.title, describe(err) if isinstance(err, vol.Invalid) else str(err))
        else:
            ir.async_delete_issue(hass, DOMAIN, f"home_config_invalid_{subentry_id}")
    values, errors = parse_options(entry.options)
    if errors:
        _report(hass, "options", entry.title, "; ".join(errors))
    else:
        ir.async_delete_issue(hass, DOMAIN, "home_config_invalid_options")
    limit = values[CONF_EXPORT_LIMIT_KW]
    fees, connection = grid_settings(hass, entry)
    heat_pumps = heat_pump_configs(hass, entry)
    phases = {b.subentry_id: b.phase for b in batteries} | {h.subentry_id: h.phase for h in heat_pumps}
    phases |= appliance_phases(hass, entry)
    return HomeConfig(
        batteries=tuple(batteries),
        pv_forecast_entries=tuple(values[CONF_PV_FORECAST_ENTRIES]),
        pv_forecast_sensor=values[CONF_PV_FORECAST_SENSOR],
        house_power_entity=values[CONF_HOUSE_POWER_ENTITY],
        export_price_mode=values[CONF_EXPORT_PRICE_MODE],
        export_fixed_price=values[CONF_EXPORT_FIXED_PRICE],
        export_spot_factor=values[CONF_EXPORT_SPOT_FACTOR],
        export_spot_fee=values[CONF_EXPORT_SPOT_FEE],
        export_limit_kw=math.inf if limit is None else float(limit),
        curtailment_entity=values[CONF_CURTAILMENT_ENTITY],
        battery_control=values[CONF_BATTERY_CONTROL],
        mpc_soc_threshold_pct=values[CONF_MPC_SOC_THRESHOLD_PCT],
        mpc_pv_threshold_kw=values[CONF_MPC_PV_THRESHOLD_KW],
        heat_pumps=heat_pumps,
        mpc_temp_threshold_c=values[CONF_MPC_TEMP_THRESHOLD_C],
        **fees,
        **connection,
        device_phases=phases,
    )


FEE_SCHEMA = vol.Schema(
    {
        vol.Optional(CONF_CAPACITY_PRICE, default=0.0): vol.All(vol.Coerce(float), vol.Range(min=0, max=1e4)),
        vol.Optional(CONF_CAPACITY_MIN_KW, default=0.0): vol.All(vol.Coerce(float), vol.Range(min=0, max=1e4)),
        vol.Optional(CONF_IMPORT_POWER_ENTITY, default=None): _ENTITY,
        vol.Optional(CONF_HOLIDAY_CALENDAR, default=None): vol.Any(None, vol.All(str, vol.Match(r"^calendar\.\w+$"))),
    },
    extra=vol.REMOVE_EXTRA,
)
CONNECTION_SCHEMA = vol.Schema(
    {
        vol.Optional(CONF_PHASE_COUNT, default="3"): vol.All(vol.Coerce(str), vol.In(("1", "3"))),
        vol.Optional(CONF_PHASE_CURRENT_A, default=None): vol.Any(
            None, vol.All(vol.Coerce(float), vol.Range(min=0, max=1e4, min_included=False))
        ),
        vol.Optional(CONF_NOMINAL_VOLTAGE, default=230.0): vol.All(vol.Coerce(float), vol.Range(min=50, max=1000)),
    },
    extra=vol.REMOVE_EXTRA,
)


def parse_fees(options: Mapping[str, Any]) -> dict[str, Any]:
    """Return the grid fee settings of the options as :class:`HomeConfig` fields.

    Raises:
        vol.Invalid: a bad number or entity; ValueError: a band schedule :func:`parse_schedule` refuses.

    """
    valid = FEE_SCHEMA({k: v for k, v in options.items() if v is not None})
    bands = options.get(CONF_TARIFF_BANDS)
    return {
        "tariff": parse_schedule(bands) if bands else None,
        "capacity_price": valid[CONF_CAPACITY_PRICE],
        "capacity_min_kw": valid[CONF_CAPACITY_MIN_KW],
        "import_power_entity": valid[CONF_IMPORT_POWER_ENTITY],
        "holiday_calendar": valid[CONF_HOLIDAY_CALENDAR],
    }


def parse_connection(options: Mapping[str, Any]) -> dict[str, Any]:
    """Return the connection settings of the options (phases, current limit, voltage) as :class:`HomeConfig` fields.

    Raises:
        vol.Invalid: a bad value.

    """
    valid = CONNECTION_SCHEMA({k: v for k, v in options.items() if v is not None})
    return {
        "phase_count": int(valid[CONF_PHASE_COUNT]),
        "phase_current_a": valid[CONF_PHASE_CURRENT_A],
        "nominal_voltage": valid[CONF_NOMINAL_VOLTAGE],
    }


def grid_settings(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> tuple[dict[str, Any], dict[str, Any]]:
    """Return the fee and connection fields; a part that does not validate is reported and left at no fees / phases.

    Stored options are whatever an older version or a hand edit left, so any error a value can cause (a wrong type,
    an overflow, too deep a structure) raises the repair issue instead of failing the setup.
    """
    parts: list[dict[str, Any]] = []
    errors = []
    for name, parse in (("grid fees", parse_fees), ("connection", parse_connection)):
        try:
            parts.append(parse(entry.options))
        except (vol.Invalid, ValueError, TypeError, ArithmeticError, RecursionError) as err:
            errors.append(f"{name}: {describe(err) if isinstance(err, vol.Invalid) else err}")
            parts.append({})
    if errors:
        _report(hass, "tariff", entry.title, "; ".join(errors))
    else:
        ir.async_delete_issue(hass, DOMAIN, "home_config_invalid_tariff")
    return parts[0], parts[1]


def appliance_phases(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> dict[str, str]:
    """Return each appliance subentry's phase: as stored, or three-phase for an EV charger and L1 for the others.

    A stored phase that is not one of :data:`PHASES` is reported and the default is used.
    """
    phases = {}
    for subentry_id, subentry in entry.subentries.items():
        if subentry.subentry_type != SUBENTRY_APPLIANCE:
            continue
        default = "three-phase" if subentry.data.get("kind") == "ev_charger" else "L1"
        phase = subentry.data.get(CONF_PHASE) or default
        if phase not in PHASES:
            _report(hass, subentry_id, subentry.title, f"phase {phase!r} is not one of {', '.join(PHASES)}")
            phase = default
        else:
            ir.async_delete_issue(hass, DOMAIN, f"home_config_invalid_{subentry_id}")
        phases[subentry_id] = phase
    return phases
