"""PriceFormula: (spot + markup) x (1 + vat) + grid_fee."""

from __future__ import annotations

from datetime import UTC, datetime
import math

from hypothesis import given, strategies as st
import numpy as np
import pytest

from custom_components.agentic_hems.prices import SLOT, PriceCurve, PriceFormula

START = datetime(2025, 1, 1, tzinfo=UTC)
finite = st.floats(min_value=-10, max_value=10, allow_nan=False)


def curve(prices: list[float]) -> PriceCurve:
    return PriceCurve(start=START, resolution=SLOT, prices=np.array(prices), currency="SEK", source="test")


def test_worked_example() -> None:
    formula = PriceFormula(markup=0.02, vat=0.25, grid_fee=0.3)
    result = formula.apply(curve([0.1, -0.1, math.nan]))
    assert result.prices[:2] == pytest.approx([(0.1 + 0.02) * 1.25 + 0.3, (-0.1 + 0.02) * 1.25 + 0.3])
    assert math.isnan(result.prices[2])
    assert (result.start, result.currency, result.source) == (START, "SEK", "test")


def test_no_vat_on_negative() -> None:
    formula = PriceFormula(markup=0.01, vat=0.2, grid_fee=0.05, vat_on_negative=False)
    result = formula.apply(curve([-0.1, -0.01, 0.1]))
    assert result.prices == pytest.approx([-0.09 + 0.05, 0.0 + 0.05, 0.11 * 1.2 + 0.05])


@pytest.mark.parametrize(
    "kwargs",
    [{"vat": -0.01}, {"vat": 1.5}, {"markup": math.nan}, {"grid_fee": math.inf}, {"vat": math.nan}, {"markup": "1"}],
)
def test_validation(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        PriceFormula(**kwargs)  # type: ignore[arg-type]


@given(
    prices=st.lists(st.one_of(finite, st.just(math.nan)), min_size=1, max_size=20),
    markup=finite,
    vat=st.floats(min_value=0, max_value=1),
    grid_fee=finite,
    vat_on_negative=st.booleans(),
)
def test_formula_properties(
    prices: list[float], markup: float, vat: float, grid_fee: float, vat_on_negative: bool
) -> None:
    result = PriceFormula(markup, vat, grid_fee, vat_on_negative).apply(curve(prices)).prices
    for spot, total in zip(prices, result, strict=True):
        if math.isnan(spot):
            assert math.isnan(total)
            continue
        net = spot + markup
        taxed = net if net < 0 and not vat_on_negative else net * (1 + vat)
        assert total == pytest.approx(taxed + grid_fee, abs=1e-12)
        # VAT never lowers a non-negative net price, and the fee is always added.
        if net >= 0:
            assert total >= net + grid_fee - 1e-12


def test_identity() -> None:
    prices = [0.1, -0.2, math.nan]
    assert PriceFormula().apply(curve(prices)).prices == pytest.approx(prices, nan_ok=True)
