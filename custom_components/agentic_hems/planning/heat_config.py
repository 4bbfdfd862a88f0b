"""The whole-home plan's heat pumps: what a ``heat_pump`` subentry stores and the :class:`HeatPumpConfig` it reads as.

:func:`parse_heat_pump` validates a subentry's data (:data:`HEAT_PUMP_SCHEMA`) and raises on bad data;
:func:`.home_config.heat_pump_configs` reports it (the repair issue) and leaves the heat pump out.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from datetime import datetime, time, timedelta, tzinfo
import math
from typing import TYPE_CHECKING, Any

import numpy as np

from homeassistant.core import HomeAssistant

from ..const import (
    CONF_BATTERY_NAME,
    CONF_CAPACITY_KWH_PER_K,
    CONF_CARNOT_FRACTION,
    CONF_CONTROL_ENTITY,
    CONF_COP_MODE,
    CONF_COP_POINTS,
    CONF_DAY_END,
    CONF_DAY_HIGH_C,
    CONF_DAY_LOW_C,
    CONF_DAY_START,
    CONF_FIT_RMSE_C,
    CONF_FLOW_TEMP_C,
    CONF_GAINS_KW,
    CONF_HEAT_MAX_KW,
    CONF_HEAT_MIN_KW,
    CONF_HEAT_POWER_ENTITY,
    CONF_HEAT_STORE,
    CONF_HOT_WATER_HOURS,
    CONF_HOT_WATER_KWH,
    CONF_MIN_OFF_MIN,
    CONF_MIN_RUN_MIN,
    CONF_NIGHT_HIGH_C,
    CONF_NIGHT_LOW_C,
    CONF_OUTDOOR_ENTITY,
    CONF_PHASE,
    CONF_ROOM_TEMP_C,
    CONF_SG_CONTACT_2,
    CONF_SG_FORCED,
    CONF_SG_MAX_BLOCK_MIN,
    CONF_SG_OFFSET_ENTITY,
    CONF_SG_OFFSET_K,
    CONF_SOLAR_ENTITY,
    CONF_SOLAR_GAIN,
    CONF_TEMPERATURE_ENTITY,
    CONF_THERMAL_MODEL,
    CONF_UA_W_PER_K,
    CONF_WEATHER_ENTITY,
    COP_CARNOT,
    COP_POINTS,
    MODEL_FIT,
    MODEL_MANUAL,
    PHASES,
    STORE_HOT_WATER,
    STORE_SPACE,
    SUBENTRY_HEAT_PUMP,
)
from ..prices.curve import FloatArray
from ..scheduling.home_model import HomeHeatPump
from ..scheduling.thermal import cop_carnot, cop_from_points
from ..validation import describe, vol
from .config_issues import clear_invalid, report_invalid

if TYPE_CHECKING:
    from ..runtime import AgenticHemsConfigEntry

_POSITIVE = vol.All(vol.Coerce(float), vol.Range(min=0, min_included=False))
_EFFICIENCY = vol.All(vol.Coerce(float), vol.Range(min=0, max=1, min_included=False))
_ENTITY = vol.Any(None, vol.All(str, vol.Match(r"^[a-z_]+\.[a-z0-9_]+$")))
_TEMP = vol.All(vol.Coerce(float), vol.Range(min=-30, max=95))
_TIME = vol.All(str, vol.Match(r"^([01]\d|2[0-3]):[0-5]\d(:[0-5]\d)?$"))
_MINUTES = vol.All(vol.Coerce(float), vol.Range(min=0, max=24 * 60))
_COP_POINT = vol.All(
    vol.ExactSequence([vol.All(vol.Coerce(float), vol.Range(min=-40, max=50)), _POSITIVE]), vol.Coerce(tuple)
)

HEAT_PUMP_SCHEMA = vol.Schema(
    {
        vol.Required(CONF_BATTERY_NAME): vol.All(str, vol.Length(min=1)),
        vol.Optional(CONF_HEAT_STORE, default=STORE_SPACE): vol.In((STORE_SPACE, STORE_HOT_WATER)),
        vol.Required(CONF_CONTROL_ENTITY): vol.All(
            str, vol.Match(r"^(climate|switch|input_boolean|water_heater)\.[a-z0-9_]+$")
        ),
        vol.Required(CONF_TEMPERATURE_ENTITY): vol.All(str, vol.Match(r"^sensor\.[a-z0-9_]+$")),
        vol.Required(CONF_WEATHER_ENTITY): vol.All(str, vol.Match(r"^weather\.[a-z0-9_]+$")),
        vol.Optional(CONF_HEAT_POWER_ENTITY, default=None): _ENTITY,
        vol.Optional(CONF_OUTDOOR_ENTITY, default=None): _ENTITY,
        vol.Optional(CONF_HEAT_MIN_KW, default=0.0): vol.All(vol.Coerce(float), vol.Range(min=0, max=1000)),
        vol.Required(CONF_HEAT_MAX_KW): vol.All(_POSITIVE, vol.Range(max=1000)),
        vol.Optional(CONF_MIN_RUN_MIN, default=0.0): _MINUTES,
        vol.Optional(CONF_MIN_OFF_MIN, default=0.0): _MINUTES,
        vol.Optional(CONF_DAY_START, default="06:00:00"): _TIME,
        vol.Optional(CONF_DAY_END, default="22:00:00"): _TIME,
        vol.Required(CONF_DAY_LOW_C): _TEMP,
        vol.Required(CONF_DAY_HIGH_C): _TEMP,
        vol.Required(CONF_NIGHT_LOW_C): _TEMP,
        vol.Required(CONF_NIGHT_HIGH_C): _TEMP,
        vol.Optional(CONF_COP_MODE, default=COP_POINTS): vol.In((COP_POINTS, COP_CARNOT)),
        vol.Optional(CONF_COP_POINTS, default=list): vol.All([_COP_POINT], vol.Length(max=3)),
        vol.Optional(CONF_CARNOT_FRACTION, default=0.45): _EFFICIENCY,
        vol.Optional(CONF_FLOW_TEMP_C, default=35.0): vol.All(vol.Coerce(float), vol.Range(min=20, max=90)),
        vol.Optional(CONF_THERMAL_MODEL, default=MODEL_MANUAL): vol.In((MODEL_FIT, MODEL_MANUAL)),
        vol.Required(CONF_UA_W_PER_K): vol.All(_POSITIVE, vol.Range(max=100000)),
        vol.Required(CONF_CAPACITY_KWH_PER_K): vol.All(_POSITIVE, vol.Range(max=100000)),
        vol.Optional(CONF_FIT_RMSE_C, default=None): vol.Any(None, vol.All(vol.Coerce(float), vol.Range(min=0))),
        vol.Optional(CONF_GAINS_KW, default=0.0): vol.All(vol.Coerce(float), vol.Range(min=-100, max=100)),
        vol.Optional(CONF_SOLAR_GAIN, default=0.0): vol.All(vol.Coerce(float), vol.Range(min=0, max=10)),
        vol.Optional(CONF_SOLAR_ENTITY, default=None): _ENTITY,
        vol.Optional(CONF_PHASE, default="three-phase"): vol.In(PHASES),
        vol.Optional(CONF_ROOM_TEMP_C, default=20.0): _TEMP,
        vol.Optional(CONF_HOT_WATER_KWH, default=0.0): vol.All(vol.Coerce(float), vol.Range(min=0, max=1000)),
        vol.Optional(CONF_HOT_WATER_HOURS, default=list): [vol.All(vol.Coerce(int), vol.Range(min=0, max=23))],
        vol.Optional(CONF_SG_CONTACT_2): vol.Any(
            None, vol.All(str, vol.Match(r"^(switch|input_boolean)\.[a-z0-9_]+$"))
        ),
        vol.Optional(CONF_SG_OFFSET_ENTITY): vol.Any(
            None, vol.All(str, vol.Match(r"^(number|input_number)\.[a-z0-9_]+$"))
        ),
        vol.Optional(CONF_SG_OFFSET_K): vol.All(vol.Coerce(float), vol.Range(min=-10, max=10)),
        vol.Optional(CONF_SG_FORCED): bool,
        vol.Optional(CONF_SG_MAX_BLOCK_MIN): vol.All(vol.Coerce(float), vol.Range(min=0, max=240)),
    },  # SG Ready's keys (the last five) are stored only for SG Ready: a heat pump without them reads their defaults
    extra=vol.ALLOW_EXTRA,
)


def cop_function(
    mode: str, points: Sequence[Sequence[float]], flow_c: float, fraction: float
) -> Callable[[FloatArray], FloatArray]:
    """Return the COP per outdoor temperature (°C): from rated points (``mode`` points) or a Carnot fraction."""
    if mode == COP_CARNOT:
        return lambda outdoor: np.asarray(cop_carnot(outdoor, flow_c=flow_c, fraction=fraction), dtype=np.float64)
    rated = [(float(t), float(c)) for t, c in points]
    return lambda outdoor: np.asarray(cop_from_points(rated, outdoor), dtype=np.float64)


@dataclass(frozen=True, kw_only=True)
class HeatPumpConfig:
    """One heat pump subentry: the :class:`HomeHeatPump`'s model and limits plus where it is read and set.

    ``control_entity`` is a climate entity or, for a hot-water tank, a water_heater (the plan sets its target
    temperature), or a switch or input_boolean: one boost contact (on while the plan runs the heat pump) or, with
    ``sg_contact_2``, SG Ready's contact 1. SG Ready may also set ``sg_offset_entity`` (a number, K or °C) to
    ``sg_offset_k`` in states 3 and 4 (0 otherwise), uses state 4 only when ``sg_forced``, and blocks (state 1) for
    at most ``sg_max_block_min`` minutes in a row (0: never).
    ``temperature_entity`` measures the store: the house's indoor temperature, or a hot-water tank's. A house gains
    ``internal_gains_kw`` (people, appliances; kW) plus ``solar_gain`` kW of heat per kW of PV production
    (``solar_entity`` is the PV sensor a fit read, or None); a subentry stored without them has 0. The comfort band
    is ``day_low_c``-``day_high_c`` from ``day_start`` to ``day_end`` (local time), else the night band. A hot-water
    tank stands in a room at ``room_temp_c`` and loses ``hot_water_kwh`` of heat a day, spread evenly over
    ``hot_water_hours`` (local hours).
    """

    subentry_id: str
    name: str
    store: str
    control_entity: str
    temperature_entity: str
    weather_entity: str
    power_entity: str | None
    outdoor_entity: str | None
    min_kw: float
    max_kw: float
    min_run_min: float
    min_off_min: float
    day_start: time
    day_end: time
    day_low_c: float
    day_high_c: float
    night_low_c: float
    night_high_c: float
    cop_mode: str
    cop_points: tuple[tuple[float, float], ...]
    carnot_fraction: float
    flow_temp_c: float
    thermal_model: str
    ua_kw_per_k: float
    capacity_kwh_per_k: float
    fit_rmse_c: float | None
    internal_gains_kw: float
    solar_gain: float
    solar_entity: str | None
    phase: str
    room_temp_c: float
    hot_water_kwh: float
    hot_water_hours: tuple[int, ...]
    sg_contact_2: str | None = None
    sg_offset_entity: str | None = None
    sg_offset_k: float = 0.0
    sg_forced: bool = False
    sg_max_block_min: float = 120.0

    @property
    def sg_ready(self) -> bool:
        """True for SG Ready: ``control_entity`` is contact 1 and ``sg_contact_2`` contact 2 (:mod:`..scheduling.sg_ready`)."""
        return self.sg_contact_2 is not None

    def entities(self) -> tuple[str, ...]:
        """Return what the plan's commands set: the control entity, and SG Ready's contact 2 and offset number."""
        extra = (self.sg_contact_2, self.sg_offset_entity) if self.sg_ready else ()
        return (self.control_entity, *(e for e in extra if e))

    @property
    def hot_water(self) -> bool:
        """True for a hot-water tank (ambient: the room; gains: minus the draw)."""
        return self.store == STORE_HOT_WATER

    def is_day(self, moment: datetime, tz: tzinfo) -> bool:
        """Tell whether ``moment`` lies in the day period (local time; a period may pass midnight)."""
        clock = moment.astimezone(tz).time()
        if self.day_start <= self.day_end:
            return self.day_start <= clock < self.day_end
        return clock >= self.day_start or clock < self.day_end

    def comfort(self, starts: Sequence[datetime], tz: tzinfo) -> tuple[FloatArray, FloatArray]:
        """Return the comfort band's low and high edges (°C) per slot start."""
        day = np.array([self.is_day(s, tz) for s in starts], dtype=bool)
        low = np.where(day, self.day_low_c, self.night_low_c).astype(np.float64)
        high = np.where(day, self.day_high_c, self.night_high_c).astype(np.float64)
        return low, high

    def gains_kw(
        self, starts: Sequence[datetime], resolution: timedelta, tz: tzinfo, pv_kw: FloatArray | None = None
    ) -> FloatArray | None:
        """Return the heat gains per slot of ``starts`` (kW), None for none.

        A house: ``internal_gains_kw + solar_gain x pv_kw`` (``pv_kw``: the PV forecast per slot, kW; a slot it does
        not reach or a NaN counts as 0 kW), None when both are 0. A tank: minus the hot-water draw, each of the
        ``hot_water_hours`` drawing ``hot_water_kwh / len(hot_water_hours)`` kWh at an even rate; None without one.
        """
        if not self.hot_water:
            return self._house_gains(len(starts), pv_kw)
        if self.hot_water_kwh <= 0 or not self.hot_water_hours:
            return None
        rate = self.hot_water_kwh / len(self.hot_water_hours)  # kW within each draw hour
        hours = set(self.hot_water_hours)
        return np.array([-rate if s.astimezone(tz).hour in hours else 0.0 for s in starts], dtype=np.float64)

    def _house_gains(self, n: int, pv_kw: FloatArray | None) -> FloatArray | None:
        """Return G + g x PV over n slots (kW; PV past ``pv_kw``'s end or NaN counts as 0), None when G = g = 0."""
        if self.internal_gains_kw == 0 and self.solar_gain == 0:
            return None
        pv = np.zeros(n)
        if pv_kw is not None:
            known = np.nan_to_num(np.asarray(pv_kw, dtype=np.float64)[:n])
            pv[: known.size] = known
        return self.internal_gains_kw + self.solar_gain * pv

    def cop(self, outdoor_c: FloatArray) -> FloatArray:
        """Return the COP per slot at the outdoor temperatures (NaN where the temperature is unknown)."""
        return cop_function(self.cop_mode, self.cop_points, self.flow_temp_c, self.carnot_fraction)(outdoor_c)

    def min_slots(self, minutes: float, resolution: timedelta) -> int:
        """Return ``minutes`` in whole slots of ``resolution`` (rounded up, at least 1)."""
        return max(math.ceil(round(minutes * 60 / resolution.total_seconds(), 6)), 1)

    def heat_pump(
        self,
        *,
        initial_temp_c: float,
        ambient_c: FloatArray,
        cop: FloatArray,
        comfort: tuple[FloatArray, FloatArray],
        gains_kw: FloatArray | None,
        resolution: timedelta,
        initial_on_slots: int = 0,
        initial_off_slots: int = 0,
    ) -> HomeHeatPump:
        """Return the plan's heat pump at the measured temperature (arrays per slot of the curve)."""
        return HomeHeatPump(
            name=self.subentry_id,
            ua_kw_per_k=self.ua_kw_per_k,
            capacity_kwh_per_k=self.capacity_kwh_per_k,
            min_kw=self.min_kw,
            max_kw=self.max_kw,
            initial_temp_c=initial_temp_c,
            ambient_c=ambient_c,
            cop=cop,
            comfort_low_c=comfort[0],
            comfort_high_c=comfort[1],
            gains_kw=gains_kw,
            min_run_slots=self.min_slots(self.min_run_min, resolution),
            min_off_slots=self.min_slots(self.min_off_min, resolution),
            initial_on_slots=initial_on_slots,
            initial_off_slots=initial_off_slots,
        )


def parse_heat_pump(subentry_id: str, data: Mapping[str, Any]) -> HeatPumpConfig:
    """Return the heat pump of a subentry's data; raises vol.Invalid (a bad value) or ValueError (inconsistent).

    Inconsistent: min_kw above max_kw, a comfort band whose low edge is above its high edge, COP points that are
    fewer than two (with ``cop_mode`` points) or share an outdoor temperature; SG Ready whose contact 1 is not a
    switch or input_boolean or is contact 2.
    """
    valid = HEAT_PUMP_SCHEMA(dict(data))
    _check_contacts(valid[CONF_CONTROL_ENTITY], valid.get(CONF_SG_CONTACT_2, None))
    if valid[CONF_HEAT_MIN_KW] > valid[CONF_HEAT_MAX_KW]:
        raise ValueError("min_kw is above max_kw")
    for low, high in ((CONF_DAY_LOW_C, CONF_DAY_HIGH_C), (CONF_NIGHT_LOW_C, CONF_NIGHT_HIGH_C)):
        if valid[low] > valid[high]:
            raise ValueError(f"{low} is above {high}")
    points = tuple(sorted((float(t), float(c)) for t, c in valid[CONF_COP_POINTS]))
    if valid[CONF_COP_MODE] == COP_POINTS:
        cop_points_error(points)
    return HeatPumpConfig(
        subentry_id=subentry_id,
        name=valid[CONF_BATTERY_NAME],
        store=valid[CONF_HEAT_STORE],
        control_entity=valid[CONF_CONTROL_ENTITY],
        temperature_entity=valid[CONF_TEMPERATURE_ENTITY],
        weather_entity=valid[CONF_WEATHER_ENTITY],
        power_entity=valid[CONF_HEAT_POWER_ENTITY],
        outdoor_entity=valid[CONF_OUTDOOR_ENTITY],
        min_kw=valid[CONF_HEAT_MIN_KW],
        max_kw=valid[CONF_HEAT_MAX_KW],
        min_run_min=valid[CONF_MIN_RUN_MIN],
        min_off_min=valid[CONF_MIN_OFF_MIN],
        day_start=time.fromisoformat(valid[CONF_DAY_START]),
        day_end=time.fromisoformat(valid[CONF_DAY_END]),
        day_low_c=valid[CONF_DAY_LOW_C],
        day_high_c=valid[CONF_DAY_HIGH_C],
        night_low_c=valid[CONF_NIGHT_LOW_C],
        night_high_c=valid[CONF_NIGHT_HIGH_C],
        cop_mode=valid[CONF_COP_MODE],
        cop_points=points,
        carnot_fraction=valid[CONF_CARNOT_FRACTION],
        flow_temp_c=valid[CONF_FLOW_TEMP_C],
        thermal_model=valid[CONF_THERMAL_MODEL],
        ua_kw_per_k=valid[CONF_UA_W_PER_K] / 1000,
        capacity_kwh_per_k=valid[CONF_CAPACITY_KWH_PER_K],
        fit_rmse_c=valid[CONF_FIT_RMSE_C],
        internal_gains_kw=valid[CONF_GAINS_KW],
        solar_gain=valid[CONF_SOLAR_GAIN],
        solar_entity=valid[CONF_SOLAR_ENTITY],
        phase=valid[CONF_PHASE],
        room_temp_c=valid[CONF_ROOM_TEMP_C],
        hot_water_kwh=valid[CONF_HOT_WATER_KWH],
        hot_water_hours=tuple(sorted(set(valid[CONF_HOT_WATER_HOURS]))),
        sg_contact_2=valid.get(CONF_SG_CONTACT_2, None),
        sg_offset_entity=valid.get(CONF_SG_OFFSET_ENTITY, None),
        sg_offset_k=valid.get(CONF_SG_OFFSET_K, 0.0),
        sg_forced=valid.get(CONF_SG_FORCED, False),
        sg_max_block_min=valid.get(CONF_SG_MAX_BLOCK_MIN, 120.0),
    )


def _check_contacts(control: str, contact_2: str | None) -> None:
    """Raise ValueError when SG Ready's contact 2 is given and contact 1 (``control``) is it or no switch."""
    if contact_2 is not None and (contact_2 == control or not control.startswith(("switch.", "input_boolean."))):
        raise ValueError("SG Ready needs two different switch or input_boolean contacts")


def heat_pump_configs(hass: HomeAssistant, entry: AgenticHemsConfigEntry) -> tuple[HeatPumpConfig, ...]:
    """Return the entry's heat pumps; one that does not validate is left out with the repair issue."""
    found = []
    for subentry_id, subentry in entry.subentries.items():
        if subentry.subentry_type != SUBENTRY_HEAT_PUMP:
            continue
        try:
            found.append(parse_heat_pump(subentry_id, subentry.data))
        except (vol.Invalid, ValueError) as err:
            error = describe(err) if isinstance(err, vol.Invalid) else str(err)
            report_invalid(hass, subentry_id, subentry.title, error)
        else:
            clear_invalid(hass, subentry_id)
    return tuple(found)


def cop_points_error(points: tuple[tuple[float, float], ...]) -> None:
    """Raise ValueError unless ``points`` make a COP curve.

    That is two or three (outdoor °C, COP) points at different temperatures, with COPs within the model's 1-8 that do
    not fall as it gets warmer (:func:`cop_from_points`).
    """
    if not 2 <= len(points) <= 3:
        raise ValueError("cop_points needs two or three points at different outdoor temperatures")
    cop_from_points(points, [0.0])
