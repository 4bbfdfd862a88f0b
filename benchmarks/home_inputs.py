"""Shared inputs of the whole-home benchmarks: the bundled real price days, generated PV and load, the home.

Importing this module makes the integration's pure core importable without Home Assistant (the package's
``__init__`` imports it): ``custom_components.agentic_hems`` is registered as a bare package over its folder, so
``scheduling`` and ``prices`` load on any Python >= 3.12 with numpy and highspy (also in ``.venv-bench``).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from datetime import UTC, datetime, timedelta
import importlib.machinery
import importlib.util
import math
from pathlib import Path
import sys

import numpy as np

ROOT = Path(__file__).resolve().parents[1]
SLOT = timedelta(minutes=15)
DAY = 96


def _bare_package(name: str, folder: Path) -> None:
    """Register ``name`` as a package over ``folder`` without running its ``__init__``."""
    if name in sys.modules:
        return
    spec = importlib.machinery.ModuleSpec(name, None, is_package=True)
    spec.submodule_search_locations = [str(folder)]
    sys.modules[name] = importlib.util.module_from_spec(spec)


try:
    import homeassistant  # noqa: F401 - only to know whether the package's __init__ can run
except ImportError:
    _bare_package("custom_components", ROOT / "custom_components")
    _bare_package("custom_components.agentic_hems", ROOT / "custom_components" / "agentic_hems")
sys.path.insert(0, str(ROOT))

from custom_components.agentic_hems.prices.curve import PriceCurve  # noqa: E402
from custom_components.agentic_hems.prices.entsoe import parse_day_ahead  # noqa: E402
from custom_components.agentic_hems.scheduling.home_model import GridFees, HomeBattery, HomeHeatPump  # noqa: E402
from custom_components.agentic_hems.scheduling.plan import LoadSpec  # noqa: E402

IMPORT_FEES = 0.12  # EUR/kWh on top of the spot price (grid fees, levies, VAT simplified)
EXPORT_FEE = 0.005  # EUR/kWh taken from the spot price for exported energy (may go negative)
FUSE_KW = 11.5
EXPORT_LIMIT_KW = 5.0
CAPACITY_PRICE = 4.0  # EUR per kW of the month's highest 15-minute average import above CAPACITY_MIN_KW
CAPACITY_MIN_KW = 2.5


def price_days() -> list[np.ndarray]:
    """The bundled real ENTSO-E days (Belgium, Oct 2024) as 96-slot spot price arrays in EUR/kWh."""
    data = ROOT / "custom_components" / "agentic_hems" / "prices" / "data"
    days: list[np.ndarray] = []
    for name in ("BE_60M_15M_mix.xml", "BE_60M.xml"):
        prices = parse_day_ahead((data / name).read_bytes()).prices
        days += [prices[i : i + DAY] for i in range(0, prices.size, DAY)]
    return days


def pv_day(rng: np.random.Generator, peak_kw: float = 6.0) -> np.ndarray:
    """Generated PV kW for one day (96 slots, UTC ~ local solar time): a bell from 7:00 to 18:00 with clouds."""
    hours = np.arange(DAY) / 4
    bell = np.clip(np.sin((hours - 7) / 11 * math.pi), 0.0, None) ** 1.5
    clouds = np.clip(1 - 0.6 * rng.random() * (1 + np.sin(hours * rng.uniform(0.5, 2.0))) / 2, 0.2, 1.0)
    return peak_kw * bell * clouds


def load_day(rng: np.random.Generator) -> np.ndarray:
    """Generated base load kW for one day: night floor, morning and evening peaks, noise."""
    hours = np.arange(DAY) / 4
    shape = 0.35 + 0.6 * np.exp(-((hours - 7.5) ** 2) / 2) + 1.0 * np.exp(-((hours - 19) ** 2) / 4)
    return np.clip(shape * rng.uniform(0.8, 1.2) + 0.1 * rng.standard_normal(DAY), 0.15, None)


@dataclass
class Home:
    """A two-day (or longer) home: prices, forecasts, the battery and the flexible loads."""

    curve: PriceCurve
    export_price: np.ndarray
    pv_kw: np.ndarray
    base_kw: np.ndarray
    battery: HomeBattery
    loads: list[LoadSpec]
    heat_pump: HomeHeatPump | None = None
    fees: GridFees | None = None
    fuse_kw: float = FUSE_KW
    export_limit_kw: float = EXPORT_LIMIT_KW


def battery(initial_soc_pct: float = 50.0) -> HomeBattery:
    """A 10 kWh, 5 kW battery with 20 % reserve, 95 % efficiencies each way and 2 ct/kWh wear."""
    return HomeBattery(
        name="battery",
        capacity_kwh=10.0,
        charge_kw=5.0,
        discharge_kw=5.0,
        initial_soc_pct=initial_soc_pct,
        soc_min_pct=10.0,
        soc_max_pct=100.0,
        reserve_pct=20.0,
        charge_efficiency=0.95,
        discharge_efficiency=0.95,
        wear_cost=0.02,
    )


def loads(start: datetime) -> list[LoadSpec]:
    """An EV (33 kWh at up to 11 kW, 18:00 to 07:00) and three appliances with day-long windows."""
    at = lambda hours: start + timedelta(hours=hours)  # noqa: E731
    return [
        LoadSpec("dishwasher", power_kw=2.0, duration_min=120, earliest_start=at(0), deadline=at(24)),
        LoadSpec("washer", power_kw=2.2, duration_min=90, earliest_start=at(8), deadline=at(32)),
        LoadSpec("dryer", power_kw=2.5, duration_min=90, earliest_start=at(24), deadline=at(48)),
        LoadSpec("ev", power_kw=11.0, energy_kwh=33.0, contiguous=False, earliest_start=at(18), deadline=at(31)),
    ]


def home(spot: np.ndarray, seed: int, *, initial_soc_pct: float = 50.0, pv_scale: float = 1.0) -> Home:
    """The home over ``spot`` (EUR/kWh, whole days) with PV and load generated from ``seed``."""
    rng = np.random.default_rng(seed)
    days = spot.size // DAY
    pv = np.concatenate([pv_day(rng, 6.0 * pv_scale) for _ in range(days)])
    base = np.concatenate([load_day(rng) for _ in range(days)])
    start = datetime(2026, 1, 5, tzinfo=UTC)
    curve = PriceCurve(start=start, resolution=SLOT, prices=np.round(spot + IMPORT_FEES, 6), source="bench")
    return Home(curve, np.round(spot - EXPORT_FEE, 6), pv, base, battery(initial_soc_pct), loads(start))


def heat_pump(outdoor_c: np.ndarray) -> HomeHeatPump:
    """The house's heat pump: UA 0.15 kW/K, C 8 kWh/K, 0-3 kW electrical at a constant COP of 3.2, 19.5-22 °C."""
    n = outdoor_c.size
    return HomeHeatPump(
        name="heat_pump",
        ua_kw_per_k=0.15,
        capacity_kwh_per_k=8.0,
        min_kw=0.0,
        max_kw=3.0,
        initial_temp_c=20.5,
        ambient_c=outdoor_c,
        cop=np.full(n, 3.2),
        comfort_low_c=np.full(n, 19.5),
        comfort_high_c=np.full(n, 22.0),
    )


def heated(case: Home, seed: int) -> Home:
    """``case`` with a heat pump (winter days: 4 °C +- 4 °C daily swing plus a daily offset) and a capacity tariff."""
    rng = np.random.default_rng(seed)
    n = case.base_kw.size
    hours = np.arange(n) / 4
    outdoor = 4.0 + 4.0 * np.sin((hours - 9) / 24 * 2 * math.pi) + np.repeat(rng.normal(0.0, 2.0, n // DAY), DAY)
    fees = GridFees(energy_fee=np.zeros(n), capacity_price=CAPACITY_PRICE, peak_floor_kw=(CAPACITY_MIN_KW,))
    return replace(case, heat_pump=heat_pump(outdoor), fees=fees)


TOU_PEAK_FEE, TOU_OFF_PEAK_FEE = 0.22, 0.09  # EUR/kWh network fee 07:00-11:00 and 17:00-22:00, and otherwise
FEED_IN = 0.07  # EUR/kWh, a fixed feed-in tariff
NEGATIVE_DROP = 0.25  # EUR/kWh taken off the spot price from 10:00 to 16:00 of the second day (a sunny weekend)


def small_battery() -> HomeBattery:
    """A 5 kWh, 2.5 kW battery (10 % reserve, 95 % each way, 2 ct/kWh wear), starting half full."""
    return replace(battery(50.0), capacity_kwh=5.0, charge_kw=2.5, discharge_kw=2.5, reserve_pct=10.0)


def tou_loads(start: datetime) -> list[LoadSpec]:
    """An EV (20 kWh at up to 7.4 kW, 17:00 to 07:00) and two appliances whose windows overlap (10:00 to 20:00)."""
    at = lambda hours: start + timedelta(hours=hours)  # noqa: E731
    return [
        LoadSpec("dishwasher", power_kw=2.0, duration_min=120, earliest_start=at(10), deadline=at(20)),
        LoadSpec("washer", power_kw=2.2, duration_min=90, earliest_start=at(10), deadline=at(20)),
        LoadSpec("ev", power_kw=7.4, energy_kwh=20.0, contiguous=False, earliest_start=at(17), deadline=at(31)),
    ]


def tou_home(spot: np.ndarray, seed: int, *, heat: bool = False) -> Home:
    """A home of the kinds that were slow: hourly spot prices (the 15-minute days averaged per hour) plus
    time-of-use fees, a fixed feed-in, a 9 kW fuse, a small battery, an EV and two appliances with overlapping windows.

    Without a heat pump the export limit is 3 kW. With one (``heat``): zero export, the spot price cut by
    ``NEGATIVE_DROP`` around noon of the second day (import prices below zero there), and a fixed-speed heat pump
    (:func:`fixed_speed_pump`) heating the house over the 48 hours.
    """
    rng = np.random.default_rng(seed)
    n = spot.size
    hourly = np.repeat(spot.reshape(-1, 4).mean(axis=1), 4)
    hours = np.arange(n) / 4 % 24
    if heat:
        hourly = hourly - np.where((np.arange(n) >= DAY) & (hours >= 10) & (hours < 16), NEGATIVE_DROP, 0.0)
    fee = np.where(((hours >= 7) & (hours < 11)) | ((hours >= 17) & (hours < 22)), TOU_PEAK_FEE, TOU_OFF_PEAK_FEE)
    start = datetime(2026, 1, 5, tzinfo=UTC)
    curve = PriceCurve(start=start, resolution=SLOT, prices=np.round(hourly + fee, 6), source="bench")
    pv = np.concatenate([pv_day(rng, 5.0) for _ in range(n // DAY)])
    base = np.concatenate([load_day(rng) for _ in range(n // DAY)])
    case = Home(curve, np.full(n, FEED_IN), pv, base, small_battery(), tou_loads(start), fuse_kw=9.0)
    if not heat:
        return replace(case, export_limit_kw=3.0)
    outdoor = 3.0 + 4.0 * np.sin((np.arange(n) / 4 - 9) / 24 * 2 * math.pi) + rng.normal(0.0, 1.0)
    return replace(case, export_limit_kw=0.0, heat_pump=fixed_speed_pump(outdoor))


def fixed_speed_pump(outdoor_c: np.ndarray) -> HomeHeatPump:
    """The house's heat pump at one speed: off or 2 kW electrical (COP 3.0), running and resting >= 1 h each time."""
    return replace(
        heat_pump(outdoor_c), min_kw=2.0, max_kw=2.0, cop=np.full(outdoor_c.size, 3.0), min_run_slots=4, min_off_slots=4
    )
