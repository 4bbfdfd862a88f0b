"""Gate 5, Freshness: the state is recent enough for the command's risk.

The age is ``now - (last_reported or last_updated)``; the TTL by risk: 0-1: 5 min, 2-3: 30 s, 4-5: 5 s. An
unavailable, unknown or missing state fails.

Refresh hook (the shell implements it): an entity that polls (``EntityInfo.polls``) may be refreshed once with
``homeassistant.update_entity`` when this gate fails as stale; the shell then re-runs :func:`check` with
``refreshed_at`` set to the moment the refresh was requested, and ``last_reported`` must not be earlier.
:func:`.pipeline.run_async` does this through its ``refresh`` argument. Push-only entities are never refreshed
(an update only rewrites the cached state): a stale one at risk 4-5 fails with "stale: refresh and retry".

A push-only entity (``EntityInfo.pushes``: a loaded entity that neither polls, nor is a template, nor has an assumed
state) at risk 0-3 passes while its state is usable, whatever its age (evidence ``push: true``): its integration sends
every change and marks it unavailable when the device is lost, so an old state is an unchanged one, not a stale one; a
thermostat or a relay that reports only on change would otherwise be refused for ever. At risk 4-5 (locks, garage doors, alarms) the TTL
holds for push entities too: the device must have reported within 5 s.

HA's own helpers (``HELPER_DOMAINS``: input_boolean, input_number, ...) have no device behind them: their state is
held by HA itself and cannot be out of date, so their age is not checked (evidence ``helper: true``). Without this a
helper that controls an appliance would block every scheduled stop hours after its start.

A button's state (``STATELESS_DOMAINS``) is only the moment it was last pressed, ``unknown`` before the first press:
it says nothing about the device, so any state but ``unavailable`` passes (evidence ``stateless: true``); what a press
did is read back by Execution. An entity whose ``unknown`` means idle (``EntityInfo.idle_unknown``, a program select
with no program) is usable while ``unknown``; its age is checked as any other state's.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Any

from .models import GateContext, GateResult
from .view import StateInfo

NAME = "freshness"
UNUSABLE_STATES = frozenset({"unavailable", "unknown"})
STATELESS_DOMAINS = frozenset({"button", "input_button"})
STALE_REASON = "stale: refresh and retry"
HELPER_DOMAINS = frozenset(
    {
        "input_boolean",
        "input_number",
        "input_select",
        "input_text",
        "input_datetime",
        "input_button",
        "counter",
        "timer",
    }
)


def ttl_for(risk: int) -> timedelta:
    """Maximum state age for a risk level: 0-1: 5 min, 2-3: 30 s, 4-5 (and anything higher): 5 s."""
    if risk <= 1:
        return timedelta(minutes=5)
    if risk <= 3:
        return timedelta(seconds=30)
    return timedelta(seconds=5)


PUSH_MAX_RISK = 3


def check(
    state: StateInfo | None,
    risk: int,
    now: datetime,
    *,
    refreshed_at: datetime | None = None,
    pushes: bool = False,
    idle_unknown: bool = False,
) -> tuple[bool, str, dict[str, Any]]:
    """Return (passed, reason, evidence) for ``state`` at ``now`` (aware UTC).

    ``pushes``: the entity is push-only; ``idle_unknown``: ``unknown`` means idle (see the module docstring). Evidence: ``state``, ``last_updated``,
    ``last_reported``, ``age_s`` (seconds, a future stamp counts as 0), ``ttl_s``, ``risk_level``, ``refreshed_at``,
    and ``helper`` or ``push`` when those pass it regardless of age.
    """
    ttl = ttl_for(risk)
    evidence: dict[str, Any] = {"risk_level": risk, "ttl_s": ttl.total_seconds(), "refreshed_at": refreshed_at}
    if state is None:
        return False, "no state", evidence
    seen = state.last_reported or state.last_updated
    age = max(now - seen, timedelta(0))
    evidence |= {
        "state": state.state,
        "last_updated": state.last_updated,
        "last_reported": state.last_reported,
        "age_s": age.total_seconds(),
    }
    if state.entity_id.split(".", 1)[0] in STATELESS_DOMAINS and state.state != "unavailable":
        evidence["stateless"] = True
        return True, "usable: a button's state is only its last press", evidence
    if state.state in UNUSABLE_STATES and not (idle_unknown and state.state == "unknown"):
        return False, f"state is {state.state}", evidence
    if state.entity_id.split(".", 1)[0] in HELPER_DOMAINS:
        evidence["helper"] = True
        return True, "fresh: a helper's state is held by HA itself", evidence
    if pushes and risk <= PUSH_MAX_RISK:
        evidence["push"] = True
        return True, f"current: the device pushes every change (last one {age.total_seconds():.1f} s ago)", evidence
    if refreshed_at is not None and seen < refreshed_at:  # the same instant counts: HA stamps after the request
        return False, "not reported since the refresh: " + STALE_REASON, evidence
    if age > ttl:
        return False, f"{STALE_REASON} (age {age.total_seconds():.1f} s > {ttl.total_seconds():.0f} s)", evidence
    return True, f"fresh (age {age.total_seconds():.1f} s <= {ttl.total_seconds():.0f} s)", evidence


def evaluate(ctx: GateContext, *, refreshed_at: datetime | None = None) -> GateResult:
    """Pass when the entity's state is usable and fresh for ``ctx.command.risk_level``; sets ``ctx.state``."""
    assert ctx.command is not None  # device_resolved ran
    ctx.state = ctx.view.state(ctx.command.entity_id)
    pushes = bool(ctx.entity and ctx.entity.pushes)
    idle = bool(ctx.entity and ctx.entity.idle_unknown)
    passed, reason, evidence = check(
        ctx.state, ctx.command.risk_level, ctx.now, refreshed_at=refreshed_at, pushes=pushes, idle_unknown=idle
    )
    evidence["entity_id"] = ctx.command.entity_id
    evidence["polls"] = bool(ctx.entity and ctx.entity.polls)
    return GateResult(NAME, passed, reason, evidence)
