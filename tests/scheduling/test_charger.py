"""The EV charger profile's rounding rule against an enumeration of the currents the charger accepts."""

from __future__ import annotations

import math

from hypothesis import example, given, strategies as st
import pytest

from custom_components.agentic_hems.scheduling.charger import STEP_SLACK, ChargerProfile, drawing, follow_surplus


def allowed_currents(profile: ChargerProfile, max_a: float) -> list[float]:
    """Every current the charger may be sent while charging: min_a and the whole steps from it up to max_a."""
    steps = [k * profile.step_a for k in range(int(max_a / profile.step_a) + 2)]
    return sorted({profile.min_a, *(a for a in steps if profile.min_a <= a <= max_a + STEP_SLACK * profile.step_a)})


@given(
    power=st.floats(0.0, 30.0),
    min_a=st.sampled_from([6.0, 8.0, 10.0]),
    step_a=st.sampled_from([0.1, 0.5, 1.0, 4.0]),
    phases=st.sampled_from([1, 3]),
    max_a=st.sampled_from([16.0, 32.0, 13.5]),
)
def test_current_is_the_largest_allowed_within_the_power(power, min_a, step_a, phases, max_a):
    """Off at 0; else the largest allowed current whose power stays within the plan's, the minimum when none."""
    profile = ChargerProfile(current_entity="number.c", min_a=min_a, step_a=step_a, phases=phases)
    got = profile.current_a(power, max_a)
    if power <= 1e-3:
        assert got == 0.0
        return
    allowed = allowed_currents(profile, max_a)
    within = [a for a in allowed if profile.kw(a) <= power + profile.kw(STEP_SLACK * step_a)]
    assert got == pytest.approx(max(within) if within else min(allowed), abs=1e-6)
    assert got >= min_a - 1e-9  # never below the minimum while charging


def test_worked_examples_and_units():
    """11 kW three-phase is 15.94 A -> 15 A; 2 kW asks the 6 A minimum; W and kW setpoints carry the rounded power."""
    amps = ChargerProfile(current_entity="number.easee_current")
    assert amps.current_a(11.0) == 15.0
    assert amps.current_a(2.0) == 6.0
    assert amps.current_a(40.0, max_a=16.0) == 16.0
    assert amps.setpoint(0.0) == 0.0
    watts = ChargerProfile(current_entity="number.c", unit="W", phases=1)
    assert watts.setpoint(3.0) == pytest.approx(13 * 230.0)
    assert ChargerProfile(current_entity="number.c", unit="kW").setpoint(7.0, max_value=11.0) == pytest.approx(6.9)
    with pytest.raises(ValueError, match="below"):
        amps.current_a(5.0, max_a=5.0)
    with pytest.raises(ValueError):
        ChargerProfile(current_entity="number.c", phases=2)
    assert math.isclose(amps.min_kw, 4.14)
    assert amps.current_a(4.829999) == 7.0  # solver noise below a whole step
    assert amps.current_a(4.8299) == 6.0


def test_surplus_raises_a_charging_slot_only():
    """The PV surplus adds to a planned charge up to the maximum; it never starts a slot the plan leaves off."""
    assert follow_surplus(4.14, 2.0, 11.0) == pytest.approx(6.14)
    assert follow_surplus(4.14, 20.0, 11.0) == 11.0
    assert follow_surplus(0.0, 5.0, 11.0) == 0.0
    assert follow_surplus(6.0, -3.0, 11.0) == 6.0


@given(power=st.floats(0.01, 30.0), max_a=st.sampled_from([16.0, 32.0]))
@example(power=10.349955452917404, max_a=16.0)  # 14.99993 A: 15 A within the solver's noise
@example(power=4.14 - 0.5e-4, max_a=16.0)  # the three-phase minimum within the noise
def test_a_phase_switching_charger_takes_one_phase_exactly_below_the_three_phase_minimum(power, max_a):
    """Oracle by enumeration: of the currents the charger accepts on each phase count (6..max_a A, step 1), the slot
    charges on one phase iff no three-phase current fits within the power; its current is then the largest one-phase
    current within the power (the 6 A minimum when none fits), capped at max_a."""
    profile = ChargerProfile(current_entity="number.c", phase_entity="select.p", phase_one="1", phase_three="3")
    slack = STEP_SLACK * 1.0  # a current this much of a step below a whole step counts as it (the solver's noise)
    three = [a for a in range(6, int(max_a) + 1) if (a - slack) * 3 * 0.23 <= power]
    one = [a for a in range(6, int(max_a) + 1) if (a - slack) * 0.23 <= power]
    phases = profile.phases_for(power)
    assert phases == (3 if three else 1)
    assert profile.current_a(power, max_a, phases) == (max(three) if three else max(one, default=6))


def test_phase_switching_bounds_the_plan_at_one_phase_and_waits_for_the_interval():
    """The least power is 6 A on one phase (1.38 kW); a switch within the interval keeps the phases it has."""
    profile = ChargerProfile(
        current_entity="number.c", phase_entity="switch.force_single_phase", phase_interval_min=15
    )
    assert profile.min_kw == pytest.approx(1.38)
    assert ChargerProfile(current_entity="number.c").min_kw == pytest.approx(4.14)
    assert (profile.phases_of("on"), profile.phases_of("off"), profile.phases_of("unavailable")) == (1, 3, None)
    assert profile.next_phases(2.0, 3, 14.9) == 3  # too soon: stays on three
    assert profile.next_phases(2.0, 3, 15.0) == 1
    assert profile.next_phases(2.0, None, 0.0) == 1  # unknown phases: switch
    assert profile.next_phases(4.14, 1, 60.0) == 3
    with pytest.raises(ValueError, match="3 phases"):
        ChargerProfile(current_entity="number.c", phases=1, phase_entity="select.p")
    with pytest.raises(ValueError, match="3 phases"):
        ChargerProfile(current_entity="number.c", phase_entity="select.p", phase_one="x", phase_three="x")


def test_drawing_compares_the_reading_with_half_the_asked_value():
    """W and kW against the asked kW, A against the asked current per phase; other units are refused."""
    assert drawing(2070.0, "W", 4.14, 6.0)
    assert not drawing(2069.0, "W", 4.14, 6.0)
    assert drawing(2.07, "kW", 4.14, 6.0)
    assert drawing(3.0, "A", 4.14, 6.0) and not drawing(2.9, "A", 4.14, 6.0)
    with pytest.raises(ValueError):
        drawing(1.0, "VA", 4.14, 6.0)
