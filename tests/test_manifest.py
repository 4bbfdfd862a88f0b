"""Packaging: manifest.json as hassfest expects for a custom integration, hacs.json, services.yaml."""

from __future__ import annotations

from importlib import metadata
import json
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name
import yaml

import homeassistant
from homeassistant.const import __version__ as HA_VERSION

ROOT = Path(__file__).parent.parent
PACKAGE = ROOT / "custom_components" / "agentic_hems"
# The iot_class values HA's own integrations use (hassfest itself is not in the installed package).
IOT_CLASSES = {
    json.loads(path.read_text()).get("iot_class") for path in (Path(homeassistant.__file__).parent / "components").glob(
        "*/manifest.json")
} - {None}


def test_manifest_keys_and_values() -> None:
    """domain and name first, the rest sorted; the keys a custom integration needs."""
    manifest = json.loads((PACKAGE / "manifest.json").read_text())
    keys = list(manifest)
    assert keys[:2] == ["domain", "name"]
    assert keys[2:] == sorted(keys[2:])
    assert manifest["domain"] == "agentic_hems"
    assert manifest["config_flow"] is True
    # The sample prices, a Nord Pool or price sensor already in HA and the offline planner need no Internet: the
    # integration computes plans from what HA holds (ENTSO-E and a model are optional). A cloud_* class would have
    # the integrations page say "Requires Internet"; HA's own classes are the only valid ones.
    assert manifest["iot_class"] == "calculated" and manifest["iot_class"] in IOT_CLASSES
    for key in ("version", "documentation", "issue_tracker", "codeowners"):
        assert manifest[key], key


def _ha_pins() -> dict[str, str]:
    """The exact pins of Home Assistant's package_constraints.txt, which HA installs integrations' requirements under."""
    pins = {}
    for line in (Path(homeassistant.__file__).parent / "package_constraints.txt").read_text().splitlines():
        try:
            requirement = Requirement(line.split("#", 1)[0].strip())
        except InvalidRequirement:  # blank lines, pip options
            continue
        exact = [spec.version for spec in requirement.specifier if spec.operator == "=="]
        if exact and requirement.marker is None:
            pins[canonicalize_name(requirement.name)] = exact[0]
    return pins


def test_manifest_requirements_install_under_home_assistant() -> None:
    """Each requirement is an exact pin or a range bounded below and above; the tested version satisfies it; and a
    package that HA constrains is a range that contains HA's pin (an exact pin would break on the next HA release)."""
    texts = json.loads((PACKAGE / "manifest.json").read_text())["requirements"]
    requirements = [Requirement(text) for text in texts]
    pins = _ha_pins()
    assert "openai" in pins  # HA 2026 constrains it
    for requirement in requirements:
        operators = {spec.operator for spec in requirement.specifier}
        assert operators == {"=="} or operators == {">=", "<"}, requirement
        assert requirement.specifier.contains(metadata.version(requirement.name), prereleases=True), requirement
        if (pin := pins.get(canonicalize_name(requirement.name))) is not None:
            assert operators == {">=", "<"}, f"{requirement}: HA pins {pin}"
            assert requirement.specifier.contains(pin, prereleases=True), f"{requirement}: HA pins {pin}"
    assert "entsoe-py==0.8.1" in texts  # HA does not constrain it; the parser is version-sensitive


def test_hacs_json() -> None:
    """HACS: a name and the oldest supported HA release, which the pinned test release satisfies."""
    hacs = json.loads((ROOT / "hacs.json").read_text())
    assert hacs == {"name": "Agentic HEMS", "homeassistant": "2026.4.0"}
    assert tuple(map(int, HA_VERSION.split(".")[:2])) >= (2026, 4)


def test_services_yaml_matches_the_registered_schemas() -> None:
    """Every service action in services.yaml is registered with the same fields."""
    from custom_components.agentic_hems.planning.services import (
        CLEAR_SCHEMA, LOAD_SCHEMA, PLAN_HOME_SCHEMA, SCHEDULE_SCHEMA,
    )
    from custom_components.agentic_hems.assistant.services import ASK_SCHEMA, RUNS_SCHEMA
    from custom_components.agentic_hems.control.services import DECIDE_SCHEMA, EVALUATE_SCHEMA, TRACES_SCHEMA
    from custom_components.agentic_hems.grid_ha import services as services_grid
    from custom_components.agentic_hems.grid.tools import TOOLS

    services = yaml.safe_load((PACKAGE / "services.yaml").read_text())
    assert set(services) == {"get_prices", "plan", "schedule", "clear_schedule", "plan_home", "evaluate_command", "confirm",
                             "reject", "get_traces", "ask", "get_runs", *TOOLS, "approve_authorization",
                             "deny_authorization", "acknowledge_incident", "verify_audit_chain"}
    assert set(services["get_prices"]["fields"]) == {"config_entry_id"}
    for name, schema in (("plan", LOAD_SCHEMA), ("schedule", SCHEDULE_SCHEMA), ("clear_schedule", CLEAR_SCHEMA),
                         ("plan_home", PLAN_HOME_SCHEMA),
                         ("evaluate_command", EVALUATE_SCHEMA), ("confirm", DECIDE_SCHEMA), ("reject", DECIDE_SCHEMA),
                         ("get_traces", TRACES_SCHEMA), ("ask", ASK_SCHEMA), ("get_runs", RUNS_SCHEMA)):
        assert set(services[name]["fields"]) == {str(key) for key in schema.schema}, name
    grid = [(name, services_grid.service_schema(name)) for name in TOOLS]
    grid += [("approve_authorization", services_grid.DECIDE_SCHEMA), ("deny_authorization", services_grid.DECIDE_SCHEMA),
             ("acknowledge_incident", services_grid.ACKNOWLEDGE_SCHEMA), ("verify_audit_chain", services_grid.VERIFY_SCHEMA)]
    for name, schema in grid:
        assert set(services[name]["fields"]) == {str(key) for key in schema.schema}, name
    assert "generate_audit_record" not in services  # internal: only the integration appends records
