"""The whole-home plan in approval mode: one authorization request per plan, and the grants that carry it out.

Each new plan becomes one authorization request in :class:`~..grid_ha.records.GridRecords` (plan id ``home_<digest>``,
kind ``home_plan``; repair issue, notification, ``approve_authorization`` by an administrator, audit) holding every
command of the plan that needs approval: the batteries' and PV limit's (:func:`.home_exec.plan_actions`), the heat
pumps' (:func:`.heat_exec.plan_actions`) and the EV chargers' currents (:func:`.ev_approval.plan_actions`). Its summary lists each device with its settings. A newer plan withdraws the
older request (expired, its issue and notification closed). :class:`HomeApprovals` keeps the request in force; both
executors read their approved slot actions from it and carry each out with its grant.

The control entities are then grid setpoints (:class:`HomeSetpoints`): only a ``grid`` command with the request's
grant for the current slot passes the Policy gate, and only when it is exactly the approved command: the same intent
(service) and the same service data, numbers within :data:`VALUE_TOLERANCE` (a number's value, a climate's or
water heater's target temperature), strings equal (a select's option); a switch's ``turn_on`` is not its ``turn_off``.
"""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
import hashlib
from typing import TYPE_CHECKING, Any

from homeassistant.components import persistent_notification
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.util import dt as dt_util

from ..const import BATTERY_APPROVAL, DOMAIN
from ..gates.models import GrantRefusal, GridGrant, NormalizedCommand
from ..grid_ha.records import GridRecords, request_issue_id
from ..grid_ha.request_text import local_moment
from ..orchestrator.texts import language as text_language
from ..prices.curve import floor_slot
from . import ev_approval, heat_exec, home_exec
from .home_config import HomeConfig

if TYPE_CHECKING:
    from ..scheduling.charger import ChargerProfile
    from .home_manager import HomeResult
    from .sg_blocks import SgTimes

HOME_PLAN_PREFIX = "home_"
# plan id prefixes of the requests a new plan withdraws: ``heat_`` was a heat pump's own request, stored before one
# request covered the whole plan
WITHDRAWN_PREFIXES = (HOME_PLAN_PREFIX, "heat_")
VALUE_TOLERANCE = 1e-6  # how far a number in a command may be from the approved one
HOME_ACTIONS = home_exec.ACTIONS | heat_exec.ACTIONS | {ev_approval.ACTION_TYPE}
SUMMARY_ITEMS = 4  # settings listed per device in a request's summary; the rest are counted
TEXTS: dict[str, dict[str, str]] = {  # a request's summary, per language
    "en": {
        "head": "Whole-home plan until {end}:",
        "more": " (+{n} more)",
        "pv_limit": "PV limit",
        "charge": "charge {kw} kW",
        "discharge": "discharge {kw} kW",
        "mode": "mode {option}",
        "limit": "limit {kw} kW",
        "no_limit": "no limit",
        "current": "current {value} {unit}",
        "on": "on",
        "off": "off",
    },
    "de": {
        "head": "Hausplan bis {end}:",
        "more": " (+{n} weitere)",
        "pv_limit": "PV-Begrenzung",
        "charge": "laden {kw} kW",
        "discharge": "entladen {kw} kW",
        "mode": "Modus {option}",
        "limit": "begrenzen auf {kw} kW",
        "no_limit": "keine Begrenzung",
        "current": "Ladestrom {value} {unit}",
        "on": "an",
        "off": "aus",
    },
}

type Command = tuple[str, dict[str, Any]]  # (intent, service data)


def action_at(
    request: Mapping[str, Any], entity_id: str, slot: datetime, types: frozenset[str] = HOME_ACTIONS
) -> dict[str, Any] | None:
    """Return the request's action of one of ``types`` for ``entity_id`` covering ``slot``, or None."""
    return next(
        (
            a
            for a in request["actions"]
            if a["type"] in types
            and a.get("entity_id") == entity_id
            and datetime.fromisoformat(a["start"]) <= slot < datetime.fromisoformat(a["end"])
        ),
        None,
    )


def approved_command(hass: HomeAssistant, action: Mapping[str, Any]) -> Command | None:
    """Return the intent and service data that carry out a whole-home action now, None when nothing can be set."""
    if action["type"] == heat_exec.ACTION_TYPE:
        return heat_exec.heat_command(action["value"], action["entity_id"])
    if action["type"] == ev_approval.ACTION_TYPE:
        return "set_value", {"value": float(action["value"])}
    return home_exec.command_for(hass, action)


def command_refusal(approved: Command, command: NormalizedCommand, slot: datetime) -> GrantRefusal | None:
    """Return None when ``command`` is the ``approved`` one (see the module docstring), else why not."""
    intent, data = approved
    if command.intent == intent and _same_data(data, command.data):
        return None
    return GrantRefusal(
        reason=f"{_describe(command.intent, command.data)} on {command.entity_id} is not the approved "
        f"{_describe(intent, data)} for slot {slot.isoformat()}",
        approved={"intent": intent, "data": data},
    )


def _same_data(approved: Mapping[str, Any], data: Mapping[str, Any]) -> bool:
    if approved.keys() != data.keys():
        return False
    for key, want in approved.items():
        got = data[key]
        if isinstance(want, (int, float)) and not isinstance(want, bool):
            if not isinstance(got, (int, float)) or isinstance(got, bool) or abs(float(got) - want) > VALUE_TOLERANCE:
                return False
        elif got != want:
            return False
    return True


def _describe(intent: str, data: Mapping[str, Any]) -> str:
    """Return a command in words for a reason: ``turn_off``, ``select_option 'Auto'``, ``set_value 2500``."""
    values = [f"{v:g}" if isinstance(v, float) else repr(v) for v in data.values()]
    return " ".join([intent, *values])


def remaining(request: Mapping[str, Any], slot: datetime) -> list[dict[str, Any]]:
    """Return the request's actions from ``slot`` on, cut at ``slot`` (to compare with a new plan's)."""
    out = []
    for action in request["actions"]:
        if datetime.fromisoformat(action["end"]) <= slot:
            continue
        start = max(datetime.fromisoformat(action["start"]), slot)
        out.append({**action, "start": start.isoformat()})
    return out


def summary(
    config: HomeConfig,
    actions: list[dict[str, Any]],
    window: tuple[datetime, datetime],
    lang: str,
    temp_unit: str = "°C",
    *,
    chargers: Mapping[str, str] | None = None,
) -> str:
    """Return a request's summary in ``lang`` (``en`` or ``de``): one line per device with its settings.

    Times are local; the plan's end (``window[1]``) has its date when it is not on ``window[0]``'s day.
    ``temp_unit`` is HA's temperature unit, the unit of a heat pump's target temperature; ``chargers`` maps an EV
    charger's current setpoint to its name.

    Raises:
        KeyError: ``lang`` is neither ``en`` nor ``de``.

    """
    texts = TEXTS[lang]
    names = {b.control_entity: b.name for b in config.batteries if b.control_entity}
    names |= {b.power_setpoint: b.name for b in config.batteries if b.power_setpoint}
    names |= {e: h.name for h in config.heat_pumps for e in h.entities()} | dict(chargers or {})
    lines = [texts["head"].format(end=local_moment(window[1], lang, dt_util.as_local(window[0]).date()))]
    for entity in dict.fromkeys(a["entity_id"] for a in actions):
        mine = [a for a in actions if a["entity_id"] == entity]
        items = [f"{_setting(a, lang, temp_unit)} {_hhmm(a['start'])}–{_hhmm(a['end'])}" for a in mine[:SUMMARY_ITEMS]]
        more = texts["more"].format(n=len(mine) - SUMMARY_ITEMS) if len(mine) > SUMMARY_ITEMS else ""
        lines.append(f"- {names.get(entity, texts['pv_limit'])} ({entity}): {', '.join(items)}{more}")
    return "\n".join(lines)


def _hhmm(moment: str) -> str:
    return dt_util.as_local(datetime.fromisoformat(moment)).strftime("%H:%M")


def _setting(action: Mapping[str, Any], lang: str, temp_unit: str) -> str:
    """Return a planned setting in words: ``charge 2.5 kW``, ``mode Auto``, ``limit 3 kW``, ``21.5 °C``, ``on``."""
    texts, de = TEXTS[lang], lang == "de"
    if action["type"] in (home_exec.ACTION_TYPE, home_exec.MODE_POWER_ACTION):
        kw = action["p_kw"]
        return texts["charge" if kw >= 0 else "discharge"].format(kw=_num(abs(kw), de))
    if action["type"] == home_exec.MODE_ACTION:
        return texts["mode"].format(option=action["option"])
    if action["type"] == home_exec.LIMIT_ACTION:
        limit = action["limit_kw"]
        return texts["no_limit"] if limit is None else texts["limit"].format(kw=_num(limit, de))
    value = action["value"]
    if action["type"] == ev_approval.ACTION_TYPE:
        return texts["current"].format(value=_num(value, de), unit=action["unit"])
    return texts.get(value, value) if isinstance(value, str) else f"{_num(value, de)} {temp_unit}"


def _num(value: float, de: bool) -> str:
    text = f"{value:g}"
    return text.replace(".", ",") if de else text


class HomeApprovals:
    """The whole-home plan's request in force (approval mode), shared by the battery and heat pump executors."""

    def __init__(
        self,
        hass: HomeAssistant,
        config: HomeConfig,
        records: GridRecords,
        chargers: Mapping[str, tuple[str, ChargerProfile]] | None = None,
        *,
        sg_times: Mapping[str, SgTimes] | None = None,
    ) -> None:
        """Keep ``config``'s requests in ``records``; the latest live one is in force, also after a restart.

        ``chargers`` maps an appliance id to its name and charger profile (their currents are asked for too);
        ``sg_times`` an SG Ready heat pump's subentry id to its block times kept across restarts (:mod:`.sg_blocks`).
        Outside approval mode nothing is in force, and the requests left from approval mode are withdrawn.
        """
        self.hass = hass
        self.config = config
        self.records = records
        self.chargers = dict(chargers or {})
        self.sg_times = sg_times if sg_times is not None else {}
        live = [
            r["request_id"]
            for r in records.requests.values()
            if str(r["plan_id"]).startswith(HOME_PLAN_PREFIX) and r["status"] in ("pending", "approved")
        ]
        self.request_id: str | None = live[-1] if live and self.active else None
        if not self.active:
            self._withdraw()

    @property
    def active(self) -> bool:
        """True when the plan's commands wait for an administrator's approval."""
        return self.config.battery_control == BATTERY_APPROVAL

    def action_at(self, entity_id: str, slot: datetime, types: frozenset[str]) -> dict[str, Any] | None:
        """Return the approved request's action of ``types`` for ``entity_id`` in ``slot``, else None."""
        request = self.records.requests.get(self.request_id or "")
        if request is None or request["status"] != "approved":
            return None
        return action_at(request, entity_id, slot, types)

    def lapsed(self) -> bool:
        """Return True when the request in force expired unanswered (what is past its expiry expires first)."""
        self.records.expire_requests()
        request = self.records.requests.get(self.request_id or "")
        return request is not None and request["status"] == "expired"

    def grant(self, slot: datetime) -> GridGrant | None:
        """Return the grant a command of ``slot`` carries in approval mode (the request in force), else None."""
        return GridGrant(request_id=self.request_id, slot_start=slot) if self.active and self.request_id else None

    async def async_plan_changed(self, result: HomeResult, now: datetime) -> bool:
        """In approval mode, ask for approval of the plan's commands unless the latest request has the same ones.

        A latest request that expired unanswered does not count: the same commands are asked for again. A denied one
        does (a plan an administrator refused is not asked for again while it stays the same). Returns True when a new
        request was made (older ones withdrawn).
        """
        plan = result.plan
        if not self.active or plan is None:
            return False
        slot = floor_slot(now)
        actions = home_exec.plan_actions(plan, self.config, slot)
        actions += heat_exec.plan_actions(self.hass, result, self.config, slot, self.sg_times)
        profiles = {aid: profile for aid, (_, profile) in self.chargers.items()}
        actions += ev_approval.plan_actions(self.hass, plan, profiles, slot)
        latest = None if self.lapsed() else self.records.requests.get(self.request_id or "")
        if not actions or (latest is not None and remaining(latest, slot) == actions):
            return False
        self.request_id = await self._async_request(actions, (slot, plan.horizon_end))
        return True

    async def _async_request(self, actions: list[dict[str, Any]], window: tuple[datetime, datetime]) -> str:
        """Withdraw the older requests and submit one for ``actions``; return its id."""
        self._withdraw()
        digest = hashlib.sha256(repr(actions).encode()).hexdigest()[:12]
        request = await self.records.async_submit_request(
            {
                "plan_id": f"{HOME_PLAN_PREFIX}{digest}",
                "status": "pending",
                "kind": "home_plan",
                "summary": summary(
                    self.config,
                    actions,
                    window,
                    text_language(self.hass.config.language),
                    self.hass.config.units.temperature_unit,
                    chargers={profile.current_entity: name for name, profile in self.chargers.values()},
                ),
                "requested_window": {"start": window[0].isoformat(), "end": window[1].isoformat()},
                "actions": actions,
            }
        )
        return str(request["request_id"])

    def _withdraw(self) -> None:
        """Expire the live whole-home requests and close their issues and notifications (saved with the next save)."""
        for request in self.records.requests.values():
            if str(request["plan_id"]).startswith(WITHDRAWN_PREFIXES) and request["status"] in ("pending", "approved"):
                request["status"] = "expired"
                ir.async_delete_issue(self.hass, DOMAIN, request_issue_id(request["request_id"]))
                persistent_notification.async_dismiss(self.hass, request_issue_id(request["request_id"]))


class HomeSetpoints:
    """The gates' setpoint authority with the whole-home plan's control entities.

    The grid toolkit's setpoint, plus (in approval mode) the batteries', PV limit's and heat pumps' control entities,
    which only an approved whole-home request sets, with exactly its slot's command.
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
        """Return the grid setpoint and the home plan's control entities."""
        return self.records.reserved() | self.home_entities

    def scheduled(self) -> frozenset[str]:
        """Return the control entities the home plan drives automatically."""
        return self.automatic

    def check_grant(self, grant: GridGrant, command: NormalizedCommand, now: datetime) -> GrantRefusal | None:
        """Return None when an approved home request covers exactly ``command`` now, else why not.

        Requests of the grid toolkit are checked by :meth:`GridRecords.check_grant`.
        """
        request = self.records.requests.get(grant.request_id)
        if request is None or not str(request["plan_id"]).startswith(HOME_PLAN_PREFIX):
            return self.records.check_grant(grant, command, now)
        if request["status"] != "approved":
            return GrantRefusal(reason=f"authorization request {grant.request_id} is {request['status']}, not approved")
        slot, entity_id = floor_slot(now), command.entity_id
        if grant.slot_start != slot:
            why = f"the command is for slot {grant.slot_start.isoformat()}, not the current slot {slot.isoformat()}"
            return GrantRefusal(reason=why)
        if entity_id not in self.home_entities or (action := action_at(request, entity_id, slot)) is None:
            why = f"authorization request {grant.request_id} sets nothing on {entity_id} in slot {slot.isoformat()}"
            return GrantRefusal(reason=why)
        if (approved := approved_command(self.hass, action)) is None:
            return GrantRefusal(reason=f"{entity_id} has no maximum to set")
        return command_refusal(approved, command, slot)
