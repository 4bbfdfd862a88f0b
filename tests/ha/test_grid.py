"""The grid toolkit's services against a home twin with mapped sensors and a MATPOWER case in the config folder."""

from __future__ import annotations

from collections.abc import AsyncGenerator
from datetime import datetime, timedelta
import json
import math
from pathlib import Path
import shutil
from typing import Any

from freezegun.api import FrozenDateTimeFactory
import numpy as np
import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from homeassistant.auth.models import User
from homeassistant.components.recorder import Recorder
from homeassistant.components import persistent_notification
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import HomeAssistantError, ServiceValidationError
from homeassistant.helpers import issue_registry as ir
from homeassistant.setup import async_setup_component
from homeassistant.util import dt as dt_util
from pytest_homeassistant_custom_component.components.recorder.common import async_wait_recording_done

from custom_components.agentic_hems.const import DOMAIN
from custom_components.agentic_hems.grid.audit import verify
from custom_components.agentic_hems.grid.twin import CABLE_R_PU, CABLE_X_PU, HOME_BASE_MVA

from .conftest import NOW, sample_entry
from .test_llm import Scripted, provider  # noqa: F401 - the scripted model server (a fixture)

GRID = Path(__file__).resolve().parents[1] / "fixtures" / "grid"
SITE = {
    "grid_power_entity": "sensor.grid_power",
    "house_power_entity": "sensor.house_power",
    "pv_power_entity": "sensor.pv_power",
    "battery_power_entity": "sensor.battery_power",
    "battery_soc_entity": "sensor.battery_soc",
    "battery_setpoint_entity": "input_number.battery_setpoint",
    "pv_peak_kw": 8.0,
    "battery_capacity_kwh": 10.0,
    "battery_power_kw": 5.0,
}


async def set_meters(hass: HomeAssistant, grid_w: float = 2000, pv_kw: float = 3.0, battery_kw: float = 1.0,
                     soc: float = 50) -> None:
    hass.states.async_set("sensor.grid_power", str(grid_w), {"unit_of_measurement": "W"})
    hass.states.async_set("sensor.house_power", str(grid_w / 1000 + pv_kw - battery_kw), {"unit_of_measurement": "kW"})
    hass.states.async_set("sensor.pv_power", str(pv_kw), {"unit_of_measurement": "kW"})
    hass.states.async_set("sensor.battery_power", str(battery_kw), {"unit_of_measurement": "kW"})
    hass.states.async_set("sensor.battery_soc", str(soc), {"unit_of_measurement": "%"})


@pytest.fixture
async def site(hass: HomeAssistant, tz: str, freezer: FrozenDateTimeFactory) -> AsyncGenerator[MockConfigEntry]:
    """The sample entry with PV, a battery and its setpoint mapped, and case14 in config/agentic_hems/networks."""
    freezer.move_to(NOW)
    networks = Path(hass.config.path("agentic_hems", "networks"))
    networks.mkdir(parents=True)
    shutil.copy(GRID / "case14.m", networks / "case14.m")
    (networks / "broken.m").write_text("function mpc = broken\nmpc.baseMVA = 100;\n")
    assert await async_setup_component(hass, "homeassistant", {})
    assert await async_setup_component(hass, "input_number", {"input_number": {
        "battery_setpoint": {"min": -5, "max": 5, "step": 0.001, "unit_of_measurement": "kW"}}})
    await set_meters(hass)
    entry = sample_entry(**SITE)
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()
    yield entry


async def call(hass: HomeAssistant, service: str, user: User | None = None, **data: Any) -> dict[str, Any]:
    response = await hass.services.async_call(DOMAIN, service, data, blocking=True, return_response=True,
                                              context=Context(user_id=user.id if user else None))
    assert isinstance(response, dict)
    return response


def two_bus_vm(p_mw: float, q_mvar: float = 0.0) -> float:
    """Closed form for a slack at 1 pu feeding a PQ load over r + jx: the high root of
    V^4 + (2(rP + xQ) - 1) V^2 + (r^2 + x^2)(P^2 + Q^2) = 0 (pu on the home twin's base)."""
    p, q = p_mw / HOME_BASE_MVA, q_mvar / HOME_BASE_MVA
    b = 2 * (CABLE_R_PU * p + CABLE_X_PU * q) - 1
    c = (CABLE_R_PU**2 + CABLE_X_PU**2) * (p**2 + q**2)
    return math.sqrt((-b + math.sqrt(b * b - 4 * c)) / 2)


async def test_inspect_the_home_twin(hass: HomeAssistant, site: MockConfigEntry) -> None:
    """Assets from the sensors (W converted, PV negated, house = grid - others) and the panel voltage in closed form."""
    result = await call(hass, "inspect_grid_state", depth=3)
    state = result["state"]
    powers = {a["asset_id"]: a["p_kw"] for a in state["assets"]}
    assert powers["grid"] == 2.0 and powers["pv"] == -3.0 and powers["battery"] == 1.0
    assert powers["house"] == pytest.approx(4.0)
    assert result["stale"] is False and state["alarms"] == []
    panel = next(b for b in state["bus_state"] if b["bus"] == 2)
    assert panel["vm_pu"] == pytest.approx(two_bus_vm(0.002), abs=1e-8)
    fuse = state["branch_state"][0]
    apparent = math.hypot(fuse["p_from_mw"], fuse["q_from_mvar"])
    assert fuse["loading_pct"] == pytest.approx(100 * apparent / 0.011, abs=1e-4)
    assert state["measurements"]["grid.power"]["entity_id"] == "sensor.grid_power"
    provenance = result["provenance"]
    assert provenance["tool"] == "inspect_grid_state" and provenance["actor"] == "system"
    assert "sensor.grid_power" in provenance["sources"] and len(provenance["inputs_hash"]) == 64

    hass.states.async_set("sensor.pv_power", "unavailable")
    stale = await call(hass, "inspect_grid_state", depth=3)
    assert stale["stale"] is True and stale["snapshot_id"] == result["snapshot_id"] and stale["state"] == state


async def test_no_consistent_snapshot_is_an_error(hass: HomeAssistant, site: MockConfigEntry) -> None:
    hass.states.async_set("sensor.battery_soc", "unknown")
    with pytest.raises(HomeAssistantError) as err:
        await call(hass, "inspect_grid_state")
    assert err.value.translation_key == "no_consistent_snapshot"


async def test_assets_and_typed_404(hass: HomeAssistant, site: MockConfigEntry) -> None:
    battery = await call(hass, "retrieve_asset", asset_id="battery")
    assert battery["limits"] == {"p_min_kw": -5.0, "p_max_kw": 5.0, "capacity_kwh": 10.0, "soc_min_pct": 10.0,
                                 "soc_max_pct": 100.0}
    assert battery["health"]["measurements"]["soc"]["state"] == "50"
    gen = await call(hass, "retrieve_asset", asset_id="gen_1", network_id="case14")
    assert gen["limits"]["p_max_kw"] == 0 and gen["connection_point"] == {"network_id": "case14", "bus": 1}
    for asset_id in ("batery", "Battery"):  # no fuzzy match
        with pytest.raises(ServiceValidationError) as err:
            await call(hass, "retrieve_asset", asset_id=asset_id)
        assert err.value.translation_key == "asset_not_found"
    for bad in ("../secrets", ".hidden", "a\x00b", "x" * 65):
        with pytest.raises(ServiceValidationError) as err:
            await call(hass, "inspect_grid_state", network_id=bad)
        assert err.value.translation_key.startswith("field_")  # a translated sentence naming the field
        assert err.value.translation_placeholders["field"] == "Network"
    with pytest.raises(HomeAssistantError) as err:
        await call(hass, "inspect_grid_state", network_id="broken")
    assert err.value.translation_key == "network_invalid"


async def test_the_old_tenant_field_is_read_as_config_entry_id_with_a_repair_issue(
    hass: HomeAssistant, site: MockConfigEntry, hass_admin_user: User
) -> None:
    registry = ir.async_get(hass)
    named = await call(hass, "retrieve_asset", config_entry_id=site.entry_id, asset_id="battery")
    assert registry.async_get_issue(DOMAIN, "deprecated_tenant_field") is None

    old = await call(hass, "retrieve_asset", tenant=site.entry_id, asset_id="battery")
    assert old["limits"] == named["limits"] == {"p_min_kw": -5.0, "p_max_kw": 5.0, "capacity_kwh": 10.0,
                                                "soc_min_pct": 10.0, "soc_max_pct": 100.0}
    issue = registry.async_get_issue(DOMAIN, "deprecated_tenant_field")
    assert issue is not None and issue.translation_key == "deprecated_tenant_field"
    assert issue.translation_placeholders == {"service": "agentic_hems.retrieve_asset"}
    assert issue.severity is ir.IssueSeverity.WARNING and not issue.is_fixable and not issue.is_persistent
    status = await call(hass, "verify_audit_chain", hass_admin_user, tenant=site.entry_id)
    assert status["ok"] is True
    assert registry.async_get_issue(DOMAIN, "deprecated_tenant_field").translation_placeholders == {
        "service": "agentic_hems.verify_audit_chain"}

    with pytest.raises(ServiceValidationError) as err:  # an unknown entry is refused under either name
        await call(hass, "retrieve_asset", tenant="nope", asset_id="battery")
    assert err.value.translation_key == "entry_not_found"
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "retrieve_asset", config_entry_id=site.entry_id, tenant="other", asset_id="battery")
    assert err.value.translation_key == "entry_fields_conflict"
    assert err.value.translation_placeholders == {"config_entry_id": site.entry_id, "tenant": "other"}

async def test_power_flow_on_a_matpower_case_matches_the_reference(hass: HomeAssistant, site: MockConfigEntry) -> None:
    ref = json.loads((GRID / "case14.json").read_text())
    snapshot = await call(hass, "inspect_grid_state", network_id="case14")
    ac = await call(hass, "run_power_flow", snapshot_id=snapshot["snapshot_id"], method="ac")
    assert ac["converged"] and ac["solver"].startswith("newton-raphson")
    np.testing.assert_allclose([v["vm_pu"] for v in ac["voltages"]], ref["ac_pf"]["Vm_pu"], atol=1e-6)
    np.testing.assert_allclose([v["va_deg"] for v in ac["voltages"]], ref["ac_pf"]["Va_deg"], atol=1e-4)
    np.testing.assert_allclose([f["p_from_mw"] for f in ac["flows"]], ref["ac_pf"]["branch_Pf_MW"], atol=1e-4)
    assert ac["losses_mw"] == pytest.approx(ref["ac_pf"]["total_P_losses_MW"], abs=1e-4)
    dc = await call(hass, "run_power_flow", snapshot_id=snapshot["snapshot_id"], method="dc")
    np.testing.assert_allclose([f["p_from_mw"] for f in dc["flows"]], ref["dc_pf"]["branch_Pf_MW"], atol=1e-4)

    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "run_power_flow", snapshot_id=snapshot["snapshot_id"], method="pinn")
    assert err.value.translation_key == "method_not_available"
    outage = await call(hass, "run_power_flow", snapshot_id=snapshot["snapshot_id"],
                        modifications=[{"type": "branch_outage", "branch": 1}])
    n1 = next(o for o in json.loads((GRID / "case14_n1.json").read_text())["outages"] if o["outage_branch_index"] == 0)
    np.testing.assert_allclose([v["vm_pu"] for v in outage["voltages"]], n1["ac_Vm_pu"], atol=1e-6)
    assert outage["losses_mw"] == pytest.approx(n1["ac_total_P_losses_MW"], abs=1e-4)
    with pytest.raises(ServiceValidationError) as err:  # gen 1 of case14 may not consume
        await call(hass, "run_power_flow", snapshot_id=snapshot["snapshot_id"],
                   modifications=[{"type": "set_power", "asset_id": "gen_1", "p_kw": 50}])
    assert err.value.translation_key == "outside_limits"


async def test_contingency_reports_islanding(hass: HomeAssistant, site: MockConfigEntry) -> None:
    snapshot = await call(hass, "inspect_grid_state", network_id="case14")
    result = await call(hass, "run_contingency", snapshot_id=snapshot["snapshot_id"])
    assert result["completed"] and result["unevaluated"] == [] and result["evaluated"] == 20
    assert result["islanded"] == [14]  # branch 14 (7-8) is the only line to bus 8's synchronous condenser
    listed = await call(hass, "run_contingency", snapshot_id=snapshot["snapshot_id"], set="list", branches=[1, 14])
    assert listed["evaluated"] == 2 and listed["islanded"] == [14]
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "run_contingency", snapshot_id=snapshot["snapshot_id"], set="list", branches=[21])
    assert err.value.translation_key == "branch_not_found"


async def test_forecast_without_history_is_the_persistence_baseline(hass: HomeAssistant, site: MockConfigEntry) -> None:
    """No recorder: the current state alone, held (baseline, no backtest); an unavailable sensor is a typed error."""
    result = await call(hass, "run_forecast", target="pv", horizon_h=6, quantiles=[0.1, 0.5, 0.9])
    assert result["baseline"] is True and result["backtest_error"] is None and result["unit"] == "kW"
    assert result["series"] == {"0.1": [3.0] * 6, "0.5": [3.0] * 6, "0.9": [3.0] * 6}
    hass.states.async_set("sensor.pv_power", "unavailable")
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "run_forecast", target="pv", horizon_h=6)
    assert err.value.translation_key == "forecast_no_history"
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "run_forecast", target="load", horizon_h=6, quantiles=[0.5, 1.0])
    assert err.value.translation_key == "field_invalid"
    assert err.value.translation_placeholders == {"field": "Quantiles"}


async def plan_chain(hass: HomeAssistant, user: User | None = None) -> dict[str, dict[str, Any]]:
    """optimize_dispatch -> snapshot -> simulate_action -> validate_constraints -> generate_explanation."""
    plan = await call(hass, "optimize_dispatch", user, objective="cost", horizon_h=24)
    snapshot = await call(hass, "inspect_grid_state", user)
    sim = await call(hass, "simulate_action", user, snapshot_id=snapshot["snapshot_id"], actions=plan["actions"],
                     signature=plan["signature"], plan_id=plan["plan_id"], horizon_min=24 * 60)
    validation = await call(hass, "validate_constraints", user, sim_id=sim["sim_id"])
    explanation = await call(hass, "generate_explanation", user, plan_id=plan["plan_id"], audience="manager",
                             lang="de")
    return {"plan": plan, "snapshot": snapshot, "sim": sim, "validation": validation, "explanation": explanation}


def chain_ids(chain: dict[str, dict[str, Any]]) -> dict[str, str]:
    """The four ids request_authorization cites."""
    return {"plan_id": chain["plan"]["plan_id"], "sim_id": chain["sim"]["sim_id"],
            "validation_id": chain["validation"]["validation_id"],
            "explanation_id": chain["explanation"]["explanation_id"]}


async def test_dispatch_simulate_validate_explain(hass: HomeAssistant, site: MockConfigEntry) -> None:
    chain = await plan_chain(hass)
    plan, sim, validation = chain["plan"], chain["sim"], chain["validation"]
    assert plan["solver_status"] == "optimal" and len(plan["schedule"]) == 96
    slots = plan["schedule"]
    recomputed = sum((s["import_kw"] * s["import_price"] - s["export_kw"] * s["export_price"]) * 0.25 for s in slots)
    assert plan["cost"] == pytest.approx(recomputed, abs=1e-6) and plan["cost"] <= plan["baseline_value"] + 1e-9
    net = [(s["load_kw"] - s["pv_kw"]) for s in slots]
    assert net == pytest.approx([1.0] * 96)  # house 4 kW and PV 3 kW held: no history yet
    # The sim rolls the same actions forward: its SoC path is the plan's (10 kWh battery).
    soc_plan = [s["batteries"]["battery"]["soc_kwh"] * 10 for s in slots]
    soc_sim = [row["soc_pct"]["battery"] for row in sim["trajectory"]]
    assert soc_sim == pytest.approx(soc_plan, abs=1e-3)
    assert sim["valid"] and validation["pass"] and validation["violations"] == []
    assert validation["margins"]["branch_1.loading_pct"] >= 0
    assert "Ersparnis" in chain["explanation"]["text"] or "spart" in chain["explanation"]["text"]

    with pytest.raises(ServiceValidationError) as err:  # a changed action no longer matches the signature
        tampered = [dict(plan["actions"][0], p_kw=5.0), *plan["actions"][1:]]
        await call(hass, "simulate_action", snapshot_id=chain["snapshot"]["snapshot_id"], actions=tampered,
                   signature=plan["signature"], plan_id=plan["plan_id"], horizon_min=60)
    assert err.value.translation_key == "signature_invalid"


async def test_flexibility(hass: HomeAssistant, site: MockConfigEntry) -> None:
    start = NOW.replace(hour=21, minute=0)
    result = await call(hass, "calculate_flexibility",
                        window={"start": start.isoformat(), "end": start.replace(hour=23).isoformat()})
    battery = next(a for a in result["per_asset"] if a["asset_id"] == "battery")
    # 50 % of 10 kWh, 10 % minimum: 4 kWh stored, 5 kWh room; 2 h window; 95 % one way; charging at 1 kW now.
    assert battery["up_kw"] == pytest.approx(1.0 - max(-5.0, -4.0 * 0.95 / 2))
    assert battery["down_kw"] == pytest.approx(min(5.0, 5.0 / (0.95 * 2)) - 1.0)
    pv = next(a for a in result["per_asset"] if a["asset_id"] == "pv")
    assert pv["up_kw"] == pytest.approx(5.0) and pv["down_kw"] == pytest.approx(3.0)
    assert {e["asset_id"] for e in result["excluded"]} == {"ev_charger"}  # no power measured
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "calculate_flexibility", window={"start": start.isoformat(),
                                                          "end": (start + timedelta(days=2)).isoformat()})
    assert err.value.translation_key == "window_outside_horizon"


async def test_authorization_reaches_the_device_only_through_the_gates(
    hass: HomeAssistant, site: MockConfigEntry, hass_admin_user: User, hass_read_only_user: User
) -> None:
    chain = await plan_chain(hass)
    first = chain["plan"]["schedule"][0]
    window = {"start": first["start"], "end": chain["plan"]["schedule"][3]["end"]}
    ids = chain_ids(chain)
    denied = await call(hass, "request_authorization", **{**ids, "explanation_id": "explanation_unknown"},
                        requested_window=window)
    assert denied["status"] == "denied" and "explanation_unknown" in denied["reasons"][0]
    request = await call(hass, "request_authorization", **ids, requested_window=window)
    assert request["reasons"] == [] and request["status"] == "pending"
    issue_id = f"authorization_{request['request_id']}"
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue_id) is not None

    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "approve_authorization", hass_read_only_user, request_id=request["request_id"])
    assert err.value.translation_key == "admin_required_grid"
    await site.runtime_data.control.async_set_allow_control(True)
    approved = await call(hass, "approve_authorization", hass_admin_user, request_id=request["request_id"])
    assert approved["status"] == "approved" and approved["decided_by"] == hass_admin_user.id
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue_id) is None
    await hass.async_block_till_done()
    traces = [t for t in site.runtime_data.control.traces.values() if t["source_agent"] == "grid"]
    assert len(traces) == 1 and len(traces[0]["gate_results"]) == 8
    expected = first["batteries"]["battery"]["charge_kw"] - first["batteries"]["battery"]["discharge_kw"]
    assert traces[0]["outcome"] == "executed"
    assert float(hass.states.get("input_number.battery_setpoint").state) == pytest.approx(expected, abs=1e-3)
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "deny_authorization", hass_admin_user, request_id=request["request_id"])
    assert err.value.translation_key == "request_not_pending"


async def test_scopes(hass: HomeAssistant, site: MockConfigEntry, hass_read_only_user: User) -> None:
    """Other users read; simulate needs the options' grant; the grant is per scope."""
    snapshot = await call(hass, "inspect_grid_state", hass_read_only_user, network_id="case14")
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "run_power_flow", hass_read_only_user, snapshot_id=snapshot["snapshot_id"])
    assert err.value.translation_key == "tool_not_granted"
    assert str(err.value) == (  # the action's and the option's names, as the user sees them
        "You may not use “Run power flow”: an administrator must add you to “May simulate” in the site's grid options")
    with pytest.raises(ServiceValidationError) as err:  # an id HA does not know is an ordinary user, not system
        await hass.services.async_call(DOMAIN, "run_power_flow", {"snapshot_id": snapshot["snapshot_id"]},
                                       blocking=True, return_response=True, context=Context(user_id="ghost"))
    assert err.value.translation_key == "tool_not_granted"
    hass.config_entries.async_update_entry(site, options={**site.options,
                                                          "grid_simulate_users": [hass_read_only_user.id]})
    await hass.async_block_till_done()
    snapshot = await call(hass, "inspect_grid_state", hass_read_only_user, network_id="case14")
    result = await call(hass, "run_power_flow", hass_read_only_user, snapshot_id=snapshot["snapshot_id"])
    assert result["converged"] and result["provenance"]["actor"] == hass_read_only_user.id
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "create_incident", hass_read_only_user, severity="warning", title="x",
                   evidence_ids=[snapshot["snapshot_id"]])
    assert err.value.translation_key == "tool_not_granted"


async def test_incidents_persist_until_acknowledged(
    hass: HomeAssistant, site: MockConfigEntry, hass_admin_user: User
) -> None:
    snapshot = await call(hass, "inspect_grid_state")
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "create_incident", severity="critical", title="Fuse", evidence_ids=["snapshot_nope"])
    assert err.value.translation_key == "evidence_not_found"
    incident = await call(hass, "create_incident", severity="critical", title="Fuse near its limit",
                          evidence_ids=[snapshot["snapshot_id"]])
    issue_id = f"incident_{incident['incident_id']}"
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue_id).severity is ir.IssueSeverity.CRITICAL
    assert await hass.config_entries.async_reload(site.entry_id)  # re-notified at start-up
    await hass.async_block_till_done()
    notifications = persistent_notification._async_get_or_create_notifications(hass)
    assert issue_id in notifications
    done = await call(hass, "acknowledge_incident", hass_admin_user, incident_id=incident["incident_id"])
    assert done["acknowledged_by"] == hass_admin_user.id
    assert ir.async_get(hass).async_get_issue(DOMAIN, issue_id) is None and issue_id not in notifications


async def test_every_call_is_audited_and_a_break_halts_requests(
    hass: HomeAssistant, site: MockConfigEntry, hass_admin_user: User
) -> None:
    audit = site.runtime_data.audit
    chain = await plan_chain(hass)
    await hass.async_block_till_done()
    lines = [json.loads(line) for line in audit.path.read_text().splitlines()]
    tools = [line["record"].get("tool") for line in lines]
    assert tools == ["optimize_dispatch", "inspect_grid_state", "simulate_action", "validate_constraints",
                     "generate_explanation"]
    assert lines[0]["record"]["outputs_hash"] and lines[0]["record"]["actor"] == "system"
    status = await call(hass, "verify_audit_chain", hass_admin_user)
    assert status["ok"] and status["lines"] == 5
    assert verify(audit.path, audit.anchor).ok

    rows = audit.path.read_text().splitlines()
    rows[1] = rows[1].replace('"system"', '"mallory"')
    audit.path.write_text("\n".join(rows) + "\n")
    status = await call(hass, "verify_audit_chain", hass_admin_user)
    assert not status["ok"] and status["problem"] == "edited"
    window = {"start": chain["plan"]["schedule"][0]["start"], "end": chain["plan"]["schedule"][1]["end"]}
    with pytest.raises(HomeAssistantError) as err:
        await call(hass, "request_authorization", **chain_ids(chain), requested_window=window)
    assert err.value.translation_key == "audit_chain_broken"
    assert site.runtime_data.control.keeper.halt("grid") == "the audit chain is broken"
    assert site.runtime_data.control.keeper.halt("scheduler") is None


async def test_forecast_and_history_from_the_recorder(
    recorder_mock: Recorder, hass: HomeAssistant, tz: str, tmp_path: Path
) -> None:
    """Four days of a daily load profile in the recorder: the profile model beats persistence and returns it; a past
    snapshot reads the recorder's state at that time."""
    hass.config.config_dir = str(tmp_path / "config")
    now = dt_util.utcnow().replace(minute=0, second=0, microsecond=0)

    def load(moment: datetime) -> float:
        return round(2.0 + math.sin(2 * math.pi * moment.hour / 24), 6)

    for hours in range(4 * 24, 0, -1):
        moment = now - timedelta(hours=hours)
        hass.states.async_set("sensor.house_power", str(load(moment)), {"unit_of_measurement": "kW"},
                              timestamp=moment.timestamp())
    await async_wait_recording_done(hass)
    assert await async_setup_component(hass, "homeassistant", {})
    entry = sample_entry(house_power_entity="sensor.house_power")
    entry.add_to_hass(hass)
    assert await hass.config_entries.async_setup(entry.entry_id)
    await hass.async_block_till_done()

    result = await call(hass, "run_forecast", target="load", horizon_h=6, quantiles=[0.1, 0.5, 0.9])
    assert result["baseline"] is False and result["model_version"] == "profile-1"
    assert result["entity_id"] == "sensor.house_power" and result["backtest_error"] < result["baseline_backtest_error"]
    starts = [datetime.fromisoformat(s) for s in result["starts"]]
    assert result["series"]["0.5"] == pytest.approx([load(s) for s in starts], abs=1e-6)

    past = now - timedelta(hours=30)
    snapshot = await call(hass, "inspect_grid_state", at=past.isoformat(), depth=2)
    assert snapshot["state"]["measurements"]["house.power"]["value"] == pytest.approx(load(past - timedelta(hours=1)))
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "inspect_grid_state", at=(now - timedelta(days=30)).isoformat())
    assert err.value.translation_key == "at_outside_retention"


async def test_diagnostics_show_the_grid_without_the_secret(hass: HomeAssistant, site: MockConfigEntry) -> None:
    from custom_components.agentic_hems.diagnostics import async_get_config_entry_diagnostics

    await call(hass, "inspect_grid_state")
    diagnostics = await async_get_config_entry_diagnostics(hass, site)
    grid = diagnostics["grid"]
    assert grid["audit"]["ok"] and grid["audit"]["lines"] == 1 and grid["artifacts"] == 1
    assert grid["networks"] == ["home", "broken", "case14"]
    assert site.runtime_data.grid.secret.hex() not in json.dumps(diagnostics, default=str)


async def test_grid_tools_as_orchestrator_actions(
    hass: HomeAssistant, site: MockConfigEntry, hass_admin_user: User, hass_read_only_user: User
) -> None:
    """Each tool is an action run as the user who asked; SIMULATE_ACTION takes the plan's signed actions by id."""
    from custom_components.agentic_hems.assistant.tools import HassTools
    from custom_components.agentic_hems.orchestrator.actions import REGISTRY, Action, validate
    from custom_components.agentic_hems.orchestrator.loop import instructions

    assert {name.lower() for name in REGISTRY if name.lower() in TOOLS_NAMES} == TOOLS_NAMES
    assert "RUN_POWER_FLOW" in instructions("run a power flow on the feeder")
    assert "RUN_POWER_FLOW" not in instructions("Schedule all flexible loads")  # short prompts for other requests

    admin = HassTools(hass, site, Context(user_id=hass_admin_user.id))
    snapshot = await admin.run(validate(Action("INSPECT_GRID_STATE", {"network_id": "home"})))
    plan = await admin.run(validate(Action("OPTIMIZE_DISPATCH", {"objective": "cost", "horizon_h": 4})))
    assert "signature" not in plan and plan["provenance"].startswith("0-")  # compacted for the model
    sim = await admin.run(validate(Action("SIMULATE_ACTION", {"snapshot_id": snapshot["snapshot_id"],
                                                              "plan_id": plan["plan_id"], "horizon_min": 240})))
    assert sim["valid"] is True and sim["plan_id"] == plan["plan_id"] and len(sim["trajectory"]) == 7  # 6 + "more"

    reader = HassTools(hass, site, Context(user_id=hass_read_only_user.id))
    refused = await reader.run(validate(Action("RUN_POWER_FLOW", {"snapshot_id": snapshot["snapshot_id"]})))
    assert refused == {"action": "RUN_POWER_FLOW", "error": "tool_forbidden", "tool": "run_power_flow",
                       "scope": "tenant:simulate"}
    lines = [json.loads(line)["record"] for line in site.runtime_data.audit.path.read_text().splitlines()]
    assert [(r["tool"], r["actor"], r["decision"]) for r in lines][-1] == (
        "run_power_flow", hass_read_only_user.id, "forbidden:tool_forbidden")


TOOLS_NAMES = {"inspect_grid_state", "retrieve_asset", "run_power_flow", "run_contingency", "run_forecast",
               "simulate_action", "calculate_flexibility", "optimize_dispatch", "validate_constraints",
               "request_authorization", "generate_explanation", "create_incident"}


async def test_the_docs_examples_run(hass: HomeAssistant, site: MockConfigEntry, hass_admin_user: User) -> None:
    """The grid toolkit page's script of every tool call, then the decisions, run as written (a MATPOWER case14 is in
    place)."""
    import re

    import yaml

    from homeassistant.helpers import config_validation as cv
    from homeassistant.helpers.script import Script

    section = (Path(__file__).resolve().parents[2] / "docs/concepts/grid.md").read_text()
    blocks = [yaml.safe_load(b) for b in re.findall(r"```yaml\n(.*?)```", section, re.DOTALL)]
    assert len(blocks) == 2
    called = {step["action"].split(".")[1] for block in blocks for step in block}
    assert called == TOOLS_NAMES | {"approve_authorization", "acknowledge_incident", "verify_audit_chain"}
    await site.runtime_data.control.async_set_allow_control(True)
    tools = Script(hass, cv.SCRIPT_SCHEMA(blocks[0]), "readme tools", DOMAIN)
    result = await tools.async_run(context=Context(user_id=hass_admin_user.id))
    variables = result.variables
    assert variables["flow"]["converged"] and variables["n1"]["islanded"] == [14]
    assert variables["sim"]["valid"] and variables["validation"]["pass"]
    assert variables["request"]["status"] == "pending"
    decisions = Script(hass, cv.SCRIPT_SCHEMA(blocks[1]), "readme decisions", DOMAIN)
    await decisions.async_run(run_variables={"request": variables["request"], "incident": variables["incident"]},
                              context=Context(user_id=hass_admin_user.id))
    grid = site.runtime_data.grid
    assert grid.requests[variables["request"]["request_id"]]["status"] == "approved"
    assert grid.incidents[variables["incident"]["incident_id"]]["acknowledged_by"] == hass_admin_user.id


async def test_later_slots_and_expiry_follow_the_scheduler(
    hass: HomeAssistant, site: MockConfigEntry, freezer: FrozenDateTimeFactory, hass_admin_user: User
) -> None:
    """An approved request issues its next slot's command at the slot boundary; an unanswered one expires."""
    from pytest_homeassistant_custom_component.common import async_fire_time_changed

    chain = await plan_chain(hass)
    schedule = chain["plan"]["schedule"]
    ids = chain_ids(chain)
    window = {"start": schedule[0]["start"], "end": schedule[3]["end"]}
    approved = await call(hass, "request_authorization", **ids, requested_window=window)
    waiting = await call(hass, "request_authorization", **ids, requested_window=window)
    await site.runtime_data.control.async_set_allow_control(True)
    await call(hass, "approve_authorization", hass_admin_user, request_id=approved["request_id"])
    for slot in schedule[1:3]:
        moment = datetime.fromisoformat(slot["start"])
        freezer.move_to(moment)
        async_fire_time_changed(hass, moment)
        await hass.async_block_till_done()
        expected = slot["batteries"]["battery"]["charge_kw"] - slot["batteries"]["battery"]["discharge_kw"]
        assert float(hass.states.get("input_number.battery_setpoint").state) == pytest.approx(expected, abs=1e-3)
    grid = site.runtime_data.grid
    assert grid.requests[approved["request_id"]]["executed_slots"] == [s["start"] for s in schedule[:3]]
    traces = [t for t in site.runtime_data.control.traces.values() if t["source_agent"] == "grid"]
    assert [t["outcome"] for t in traces] == ["executed"] * 3
    expires = datetime.fromisoformat(waiting["expires_at"])
    moment = expires + timedelta(minutes=15 - expires.minute % 15, seconds=-expires.second)  # the next boundary
    freezer.move_to(moment)
    async_fire_time_changed(hass, moment)
    await hass.async_block_till_done()
    assert grid.requests[waiting["request_id"]]["status"] == "expired"
    assert ir.async_get(hass).async_get_issue(DOMAIN, f"authorization_{waiting['request_id']}") is None


async def test_the_options_grid_step(hass: HomeAssistant, site: MockConfigEntry, hass_read_only_user: User) -> None:
    """Grid options are saved; cleared ones are dropped; the user select lists non-admin users."""
    flow = await hass.config_entries.options.async_init(site.entry_id)
    flow = await hass.config_entries.options.async_configure(flow["flow_id"], {})
    flow = await hass.config_entries.options.async_configure(flow["flow_id"], {})
    assert flow["step_id"] == "grid"
    schema = {str(k): v for k, v in flow["data_schema"].schema.items()}
    options = schema["grid_simulate_users"].config["options"]
    assert {"value": hass_read_only_user.id, "label": hass_read_only_user.name} in options
    flow = await hass.config_entries.options.async_configure(flow["flow_id"], {
        "battery_capacity_kwh": 12.0, "battery_power_kw": 6.0, "grid_power_entity": "sensor.grid_power",
        "battery_soc_entity": "sensor.battery_soc", "grid_request_users": [hass_read_only_user.id]})
    assert flow["step_id"] == "home"
    flow = await hass.config_entries.options.async_configure(flow["flow_id"], {})
    assert flow["step_id"] == "tariff"
    flow = await hass.config_entries.options.async_configure(flow["flow_id"], {})
    flow = await hass.config_entries.options.async_configure(flow["flow_id"], {})
    await hass.async_block_till_done()
    assert site.options["battery_capacity_kwh"] == 12.0 and "pv_power_entity" not in site.options
    assert "battery_setpoint_entity" not in site.options
    battery = await call(hass, "retrieve_asset", asset_id="battery")
    assert battery["limits"]["capacity_kwh"] == 12.0 and battery["limits"]["p_max_kw"] == 6.0


async def test_what_the_breaking_session_found(
    hass: HomeAssistant, site: MockConfigEntry, freezer: FrozenDateTimeFactory, hass_admin_user: User,
    hass_read_only_user: User,
) -> None:
    """Overlapping approvals, a non-power unit, a non-text tenant, a binary case file, an unsimulated slot, refused
    people-side calls (audited) and a stale snapshot: each a clear, translated refusal."""
    chain = await plan_chain(hass)
    schedule = chain["plan"]["schedule"]
    ids = chain_ids(chain)
    window = {"start": schedule[0]["start"], "end": schedule[7]["end"]}
    first = await call(hass, "request_authorization", **ids, requested_window=window)
    second = await call(hass, "request_authorization", **ids,
                        requested_window={"start": schedule[4]["start"], "end": schedule[9]["end"]})
    await call(hass, "approve_authorization", hass_admin_user, request_id=first["request_id"])
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "approve_authorization", hass_admin_user, request_id=second["request_id"])
    assert err.value.translation_key == "request_overlaps"
    assert err.value.translation_placeholders["other"] == first["request_id"]

    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "verify_audit_chain", hass_read_only_user)
    assert err.value.translation_key == "admin_required_grid"
    records = [json.loads(line)["record"] for line in site.runtime_data.audit.path.read_text().splitlines()]
    assert records[-1]["tool"] == "verify_audit_chain" and records[-1]["decision"] == "forbidden:admin_required_grid"

    with pytest.raises(ServiceValidationError) as err:  # a list is no tenant: refused with a sentence, no traceback
        await call(hass, "inspect_grid_state", tenant=["x"])
    assert (err.value.translation_key, err.value.translation_placeholders) == ("field_invalid", {"field": "Site"})
    networks = Path(hass.config.path("agentic_hems", "networks"))
    (networks / "binary.m").write_bytes(b"\xff\xfe\x00garbage")
    with pytest.raises(HomeAssistantError) as err:
        await call(hass, "inspect_grid_state", network_id="binary")
    assert err.value.translation_key == "network_invalid"

    snapshot = await call(hass, "inspect_grid_state")  # the last consistent snapshot
    hass.states.async_set("sensor.grid_power", "1234", {"unit_of_measurement": "kWh"})  # an energy meter chosen
    stale = await call(hass, "inspect_grid_state")
    assert stale["stale"] is True and "kWh is not a power unit" in stale["stale_reason"]
    assert stale["snapshot_id"] == snapshot["snapshot_id"]
    await set_meters(hass)

    plan = await call(hass, "optimize_dispatch", horizon_h=6)
    fresh = await call(hass, "inspect_grid_state")
    with pytest.raises(ServiceValidationError) as err:  # the sim steps 15 minutes
        await call(hass, "simulate_action", snapshot_id=fresh["snapshot_id"], actions=plan["actions"],
                   signature=plan["signature"], plan_id=plan["plan_id"], horizon_min=1437)
    assert err.value.translation_key == "field_invalid"
    assert err.value.translation_placeholders == {"field": "Horizon"}
    early = [a for a in plan["actions"] if a["end"] <= plan["schedule"][20]["start"]]
    short = await call(hass, "simulate_action", snapshot_id=fresh["snapshot_id"], actions=early,
                       signature=sign_for(site, early, plan["plan_id"]), plan_id=plan["plan_id"], horizon_min=300)
    validation = await call(hass, "validate_constraints", sim_id=short["sim_id"])
    explanation = await call(hass, "generate_explanation", plan_id=plan["plan_id"])
    late = await call(hass, "request_authorization", plan_id=plan["plan_id"], sim_id=short["sim_id"],
                      validation_id=validation["validation_id"], explanation_id=explanation["explanation_id"],
                      requested_window={"start": plan["schedule"][22]["start"], "end": plan["schedule"][23]["end"]})
    assert late["status"] == "denied" and "the requested window is not within the simulated horizon" in late["reasons"]

    freezer.tick(timedelta(minutes=31))
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "simulate_action", snapshot_id=fresh["snapshot_id"], actions=plan["actions"],
                   signature=plan["signature"], plan_id=plan["plan_id"], horizon_min=60)
    assert err.value.translation_key == "input_stale"

    with pytest.raises(ServiceValidationError) as err:  # above the 11 kW fuse
        await call(hass, "optimize_dispatch", constraints={"import_limit_kw": 12})
    assert err.value.translation_key == "outside_limits"
    hass.states.async_set("sensor.battery_soc", "150", {"unit_of_measurement": "%"})
    alarms = (await call(hass, "inspect_grid_state"))["state"]["alarms"]
    assert alarms == [{"alarm": "soc_above_maximum", "severity": "warning", "asset_id": "battery", "soc_pct": 150.0}]


def sign_for(site: MockConfigEntry, actions: list[dict[str, Any]], plan_id: str) -> str:
    from custom_components.agentic_hems.grid.tools import sign

    return sign(site.runtime_data.grid.secret, actions, plan_id)


async def test_a_restart_mid_slot_resumes_the_approved_plan(
    hass: HomeAssistant, site: MockConfigEntry, freezer: FrozenDateTimeFactory, hass_admin_user: User
) -> None:
    chain = await plan_chain(hass)
    schedule = chain["plan"]["schedule"]
    request = await call(hass, "request_authorization", **chain_ids(chain),
                         requested_window={"start": schedule[0]["start"], "end": schedule[3]["end"]})
    await site.runtime_data.control.async_set_allow_control(True)
    await call(hass, "approve_authorization", hass_admin_user, request_id=request["request_id"])
    await hass.async_block_till_done()
    assert await hass.config_entries.async_unload(site.entry_id)
    freezer.move_to(datetime.fromisoformat(schedule[1]["start"]) + timedelta(minutes=7))
    assert await hass.config_entries.async_setup(site.entry_id)
    await hass.async_block_till_done()
    slot = schedule[1]["batteries"]["battery"]
    assert float(hass.states.get("input_number.battery_setpoint").state) == pytest.approx(
        slot["charge_kw"] - slot["discharge_kw"], abs=1e-3)
    executed = site.runtime_data.grid.requests[request["request_id"]]["executed_slots"]
    assert executed == [schedule[0]["start"], schedule[1]["start"]]


SETPOINT = "input_number.battery_setpoint"
SET_5_KW = {"intent": "set_value", "device_alias": SETPOINT, "params": {"value": 5}}


async def test_the_battery_setpoint_moves_only_for_an_approved_request(
    hass: HomeAssistant, site: MockConfigEntry, freezer: FrozenDateTimeFactory, hass_admin_user: User
) -> None:
    """A person, an automation, the scheduler and a forged grid command are refused by Policy; the approved slot is
    not."""
    from custom_components.agentic_hems.gates.models import GridGrant

    control = site.runtime_data.control
    await control.async_set_allow_control(True)
    before = hass.states.get(SETPOINT).state

    async def refused(record: dict[str, Any], why: str) -> None:
        await hass.async_block_till_done()
        assert record["outcome"] == "blocked" and record["failed_gate"] == "policy"
        assert why in record["gate_results"][-1]["reason"], record["gate_results"][-1]["reason"]
        assert hass.states.get(SETPOINT).state == before

    grid_only = "is a grid setpoint: only an approved authorization request sets it"
    for user, source in ((hass_admin_user, "hermes"), (None, "automation"), (hass_admin_user, "grid")):
        response = await call(hass, "evaluate_command", user, source_agent=source, model_candidate=SET_5_KW,
                              raw_input="set the battery to 5 kW")
        record = control.traces[response["trace_id"]]
        await refused(record, grid_only if source != "grid" else "without an approved authorization request")
    for source in ("scheduler", "orchestrator"):
        await refused(await control.async_evaluate(source_agent=source, candidate=SET_5_KW, context=Context(),
                                                   slot_start=dt_util.utcnow()), grid_only)

    chain = await plan_chain(hass)
    schedule = chain["plan"]["schedule"]
    window = {"start": schedule[0]["start"], "end": schedule[3]["end"]}
    pending = await call(hass, "request_authorization", **chain_ids(chain), requested_window=window)
    expired = await call(hass, "request_authorization", **chain_ids(chain), requested_window=window)
    first = datetime.fromisoformat(schedule[0]["start"])
    freezer.move_to(first)
    expected = schedule[0]["batteries"]["battery"]["charge_kw"] - schedule[0]["batteries"]["battery"]["discharge_kw"]

    async def forged(request_id: str, slot: datetime, value: float = expected) -> dict[str, Any]:
        return await control.async_evaluate(
            source_agent="grid", context=Context(), slot_start=slot,
            candidate={"intent": "set_value", "device_alias": SETPOINT, "params": {"value": round(value, 3)}},
            grant=GridGrant(request_id=request_id, slot_start=slot))

    await refused(await forged("auth_unknown", first), "no authorization request auth_unknown")
    await refused(await forged(pending["request_id"], first), "is pending, not approved")
    await call(hass, "approve_authorization", hass_admin_user, request_id=pending["request_id"])
    await hass.async_block_till_done()
    traces = [t for t in control.traces.values() if t["source_agent"] == "grid" and t["outcome"] == "executed"]
    assert len(traces) == 1 and len(traces[0]["gate_results"]) == 8  # the approved slot's own command still runs
    assert float(hass.states.get(SETPOINT).state) == pytest.approx(expected, abs=1e-3)
    before = hass.states.get(SETPOINT).state
    nxt = first + timedelta(minutes=15)
    await refused(await forged(pending["request_id"], nxt), "not the current slot")
    await refused(await forged(pending["request_id"], first, value=expected + 1), "is not the approved")
    end = datetime.fromisoformat(window["end"])  # past the request's 30 min: the other one has expired
    freezer.move_to(end)
    site.runtime_data.grid.expire_requests()
    await refused(await forged(pending["request_id"], end), "outside the window")
    freezer.move_to(first)
    assert site.runtime_data.grid.requests[expired["request_id"]]["status"] == "expired"
    await refused(await forged(expired["request_id"], first), "is expired, not approved")


async def test_a_confirm_rule_on_the_setpoint_is_met_by_the_approval(
    hass: HomeAssistant, site: MockConfigEntry, freezer: FrozenDateTimeFactory, hass_admin_user: User
) -> None:
    """A user rule asks for confirmation of set_value on input_number: a person's command on the grid setpoint is
    refused before any pending confirmation; the approved request's slot command executes without one."""
    hass.config_entries.async_update_entry(site, options={**site.options, "policy_rules": [
        {"operation": "set_value", "device_type": "input_number", "risk_min": 0, "risk_max": 5, "action": "confirm"}]})
    await hass.async_block_till_done()
    control = site.runtime_data.control
    await control.async_set_allow_control(True)
    before = hass.states.get(SETPOINT).state
    response = await call(hass, "evaluate_command", hass_admin_user, source_agent="hermes", model_candidate=SET_5_KW,
                          raw_input="set the battery to 5 kW")
    assert (response["outcome"], control.traces[response["trace_id"]]["failed_gate"]) == ("blocked", "policy")
    assert control.keeper.pending == {} and hass.states.get(SETPOINT).state == before

    chain = await plan_chain(hass)
    schedule = chain["plan"]["schedule"]
    request = await call(hass, "request_authorization", **chain_ids(chain),
                         requested_window={"start": schedule[0]["start"], "end": schedule[3]["end"]})
    freezer.move_to(datetime.fromisoformat(schedule[0]["start"]))
    await call(hass, "approve_authorization", hass_admin_user, request_id=request["request_id"])
    await hass.async_block_till_done()
    (trace,) = [t for t in control.traces.values() if t["source_agent"] == "grid"]
    policy = trace["gate_results"][5]["evidence"]
    assert trace["outcome"] == "executed" and control.keeper.pending == {}
    assert policy["rule"]["source"] == "user" and policy["rule"]["action"] == "confirm"
    assert policy["confirmed_by_grant"] == {"request_id": request["request_id"], "slot_start": schedule[0]["start"]}
    battery = schedule[0]["batteries"]["battery"]
    assert float(hass.states.get(SETPOINT).state) == pytest.approx(battery["charge_kw"] - battery["discharge_kw"],
                                                                   abs=1e-3)


async def test_a_model_requests_authorization_only_when_the_request_asks_for_a_battery_action(
    hass: HomeAssistant, site: MockConfigEntry, provider: tuple[Scripted, str], hass_admin_user: User
) -> None:
    """request_authorization from a model's run: refused (an outcome, no request, no issue) when the person asked
    something else; a pending request for an administrator (an outcome) when they asked for a battery action."""
    scripted, url = provider
    hass.config_entries.async_update_entry(site, data={**site.data, "llm_base_url": url, "llm_api_key": "sk-test-key"},
                                           options={**site.options, "llm_model": "scripted-1"})
    await hass.async_block_till_done()
    chain = await plan_chain(hass)
    schedule = chain["plan"]["schedule"]
    args = {**chain_ids(chain), "requested_window": {"start": schedule[0]["start"], "end": schedule[3]["end"]}}
    grid = site.runtime_data.grid
    request = json.dumps({"action": "REQUEST_AUTHORIZATION", "args": args})

    scripted.replies = [request, "ACTION: FINISH | summary=I asked for approval of the battery plan."]
    response = await call(hass, "ask", hass_admin_user, text="Run a power flow on the feeder")
    assert response["outcomes"] == [{
        "kind": "refusal", "action": "REQUEST_AUTHORIZATION", "target": None, "outcome": "refused",
        "reason": "the request asks for no grid or battery action", "reason_id": "grid_not_requested"}]
    assert response["summary"] == (
        "Asking an administrator to approve a grid plan: refused (the request asks for no grid or battery action).")
    assert not response["success"] and grid.requests == {}
    assert not [i for i in ir.async_get(hass).issues.values() if i.domain == DOMAIN and "authorization" in i.issue_id]

    scripted.replies = [request, "ACTION: FINISH | summary=Requested."]
    response = await call(hass, "ask", hass_admin_user, text="Charge the battery tonight and request authorization")
    (pending,) = grid.requests.values()
    assert pending["status"] == "pending" and pending["requested_by"] == hass_admin_user.id
    assert response["outcomes"] == [{"kind": "authorization", "request_id": pending["request_id"],
                                     "outcome": "pending", "reason": None}]
    assert response["success"] and response["summary"] == (
        f"Grid plan request {pending['request_id']}: waits for an administrator to approve it.")
    assert ir.async_get(hass).async_get_issue(DOMAIN, f"authorization_{pending['request_id']}") is not None


async def test_unreadable_grid_records_are_dropped_not_trusted(
    hass: HomeAssistant, site: MockConfigEntry, hass_storage: dict[str, Any], caplog: pytest.LogCaptureFixture
) -> None:
    """A request or incident without its fields, or a whole unreadable Store, is dropped with a warning; set-up goes
    on, good records survive, and a bad secret is replaced by a new one, saved."""
    chain = await plan_chain(hass)
    window = {"start": chain["plan"]["schedule"][0]["start"], "end": chain["plan"]["schedule"][3]["end"]}
    request = await call(hass, "request_authorization", **chain_ids(chain), requested_window=window)
    key = f"{DOMAIN}.{site.entry_id}.grid"
    good_secret = hass_storage[key]["data"]["secret"]
    assert await hass.config_entries.async_unload(site.entry_id)
    stored = hass_storage[key]["data"]
    stored["requests"]["broken"] = {"request_id": "broken", "status": "pending", "expires_at": "soon"}
    stored["incidents"]["bad"] = {"incident_id": "bad"}
    assert await hass.config_entries.async_setup(site.entry_id)
    await hass.async_block_till_done()
    records = site.runtime_data.grid.records
    assert set(records.requests) == {request["request_id"]} and records.incidents == {}
    assert records.secret.hex() == good_secret
    assert "Dropping unreadable stored authorization request broken" in caplog.text
    assert "Dropping unreadable stored incident bad" in caplog.text
    assert ir.async_get(hass).async_get_issue(DOMAIN, f"authorization_{request['request_id']}") is not None

    for data in ({"secret": "not hex", "requests": [], "incidents": "x"}, "not a mapping"):
        assert await hass.config_entries.async_unload(site.entry_id)
        hass_storage[key]["data"] = data
        assert await hass.config_entries.async_setup(site.entry_id)
        await hass.async_block_till_done()
        records = site.runtime_data.grid.records
        assert records.requests == {} and records.incidents == {} and len(records.secret) == 32
        assert records.secret.hex() != good_secret and hass_storage[key]["data"]["secret"] == records.secret.hex()


async def test_a_whole_days_plan_actions_fit_simulate_action(hass: HomeAssistant, site: MockConfigEntry) -> None:
    """A 24-hour plan may have 96 battery runs (~130 characters each): simulate_action takes them and checks them
    (here: the signature), where the general 4000-character cap refused them as too large."""
    chain = await plan_chain(hass)
    plan = chain["plan"]
    start = datetime.fromisoformat(plan["schedule"][0]["start"])
    actions = [
        {"type": "battery_power", "asset_id": "battery", "start": (start + i * timedelta(minutes=15)).isoformat(),
         "end": (start + (i + 1) * timedelta(minutes=15)).isoformat(), "p_kw": 0.1 * (i % 2)}
        for i in range(96)
    ]
    with pytest.raises(ServiceValidationError) as err:
        await call(hass, "simulate_action", snapshot_id=chain["snapshot"]["snapshot_id"], actions=actions,
                   signature=plan["signature"], plan_id=plan["plan_id"], horizon_min=24 * 60)
    assert err.value.translation_key == "signature_invalid"
