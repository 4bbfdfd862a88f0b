"""The orchestrator's actions and their registry.

An :class:`Action` is a type (``GET_PRICES``, ``SCHEDULE``, ...) with string-keyed arguments. The registry maps each
type to its argument schema (:func:`..validation.closed`: extra keys refused) and a one-line description for the model;
later issues register more actions through :func:`register`.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
import re
from typing import Any

from ..grid.tools import TOOLS
from ..validation import Closed, closed, vol

GET_PRICES = "GET_PRICES"
GET_CALENDAR_CONSTRAINT = "GET_CALENDAR_CONSTRAINT"
CALCULATE_WINDOW_SUMS = "CALCULATE_WINDOW_SUMS"
CALL_AGENT = "CALL_AGENT"
SCHEDULE = "SCHEDULE"
EVALUATE_COMMAND = "EVALUATE_COMMAND"
EXPLAIN_DEVICE = "EXPLAIN_DEVICE"
FINISH = "FINISH"


@dataclass(frozen=True)
class Action:
    """One action the model asked for: ``type`` (upper case) and its ``args``."""

    type: str
    args: Mapping[str, Any] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {"type": self.type, "args": dict(self.args)}


@dataclass(frozen=True)
class ActionSpec:
    """What an action takes: its ``schema`` and a ``description`` for the model's instructions."""

    name: str
    schema: Closed
    description: str
    group: str = ""  # actions of a group share one line, shown when the request mentions the group's topic


_TEXT = vol.All(str, vol.Length(min=1, max=200))
_TIME = vol.All(str, vol.Length(min=1, max=40))

REGISTRY: dict[str, ActionSpec] = {}


def register(spec: ActionSpec) -> None:
    """Add (or replace) an action type."""
    REGISTRY[spec.name] = spec


for _spec in (
    ActionSpec(GET_PRICES, closed({}), "price summary"),
    ActionSpec(GET_CALENDAR_CONSTRAINT, closed({}), "EV deadline from the calendar"),
    ActionSpec(
        CALCULATE_WINDOW_SUMS,
        closed({vol.Required("duration_min"): vol.All(vol.Coerce(float), vol.Range(min=15, max=2880))}),
        "cheapest start for duration_min",
    ),
    ActionSpec(
        CALL_AGENT,
        closed({vol.Required("appliance"): _TEXT, vol.Optional("deadline"): _TIME}),
        "appliance agent's advice (appliance)",
    ),
    ActionSpec(
        SCHEDULE,
        closed(
            {
                vol.Required("appliance"): _TEXT,
                vol.Optional("deadline"): _TIME,
                vol.Optional("earliest_start"): _TIME,
                vol.Optional("start_at"): _TIME,
                vol.Optional("cancel"): bool,
            }
        ),
        "plan and store: appliance=a, b; optional deadline, earliest_start or start_at (HH:MM); cancel=true clears",
    ),
    ActionSpec(
        EVALUATE_COMMAND,
        closed(
            {
                vol.Required("intent"): _TEXT,
                vol.Optional("device_alias"): _TEXT,
                vol.Optional("room"): _TEXT,
                vol.Optional("device_type"): _TEXT,
                vol.Optional("params"): dict,
            }
        ),
        "device command via safety gates: intent, device_alias",
    ),
    ActionSpec(FINISH, closed({vol.Optional("summary", default=""): vol.All(str, vol.Length(max=2000))}), "summary"),
):
    register(_spec)


def validate(action: Action) -> Action:
    """Return ``action`` with its arguments checked and coerced.

    Raises:
        vol.Invalid: an unknown type or bad arguments (the message goes back to the model as the Observation).

    """
    spec = REGISTRY.get(action.type)
    if spec is None:
        raise vol.Invalid(f"unknown action {action.type}; use one of {', '.join(REGISTRY)}")
    return Action(action.type, spec.schema(dict(action.args)))


# The grid toolkit's tools: one action each, named after the tool in upper case. The arguments
# are the tool's fields; the tool's contract validates them when it runs (as the user who asked).
GRID_GROUP = "grid tools (arguments are the tool's fields; take a snapshot first)"
HOME_GROUP = "home plan"
GROUP_TOPICS: dict[str, re.Pattern[str]] = {
    HOME_GROUP: re.compile(r"\bwhy\b|warum|wieso|weshalb|heat ?pump|wärmepumpe|batter|speicher|akku", re.IGNORECASE),
    GRID_GROUP: re.compile(
        r"grid|netz|power.?flow|last.?fluss|contingen|n-1|forecast|prognos|flexibilit|dispatch|batter|incident|vorfall|"
        r"authori[sz]|freigabe|snapshot|twin|zwilling|simulat|feeder|bus|branch|fuse|sicherung",
        re.IGNORECASE,
    ),
}
register(
    ActionSpec(
        EXPLAIN_DEVICE,
        closed({vol.Required("device"): _TEXT, vol.Optional("lang", default="en"): vol.In(["en", "de"])}),
        "device, lang: why a battery or heat pump does what the plan has it do now; an appliance's stored plan",
        HOME_GROUP,
    )
)
GRID_ACTIONS: dict[str, str] = {
    "inspect_grid_state": "network_id",
    "retrieve_asset": "asset_id",
    "run_power_flow": "snapshot_id",
    "run_contingency": "snapshot_id",
    "run_forecast": "target, horizon_h",
    "simulate_action": "snapshot_id, plan_id, horizon_min",
    "calculate_flexibility": "window",
    "optimize_dispatch": "objective",
    "validate_constraints": "sim_id|plan_id",
    "request_authorization": "plan_id, sim_id, validation_id, explanation_id, requested_window",
    "generate_explanation": "plan_id|home_plan|current_home_plan",
    "create_incident": "severity, title, evidence_ids",
}
for _name, _arguments in GRID_ACTIONS.items():
    _fields = {vol.Optional(str(key)): object for key in TOOLS[_name][0].schema.schema if str(key) != "tenant"}
    register(ActionSpec(_name.upper(), closed(_fields), _arguments, GRID_GROUP))
