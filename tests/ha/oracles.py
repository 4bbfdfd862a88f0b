"""Independent oracles for HA tests: prices read straight from the real documents, brute-force plans."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path
import xml.etree.ElementTree as ET

FIXTURES = Path(__file__).parent.parent / "fixtures" / "entsoe"
NS = {"d": "urn:iec62325.351:tc57wg16:451-3:publicationdocument:7:3"}


def be_60m_hourly_eur_per_kwh() -> list[float]:
    """The 24 hourly prices of BE_60M.xml (every position is present), EUR/kWh."""
    root = ET.parse(FIXTURES / "BE_60M.xml").getroot()
    points = root.findall(".//d:Point", NS)
    by_position = {int(p.find("d:position", NS).text): float(p.find("d:price.amount", NS).text) for p in points}
    return [by_position[i] / 1000 for i in range(1, 25)]


def cheapest_run(prices: list[dict], start: datetime, end: datetime, slots: int) -> tuple[float, int]:
    """Brute force: (sum of prices, index of the first slot) of the cheapest run of ``slots`` within [start, end)."""
    inside = [i for i, p in enumerate(prices) if start <= datetime.fromisoformat(p["start"]) < end]
    best: tuple[float, int] | None = None
    for first in inside:
        run = list(range(first, first + slots))
        if run[-1] not in inside:
            continue
        total = sum(prices[i]["price"] for i in run)
        if best is None or total < best[0] - 1e-12:
            best = (total, first)
    assert best is not None
    return best
