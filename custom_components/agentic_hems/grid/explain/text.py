"""The explanations' wording: the message table in ``strings/<lang>.json`` and numbers, money and times in a language.

``strings/en.json`` and ``strings/de.json`` map a message id (``op.charge``, ``mg.saves``, ...) to a ``str.format``
template; both files have the same ids and, id by id, the same ``{placeholders}`` (tests/grid/test_explain_strings.py
checks it). Ids ``value.<text>`` translate a producer's known English wording of an assumption (``persistence
baseline``); ``en.json`` maps each to itself. A file is read once, on first use.
"""

from __future__ import annotations

from datetime import datetime
from functools import cache
import json
from pathlib import Path
from typing import Any

STRINGS = Path(__file__).with_name("strings")


@cache
def messages(lang: str) -> dict[str, str]:
    """Return the message table of ``lang`` (``en`` or ``de``): message id -> ``str.format`` template.

    Raises FileNotFoundError for a language without a file.
    """
    table: dict[str, str] = json.loads((STRINGS / f"{lang}.json").read_text(encoding="utf-8"))
    return table


class Fmt:
    """Numbers, money and times in one language."""

    def __init__(self, lang: str, currency: str) -> None:
        """Format in ``lang`` (``en``: decimal point; ``de``: decimal comma), money in ``currency``."""
        self.lang = lang
        self.de = lang == "de"
        self.currency = currency
        self.messages = messages(lang)

    def t(self, key: str, **kw: Any) -> str:
        """Return message ``key`` with its placeholders filled from ``kw``; KeyError for an unknown id."""
        return self.messages[key].format(**kw)

    def has(self, key: str) -> bool:
        """Return whether message ``key`` exists."""
        return key in self.messages

    def num(self, x: float | None, decimals: int = 2) -> str:
        """Return ``x`` with ``decimals`` decimals and thousands separators, n/a for None."""
        if x is None:
            return self.t("na")
        if round(x, decimals) == 0:
            x = 0.0  # no "-0.00"
        text = f"{x:,.{decimals}f}"
        if self.de:
            text = text.replace(",", "\0").replace(".", ",").replace("\0", ".")
        return text

    def kw(self, x: float | None) -> str:
        """Return a power in kW."""
        return f"{self.num(x)} kW"

    def kwh(self, x: float | None) -> str:
        """Return an energy in kWh."""
        return f"{self.num(x)} kWh"

    def money(self, x: float | None, decimals: int = 2) -> str:
        """Return an amount in the currency."""
        return f"{self.num(x, decimals)} {self.currency}" if x is not None else self.t("na")

    def price(self, x: float | None) -> str:
        """Return a price in currency/kWh, three decimals."""
        return f"{self.num(x, 3)} {self.currency}/kWh" if x is not None else self.t("na")

    def pct(self, x: float | None, decimals: int = 1) -> str:
        """Return a percentage (``12.5%``, German ``12,5 %``)."""
        if x is None:
            return self.t("na")
        return f"{self.num(x, decimals)} %" if self.de else f"{self.num(x, decimals)}%"

    def hm(self, moment: datetime | None) -> str:
        """Return ``HH:MM``, ``?`` for None."""
        return moment.strftime("%H:%M") if moment is not None else "?"

    def stamp(self, moment: datetime | None) -> str:
        """Return the date and time with ``UTC``, ``?`` for None."""
        if moment is None:
            return "?"
        return moment.strftime("%d.%m.%Y %H:%M UTC" if self.de else "%Y-%m-%d %H:%M UTC")

    def span(self, start: datetime | None, end: datetime | None) -> str:
        """Return ``HH:MM–HH:MM``."""
        return f"{self.hm(start)}–{self.hm(end)}"

    def value(self, v: Any) -> str:
        """Return an assumption's value, translated where the producer's English wording is known."""
        text = str(v)
        return self.messages.get(f"value.{text}", text)

    def objective(self, name: str) -> str:
        """Return an objective's name in the language, the name itself when unknown."""
        key = f"obj.{name}"
        return self.t(key) if self.has(key) else name

    def status(self, name: str) -> str:
        """Return a solver status in the language, the status itself when unknown."""
        key = f"status.{name}"
        return self.t(key) if self.has(key) else name
