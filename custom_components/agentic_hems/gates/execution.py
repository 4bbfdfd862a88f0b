"""Gate 8, Execution: carry out a passed, allowed (or confirmed) plan and verify it took effect.

The HA shell implements :class:`Actuator` (``hass.services.async_call(..., blocking=True, context=...)`` and a
state-change wait); tests use a recorder. Nothing here imports Home Assistant.

- The entity already shows the expected state: nothing is called, the result is ``executed`` with ``no_op: true``.
- The call raises :class:`ActuationError`: ``failed``; the key is not remembered, so a retry may run.
- The call returns but the expected state does not arrive within ``wait_s``: ``failed`` ("phantom success"), never
  success; the key is remembered (something may have happened).
- A plan with nothing observable (a button press): ``executed`` with ``verified: false``.
- An expected state with an ``entity_id`` is read back on that entity (a start button's operation sensor), which
  ``before`` is then the state of.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
import math
from typing import Any, Protocol

from .models import DryRunPlan, GateResult
from .view import StateInfo

NAME = "execution"
VALUE_TOLERANCE = 1e-6  # relative, for numeric states and attributes


class ActuationError(Exception):
    """The service call failed (unknown service, invalid data, a device error); the message says why."""


class Actuator(Protocol):
    """How Execution reaches HA; the only place a device is acted on."""

    async def async_call(self, domain: str, service: str, entity_id: str, data: Mapping[str, Any]) -> None:
        """Call ``domain.service`` on ``entity_id`` with ``data``, blocking until HA returns.

        Raises:
            ActuationError: the call failed.

        """
        ...

    async def async_wait_for(self, entity_id: str, expected: Mapping[str, Any], timeout_s: float) -> StateInfo | None:
        """Return the first state of ``entity_id`` (current or coming) that matches ``expected``.

        A state matches when :func:`state_matches` says so; None after ``timeout_s`` seconds.
        """
        ...


def _close(actual: Any, wanted: Any) -> bool:
    try:
        a, w = float(actual), float(wanted)
    except TypeError, ValueError:
        return bool(actual == wanted)
    return math.isclose(a, w, rel_tol=VALUE_TOLERANCE, abs_tol=VALUE_TOLERANCE)


def state_matches(expected: Mapping[str, Any], state: StateInfo | None) -> bool:
    """Return True when ``state`` shows ``expected``.

    ``expected`` has ``tables.expected_state``'s forms; False for ``{}`` or no state.
    """
    if state is None or not expected:
        return False
    if "states" in expected and state.state not in expected["states"]:
        return False
    if "numeric_state" in expected and not _close(state.state, expected["numeric_state"]):
        return False
    for name, wanted in expected.get("attributes", {}).items():
        if name not in state.attributes or not _close(state.attributes[name], wanted):
            return False
    return True


def watched(plan: DryRunPlan) -> str:
    """Return the entity whose state shows that ``plan`` took effect: its expected state's, else its target."""
    return str(plan.expected_state.get("entity_id") or plan.target["entity_id"])


async def execute(
    plan: DryRunPlan, before: StateInfo | None, actuator: Actuator, *, wait_s: float, now: datetime
) -> tuple[GateResult, bool]:
    """Execute ``plan`` and verify it; returns (the gate result, whether the key must be remembered).

    ``before`` is the :func:`watched` entity's state just before (from the view); ``now`` the aware UTC moment of the
    call.
    Evidence (the trace's ``execution_result``): ``service``, ``entity_id``, ``data``, ``state_before``,
    ``state_after``, ``no_op``, ``verified``, ``wait_s``, ``error`` and ``executed_at``.
    """
    entity_id = plan.target["entity_id"]
    service = f"{plan.domain}.{plan.service}"
    evidence: dict[str, Any] = {
        "service": service,
        "entity_id": entity_id,
        "data": dict(plan.data),
        "state_before": before.state if before else None,
        "state_after": None,
        "no_op": False,
        "verified": False,
        "wait_s": wait_s,
        "error": None,
        "executed_at": now.isoformat(),
    }
    if state_matches(plan.expected_state, before):
        evidence |= {"no_op": True, "verified": True, "state_after": evidence["state_before"]}
        return GateResult(NAME, True, f"no-op: {entity_id} already {evidence['state_before']}", evidence), True
    try:
        await actuator.async_call(plan.domain, plan.service, entity_id, plan.data)
    except ActuationError as err:
        evidence["error"] = str(err)
        return GateResult(NAME, False, f"{service} failed: {err}", evidence), False
    if not plan.expected_state:
        return GateResult(NAME, True, f"executed {service} on {entity_id} (nothing to verify)", evidence), True
    after = await actuator.async_wait_for(watched(plan), plan.expected_state, wait_s)
    if after is None:
        evidence["error"] = "phantom success"
        return (
            GateResult(
                NAME,
                False,
                f"phantom success: {service} returned but {watched(plan)} did not reach {dict(plan.expected_state)} "
                f"within {wait_s:g} s",
                evidence,
            ),
            True,
        )
    evidence |= {"verified": True, "state_after": after.state}
    return GateResult(NAME, True, f"executed {service}: {watched(plan)} is {after.state}", evidence), True
