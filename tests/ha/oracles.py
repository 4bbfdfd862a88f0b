"""Independent oracles for HA tests: prices read straight from the real documents, brute-force plans."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
import xml.etree.ElementTree as ET

from homeassistant.core import HomeAssistant
from homeassistant.util import slugify

from custom_components.agentic_hems.const import DOMAIN

FIXTURES = Path(__file__).parent.parent / "fixtures" / "entsoe"
NS = {"d": "urn:iec62325.351:tc57wg16:451-3:publicationdocument:7:3"}


def be_60m_hourly_eur_per_kwh() -> list[float]:
    """The 24 hourly prices of BE_60M.xml (every position is present), EUR/kWh."""
    root = ET.parse(FIXTURES / "BE_60M.xml").getroot()
    points = root.findall(".//d:Point", NS)
    by_position = {int(p.find("d:position", NS).text): float(p.find("d:price.amount", NS).text) for p in points}
    return [by_position[i] / 1000 for i in range(1, 25)]


def planned_kw(hass: HomeAssistant, exclude: str | None = None) -> dict[str, float]:
    """kW planned per slot start (ISO UTC) by every appliance but ``exclude`` (its name as a slug), from the stored
    plans (the schedule card's data)."""
    total: dict[str, float] = {}
    for entry in hass.config_entries.async_loaded_entries(DOMAIN):
        planner = entry.runtime_data.planner
        for appliance_id, state in planner.states.items():
            if state.plan is None or slugify(planner.appliances[appliance_id].name) == exclude:
                continue
            for start, kw in zip(state.plan.slot_starts(), state.plan.power_kw):
                total[start.isoformat()] = total.get(start.isoformat(), 0.0) + round(float(kw), 6)
    return total


def cheapest_run(
    prices: list[dict], start: datetime, end: datetime, slots: int, *, power_kw: float = 0.0,
    base: dict[str, float] | None = None, limit_kw: float = float("inf"),
) -> tuple[float, int]:
    """Brute force: (sum of prices, index of the first slot) of the cheapest run of ``slots`` within [start, end)
    whose every slot keeps ``base + power_kw`` within ``limit_kw``."""
    base = base or {}
    inside = [
        i for i, p in enumerate(prices)
        if start <= datetime.fromisoformat(p["start"]) < end and base.get(p["start"], 0.0) + power_kw <= limit_kw + 1e-9
    ]
    best: tuple[float, int] | None = None
    for first in inside:
        run = list(range(first, first + slots))
        if run[-1] not in inside:
            continue
        total = sum(prices[i]["price"] for i in run)
        if best is None or total < best[0] - 1e-12:
            best = (total, first)
    assert best is not None, "no run fits the window"
    return best


def cheapest_fill(
    prices: list[dict], start: datetime, end: datetime, *, energy_kwh: float, max_kw: float,
    base: dict[str, float], limit_kw: float,
) -> float:
    """Fractional knapsack: cost of the cheapest slots within [start, end) delivering ``energy_kwh``, each slot
    capped at min(max_kw, limit - base)."""
    inside = [p for p in prices if start <= datetime.fromisoformat(p["start"]) < end]
    remaining, cost = energy_kwh, 0.0
    for p in sorted(inside, key=lambda p: (p["price"], p["start"])):
        take = min(remaining, max(min(max_kw, limit_kw - base.get(p["start"], 0.0)), 0.0) * 0.25)
        cost += take * p["price"]
        remaining -= take
        if remaining <= 1e-9:
            return cost
    raise AssertionError("not enough room")
