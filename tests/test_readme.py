"""Every service-action example in the README validates against the schema its action is registered with.

The YAML examples (``action: agentic_hems.x`` with its ``data``) and the REST examples (``curl`` to
``/api/services/agentic_hems/x`` with a JSON body): each names only fields the action has and every field it
requires; an example without templates passes the whole schema, as Home Assistant would check it on the call.
"""

from __future__ import annotations

import json
from pathlib import Path
import re
import textwrap
from typing import Any

import pytest
import voluptuous as vol
import yaml

ROOT = Path(__file__).parent.parent
README = (ROOT / "README.md").read_text()
FENCE = re.compile(r"^( *)```(yaml|bash)\n(.*?)^\1```", re.MULTILINE | re.DOTALL)
CURL = re.compile(r"/api/services/agentic_hems/(\w+)\?return_response\" \\\n\s*-d '(.*?)'", re.DOTALL)


def _schemas() -> dict[str, vol.Schema]:
    from custom_components.agentic_hems.assistant.services import ASK_SCHEMA, RUNS_SCHEMA
    from custom_components.agentic_hems.control.services import DECIDE_SCHEMA, EVALUATE_SCHEMA, TRACES_SCHEMA
    from custom_components.agentic_hems.grid.tools import TOOLS
    from custom_components.agentic_hems.grid_ha import services as grid
    from custom_components.agentic_hems.planning.services import (
        CLEAR_SCHEMA, LOAD_SCHEMA, PLAN_HOME_SCHEMA, SCHEDULE_SCHEMA,
    )

    return {
        "plan": LOAD_SCHEMA, "schedule": SCHEDULE_SCHEMA, "clear_schedule": CLEAR_SCHEMA, "plan_home": PLAN_HOME_SCHEMA,
        "evaluate_command": EVALUATE_SCHEMA, "confirm": DECIDE_SCHEMA, "reject": DECIDE_SCHEMA,
        "get_traces": TRACES_SCHEMA, "ask": ASK_SCHEMA, "get_runs": RUNS_SCHEMA,
        **{name: grid.service_schema(name) for name in TOOLS},
        "approve_authorization": grid.DECIDE_SCHEMA, "deny_authorization": grid.DECIDE_SCHEMA,
        "acknowledge_incident": grid.ACKNOWLEDGE_SCHEMA, "verify_audit_chain": grid.VERIFY_SCHEMA,
    }


def examples() -> list[tuple[str, str, dict[str, Any]]]:
    """(where, action, data) of every README example that calls one of the integration's actions."""
    found = []
    for match in FENCE.finditer(README):
        line = README[: match.start()].count("\n") + 1
        body = textwrap.dedent(match.group(3))
        if match.group(2) == "bash":
            found += [(f"README.md:{line} curl", name, json.loads(data)) for name, data in CURL.findall(body)]
            continue
        documents = list(yaml.safe_load_all(body))  # a card's block may hold several documents
        items = [item for doc in documents for item in (doc if isinstance(doc, list) else [doc])]
        for item in items:
            action = item.get("action", "") if isinstance(item, dict) else ""
            if action.startswith("agentic_hems."):
                found.append((f"README.md:{line}", action.split(".", 1)[1], item.get("data") or {}))
    return found


EXAMPLES = examples()


def _templated(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_templated(v) for v in value.values())
    if isinstance(value, list):
        return any(_templated(v) for v in value)
    return isinstance(value, str) and "{{" in value


def test_the_readme_has_examples_of_the_actions() -> None:
    """The examples found include the gate pipeline's (YAML and REST), the planner's and the grid toolkit's."""
    names = {name for _, name, _ in EXAMPLES}
    assert {"evaluate_command", "plan", "inspect_grid_state", "approve_authorization"} <= names, names
    assert any(where.endswith("curl") for where, _, _ in EXAMPLES)


@pytest.mark.parametrize(("where", "name", "data"), EXAMPLES, ids=[f"{w}:{n}" for w, n, _ in EXAMPLES])
def test_each_example_validates(where: str, name: str, data: dict[str, Any]) -> None:
    schema = _schemas()[name]
    fields = {str(key): key for key in schema.schema}
    assert set(data) <= set(fields), (where, sorted(set(data) - set(fields)))
    required = {str(k) for k in schema.schema if isinstance(k, vol.Required) and k.default is vol.UNDEFINED}
    assert required <= set(data), (where, name, sorted(required - set(data)))
    if not _templated(data):
        schema(data)  # raises vol.Invalid with the field, as the call would


def test_the_appliance_table_states_the_forms_ranges() -> None:
    """Installation step 5 names each number's range as the appliance form checks it (a Power "0.01 to 100" there
    once met a form that refuses anything above 50 kW)."""
    from custom_components.agentic_hems.flow.schemas import APPLIANCE_LIMITS

    rows = dict(re.findall(r"^\| (Power|Duration|Energy) \| (.*) \|$", README, re.MULTILINE))
    for label, key in (("Power", "power_kw"), ("Duration", "duration_min"), ("Energy", "energy_kwh")):
        low, high = (f"{v:g}" for v in APPLIANCE_LIMITS[key][:2])
        assert f"({low} to {high}" in rows[label], (label, rows[label], low, high)
