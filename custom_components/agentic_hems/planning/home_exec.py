"""The whole-home plan's commands: one gated command per driven entity and slot, automatic or approved.

The driven entities and what each slot sets (:func:`plan_actions`, :func:`command_for`):

- a battery with a power setpoint (number, input_number): ``set_value`` to the planned power in the entity's unit;
- a battery with a mode select (select, input_select): ``select_option`` to the option its subentry names for the
  slot's mode (:func:`~..scheduling.home_explain.battery_mode`: charge, discharge or idle); a mode without an option
  sets nothing;
- the PV limit (the options' curtailment entity, a number or input_number): ``set_value`` to the planned PV
  production (forecast minus curtailment) where the plan curtails, else to the entity's ``max``.

- ``automatic``: at each slot boundary the slot's command goes through the gates (``source_agent="scheduler"``); the
  policy rules of its domain decide.
- ``approval``: each new plan becomes an authorization request in :class:`~..grid_ha.records.GridRecords` (repair
  issue, notification, ``approve_authorization`` by an administrator, audit). The control entities are then grid
  setpoints: only an approved request's slot command passes the Policy gate (``source_agent="grid"`` with a
  :class:`~..gates.models.GridGrant`), and only with the value (or option) approved for that slot
  (:class:`HomeSetpoints`).

A command is issued only when an entity's command changes from the last one carried out (or waiting for a
confirmation): an unchanged plan issues nothing; a dry run, a refusal or a failure is tried again at the next slot.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
import hashlib
from typing import TYPE_CHECKING, Any

from homeassistant.components import persistent_notification
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import issue_registry as ir

from ..const import BATTERY_APPROVAL, DOMAIN, LOGGER
from ..gates.models import SOURCE_GRID, SOURCE_SCHEDULER, GridGrant, Outcome
from ..grid_ha.records import GridRecords, request_issue_id
from ..grid_ha.site import setpoint_value
from ..prices.curve import floor_slot
from ..scheduling.home_explain import battery_mode
from ..scheduling.home_model import HomePlan
from .home_config import BatteryConfig, HomeConfig

if TYPE_CHECKING:
    from ..control.manager import ControlManager

ACTION_TYPE = "home_battery_power"
MODE_ACTION = "home_battery_mode"
LIMIT_ACTION = "home_pv_limit"
HOME_PLAN_PREFIX = "home_"
SETPOINT_DOMAINS = ("number", "input_number")
MODE_DOMAINS = ("select", "input_select")
CURTAIL_EPS_KW = 1e-3  # below this much planned curtailment the PV limit goes back to its maximum

type Channel = tuple[dict[str, Any], list[dict[str, Any] | None]]  # (fixed action fields, value fields per slot)


def plan_actions(plan: HomePlan, config: HomeConfig, since: datetime) -> list[dict[str, Any]]:
    """Return the plan's commands from slot ``since`` on, as request actions (equal neighbours merged).

    Each is ``{"start", "end", "type", "entity_id", ...}``: ``home_battery_power`` with ``battery`` and ``p_kw``
    (kW, + charging) for a setpoint battery, ``home_battery_mode`` with ``battery``, ``mode`` (charge, discharge,
    idle) and ``option`` (the select's option for it) for a select battery (slots whose mode has no option are left
    out), ``home_pv_limit`` with ``limit_kw`` (the planned PV production, None for the entity's maximum) for the
    curtailment entity.
    """
    actions: list[dict[str, Any]] = []
    for fixed, values in channels(plan, config):
        for i, value in enumerate(values):
            start, end = plan.start + i * plan.resolution, plan.start + (i + 1) * plan.resolution
            if end <= since or value is None:
                continue
            last = actions[-1] if actions else None
            if (
                last
                and last["entity_id"] == fixed["entity_id"]
                and last["end"] == start.isoformat()
                and {k: last[k] for k in value} == value
            ):
                last["end"] = end.isoformat()
                continue
            actions.append({"start": max(start, since).isoformat(), "end": end.isoformat(), **fixed, **value})
    return actions


def channels(plan: HomePlan, config: HomeConfig) -> list[Channel]:
    """Return each driven entity of the plan with its value fields per slot (see :func:`plan_actions`)."""
    out: list[Channel] = []
    for bat in config.batteries:
        series, entity = plan.battery_kw.get(bat.subentry_id), bat.control_entity
        if series is None or not entity:
            continue
        fixed = {"entity_id": entity, "battery": bat.subentry_id}
        if _domain(entity) in SETPOINT_DOMAINS:
            out.append(({"type": ACTION_TYPE, **fixed}, [{"p_kw": _kw(v)} for v in series]))
        elif _domain(entity) in MODE_DOMAINS:
            out.append(({"type": MODE_ACTION, **fixed}, [_mode(bat, float(v)) for v in series]))
    entity = config.curtailment_entity
    if entity and _domain(entity) in SETPOINT_DOMAINS:
        limits = [
            {"limit_kw": _kw(pv - cut) if cut > CURTAIL_EPS_KW else None}
            for pv, cut in zip(plan.pv_kw, plan.curtail_kw, strict=True)
        ]
        out.append(({"type": LIMIT_ACTION, "entity_id": entity}, list(limits)))
    return out


def _domain(entity_id: str) -> str:
    return entity_id.split(".", 1)[0]


def _kw(value: float) -> float:
    return round(float(value), 3) + 0.0


def _mode(bat: BatteryConfig, kw: float) -> dict[str, Any] | None:
    """Return a select battery's mode fields for a planned power, None when its mode has no option."""
    mode = battery_mode(kw)
    option = bat.control_modes.get(mode)
    return None if option is None else {"mode": mode, "option": option}


def action_at(request: Mapping[str, Any], entity_id: str, slot: datetime) -> dict[str, Any] | None:
    """Return the request's home action for ``entity_id`` covering ``slot``, or None."""
    return next(
        (
            a
            for a in request["actions"]
            if a["type"] in (ACTION_TYPE, MODE_ACTION, LIMIT_ACTION)
            and a.get("entity_id") == entity_id
            and datetime.fromisoformat(a["start"]) <= slot < datetime.fromisoformat(a["end"])
        ),
        None,
    )


def command_for(hass: HomeAssistant, action: Mapping[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """Return the gates' intent and params that carry out a home action now, None when nothing can be set.

    A battery power is the setpoint's value in its unit; a mode is the select's option; a PV limit is the planned
    production in the entity's unit, clamped to its ``min``..``max``, or its ``max`` (None when it has none).
    """
    entity_id = action["entity_id"]
    if action["type"] == MODE_ACTION:
        return "select_option", {"option": action["option"]}
    if action["type"] == ACTION_TYPE:
        return "set_value", {"value": setpoint_value(hass, entity_id, action["p_kw"])}
    state = hass.states.get(entity_id)
    low, high = (state.attributes.get(k) if state else None for k in ("min", "max"))
    if not isinstance(high, (int, float)):
        return None
    if action["limit_kw"] is None:
        return "set_value", {"value": float(high)}
    value = min(setpoint_value(hass, entity_id, action["limit_kw"]), float(high))
    return "set_value", {"value": max(value, float(low)) if isinstance(low, (int, float)) else value}


class HomeSetpoints:
    """The gates' setpoint authority with the home batteries.

    The grid toolkit's setpoint, plus (in approval mode) the batteries' control entities, which only an approved
    whole-home request sets, with its slot's value.
    """

    def __init__(
        self,
        hass: HomeAssistant,
        records: GridRecords,
        home_entities: frozenset[str],
        automatic: frozenset[str] = frozenset(),
    ) -> None:
        """Wrap ``records``; ``home_entities`` are the control entities reserved to approved home plans.

        ``automatic`` are the control entities the home plan drives on its own (automatic mode): the scheduler sets
        them even when one is also the grid toolkit's setpoint.
        """
        self.hass = hass
        self.records = records
        self.home_entities = home_entities
        self.automatic = automatic

    def reserved(self) -> frozenset[str]:
        """Return the grid setpoint and the home batteries' control entities."""
        return self.records.reserved() | self.home_entities

    def scheduled(self) -> frozenset[str]:
        """Return the control entities the home plan drives automatically."""
        return self.automatic

    def check_grant(self, grant: GridGrant, entity_id: str, data: Mapping[str, Any], now: datetime) -> str | None:
        """Return None when an approved home request covers setting ``entity_id`` to ``data`` now, else why not.

        Requests of the grid toolkit are checked by :meth:`GridRecords.check_grant`.
        """
        request = self.records.requests.get(grant.request_id)
        if request is None or not str(request["plan_id"]).startswith(HOME_PLAN_PREFIX):
            return self.records.check_grant(grant, entity_id, data, now)
        if request["status"] != "approved":
            return f"authorization request {grant.request_id} is {request['status']}, not approved"
        slot = floor_slot(now)
        if grant.slot_start != slot:
            return f"the command is for slot {grant.slot_start.isoformat()}, not the current slot {slot.isoformat()}"
        if entity_id not in self.home_entities or (action := action_at(request, entity_id, slot)) is None:
            return f"authorization request {grant.request_id} sets nothing on {entity_id} in slot {slot.isoformat()}"
        if (command := command_for(self.hass, action)) is None:
            return f"{entity_id} has no maximum to set"
        return _mismatch(command[1], data, slot)


def _mismatch(approved: Mapping[str, Any], data: Mapping[str, Any], slot: datetime) -> str | None:
    """Return why ``data`` is not the ``approved`` params (a value within 1e-6, the same option), or None."""
    if "option" in approved:
        option = data.get("option")
        return None if option == approved["option"] else f"option {option!r} is not the approved {approved['option']!r}"
    expected, value = float(approved["value"]), data.get("value")
    if not isinstance(value, (int, float)) or abs(float(value) - expected) > 1e-6:
        return f"value {value} is not the approved {expected:g} for slot {slot.isoformat()}"
    return None


class HomeExecutor:
    """Issues the plan's battery commands (see the module docstring)."""

    def __init__(self, hass: HomeAssistant, config: HomeConfig, control: ControlManager, records: GridRecords) -> None:
        """Drive ``config``'s batteries through ``control``; approval requests live in ``records``."""
        self.hass = hass
        self.config = config
        self.control = control
        self.records = records
        self.issued: dict[str, tuple[str, dict[str, Any]]] = {}  # entity -> the last command issued
        # the latest home request still in force (approval mode), also after a restart
        live = [
            r["request_id"]
            for r in records.requests.values()
            if str(r["plan_id"]).startswith(HOME_PLAN_PREFIX) and r["status"] in ("pending", "approved")
        ]
        self.request_id: str | None = live[-1] if live else None

    @property
    def approval(self) -> bool:
        """True when battery commands wait for an administrator's approval."""
        return self.config.battery_control == BATTERY_APPROVAL

    async def async_plan_changed(self, plan: HomePlan, now: datetime) -> bool:
        """In approval mode, ask for approval of the plan's actions unless the latest request has the same ones.

        Returns True when a new request was made (older home requests are withdrawn: expired, issues closed).
        """
        if not self.approval:
            return False
        slot = floor_slot(now)
        actions = plan_actions(plan, self.config, slot)
        latest = self.records.requests.get(self.request_id or "")
        if not actions or (latest is not None and _remaining(latest, slot) == actions):
            return False
        self.request_id = await async_request_approval(
            self.hass,
            self.records,
            HOME_PLAN_PREFIX,
            summary=f"Whole-home plan: battery powers until {plan.horizon_end.isoformat()}",
            window=(slot, plan.horizon_end),
            actions=actions,
        )
        return True

    async def async_execute(self, plan: HomePlan | None, now: datetime) -> list[dict[str, Any]]:
        """Issue each driven entity's command for the slot at ``now`` when it changed; returns the gates' traces."""
        slot = floor_slot(now)
        records = []
        for entity, action in self._actions_at(plan, slot).items():
            command = None if action is None else command_for(self.hass, action)
            if command is None or self.issued.get(entity) == command:
                continue
            if _holds(self.hass, entity, command):  # already so (e.g. after a reload): nothing to issue
                self.issued[entity] = command
                continue
            record = await self._command(entity, command, slot)
            if record["outcome"] in (Outcome.EXECUTED, Outcome.PENDING_CONFIRMATION):
                self.issued[entity] = command  # a dry run, a refusal or a failure is tried again next slot
            records.append(record)
        if records and self.approval:
            await self.records.async_save()
        return records

    def _actions_at(self, plan: HomePlan | None, slot: datetime) -> dict[str, dict[str, Any] | None]:
        """Return per driven entity the action for ``slot``: the approved one (approval mode) or the plan's."""
        if self.approval:
            request = self.records.requests.get(self.request_id or "")
            approved = request if request and request["status"] == "approved" else None
            return {
                e: action_at(approved, e, slot) if approved else None for e in sorted(self.config.control_entities())
            }
        if plan is None:
            return {}
        in_slot = [a for a in plan_actions(plan, self.config, slot) if datetime.fromisoformat(a["start"]) == slot]
        return {a["entity_id"]: a for a in in_slot}

    async def _command(self, entity_id: str, command: tuple[str, dict[str, Any]], slot: datetime) -> dict[str, Any]:
        """Run one command through the gates (with the approved request's grant in approval mode)."""
        grant = GridGrant(request_id=self.request_id, slot_start=slot) if self.approval and self.request_id else None
        intent, params = command
        value = next(iter(params.values()))
        LOGGER.debug("Whole-home plan: %s to %s for slot %s", entity_id, value, slot.isoformat())
        return dict(
            await self.control.async_evaluate(
                source_agent=SOURCE_GRID if grant else SOURCE_SCHEDULER,
                candidate={"intent": intent, "device_alias": entity_id, "params": params},
                context=Context(),
                raw_input=f"set {entity_id} to {value}: whole-home plan, slot {slot.isoformat()}",
                slot_start=slot,
                grant=grant,
            )
        )


def _remaining(request: Mapping[str, Any], slot: datetime) -> list[dict[str, Any]]:
    """Return the request's actions from ``slot`` on, cut at ``slot`` (to compare with a new plan's)."""
    out = []
    for action in request["actions"]:
        if datetime.fromisoformat(action["end"]) <= slot:
            continue
        start = max(datetime.fromisoformat(action["start"]), slot)
        out.append({**action, "start": start.isoformat()})
    return out


def _holds(hass: HomeAssistant, entity_id: str, command: tuple[str, dict[str, Any]]) -> bool:
    """Return True when ``entity_id`` already is what ``command`` sets: a select's option or a number's value."""
    state = hass.states.get(entity_id)
    if state is None:
        return False
    intent, params = command
    if intent == "select_option":
        return bool(state.state == params["option"])
    try:
        return abs(float(state.state) - float(params["value"])) <= 1e-6
    except ValueError:
        return False


async def async_request_approval(
    hass: HomeAssistant,
    records: GridRecords,
    prefix: str,
    *,
    summary: str,
    window: tuple[datetime, datetime],
    actions: list[dict[str, Any]],
) -> str:
    """Ask an administrator to approve ``actions`` of a whole-home plan; return the new request's id.

    Every older pending or approved request whose plan id starts with ``prefix`` is withdrawn first (expired, its
    repair issue and notification closed): a new plan replaces them. The plan id is ``prefix`` plus a digest of the
    actions.
    """
    for request in records.requests.values():
        if str(request["plan_id"]).startswith(prefix) and request["status"] in ("pending", "approved"):
            request["status"] = "expired"
            ir.async_delete_issue(hass, DOMAIN, request_issue_id(request["request_id"]))
            persistent_notification.async_dismiss(hass, request_issue_id(request["request_id"]))
    digest = hashlib.sha256(repr(actions).encode()).hexdigest()[:12]
    request = await records.async_submit_request(
        {
            "plan_id": f"{prefix}{digest}",
            "status": "pending",
            "kind": "home_plan",
            "summary": summary,
            "requested_window": {"start": window[0].isoformat(), "end": window[1].isoformat()},
            "actions": actions,
        }
    )
    return str(request["request_id"])
