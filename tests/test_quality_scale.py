"""The Integration Quality Scale: quality_scale.yaml lists every rule of the four tiers as done or exempt (with a
reason), the exemptions hold, and the evidence of each done rule that can be checked mechanically still exists.

The behaviour behind the other rules is tested where it lives: test-before-setup and log-when-unavailable in
tests/ha/test_coordinator.py, reauthentication and reconfiguration in tests/ha/test_config_flow.py, diagnostics in
tests/ha/test_diagnostics.py, the blueprints (docs-examples) in tests/ha/test_blueprints.py, strict-typing in
tests/test_typing.py.
"""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from functools import cache
import json
import os
from pathlib import Path
import re
import struct
import subprocess
import sys
import tempfile
from typing import Any

from freezegun.api import FrozenDateTimeFactory
from ha.conftest import NOW, sample_entry
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry
from test_translations import entity_keys, exception_uses, services_yaml, strings
import yaml

from homeassistant.config_entries import ConfigEntryState
from homeassistant.core import HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import device_registry as dr, entity_registry as er
from homeassistant.setup import async_setup_component

import custom_components.agentic_hems.config_flow as config_flow
from custom_components.agentic_hems.const import DOMAIN, PLATFORMS
from custom_components.agentic_hems.sensor import ENTRY_SENSORS

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = ROOT / "custom_components" / "agentic_hems"
README = (ROOT / "README.md").read_text(encoding="utf-8")
# The documentation site's pages, where the README's reference moved.
DOCS = {path: path.read_text(encoding="utf-8") for path in sorted((ROOT / "docs").rglob("*.md"))}

# Home Assistant's rules by tier (developers.home-assistant.io, "Integration Quality Scale").
TIERS = {
    "bronze": [
        "action-setup", "appropriate-polling", "brands", "common-modules", "config-flow", "config-flow-test-coverage",
        "dependency-transparency", "docs-actions", "docs-conditions", "docs-high-level-description",
        "docs-installation-instructions", "docs-removal-instructions", "docs-triggers", "entity-event-setup",
        "entity-unique-id", "has-entity-name", "runtime-data", "test-before-configure", "test-before-setup",
        "unique-config-entry",
    ],
    "silver": [
        "action-exceptions", "config-entry-unloading", "docs-configuration-parameters", "docs-installation-parameters",
        "entity-unavailable", "integration-owner", "log-when-unavailable", "parallel-updates", "reauthentication-flow",
        "test-coverage",
    ],
    "gold": [
        "devices", "diagnostics", "discovery", "discovery-update-info", "docs-data-update", "docs-examples",
        "docs-known-limitations", "docs-supported-devices", "docs-supported-functions", "docs-troubleshooting",
        "docs-use-cases", "dynamic-devices", "entity-category", "entity-device-class", "entity-disabled-by-default",
        "entity-translations", "exception-translations", "icon-translations", "reconfiguration-flow", "repair-issues",
        "stale-devices",
    ],
    "platinum": ["async-dependency", "inject-websession", "strict-typing"],
}  # fmt: skip
ALL_RULES = [rule for rules in TIERS.values() for rule in rules]

# The docs section (a page's "# " title or a "## " heading) that documents each docs rule.
DOCS_SECTIONS = {
    "docs-actions": "Service actions",
    "docs-data-update": "How the data updates",
    "docs-examples": "Examples",
    "docs-installation-instructions": "Installation in your Home Assistant",
    "docs-installation-parameters": "Installation in your Home Assistant",
    "docs-configuration-parameters": "Configuration options",
    "docs-known-limitations": "Known limitations",
    "docs-removal-instructions": "Removal",
    "docs-supported-devices": "Supported devices",
    "docs-supported-functions": "Entities",
    "docs-troubleshooting": "Troubleshooting",
    "docs-use-cases": "Use cases",
    "docs-triggers": "Automation triggers and conditions",
    "docs-conditions": "Automation triggers and conditions",
}
# Exceptions whose message the user sees: raised with a translation.
HA_EXCEPTIONS = {
    "HomeAssistantError", "ServiceValidationError", "ConfigEntryNotReady", "ConfigEntryError", "ConfigEntryAuthFailed",
    "UpdateFailed", "IntegrationError",
}  # fmt: skip


@cache
def quality_scale() -> dict[str, Any]:
    rules: dict[str, Any] = yaml.safe_load((PACKAGE / "quality_scale.yaml").read_text(encoding="utf-8"))["rules"]
    return rules


def status(rule: str) -> str:
    value = quality_scale()[rule]
    return str(value if isinstance(value, str) else value["status"])


def section(title: str) -> str:
    """The docs page's ``# title`` or ``## title`` section, up to the next ``## `` heading, with its line breaks as
    spaces."""
    pattern = re.compile(rf"^##? {re.escape(title)}\n(.*?)(?=^## |\Z)", re.M | re.S)
    found = [match for text in DOCS.values() if (match := pattern.search(text))]
    assert len(found) == 1, f"docs/ has {len(found)} sections '{title}'"
    return " ".join(found[0].group(1).split())


# ------------------------------------------------------------------------------------------------- the file


def test_every_rule_is_listed_once_and_only_test_coverage_is_todo() -> None:
    """Every rule is done or exempt except test-coverage, whose comment says what is missing."""
    text = (PACKAGE / "quality_scale.yaml").read_text(encoding="utf-8")
    listed = re.findall(r"^  ([a-z-]+):", text, re.M)
    assert sorted(listed) == sorted(ALL_RULES), (set(listed) ^ set(ALL_RULES))
    not_done = {rule: status(rule) for rule in ALL_RULES if status(rule) not in ("done", "exempt")}
    assert not_done == {"test-coverage": "todo"}, not_done
    assert "Not done: " in quality_scale()["test-coverage"]["comment"]


def test_every_exemption_gives_its_reason() -> None:
    exempt = {rule: value for rule, value in quality_scale().items() if status(rule) == "exempt"}
    assert set(exempt) == {"discovery", "discovery-update-info", "dynamic-devices"}
    unexplained = [rule for rule, value in exempt.items() if len(str(value.get("comment") or "").split()) < 4]
    assert not unexplained, unexplained


def test_exemptions_hold() -> None:
    """No discovery in the manifest or the config flow (dynamic-devices: see test_stale_devices)."""
    manifest = json.loads((PACKAGE / "manifest.json").read_text())
    discovery = ("zeroconf", "ssdp", "dhcp", "usb", "bluetooth", "homekit", "mqtt")
    assert not set(discovery) & set(manifest)
    steps = [name for name in vars(config_flow.AgenticHemsConfigFlow) if name.startswith("async_step_")]
    assert not [name for name in steps if name.removeprefix("async_step_") in discovery]


def test_the_coverage_gate_is_the_figure_the_file_states() -> None:
    """CI runs scripts/test without arguments, whose suite fails under the coverage test-coverage's comment states."""
    gate = re.findall(r"--cov-fail-under=(\d+)", (ROOT / "scripts" / "test").read_text(encoding="utf-8"))
    assert len(gate) == 1, gate
    assert f"at least {gate[0]} %" in quality_scale()["test-coverage"]["comment"]
    assert re.search(r"^scripts/test \|\| status=\$\?$", (ROOT / ".ci" / "run").read_text(encoding="utf-8"), re.M)


# --------------------------------------------------------------------------------------- evidence, per rule

EVIDENCE: dict[str, list[Callable[[], None]]] = {}


def evidence(*rules: str) -> Callable[[Callable[[], None]], Callable[[], None]]:
    """Register a check of the evidence of ``rules``."""

    def register(check: Callable[[], None]) -> Callable[[], None]:
        for rule in rules:
            EVIDENCE.setdefault(rule, []).append(check)
        return check

    return register


@evidence("brands")
def _brands() -> None:
    for name, size in (("icon.png", 256), ("icon@2x.png", 512)):
        head = (PACKAGE / "brand" / name).read_bytes()[:24]
        assert head[:8] == b"\x89PNG\r\n\x1a\n", name
        assert struct.unpack(">II", head[16:24]) == (size, size), name


@evidence("common-modules")
def _common_modules() -> None:
    coordinator = ast.parse((PACKAGE / "coordinator.py").read_text())
    assert any(
        isinstance(n, ast.ClassDef) and any("DataUpdateCoordinator" in ast.unparse(b) for b in n.bases)
        for n in coordinator.body
    )
    entity = ast.parse((PACKAGE / "entity.py").read_text())
    assert {n.name for n in entity.body if isinstance(n, ast.ClassDef)} >= {"AgenticHemsEntity", "ApplianceEntity"}


def _flow_steps() -> Iterator[tuple[str, dict[str, Any]]]:
    for lang in ("en", "de"):
        for section_ in ("config", "options"):
            for step, texts in strings(lang)[section_]["step"].items():
                yield f"{lang}:{section_}.{step}", texts
        for kind, subentry in strings(lang)["config_subentries"].items():
            for step, texts in subentry["step"].items():
                yield f"{lang}:config_subentries.{kind}.{step}", texts


@evidence("config-flow")
def _config_flow() -> None:
    assert json.loads((PACKAGE / "manifest.json").read_text())["config_flow"] is True
    undescribed = [
        f"{where}.{field}"
        for where, texts in _flow_steps()
        for field in texts.get("data", {})
        if not texts.get("data_description", {}).get(field)
    ]
    assert not undescribed, f"fields without a data_description: {undescribed}"


@evidence("config-flow-test-coverage")
def _config_flow_coverage() -> None:
    """tests/ha/test_config_flow.py alone runs every line and branch of config_flow.py (about 15 s)."""
    with tempfile.TemporaryDirectory() as folder:
        _run_config_flow_tests_with_coverage(Path(folder))


def _run_config_flow_tests_with_coverage(tmp: Path) -> None:
    report = tmp / "coverage.json"
    # Its own data file: never mixed with a coverage run around this one.
    env = {k: v for k, v in os.environ.items() if not k.startswith(("COV_CORE_", "COVERAGE_", "PYTEST_"))}
    env["COVERAGE_FILE"] = str(tmp / ".coverage")
    result = subprocess.run(
        [
            sys.executable, "-m", "pytest", "-p", "no:cacheprovider", "-q", "-x", "tests/ha/test_config_flow.py",
            "--cov=custom_components/agentic_hems", "--cov-branch", "--cov-report=", f"--cov-report=json:{report}",
        ],
        cwd=ROOT, env=env, capture_output=True, text=True, check=False,
    )
    assert result.returncode == 0, result.stdout[-3000:] + result.stderr[-3000:]
    measured = json.loads(report.read_text())["files"]["custom_components/agentic_hems/config_flow.py"]
    assert (measured["missing_lines"], measured["missing_branches"]) == ([], []), measured
    assert measured["summary"]["percent_covered"] == 100.0


def _section_says_something(rule: str, title: str) -> None:
    @evidence(rule)
    def _check() -> None:
        assert len(section(title).split()) > 60, f"the docs' '{title}' says almost nothing"


for _rule, _title in DOCS_SECTIONS.items():
    _section_says_something(_rule, _title)


@evidence("docs-triggers", "docs-conditions")
def _docs_triggers_and_conditions() -> None:
    documented = section("Automation triggers and conditions")
    keys = [key for kind in ("triggers", "conditions") for key in yaml.safe_load((PACKAGE / f"{kind}.yaml").read_text())]
    missing = [key for key in keys if not key.startswith(".") and f"`agentic_hems.{key}`" not in documented]
    assert not missing, f"triggers or conditions not in the docs: {missing}"


@evidence("docs-actions")
def _docs_actions() -> None:
    documented = section("Service actions") + section("The grid toolkit")
    missing = [name for name in services_yaml() if f"`{name}`" not in documented and f"agentic_hems.{name}" not in documented]
    assert not missing, f"actions not in the docs: {missing}"


def _labels(step_section: str, steps: list[str]) -> dict[str, str]:
    texts = strings("en")[step_section]["step"]
    return {f"{step}.{field}": label for step in steps for field, label in texts[step].get("data", {}).items()}


@evidence("docs-installation-parameters")
def _docs_installation_parameters() -> None:
    text = section("Installation in your Home Assistant").casefold()
    labels = _labels("config", ["entsoe", "nordpool", "sensor", "settings"])
    labels |= {f"appliance.{f}": v for f, v in strings("en")["config_subentries"]["appliance"]["step"]["user"]["data"].items()}
    missing = {key: label for key, label in labels.items() if label.casefold() not in text}
    assert not missing, f"set-up fields not in the docs' installation section: {missing}"


@evidence("docs-configuration-parameters")
def _docs_configuration_parameters() -> None:
    text = section("Configuration options").casefold()
    labels = _labels("options", list(strings("en")["options"]["step"]))
    missing = {key: label for key, label in labels.items() if label.casefold() not in text}
    assert not missing, f"options not in the docs' configuration section: {missing}"


@evidence("docs-examples")
def _docs_examples() -> None:
    blueprints = sorted((ROOT / "blueprints" / "automation" / "agentic_hems").glob("*.yaml"))
    assert blueprints
    text = section("Examples")
    for path in blueprints:
        assert f"`{path.name}`" in text and f"%2F{path.name})" in text, f"{path.name} is not linked from the docs"
        source = yaml.load(path.read_text(), Loader=_BlueprintLoader)["blueprint"]["source_url"]
        assert source.endswith(f"/blueprints/automation/agentic_hems/{path.name}"), source


class _BlueprintLoader(yaml.SafeLoader):
    """YAML with Home Assistant's ``!input`` tag."""


_BlueprintLoader.add_constructor("!input", lambda loader, node: loader.construct_scalar(node))  # type: ignore[arg-type]


@evidence("docs-high-level-description")
def _docs_high_level_description() -> None:
    intro = README.split("\n## ", 1)[0]
    assert "Home Assistant" in intro and "day-ahead electricity prices" in intro
    assert "https://transparency.entsoe.eu/" in README


@evidence("entity-disabled-by-default")
def _entity_disabled_by_default() -> None:
    assert [d.translation_key for d in ENTRY_SENSORS if d.entity_registry_enabled_default is False] == [
        "run_runs", "run_success_rate", "run_mean_iterations", "run_mean_tokens", "run_total_cost"
    ]


def _platform_keys() -> dict[str, dict[str, str]]:
    return {str(platform): entity_keys(str(platform)) for platform in PLATFORMS}


@evidence("entity-translations")
def _entity_translations() -> None:
    for platform, keys in _platform_keys().items():
        assert keys, platform
        for lang in ("en", "de"):
            missing = [k for k in keys if not strings(lang)["entity"].get(platform, {}).get(k, {}).get("name")]
            assert not missing, f"{lang}: entity.{platform} names missing for {missing}"


@cache
def _mdi_icons() -> frozenset[str]:
    """The icon names of the Material Design Icons in Home Assistant's installed frontend."""
    import hass_frontend  # noqa: PLC0415

    folder = Path(hass_frontend.where()) / "static" / "mdi"
    parts = json.loads((folder / "iconMetadata.json").read_text())["parts"]
    return frozenset(name for part in parts for name in json.loads((folder / f"{part['file']}.json").read_text()))


@evidence("icon-translations")
def _icon_translations() -> None:
    icons = json.loads((PACKAGE / "icons.json").read_text())
    assert set(icons["services"]) == set(services_yaml()), "icons.json services differ from services.yaml"
    for platform, keys in _platform_keys().items():
        assert set(icons["entity"].get(platform, {})) == set(keys), f"entity icons of {platform}"

    def every(node: Any) -> Iterator[str]:
        if isinstance(node, dict):
            for value in node.values():
                yield from every(value)
        else:
            yield str(node)

    unknown = sorted(icon for icon in every(icons) if not icon.startswith("mdi:") or icon[4:] not in _mdi_icons())
    assert not unknown, f"not Material Design Icons: {unknown}"
    assert len(_mdi_icons()) > 7000  # the set was read


def _raised_without_translation() -> list[str]:
    found = []
    for path in sorted(PACKAGE.rglob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Call) and isinstance(node.func, ast.Name) and node.func.id in HA_EXCEPTIONS:
                given = {k.arg for k in node.keywords}
                if not {"translation_domain", "translation_key"} <= given:
                    found.append(f"{path.relative_to(ROOT)}:{node.lineno} {node.func.id}")
    return found


@evidence("exception-translations")
def _exception_translations() -> None:
    assert not _raised_without_translation()
    uses, problems = exception_uses()
    assert uses and not problems, problems
    for lang in ("en", "de"):
        missing = sorted({u.key for u in uses if not strings(lang)["exceptions"].get(u.key, {}).get("message")})
        assert not missing, f"{lang}: exception messages missing for {missing}"


@evidence("parallel-updates")
def _parallel_updates() -> None:
    for platform in PLATFORMS:
        module = ast.parse((PACKAGE / f"{platform}.py").read_text())
        values = [
            n.value for n in module.body
            if isinstance(n, ast.Assign) and [ast.unparse(t) for t in n.targets] == ["PARALLEL_UPDATES"]
        ]
        assert len(values) == 1 and isinstance(values[0], ast.Constant) and isinstance(values[0].value, int), platform


@evidence("reauthentication-flow", "reconfiguration-flow")
def _flows() -> None:
    flow = vars(config_flow.AgenticHemsConfigFlow)
    assert {"async_step_reauth", "async_step_reauth_confirm", "async_step_reauth_llm", "async_step_reconfigure"} <= set(flow)
    assert "async_step_reconfigure" in vars(config_flow.ApplianceSubentryFlow)
    for lang in ("en", "de"):
        steps = strings(lang)["config"]["step"]
        assert {"reauth_confirm", "reauth_llm", "reconfigure"} <= set(steps)
        aborts = strings(lang)["config"]["abort"]
        assert {"reauth_successful", "reconfigure_successful"} <= set(aborts)


@evidence("runtime-data", "strict-typing")
def _typed_entry() -> None:
    for platform in (*map(str, PLATFORMS), "diagnostics"):
        module = ast.parse((PACKAGE / f"{platform}.py").read_text())
        setups = [
            n for n in module.body if isinstance(n, ast.AsyncFunctionDef)
            and n.name in ("async_setup_entry", "async_get_config_entry_diagnostics")
        ]
        assert [ast.unparse(s.args.args[1].annotation or ast.Constant(None)) for s in setups] == [
            "AgenticHemsConfigEntry"
        ], platform


@evidence("repair-issues")
def _repair_issues() -> None:
    """The comment names every repair issue the translations carry (``prefix_*`` for a family of them)."""
    comment = quality_scale()["repair-issues"]["comment"]
    families = [name.removesuffix("*") for name in re.findall(r"\b([a-z_]+_\*)", comment)]
    unnamed = [
        key for key in strings("en")["issues"]
        if not re.search(rf"\b{key}\b", comment) and not key.startswith(tuple(families))
    ]
    assert families and not unnamed, f"repair issues the comment does not name: {unnamed}"


def _annotations(tree: ast.AST) -> Iterator[ast.expr]:
    for node in ast.walk(tree):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            args = node.args
            arguments = [*args.posonlyargs, *args.args, *args.kwonlyargs, args.vararg, args.kwarg]
            yield from (a.annotation for a in arguments if a is not None and a.annotation is not None)
            if node.returns is not None:
                yield node.returns
        elif isinstance(node, ast.AnnAssign):
            yield node.annotation


@evidence("strict-typing")
def _typed_entry_throughout() -> None:
    """No annotation names the plain ConfigEntry: the integration's entries are AgenticHemsConfigEntry everywhere."""
    plain = [
        f"{path.relative_to(PACKAGE)}:{annotation.lineno}"
        for path in sorted(PACKAGE.rglob("*.py"))
        for annotation in _annotations(ast.parse(path.read_text(encoding="utf-8")))
        if re.search(r"(?<!AgenticHems)\bConfigEntry\b", ast.unparse(annotation))
    ]
    assert not plain, f"annotated with the plain ConfigEntry: {plain}"


@evidence("integration-owner")
def _integration_owner() -> None:
    owners = json.loads((PACKAGE / "manifest.json").read_text())["codeowners"]
    assert owners and all(owner.startswith("@") for owner in owners)


@evidence("diagnostics")
def _diagnostics() -> None:
    module = ast.parse((PACKAGE / "diagnostics.py").read_text())
    assert "async_get_config_entry_diagnostics" in {n.name for n in module.body if isinstance(n, ast.AsyncFunctionDef)}


@pytest.mark.parametrize("rule", sorted(EVIDENCE))
def test_evidence_of_done_rules(rule: str) -> None:
    assert status(rule) == "done"
    for check in EVIDENCE[rule]:
        check()


# ------------------------------------------------------------------------------------ evidence, in a hass


@pytest.fixture(autouse=True)
def own_config_dir(request: pytest.FixtureRequest, tmp_path: Path) -> None:
    """A config folder of the test's own: the audit log and networks live there, never in the shared one."""
    if "hass" in request.fixturenames:
        request.getfixturevalue("hass").config.config_dir = str(tmp_path / "config")


async def test_action_setup(hass: HomeAssistant) -> None:
    """Every action exists without a config entry, and then says why it cannot run."""
    assert status("action-setup") == "done"
    assert await async_setup_component(hass, DOMAIN, {})
    assert set(hass.services.async_services_for_domain(DOMAIN)) == set(services_yaml())
    with pytest.raises(ServiceValidationError) as err:
        await hass.services.async_call(DOMAIN, "get_prices", {}, blocking=True, return_response=True)
    assert (err.value.translation_domain, err.value.translation_key) == (DOMAIN, "no_entry_loaded")


async def test_stale_devices(hass: HomeAssistant, freezer: FrozenDateTimeFactory) -> None:
    """Deleting an appliance removes its device and entities; the other appliances keep theirs. Every device is the
    entry's own or an appliance subentry's (the reason dynamic-devices is exempt)."""
    assert status("stale-devices") == "done" and status("dynamic-devices") == "exempt"
    await hass.config.async_set_time_zone("Europe/Brussels")
    freezer.move_to(NOW)
    assert await async_setup_component(hass, "homeassistant", {})
    entry: MockConfigEntry = sample_entry()
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    devices, entities = dr.async_get(hass), er.async_get(hass)

    def appliance_devices() -> dict[str, tuple[str, int]]:
        """Per appliance (subentry id): its device's name and how many entities the device has."""
        found = {}
        for entity in er.async_entries_for_config_entry(entities, entry.entry_id):
            if entity.config_subentry_id is not None and entity.device_id is not None:
                device = devices.async_get(entity.device_id)
                found[entity.config_subentry_id] = (
                    str(device.name) if device else "", len(er.async_entries_for_device(entities, entity.device_id))
                )
        return found

    owners = [  # per device, the subentries its entities belong to (None: the entry itself)
        {e.config_subentry_id for e in er.async_entries_for_device(entities, device.id)}
        for device in dr.async_entries_for_config_entry(devices, entry.entry_id)
    ]
    assert sorted(owners, key=str) == sorted([{None}, *({key} for key in entry.subentries)], key=str)
    before = appliance_devices()
    assert before == {"dishwasher": ("Dishwasher", 5), "washer": ("Washing machine", 5), "ev": ("EV charger", 5)}
    washer = entities.async_get("sensor.washing_machine_next_start")
    assert washer is not None and washer.device_id is not None
    assert hass.config_entries.async_remove_subentry(entry, "washer")
    await hass.async_block_till_done()
    assert entry.state is ConfigEntryState.LOADED
    assert appliance_devices() == {"dishwasher": ("Dishwasher", 5), "ev": ("EV charger", 5)}
    assert devices.async_get(washer.device_id) is None
    assert entities.async_get("sensor.washing_machine_next_start") is None
