"""An EV charger's control profile: how a planned power becomes the current (or power) its setpoint is sent.

A charger draws ``amps x phases x voltage_v / 1000`` kW. While it charges the current is whole steps of ``step_a``
(rounded down, so the plan's power and the fuse are never passed by more than ``STEP_SLACK`` of a step, which
forgives the solver's noise: 4.8299990 kW planned for 7 A on three phases is 7 A, not 6 A), never below ``min_a`` (the charger would stop or
refuse) and never above ``max_a``. Power setpoints (W or kW numbers) are the rounded current's power in their unit.

A charger with a phase entity (a ``select`` with a 1-phase and a 3-phase option, or a ``switch`` such as HA core's
``peblar`` "force single phase", on for one phase) charges on one phase where the power lies below the 3-phase
minimum (``min_a`` on three phases, 4.14 kW at 6 A and 230 V), else on three (:meth:`ChargerProfile.phases_for`); its
least power is then the 1-phase minimum (1.38 kW). It switches at most once per ``phase_interval_min``
(:meth:`ChargerProfile.next_phases`). A reported power or current (:func:`drawing`) tells whether the car draws
what the setpoint allows. Nothing here imports Home Assistant.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

UNITS = ("A", "W", "kW")
READ_UNITS = ("A", "W", "kW")  # the units of a reported charging current or power
DRAW_SHARE = 0.5  # a charger draws what it was asked when its reading is at least this share of the asked value
EPS_KW = 1e-3  # a planned power at or below this is "off"
STEP_SLACK = 1e-4  # a current this fraction of a step below a whole step counts as that step (the solver's noise)


@dataclass(frozen=True, kw_only=True)
class ChargerProfile:
    """How an EV charger is driven.

    Attributes:
        current_entity: the setpoint entity (a number), in ``unit``.
        unit: "A" (a charging current), "W" or "kW" (a charging power).
        min_a: the least current while charging, A (6 A by IEC 61851), > 0.
        step_a: the current's step, A, > 0.
        phases: 1 or 3 phases charged (3 with a phase entity: the most it charges on).
        voltage_v: nominal phase voltage, V, > 0.
        phase_entity: the ``select`` or ``switch`` that switches between 1 and 3 phases, None for none.
        phase_one, phase_three: the phase entity's state (an option, or ``on``/``off``) for 1 and for 3 phases.
        phase_interval_min: the least time between two phase switches, min, >= 0.
        power_entity: a sensor reporting the charging power (W, kW) or current (A), None for none.
        stop_entity: the ``button`` that stops the charger when a start ``button`` is its controlled entity, else None.

    """

    current_entity: str
    unit: str = "A"
    min_a: float = 6.0
    step_a: float = 1.0
    phases: int = 3
    voltage_v: float = 230.0
    phase_entity: str | None = None
    phase_one: str = "on"
    phase_three: str = "off"
    phase_interval_min: float = 15.0
    power_entity: str | None = None
    stop_entity: str | None = None

    def __post_init__(self) -> None:
        """Raise ValueError for a malformed profile."""
        if self.unit not in UNITS or self.phases not in (1, 3):
            raise ValueError(f"charger {self.current_entity}: unit must be A, W or kW and phases 1 or 3")
        values = (self.min_a, self.step_a, self.voltage_v)
        if not all(math.isfinite(v) and v > 0 for v in values):
            raise ValueError(f"charger {self.current_entity}: min_a, step_a and voltage_v must be finite and > 0")
        if self.phase_entity and (self.phases != 3 or self.phase_one == self.phase_three):
            raise ValueError(f"charger {self.current_entity}: phase switching needs 3 phases and two distinct states")
        if not (math.isfinite(self.phase_interval_min) and self.phase_interval_min >= 0):
            raise ValueError(f"charger {self.current_entity}: phase_interval_min must be finite and >= 0")

    def kw(self, amps: float, phases: int | None = None) -> float:
        """Return the kW drawn at ``amps`` A on ``phases`` phases (the profile's ``phases`` for None)."""
        return amps * (phases or self.phases) * self.voltage_v / 1000

    @property
    def min_kw(self) -> float:
        """The least kW while charging: ``min_a``'s power, on one phase when the charger switches phases."""
        return self.kw(self.min_a, 1 if self.phase_entity else None)

    def phases_for(self, power_kw: float) -> int:
        """Return the phases for ``power_kw``: 1 below the 3-phase minimum when the charger switches, else ``phases``."""
        if self.phase_entity and power_kw < self.kw(self.min_a - STEP_SLACK * self.step_a, 3):  # the solver's noise
            return 1
        return self.phases

    def phases_of(self, state: str | None) -> int | None:
        """Return the phases the phase entity's ``state`` stands for, None for another state (unknown, unavailable)."""
        return {self.phase_one: 1, self.phase_three: 3}.get(state or "")

    def next_phases(self, power_kw: float, have: int | None, since_min: float | None) -> int:
        """Return the phases to charge ``power_kw`` on, given the phases ``have`` (None: unknown).

        ``since_min`` is the time since the phase entity last changed, min (None: unknown, no wait). Within
        ``phase_interval_min`` of the last switch the charger stays on ``have``.
        """
        want = self.phases_for(power_kw)
        if have is not None and want != have and since_min is not None and since_min < self.phase_interval_min:
            return have
        return want

    def current_a(self, power_kw: float, max_a: float | None = None, phases: int | None = None) -> float:
        """Return the current for ``power_kw``: 0 when off, else whole steps rounded down within min_a..max_a.

        ``max_a`` is the charger's maximum current (the setpoint's ``max``), None for none. A power above 0 but
        below ``min_a``'s is raised to ``min_a``: a charging slot never asks less than the charger can draw.

        Raises:
            ValueError: ``max_a`` is below ``min_a`` (the charger cannot charge at its minimum).

        """
        if max_a is not None and max_a < self.min_a:
            raise ValueError(f"charger {self.current_entity}: its maximum {max_a:g} A is below {self.min_a:g} A")
        if not power_kw > EPS_KW:
            return 0.0
        amps = power_kw * 1000 / ((phases or self.phases) * self.voltage_v)
        steps = math.floor(amps / self.step_a + STEP_SLACK) * self.step_a
        top = math.inf if max_a is None else math.floor(max_a / self.step_a + STEP_SLACK) * self.step_a
        return round(max(min(steps, top), self.min_a), 6)

    def setpoint(self, power_kw: float, max_value: float | None = None, phases: int | None = None) -> float:
        """Return the value to send for ``power_kw`` on ``phases`` phases in the setpoint's unit (0 when off).

        ``max_value`` is the setpoint's ``max`` in its unit (None for none); ``phases`` None: the profile's.
        """
        max_a = None if max_value is None else self.amps_of(max_value, phases)
        amps = self.current_a(power_kw, max_a, phases)
        if self.unit == "A":
            return amps
        kw = self.kw(amps, phases)
        return round(kw * 1000 if self.unit == "W" else kw, 6)

    def amps_of(self, value: float, phases: int | None = None) -> float:
        """Return the current of a setpoint ``value`` in the profile's unit on ``phases`` phases, A."""
        if self.unit == "A":
            return value
        kw = value / 1000 if self.unit == "W" else value
        return kw * 1000 / ((phases or self.phases) * self.voltage_v)


def drawing(reading: float, unit: str, asked_kw: float, asked_a: float) -> bool:
    """Return True when a charger reporting ``reading`` in ``unit`` draws what it was asked.

    ``unit`` is W or kW (compared with ``asked_kw``, the setpoint's power) or A (with ``asked_a``, the current per
    phase); it draws when the reading is at least :data:`DRAW_SHARE` of the asked value.

    Raises:
        ValueError: ``unit`` is not one of :data:`READ_UNITS`.

    """
    if unit not in READ_UNITS:
        raise ValueError(f"a charger's reading must be in A, W or kW, got {unit!r}")
    if unit == "A":
        return reading >= DRAW_SHARE * asked_a
    return reading / (1000 if unit == "W" else 1) >= DRAW_SHARE * asked_kw


def follow_surplus(planned_kw: float, export_kw: float, max_kw: float) -> float:
    """Return the slot's charging power: the plan's, raised by the PV surplus being exported, at most ``max_kw``.

    Only a slot the plan charges in is raised (``planned_kw`` > ``EPS_KW``); a slot it leaves off stays off, so
    nothing starts that the plan did not start. ``export_kw`` is the measured export (>= 0; 0 when importing).
    """
    if not planned_kw > EPS_KW:
        return 0.0
    return min(planned_kw + max(export_kw, 0.0), max(max_kw, planned_kw))
