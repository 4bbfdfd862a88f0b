"""Packaging: manifest.json as hassfest expects for a custom integration, hacs.json, services.yaml."""

from __future__ import annotations

import json
from pathlib import Path

import yaml

from homeassistant.const import __version__ as HA_VERSION

ROOT = Path(__file__).parent.parent
PACKAGE = ROOT / "custom_components" / "agentic_hems"


def test_manifest_keys_and_values() -> None:
    """domain and name first, the rest sorted; the keys a custom integration needs; pinned requirements."""
    manifest = json.loads((PACKAGE / "manifest.json").read_text())
    keys = list(manifest)
    assert keys[:2] == ["domain", "name"]
    assert keys[2:] == sorted(keys[2:])
    assert manifest["domain"] == "agentic_hems"
    assert manifest["config_flow"] is True
    assert manifest["iot_class"] == "cloud_polling"
    for key in ("version", "documentation", "issue_tracker", "codeowners"):
        assert manifest[key], key
    assert all("==" in requirement for requirement in manifest["requirements"])
    assert "entsoe-py==0.8.1" in manifest["requirements"]


def test_hacs_json() -> None:
    """HACS: a name and the oldest supported HA release, which the pinned test release satisfies."""
    hacs = json.loads((ROOT / "hacs.json").read_text())
    assert hacs == {"name": "Agentic HEMS", "homeassistant": "2025.4.0"}
    assert tuple(map(int, HA_VERSION.split(".")[:2])) >= (2025, 4)


def test_services_yaml_matches_the_registered_schemas() -> None:
    """Every service action in services.yaml is registered with the same fields."""
    from custom_components.agentic_hems.services import CLEAR_SCHEMA, LOAD_SCHEMA, SCHEDULE_SCHEMA
    from custom_components.agentic_hems.services_assistant import ASK_SCHEMA, RUNS_SCHEMA
    from custom_components.agentic_hems.services_control import DECIDE_SCHEMA, EVALUATE_SCHEMA, TRACES_SCHEMA
    from custom_components.agentic_hems import services_grid
    from custom_components.agentic_hems.grid.tools import TOOLS

    services = yaml.safe_load((PACKAGE / "services.yaml").read_text())
    assert set(services) == {"get_prices", "plan", "schedule", "clear_schedule", "evaluate_command", "confirm",
                             "reject", "get_traces", "ask", "get_runs", *TOOLS, "approve_authorization",
                             "deny_authorization", "acknowledge_incident", "verify_audit_chain"}
    assert set(services["get_prices"]["fields"]) == {"config_entry_id"}
    for name, schema in (("plan", LOAD_SCHEMA), ("schedule", SCHEDULE_SCHEMA), ("clear_schedule", CLEAR_SCHEMA),
                         ("evaluate_command", EVALUATE_SCHEMA), ("confirm", DECIDE_SCHEMA), ("reject", DECIDE_SCHEMA),
                         ("get_traces", TRACES_SCHEMA), ("ask", ASK_SCHEMA), ("get_runs", RUNS_SCHEMA)):
        assert set(services[name]["fields"]) == {str(key) for key in schema.schema}, name
    grid = [(name, services_grid.service_schema(name)) for name in TOOLS]
    grid += [("approve_authorization", services_grid.DECIDE_SCHEMA), ("deny_authorization", services_grid.DECIDE_SCHEMA),
             ("acknowledge_incident", services_grid.ACKNOWLEDGE_SCHEMA), ("verify_audit_chain", services_grid.VERIFY_SCHEMA)]
    for name, schema in grid:
        assert set(services[name]["fields"]) == {str(key) for key in schema.schema}, name
    assert "generate_audit_record" not in services  # internal: only the integration appends records
