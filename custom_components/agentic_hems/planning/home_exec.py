"""The whole-home plan's battery commands: one gated command per battery and slot, automatic or approved.

- ``automatic``: at each slot boundary the slot's planned power goes through the gates as ``set_value`` on the
  battery's control entity (``source_agent="scheduler"``); the policy rules of its domain (number, input_number)
  decide.
- ``approval``: each new plan becomes an authorization request in :class:`~..grid_ha.records.GridRecords` (repair
  issue, notification, ``approve_authorization`` by an administrator, audit). The control entities are then grid
  setpoints: only an approved request's slot command passes the Policy gate (``source_agent="grid"`` with a
  :class:`~..gates.models.GridGrant`), and only with the value approved for that slot (:class:`HomeSetpoints`).

A command is issued only when a battery's value changes from the last one carried out (or waiting for a
confirmation): an unchanged plan issues nothing; a dry run, a refusal or a failure is tried again at the next slot.
A select control entity is not driven (the gates have no ``select_option`` intent); the plan still shows it.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
import hashlib
from typing import TYPE_CHECKING, Any

from homeassistant.components import persistent_notification
from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import issue_registry as ir

from ..const import BATTERY_APPROVAL, DOMAIN, LOGGER, SOURCE_SCHEDULER
from ..gates.models import SOURCE_GRID, GridGrant, Outcome
from ..grid_ha.records import GridRecords, request_issue_id
from ..grid_ha.site import setpoint_value
from ..prices.curve import floor_slot
from ..scheduling.home_model import HomePlan
from .home_config import BatteryConfig, HomeConfig

if TYPE_CHECKING:
    from ..control.manager import ControlManager

ACTION_TYPE = "home_battery_power"
HOME_PLAN_PREFIX = "home_"
SETPOINT_DOMAINS = ("number", "input_number")


def plan_actions(plan: HomePlan, config: HomeConfig, since: datetime) -> list[dict[str, Any]]:
    """Return the plan's battery powers from slot ``since`` on, as request actions (equal neighbours merged).

    Each is ``{"start", "end", "type": "home_battery_power", "entity_id", "battery", "p_kw"}`` (kW, + charging).
    """
    actions: list[dict[str, Any]] = []
    for bat in config.batteries:
        if bat.subentry_id not in plan.battery_kw or not _drivable(bat):
            continue
        for i, kw in enumerate(plan.battery_kw[bat.subentry_id]):
            start, end = plan.start + i * plan.resolution, plan.start + (i + 1) * plan.resolution
            if end <= since:
                continue
            value = round(float(kw), 3) + 0.0
            last = actions[-1] if actions else None
            if (
                last
                and last["entity_id"] == bat.control_entity
                and last["p_kw"] == value
                and last["end"] == start.isoformat()
            ):
                last["end"] = end.isoformat()
                continue
            actions.append(
                {
                    "start": max(start, since).isoformat(),
                    "end": end.isoformat(),
                    "type": ACTION_TYPE,
                    "entity_id": bat.control_entity,
                    "battery": bat.subentry_id,
                    "p_kw": value,
                }
            )
    return actions


def _drivable(bat: BatteryConfig) -> bool:
    """Tell whether the battery's control entity is a power setpoint the gates can set."""
    return bool(bat.control_entity) and str(bat.control_entity).split(".")[0] in SETPOINT_DOMAINS


def action_at(request: Mapping[str, Any], entity_id: str, slot: datetime) -> dict[str, Any] | None:
    """Return the request's home battery action for ``entity_id`` covering ``slot``, or None."""
    return next(
        (
            a
            for a in request["actions"]
            if a["type"] == ACTION_TYPE
            and a.get("entity_id") == entity_id
            and datetime.fromisoformat(a["start"]) <= slot < datetime.fromisoformat(a["end"])
        ),
        None,
    )


class HomeSetpoints:
    """The gates' setpoint authority with the home batteries.

    The grid toolkit's setpoint, plus (in approval mode) the batteries' control entities, which only an approved
    whole-home request sets, with its slot's value.
    """

    def __init__(self, hass: HomeAssistant, records: GridRecords, home_entities: frozenset[str]) -> None:
        """Wrap ``records``; ``home_entities`` are the control entities reserved to approved home plans."""
        self.hass = hass
        self.records = records
        self.home_entities = home_entities

    def reserved(self) -> frozenset[str]:
        """Return the grid setpoint and the home batteries' control entities."""
        return self.records.reserved() | self.home_entities

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
            return f"authorization request {grant.request_id} sets no power on {entity_id} in slot {slot.isoformat()}"
        expected, value = setpoint_value(self.hass, entity_id, action["p_kw"]), data.get("value")
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
        self.issued: dict[str, float] = {}  # control entity -> the last value issued
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
        self._withdraw()
        digest = hashlib.sha256(repr(actions).encode()).hexdigest()[:12]
        request = await self.records.async_submit_request(
            {
                "plan_id": f"{HOME_PLAN_PREFIX}{digest}",
                "status": "pending",
                "kind": "home_plan",
                "summary": f"Whole-home plan: battery powers until {plan.horizon_end.isoformat()}",
                "requested_window": {"start": slot.isoformat(), "end": plan.horizon_end.isoformat()},
                "actions": actions,
            }
        )
        self.request_id = request["request_id"]
        return True

    def _withdraw(self) -> None:
        """Expire every older pending or approved home request: a new plan replaces them."""
        for request in self.records.requests.values():
            if str(request["plan_id"]).startswith(HOME_PLAN_PREFIX) and request["status"] in ("pending", "approved"):
                request["status"] = "expired"
                ir.async_delete_issue(self.hass, DOMAIN, request_issue_id(request["request_id"]))
                persistent_notification.async_dismiss(self.hass, request_issue_id(request["request_id"]))

    async def async_execute(self, plan: HomePlan | None, now: datetime) -> list[dict[str, Any]]:
        """Issue each battery's value for the slot at ``now`` when it changed; returns the gates' traces."""
        slot = floor_slot(now)
        records = []
        for bat in self.config.batteries:
            value = self._value_at(bat, plan, slot)
            entity = bat.control_entity
            if value is None or entity is None or self.issued.get(entity) == value:
                continue
            record = await self._command(entity, value, slot)
            if record["outcome"] in (Outcome.EXECUTED, Outcome.PENDING_CONFIRMATION):
                self.issued[entity] = value  # a dry run, a refusal or a failure is tried again next slot
            records.append(record)
        if records and self.approval:
            await self.records.async_save()
        return records

    def _value_at(self, bat: BatteryConfig, plan: HomePlan | None, slot: datetime) -> float | None:
        """Return the value to set in ``slot``: the approved one (approval mode) or the plan's, in the entity's unit."""
        if not _drivable(bat) or bat.control_entity is None:
            return None
        if self.approval:
            request = self.records.requests.get(self.request_id or "")
            action = (
                action_at(request, bat.control_entity, slot) if request and request["status"] == "approved" else None
            )
            kw = None if action is None else float(action["p_kw"])
        else:
            i = int((slot - plan.start) / plan.resolution) if plan is not None else -1
            series = plan.battery_kw.get(bat.subentry_id) if plan is not None else None
            kw = round(float(series[i]), 3) + 0.0 if series is not None and 0 <= i < series.size else None
        return None if kw is None else setpoint_value(self.hass, bat.control_entity, kw)

    async def _command(self, entity_id: str, value: float, slot: datetime) -> dict[str, Any]:
        """Run one ``set_value`` through the gates (with the approved request's grant in approval mode)."""
        grant = GridGrant(request_id=self.request_id, slot_start=slot) if self.approval and self.request_id else None
        LOGGER.debug("Whole-home plan: %s to %s for slot %s", entity_id, value, slot.isoformat())
        return dict(
            await self.control.async_evaluate(
                source_agent=SOURCE_GRID if grant else SOURCE_SCHEDULER,
                candidate={"intent": "set_value", "device_alias": entity_id, "params": {"value": value}},
                context=Context(),
                raw_input=f"set {entity_id} to {value:g}: whole-home plan, slot {slot.isoformat()}",
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
