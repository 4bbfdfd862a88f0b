"""An EV charger's control profile: how a planned power becomes the current (or power) its setpoint is sent.

A charger draws ``amps x phases x voltage_v / 1000`` kW. While it charges the current is whole steps of ``step_a``
(rounded down, so the plan's power and the fuse are never passed by more than ``STEP_SLACK`` of a step, which
forgives the solver's noise: 4.8299990 kW planned for 7 A on three phases is 7 A, not 6 A), never below ``min_a`` (the charger would stop or
refuse) and never above ``max_a``. Power setpoints (W or kW numbers) are the rounded current's power in their unit.
Nothing here imports Home Assistant.
"""

from __future__ import annotations

from dataclasses import dataclass
import math

UNITS = ("A", "W", "kW")
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
        phases: 1 or 3 phases charged.
        voltage_v: nominal phase voltage, V, > 0.

    """

    current_entity: str
    unit: str = "A"
    min_a: float = 6.0
    step_a: float = 1.0
    phases: int = 3
    voltage_v: float = 230.0

    def __post_init__(self) -> None:
        """Raise ValueError for a malformed profile."""
        if self.unit not in UNITS or self.phases not in (1, 3):
            raise ValueError(f"charger {self.current_entity}: unit must be A, W or kW and phases 1 or 3")
        values = (self.min_a, self.step_a, self.voltage_v)
        if not all(math.isfinite(v) and v > 0 for v in values):
            raise ValueError(f"charger {self.current_entity}: min_a, step_a and voltage_v must be finite and > 0")

    def kw(self, amps: float) -> float:
        """Return the kW drawn at ``amps`` A."""
        return amps * self.phases * self.voltage_v / 1000

    @property
    def min_kw(self) -> float:
        """The least kW while charging (``min_a``'s power)."""
        return self.kw(self.min_a)

    def current_a(self, power_kw: float, max_a: float | None = None) -> float:
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
        amps = power_kw * 1000 / (self.phases * self.voltage_v)
        steps = math.floor(amps / self.step_a + STEP_SLACK) * self.step_a
        top = math.inf if max_a is None else math.floor(max_a / self.step_a + STEP_SLACK) * self.step_a
        return round(max(min(steps, top), self.min_a), 6)

    def setpoint(self, power_kw: float, max_value: float | None = None) -> float:
        """Return the value to send for ``power_kw`` in the setpoint's unit (0 when off).

        ``max_value`` is the setpoint's ``max`` in its unit (None for none).
        """
        max_a = None if max_value is None else self.amps_of(max_value)
        amps = self.current_a(power_kw, max_a)
        if self.unit == "A":
            return amps
        kw = self.kw(amps)
        return round(kw * 1000 if self.unit == "W" else kw, 6)

    def amps_of(self, value: float) -> float:
        """Return the current of a setpoint ``value`` in the profile's unit, A."""
        if self.unit == "A":
            return value
        kw = value / 1000 if self.unit == "W" else value
        return kw * 1000 / (self.phases * self.voltage_v)


def follow_surplus(planned_kw: float, export_kw: float, max_kw: float) -> float:
    """Return the slot's charging power: the plan's, raised by the PV surplus being exported, at most ``max_kw``.

    Only a slot the plan charges in is raised (``planned_kw`` > ``EPS_KW``); a slot it leaves off stays off, so
    nothing starts that the plan did not start. ``export_kw`` is the measured export (>= 0; 0 when importing).
    """
    if not planned_kw > EPS_KW:
        return 0.0
    return min(planned_kw + max(export_kw, 0.0), max(max_kw, planned_kw))
