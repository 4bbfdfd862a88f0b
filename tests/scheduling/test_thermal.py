"""The thermal model's fit, prediction error and COP curves (``scheduling.thermal``), against simulated houses with
known parameters and hand-computed values."""

from __future__ import annotations

import math

from hypothesis import given, settings, strategies as st
import numpy as np
import pytest

from custom_components.agentic_hems.scheduling.thermal import (
    COP_MAX, COP_MIN, ThermalFlatTemperatures, ThermalModel, ThermalNoHeating, ThermalNonPhysical,
    ThermalTooLittleData, cop_carnot, cop_from_points, fit_thermal, prediction_error,
)

from .thermal_house import house

TRUE = {"ua_kw_per_k": 0.2, "capacity_kwh_per_k": 10.0, "solar_gain": 0.3, "gains_kw": 0.3}
RATED = [(-7.0, 2.7), (2.0, 3.6), (7.0, 4.5)]  # A-7/W35, A2/W35, A7/W35


def fitted_and_held_out(seed: int) -> tuple[object, object, object]:
    """Fit days 1-7 of an 8-day house (0.05 °C noise, gaps); the 8th day's 24-hour prediction error of the fit and of
    the true model."""
    h = house(seed, days=8)
    k = 7 * 96
    fit = fit_thermal(h.indoor_c[:k], h.outdoor_c[:k], h.heat_kw[:k], hours=0.25, solar_kw=h.solar_kw[:k])
    held = (h.indoor_c[k:], h.outdoor_c[k:], h.heat_kw[k:])
    kwargs = {"hours": 0.25, "solar_kw": h.solar_kw[k:], "horizon_slots": 96}
    return fit, prediction_error(fit, *held, **kwargs), prediction_error(ThermalModel(**TRUE), *held, **kwargs)


def test_fit_recovers_a_noisy_week_with_gaps() -> None:
    """Seven days of 15-minute samples, indoor noise 0.05 °C, three outages and 2 % missing samples: UA and C within
    5 % on each of ten houses and unbiased on average; the held-out day is predicted as well as the true model does,
    to 0.05 °C RMSE."""
    rows = []
    for seed in range(10):
        fit, held, true = fitted_and_held_out(seed)
        rows.append((fit.ua_kw_per_k / 0.2 - 1, fit.capacity_kwh_per_k / 10 - 1, fit.solar_gain, fit.gains_kw))
        assert 500 < fit.samples < 7 * 96 - 2  # the gaps removed samples
        assert 0.06 < fit.rmse_c < 0.09  # one step: the noise of two measurements, 0.05 x sqrt(2) = 0.071
        assert fit.prediction.horizon_slots == 96 and fit.prediction.windows >= 7
        assert held.rmse_c <= true.rmse_c + 0.05 and held.max_c < 0.3
    errors = np.array(rows)
    assert np.abs(errors[:, :2]).max() < 0.05
    assert np.abs(errors[:, :2].mean(axis=0)).max() < 0.015
    assert errors[:, 2] == pytest.approx(np.full(10, 0.3), abs=0.05)
    assert errors[:, 3] == pytest.approx(np.full(10, 0.3), abs=0.2)


def test_least_squares_without_the_instrument_would_be_biased() -> None:
    """The reason for the instrument: ordinary least squares on a noisy house overestimates UA/C by about
    noise² / (h x the variance of T - T_out that the other regressors leave), while the fit is within its scatter."""
    h = house(3, noise_c=0.1, gaps=False)
    t = np.arange(len(h.indoor_c) - 1)
    lead = h.indoor_c[t] - h.outdoor_c[t]
    x = np.column_stack([h.heat_kw[t], -lead, np.ones(len(t)), h.solar_kw[t]])
    ols = np.linalg.lstsq(x, np.diff(h.indoor_c) / 0.25, rcond=None)[0]
    others = x[:, [0, 2, 3]]
    alone = lead - others @ np.linalg.lstsq(others, lead, rcond=None)[0]
    bias = 0.1**2 / 0.25 / np.mean(alone**2)
    assert ols[1] - 0.02 == pytest.approx(bias, rel=0.5)
    fit = fit_thermal(h.indoor_c, h.outdoor_c, h.heat_kw, hours=0.25, solar_kw=h.solar_kw)
    assert abs(fit.ua_kw_per_k / fit.capacity_kwh_per_k - 0.02) < bias / 2


@settings(max_examples=25)
@given(
    ua=st.floats(0.1, 0.5), c=st.floats(3.0, 40.0), g=st.floats(0.0, 0.5), gains=st.floats(-0.2, 0.5),
    seed=st.integers(0, 2**16), hourly=st.booleans(),
)
def test_fit_is_exact_without_noise(ua: float, c: float, g: float, gains: float, seed: int, hourly: bool) -> None:
    """Noise-free histories with gaps: the parameters come back to rounding, and the model predicts its own history
    exactly (a pair bridged over a gap would break both)."""
    hours = 1.0 if hourly else 0.25
    h = house(seed, hours=hours, ua=ua, c=c, g=g, gains=gains, noise_c=0.0, pump_kw=2.0 + 8 * ua)
    fit = fit_thermal(h.indoor_c, h.outdoor_c, h.heat_kw, hours=hours, solar_kw=h.solar_kw)
    assert [fit.ua_kw_per_k, fit.capacity_kwh_per_k, fit.solar_gain, fit.gains_kw] == pytest.approx(
        [ua, c, g, gains], rel=1e-7, abs=1e-8
    )
    assert fit.rmse_c < 1e-9 and fit.prediction.max_c < 1e-8
    assert fit.time_constant_h == pytest.approx(c / ua)


def test_fit_without_solar_and_a_solar_input_that_never_varies() -> None:
    """Without a solar input (or with one that is always 0) the sun's heat is fitted into nothing: g = 0."""
    h = house(1, g=0.0, noise_c=0.0)
    fit = fit_thermal(h.indoor_c, h.outdoor_c, h.heat_kw, hours=0.25)
    flat = fit_thermal(h.indoor_c, h.outdoor_c, h.heat_kw, hours=0.25, solar_kw=np.zeros(len(h.heat_kw)))
    for found in (fit, flat):
        assert found.solar_gain == 0.0
        assert [found.ua_kw_per_k, found.capacity_kwh_per_k, found.gains_kw] == pytest.approx([0.2, 10.0, 0.3])


def test_negative_solar_gain_is_left_out() -> None:
    """A solar input that the indoor temperature does not follow (here: it cools the house) is dropped, g = 0."""
    h = house(2, g=-0.2, noise_c=0.0)
    fit = fit_thermal(h.indoor_c, h.outdoor_c, h.heat_kw, hours=0.25, solar_kw=h.solar_kw)
    assert fit.solar_gain == 0.0 and fit.ua_kw_per_k > 0


def test_prediction_error_by_hand() -> None:
    """UA 0.1, C 1, h 1, outdoor 0, no heat, from 10 °C: 9, 8.1, 7.29. Against measured 10, 9, 8, 7 (one missing
    in the second test), windows of 3 and of 2 slots."""
    model = ThermalModel(ua_kw_per_k=0.1, capacity_kwh_per_k=1.0)
    zero = np.zeros(4)
    three = prediction_error(model, [10, 9, 8, 7], zero, zero, hours=1.0, horizon_slots=3)
    assert (three.rmse_c, three.max_c, three.points, three.windows) == pytest.approx(
        (math.sqrt((0.1**2 + 0.29**2) / 3), 0.29, 3, 1)
    )
    two = prediction_error(model, [10, 9, 8, 7], zero, zero, hours=1.0, horizon_slots=2)  # 9, 8.1 | from 8: 7.2
    assert (two.rmse_c, two.max_c, two.points, two.windows) == pytest.approx(
        (math.sqrt((0.1**2 + 0.2**2) / 3), 0.2, 3, 2)
    )
    gap = prediction_error(model, [10, math.nan, 8, 7], zero, zero, hours=1.0, horizon_slots=2)  # 8.1 | 7.2
    assert (gap.rmse_c, gap.points, gap.windows) == pytest.approx((math.sqrt((0.1**2 + 0.2**2) / 2), 2, 2))
    cut = prediction_error(model, [10, 9, 8, 7], [0, math.nan, 0, 0], zero, hours=1.0, horizon_slots=3)  # 9 | 7.2
    assert (cut.rmse_c, cut.points, cut.windows) == pytest.approx((0.2 / math.sqrt(2), 2, 2))


def test_simulate_and_gains() -> None:
    """One slot by hand: 20 + 0.5 / 5 * (3 - 0.2 * (20 - 0) + 0.5 * 2 + 0.25) = 20.025; NaN inputs propagate."""
    model = ThermalModel(ua_kw_per_k=0.2, capacity_kwh_per_k=5.0, solar_gain=0.5, gains_kw=0.25)
    assert model.simulate(20.0, [0.0], [3.0], hours=0.5, solar_kw=[2.0]) == pytest.approx([20.0, 20.025])
    assert np.isnan(model.simulate(20.0, [math.nan, 0.0], [3.0, 3.0], hours=0.5)[1:]).all()
    assert model.gains([2.0, math.nan, 0.0]) == pytest.approx([1.25, 0.25, 0.25])


def test_fit_refuses_histories_it_cannot_fit() -> None:
    h = house(4, noise_c=0.0, gaps=False)
    args = (h.indoor_c, h.outdoor_c, h.heat_kw)
    with pytest.raises(ThermalTooLittleData) as short:
        fit_thermal(*(a[:90] for a in args), hours=0.25)  # 88 samples, 96 needed (24 h)
    assert short.value.placeholders == {"samples": "88", "needed": "96"}
    assert short.value.translation_key == "thermal_too_little_data"
    holes = h.indoor_c.copy()
    holes[1::2] = math.nan  # no two consecutive measurements: nothing usable
    with pytest.raises(ThermalTooLittleData):
        fit_thermal(holes, h.outdoor_c, h.heat_kw, hours=0.25)
    with pytest.raises(ThermalNoHeating):
        fit_thermal(h.indoor_c, h.outdoor_c, np.zeros_like(h.heat_kw), hours=0.25)  # the heat pump never ran
    with pytest.raises(ThermalFlatTemperatures) as flat:
        fit_thermal(np.full(672, 20.0), np.full(672, 5.0), h.heat_kw[:672], hours=0.25)
    assert flat.value.placeholders == {"spread": "0.0"}
    with pytest.raises(ThermalNonPhysical) as odd:
        fit_thermal(h.indoor_c, h.outdoor_c, -h.heat_kw, hours=0.25)  # the heat cools the house
    assert set(odd.value.placeholders) == {"ua", "capacity"}


@pytest.mark.parametrize(
    ("kwargs", "match"),
    [
        ({"hours": 0.0}, "hours"),
        ({"hours": math.inf}, "hours"),
        ({"hours": 0.25, "solar_kw": np.zeros(5)}, "solar_kw"),
    ],
)
def test_fit_and_prediction_refuse_malformed_input(kwargs: dict[str, object], match: str) -> None:
    with pytest.raises(ValueError, match=match):
        fit_thermal(np.zeros(100), np.zeros(100), np.zeros(100), **kwargs)  # type: ignore[arg-type]


def test_malformed_arrays_and_models() -> None:
    with pytest.raises(ValueError, match="heat_kw"):
        fit_thermal(np.zeros(100), np.zeros(100), np.zeros(99), hours=0.25)
    with pytest.raises(ValueError, match="indoor_c"):
        fit_thermal(np.zeros((10, 10)), np.zeros(100), np.zeros(100), hours=0.25)
    with pytest.raises(ValueError, match="infinite"):
        fit_thermal(np.zeros(100), np.full(100, math.inf), np.zeros(100), hours=0.25)
    model = ThermalModel(ua_kw_per_k=0.1, capacity_kwh_per_k=1.0)
    with pytest.raises(ValueError, match="horizon_slots"):
        prediction_error(model, [1.0, 2.0], [0.0, 0.0], [0.0, 0.0], hours=1.0, horizon_slots=0)
    with pytest.raises(ValueError, match="no measured"):
        prediction_error(model, [math.nan, 2.0], [0.0, 0.0], [0.0, 0.0], hours=1.0, horizon_slots=2)
    for bad in ({"ua_kw_per_k": 0.0}, {"capacity_kwh_per_k": -1.0}, {"solar_gain": -0.1}, {"gains_kw": math.nan}):
        with pytest.raises(ValueError, match="thermal model"):
            ThermalModel(**{"ua_kw_per_k": 0.1, "capacity_kwh_per_k": 1.0, **bad})  # type: ignore[arg-type]


def test_cop_from_rated_points_by_hand() -> None:
    """Between the points linear; beyond them the outer segment continues (0.1/K below -7 °C, 0.18/K above 7 °C),
    clamped to [1, 8]."""
    outdoor = [-30.0, -15.0, -7.0, -2.5, 2.0, 4.5, 7.0, 20.0, 40.0, math.nan]
    expected = [1.0, 1.9, 2.7, 3.15, 3.6, 4.05, 4.5, 6.84, 8.0, math.nan]
    assert cop_from_points(RATED, outdoor) == pytest.approx(expected, nan_ok=True)
    assert cop_from_points(list(reversed(RATED)), outdoor) == pytest.approx(expected, nan_ok=True)
    assert cop_from_points([(-7, 2.7), (7, 4.5)], 0.0) == pytest.approx(3.6)
    assert cop_from_points(RATED, np.array([[0.0, 7.0]])).shape == (1, 2)


def test_cop_from_points_refuses_bad_points() -> None:
    for points in ([(2.0, 3.6)], [(2.0, 3.6), (2.0, 3.7)], [(2.0, 3.6), (7.0, math.nan)], [(2.0, 0.5), (7.0, 4.0)],
                   [(2.0, 3.6), (7.0, 9.0)], [(2.0, 4.5), (7.0, 3.6)]):
        with pytest.raises(ValueError):
            cop_from_points(points, 0.0)
    with pytest.raises(TypeError):
        cop_from_points([(2.0, 3.6), (7.0, None)], 0.0)  # type: ignore[list-item]


@given(
    temps=st.lists(st.floats(-25, 15), min_size=2, max_size=4, unique=True),
    steps=st.lists(st.floats(0, 1.5), min_size=4, max_size=4),
    outdoor=st.lists(st.floats(-40, 40), min_size=1, max_size=20),
)
def test_cop_from_points_properties(temps: list[float], steps: list[float], outdoor: list[float]) -> None:
    """Through every rated point, never falling as it gets warmer, always within [1, 8]."""
    temps = sorted(temps)
    if min(np.diff(temps)) < 0.1:
        return
    cops = list(np.minimum(1.5 + np.cumsum(steps[: len(temps)]), COP_MAX))
    points = list(zip(temps, cops, strict=True))
    assert cop_from_points(points, temps) == pytest.approx(cops)
    ordered = np.sort(np.asarray(outdoor))
    found = cop_from_points(points, ordered)
    assert (np.diff(found) >= -1e-12).all() and (found >= COP_MIN).all() and (found <= COP_MAX).all()


def test_cop_carnot_by_hand() -> None:
    """fraction x 308.15 / (35 - outdoor): 5.136 at 5 °C, 3.424 at -10 °C (0.5); no lift gives 8; 0.1 at -20 °C
    gives 0.56, clamped to 1."""
    found = cop_carnot([5.0, -10.0, 30.0, 35.0, 40.0, math.nan], flow_c=35.0, fraction=0.5)
    assert found == pytest.approx([0.5 * 308.15 / 30, 0.5 * 308.15 / 45, 8.0, 8.0, 8.0, math.nan], nan_ok=True)
    assert cop_carnot(-20.0, flow_c=35.0, fraction=0.1) == pytest.approx(1.0)
    assert cop_carnot(np.array([-5.0]), flow_c=55.0, fraction=0.45) == pytest.approx([0.45 * 328.15 / 60])


@pytest.mark.parametrize(
    "kwargs",
    [{"flow_c": math.nan, "fraction": 0.5}, {"flow_c": -300.0, "fraction": 0.5}, {"flow_c": 35.0, "fraction": 0.0},
     {"flow_c": 35.0, "fraction": 1.5}],
)
def test_cop_carnot_refuses_bad_settings(kwargs: dict[str, float]) -> None:
    with pytest.raises(ValueError):
        cop_carnot(0.0, **kwargs)
