"""Every form people type into, in HA's own frontend: the config flow (each price source), the options flow,
reconfigure, adding and reconfiguring an appliance (and a program appliance's start profile), adding a battery and adding a heat pump (a house and a hot-water
tank), at a desktop (1280 px) and a phone (390 px) width.

Each step waits for the next one to show (a form the frontend cannot open leaves the dialog greyed out, and the test
fails on its timeout), saves a screenshot ``flow-<width>-<test>-<nn>-<step>.png`` in ``tests/browser/artifacts/``, and
the last test fails on any console error of this file's page. The texts expected come from ``translations/en.json``.
The forms of the options steps and the subentries are checked field by field (``Walk.labelled``): each field the
frontend draws has its translated label (not its raw key) and its translated description on screen, and the
screenshots scroll through the whole form.

Nothing here changes the demo for the other files: flows that would create an entry or save options are closed at
their last step; the appliance reconfigured is saved unchanged. The demo has no core Nord Pool entry (it is offline),
so the Nord Pool choice ends with the translated ``nordpool_not_set_up`` message; the form with an entry is checked
against the frontend's rules in tests/ha/test_config_flow.py. ENTSO-E is unreachable offline: the key check ends with
a translated error on the form, which stays filled in.
"""

from __future__ import annotations

from collections.abc import Iterator
import json
from pathlib import Path
import re
from typing import Any

import pytest
from playwright.sync_api import Error as PlaywrightError, Locator, Page, expect

from .conftest import ARTIFACTS, ROOT, Demo, console_errors, open_page

EN = json.loads((ROOT / "custom_components" / "agentic_hems" / "translations" / "en.json").read_text())
CONFIG, OPTIONS = EN["config"], EN["options"]
APPLIANCE = EN["config_subentries"]["appliance"]
BATTERY = EN["config_subentries"]["battery"]
HEAT_PUMP = EN["config_subentries"]["heat_pump"]
PHASES = EN["selector"]["phase"]["options"]
WIDTHS = (1280, 390)
HEIGHT = {1280: 900, 390: 844}
INTEGRATION_PAGE = "/config/integrations/integration/agentic_hems"
CONSOLE: list[str] = []
NOT_A_PRICE_SENSOR = "sensor.grid_power"  # the demo's grid meter: a power, no prices in its attributes
# A price sensor in the shape of HACS Nord Pool without raw attributes (24 hourly prices of the local day), set
# through HA's REST API for the price sensor test and removed after it.
PRICE_SENSOR = "sensor.flow_test_prices"
PRICES = {"state": "0.1", "attributes": {"unit_of_measurement": "EUR/kWh", "friendly_name": "Flow test prices",
                                         "today": [round(0.05 + 0.01 * hour, 2) for hour in range(24)],
                                         "tomorrow": []}}
BATTERY_MODE = "select.flow_test_battery_mode"
SOC_SENSOR = "sensor.flow_test_battery_soc"
SOC_STATE = {"state": "40", "attributes": {"unit_of_measurement": "%", "device_class": "battery",
                                          "friendly_name": "Flow test battery SoC"}}
MODE_STATE = {"state": "Standby", "attributes": {"friendly_name": "Flow test battery mode",
                                                 "options": ["Force charge", "Force discharge", "Standby"]}}
BATTERY_POWER = "number.flow_test_battery_power"  # an inverter's power number in W that reaches only 3 kW
POWER_STATE = {"state": "0", "attributes": {"friendly_name": "Flow test battery power", "min": 0, "max": 3000,
                                            "step": 100, "mode": "box", "unit_of_measurement": "W"}}
# parse_schedule's message for a band schedule without bands (shown in the translated invalid_tariff error)
NO_BANDS = "bands must map each band name to its fee per kWh, e.g. {low: 0.03, high: 0.11}"
HASS = "document.querySelector('home-assistant').hass"
# Whether the focus (followed through the shadow roots) is in a search box, as when an entity picker has opened.
FOCUSED_SEARCH = """() => {
    let element = document.activeElement;
    while (element && element.shadowRoot && element.shadowRoot.activeElement) element = element.shadowRoot.activeElement;
    return !!element && element.tagName === 'INPUT' && element.placeholder === 'Search';
}"""
# The dialog's form (found through the shadow roots): each field's name and the label the frontend computes for it
# (HA's flow dialog falls back to the raw key where a translation is missing).
FORM_FIELDS = """(dialog) => {
    const find = (root) => {
        for (const element of root.querySelectorAll('*')) {
            if (element.tagName === 'HA-FORM') return element;
            const inner = element.shadowRoot && find(element.shadowRoot);
            if (inner) return inner;
        }
        return null;
    };
    const form = find(dialog.shadowRoot || dialog);
    return form.schema.map((field) => ({name: field.name, label: form.computeLabel(field, form.data)}));
}"""
# Scroll the dialog's scrolling part (found through the shadow roots) to its top; whether it was scrolled down.
SCROLL_TO_TOP = """(dialog) => {
    const find = (root) => {
        for (const element of root.querySelectorAll('*')) {
            if (element.scrollTop > 0) return element;
            const inner = element.shadowRoot && find(element.shadowRoot);
            if (inner) return inner;
        }
        return null;
    };
    const scrolled = find(dialog.shadowRoot || dialog);
    if (scrolled) scrolled.scrollTop = 0;
    return !!scrolled;
}"""
# Whether an element ends below the part of its scrolling container (or of the window) that is on screen.
BELOW_VIEW = """(element) => {
    const bottom = element.getBoundingClientRect().bottom;
    for (let node = element; node; ) {
        node = node.parentElement || node.getRootNode().host;
        if (node && node.scrollHeight > node.clientHeight
                && ['auto', 'scroll'].includes(getComputedStyle(node).overflowY)) {
            return bottom > node.getBoundingClientRect().bottom;
        }
    }
    return bottom > window.innerHeight;
}"""


@pytest.fixture(scope="module")
def page(browser: Any, demo: Demo, artifacts: Path) -> Iterator[Page]:
    """The owner's own browser context (its console is this file's), logged in."""
    context, page = open_page(browser, demo.dashboard, demo.username, demo.password, timezone_id="Europe/Brussels",
                              console=CONSOLE)
    try:
        yield page
    finally:
        (artifacts / "console-flows.log").write_text("\n".join(CONSOLE) + "\n")
        context.close()


class Walk:
    """One flow walked on the integration's page at one width: its dialog, its steps and their screenshots."""

    def __init__(self, page: Page, demo: Demo, width: int, name: str) -> None:
        self.page, self.name, self.width, self.shots = page, name, width, 0
        page.set_viewport_size({"width": width, "height": HEIGHT[width]})
        page.goto(demo.base + INTEGRATION_PAGE)
        expect(page.get_by_label("Configure").first).to_be_visible()
        self.dialog = page.locator("dialog-data-entry-flow")

    def shot(self, step: str) -> None:
        """Save the page as it is now: ``flow-<width>-<name>-<nn>-<step>.png``."""
        self.shots += 1
        self.page.screenshot(path=str(ARTIFACTS / f"flow-{self.width}-{self.name}-{self.shots:02d}-{step}.png"))

    def step(self, title: str, step: str) -> None:
        """Wait for the step titled ``title`` (the dialog's heading), then take its screenshot."""
        expect(self.dialog.locator(".dialog-title")).to_have_text(title)
        self.shot(step)

    def sees(self, text: str | re.Pattern[str], step: str) -> None:
        """Wait for ``text`` in the dialog (an error, an abort's message), then take a screenshot."""
        seen = self.dialog.get_by_text(text)
        for attempt in range(3):  # the dialog may re-render the alert between finding it and scrolling to it
            expect(seen).to_be_visible()
            try:
                seen.scroll_into_view_if_needed()
                break
            except PlaywrightError:
                if attempt == 2:
                    raise
        self.shot(step)

    def submit(self) -> None:
        """Press the dialog's Submit."""
        self.dialog.get_by_role("button", name="Submit").click()

    def close(self) -> None:
        """Close the dialog (its flow is aborted: nothing is saved)."""
        self.dialog.locator("ha-icon-button[data-dialog=close]").first.click()
        expect(self.dialog.locator(".dialog-title")).to_have_count(0)  # the element stays, empty

    def labelled(self, texts: dict[str, Any], step: str) -> None:
        """Check that the form's fields are those of ``texts`` (a step's translations), each with its translated label
        and its description (the first paragraph) on screen; then take screenshots down the form, one
        (``<step>-<field>``) wherever a field's description was below the part on screen."""
        fields = self.dialog.evaluate(FORM_FIELDS)
        sections = texts.get("sections") or {}  # a section is labelled with its name; its fields are checked opened
        labels = {**texts["data"], **{name: section["name"] for name, section in sections.items()}}
        assert {field["name"]: field["label"] for field in fields} == labels, fields
        fields = [field for field in fields if field["name"] not in sections]
        if self.dialog.evaluate(SCROLL_TO_TOP):  # a step can open where the one before was scrolled to
            self.shot(f"{step}-top")
        for field in fields:
            paragraph = texts["data_description"][field["name"]].split("\n\n")[0]  # placeholders: any text
            description = self.dialog.get_by_text(re.compile(".+?".join(map(re.escape, re.split(r"\{\w+\}", paragraph)))))
            expect(description).to_be_visible()
            if description.evaluate(BELOW_VIEW):
                description.evaluate("(e) => e.scrollIntoView({block: 'end'})")
                self.shot(f"{step}-{field['name']}")

    def field(self, label: str, role: str = "textbox") -> Locator:
        """The dialog's input labelled ``label`` (a required field's label ends in "*")."""
        return self.dialog.get_by_role(role, name=re.compile(rf"^{re.escape(label)}\*?$"))  # type: ignore[arg-type]

    def choose(self, label: str, option: str, step: str) -> None:
        """Open the drop-down labelled ``label`` (its options shown in a screenshot) and choose ``option``."""
        self.dialog.get_by_label(label, exact=True).click()
        choice = self.page.get_by_role("menuitem", name=option, exact=True)
        expect(choice).to_be_visible()
        self.shot(step)
        choice.click()
        expect(self.dialog.get_by_label(label, exact=True)).to_contain_text(option)

    def pick_entity(self, entity_id: str, index: int = 0) -> None:
        """Pick ``entity_id`` in the dialog's ``index``-th entity picker, by typing it and taking the first match."""
        picker = self.dialog.locator("ha-selector-entity").nth(index)
        picker.click()
        self.page.wait_for_function(FOCUSED_SEARCH)  # a drop-down on a desktop, a bottom sheet on a phone
        self.page.keyboard.type(entity_id)
        self.page.keyboard.press("Enter")
        self.page.wait_for_function("([e, id]) => e.value === id", arg=[picker.element_handle(), entity_id])

    def choose_source(self, label: str) -> None:
        """Start the config flow and choose the price source labelled ``label``."""
        self.page.get_by_role("button", name=CONFIG["initiate_flow"]["user"]).click()
        self.step(CONFIG["step"]["user"]["title"], "source")
        self.dialog.get_by_role("radio", name=label).check()
        self.submit()


SOURCES = EN["selector"]["price_source"]["options"]


@pytest.mark.parametrize("width", WIDTHS)
def test_config_flow_sample_is_configured_already(page: Page, demo: Demo, width: int) -> None:
    """The demo runs on sample prices: choosing them again ends with the translated "already configured"."""
    walk = Walk(page, demo, width, "sample")
    walk.choose_source(SOURCES["sample"])
    walk.sees(CONFIG["abort"]["already_configured"], "abort")
    walk.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_config_flow_entsoe(page: Page, demo: Demo, width: int) -> None:
    """The bidding zone starts at the home's country (the demo's HA is in BE); a key that cannot be checked is a
    translated error on the form, which keeps the key and the zone."""
    walk = Walk(page, demo, width, "entsoe")
    walk.choose_source(SOURCES["entsoe"])
    walk.step(CONFIG["step"]["entsoe"]["title"], "form")
    zone = walk.dialog.locator("ha-selector-select")
    assert zone.evaluate("(e) => e.value") == "BE"
    walk.field(CONFIG["step"]["entsoe"]["data"]["api_key"]).fill("not-a-token")
    walk.submit()
    errors = CONFIG["error"]
    either = re.compile("|".join(re.escape(errors[key]) for key in ("cannot_connect", "invalid_auth")))
    expect(walk.dialog.get_by_text(either)).to_be_visible()  # offline: cannot_connect
    walk.shot("error")
    expect(walk.field(CONFIG["step"]["entsoe"]["data"]["api_key"])).to_have_value("not-a-token")
    assert zone.evaluate("(e) => e.value") == "BE"
    walk.close()


@pytest.fixture
def price_sensor(page: Page) -> Iterator[str]:
    """:data:`PRICE_SENSOR` with :data:`PRICES`, set through the REST API, removed at the end."""
    page.evaluate(f"([id, body]) => {HASS}.callApi('POST', `states/${{id}}`, body)", [PRICE_SENSOR, PRICES])
    page.wait_for_function(f"(id) => !!{HASS}.states[id]", arg=PRICE_SENSOR)
    try:
        yield PRICE_SENSOR
    finally:
        page.evaluate(f"(id) => {HASS}.callApi('DELETE', `states/${{id}}`)", PRICE_SENSOR)


@pytest.mark.parametrize("width", WIDTHS)
def test_config_flow_price_sensor(page: Page, demo: Demo, width: int, price_sensor: str) -> None:
    """A sensor without prices is refused with the translated error and stays picked; a price sensor leads on to
    the price formula (closed there: the demo keeps its one entry)."""
    walk = Walk(page, demo, width, "sensor")
    walk.choose_source(SOURCES["sensor"])
    walk.step(CONFIG["step"]["sensor"]["title"], "form")
    walk.pick_entity(NOT_A_PRICE_SENSOR)
    walk.submit()
    walk.sees(CONFIG["error"]["not_a_price_sensor"], "error")
    assert walk.dialog.locator("ha-selector-entity").evaluate("(e) => e.value") == NOT_A_PRICE_SENSOR  # still picked
    walk.pick_entity(price_sensor)
    walk.submit()
    walk.step(CONFIG["step"]["settings"]["title"], "settings")
    walk.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_config_flow_nord_pool(page: Page, demo: Demo, width: int) -> None:
    """Choosing Nord Pool never greys the dialog out: without a core Nord Pool entry it says how to add one."""
    walk = Walk(page, demo, width, "nordpool")
    walk.choose_source(SOURCES["nordpool"])
    walk.sees(CONFIG["abort"]["nordpool_not_set_up"], "abort")
    walk.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_options_flow(page: Page, demo: Demo, width: int) -> None:
    """Every options step opens from the one before; the policy rules show their example (closed at the last
    step: nothing is saved)."""
    walk = Walk(page, demo, width, "options")
    page.get_by_label("Configure").first.click()
    steps = OPTIONS["step"]
    walk.step(steps["init"]["title"], "init")
    walk.submit()
    walk.step(steps["control"]["title"], "control")
    expect(walk.dialog.get_by_text("device_type: cover")).to_be_visible()  # the example under the rules' field
    walk.submit()
    walk.step(steps["grid"]["title"], "grid")
    walk.submit()
    home = steps["home"]["data"]
    expect(walk.field(home["export_fixed_price"], "spinbutton")).to_be_visible()
    walk.step(steps["home"]["title"], "home")
    expect(walk.dialog.get_by_text(steps["home"]["data_description"]["pv_forecast_entries"])).to_be_visible()
    # the demo's simulated home runs its battery automatically (scripts/hems_demo): the step shows the stored choice
    expect(walk.dialog.get_by_role("radio", name=EN["selector"]["battery_control"]["options"]["automatic"])).to_be_checked()
    expect(walk.field(home["mpc_soc_threshold_pct"], "spinbutton")).to_have_value("5")
    walk.dialog.get_by_text(steps["home"]["data_description"]["mpc_pv_threshold_kw"]).scroll_into_view_if_needed()
    walk.shot("home-end")
    walk.submit()
    tariff = steps["tariff"]
    walk.step(tariff["title"], "tariff")
    walk.labelled(tariff, "tariff")
    expect(walk.dialog.get_by_text("default: standard")).to_be_visible()  # the example under the bands' field
    expect(walk.dialog.get_by_role("radio", name=EN["selector"]["phase_count"]["options"]["3"])).to_be_checked()
    expect(walk.field(tariff["data"]["nominal_voltage"], "spinbutton")).to_have_value("230")
    bands = walk.field(tariff["data"]["tariff_bands"])  # YAML as text: the flow parses it and names any problem
    bands.fill("default: peak")
    walk.submit()
    walk.sees(OPTIONS["error"]["invalid_tariff"].format(error=NO_BANDS), "tariff-error")
    expect(walk.dialog.get_by_text(NO_BANDS)).to_have_count(1)  # in the field's error, not again in the description
    bands.fill("")
    walk.submit()
    walk.step(steps["assistant"]["title"], "assistant")
    walk.close()


# A rule the demo's commands never meet (it has no lock), saved and removed again by the policy rules test.
DENY_UNLOCK = "- operation: unlock\n  device_type: lock\n  action: deny\n"
# The same rule and a second one whose "*" lost its quotes: YAML reads it as an alias, and fails on line 4.
UNQUOTED_STAR = DENY_UNLOCK + "- operation: *\n  device_type: cover\n  action: deny\n"
STAR_PROBLEM = "expected alphabetic or numeric character, but found '\\n'"


def save_options(walk: Walk, rules: str) -> None:
    """Open the options, type ``rules`` into the policy rules field and save every step as it is."""
    steps = OPTIONS["step"]
    walk.page.get_by_label("Configure").first.click()
    walk.step(steps["init"]["title"], "init")
    walk.submit()
    walk.step(steps["control"]["title"], "control")
    walk.field(steps["control"]["data"]["policy_rules"]).fill(rules)
    for step in ("control", "grid", "home", "tariff", "assistant"):
        walk.step(steps[step]["title"], step)
        walk.submit()
    walk.sees("Options successfully saved", "saved")
    walk.dialog.get_by_role("button", name="Finish").click()
    expect(walk.dialog.locator(".dialog-title")).to_have_count(0)


def test_options_policy_rules_typo_keeps_the_saved_rules(page: Page, demo: Demo) -> None:
    """Rules saved, then text that is not YAML typed over them: the form names the line and the
    problem, keeps the text, and the saved rules are still there when the options open again (removed at the end)."""
    walk = Walk(page, demo, 1280, "policy")
    control = OPTIONS["step"]["control"]
    save_options(walk, DENY_UNLOCK)
    page.get_by_label("Configure").first.click()
    walk.submit()
    walk.step(control["title"], "control-saved")
    rules = walk.field(control["data"]["policy_rules"])
    expect(rules).to_have_value(DENY_UNLOCK)
    rules.fill(UNQUOTED_STAR)
    walk.submit()
    walk.sees(OPTIONS["error"]["yaml_invalid"].format(line="4", problem=STAR_PROBLEM), "control-typo")
    expect(rules).to_have_value(UNQUOTED_STAR)
    walk.close()
    page.get_by_label("Configure").first.click()
    walk.submit()
    walk.step(control["title"], "control-kept")
    expect(walk.field(control["data"]["policy_rules"])).to_have_value(DENY_UNLOCK)
    walk.close()
    save_options(walk, "")  # the demo as it was: no rules


@pytest.mark.parametrize("width", WIDTHS)
def test_reconfigure_sample(page: Page, demo: Demo, width: int) -> None:
    """Reconfigure on sample prices explains that there is nothing to change."""
    walk = Walk(page, demo, width, "reconfigure")
    page.locator("ha-config-entry-row").first.get_by_label("Menu").first.click()
    page.get_by_role("menuitem", name="Reconfigure").click()
    walk.sees(CONFIG["abort"]["nothing_to_reconfigure"], "abort")
    walk.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_add_appliance(page: Page, demo: Demo, width: int) -> None:
    """The form pre-fills no power and shows times without seconds; a duration and an energy together, then a
    missing power, are translated field errors (closed at the end: no appliance is added)."""
    walk = Walk(page, demo, width, "add-appliance")
    page.get_by_role("button", name="Add appliance").click()
    labels, errors = APPLIANCE["step"]["user"]["data"], APPLIANCE["error"]
    walk.step(APPLIANCE["step"]["user"]["title"], "empty")
    walk.labelled(APPLIANCE["step"]["user"], "form")
    expect(walk.field(labels["power_kw"], "spinbutton")).to_have_value("")
    walk.choose(labels["phase"], PHASES["L2"], "phase")
    expect(walk.dialog.locator("ha-selector-time").first.locator("input")).to_have_count(2)  # hours and minutes
    walk.field(labels["name"]).fill("Boiler")
    walk.pick_entity("input_boolean.garage_motor")
    walk.field(labels["duration_min"], "spinbutton").fill("90")
    walk.field(labels["energy_kwh"], "spinbutton").fill("4")
    walk.submit()
    walk.sees(errors["duration_and_energy"], "both-amounts")
    walk.field(labels["energy_kwh"], "spinbutton").fill("")
    walk.submit()
    walk.sees(errors["power_required"], "no-power")
    walk.field(labels["power_kw"], "spinbutton").fill("250")
    walk.submit()
    walk.sees(errors["power_out_of_range"].format(power_kw_min="0.01", power_kw_max="50"), "power-too-high")
    walk.close()


# A program dishwasher's entities in the shapes of HA core's home_connect (program keys as options, an enum operation
# state) and a "start in" number in minutes whose 300 min do not hold the default window's 330 min; set through the
# REST API for the delayed start test and removed after it.
ECO = "dishcare_dishwasher_program_eco_50"
PROGRAM_STATES = {
    "select.flow_test_dishwasher_program": {"state": ECO, "attributes": {
        "friendly_name": "Flow test dishwasher program", "options": [ECO, "dishcare_dishwasher_program_auto_2"]}},
    "sensor.flow_test_dishwasher_operation": {"state": "ready", "attributes": {
        "friendly_name": "Flow test dishwasher operation", "device_class": "enum",
        "options": ["inactive", "ready", "delayedstart", "run", "finished"]}},
    "number.flow_test_dishwasher_start_in": {"state": "0", "attributes": {
        "friendly_name": "Flow test dishwasher start in", "min": 0, "max": 300, "step": 1,
        "unit_of_measurement": "min"}},
}


@pytest.fixture
def program_dishwasher(page: Page) -> Iterator[dict[str, Any]]:
    """:data:`PROGRAM_STATES`, set through the REST API (the demo has none), removed at the end."""
    for entity_id, body in PROGRAM_STATES.items():
        page.evaluate(f"([id, body]) => {HASS}.callApi('POST', `states/${{id}}`, body)", [entity_id, body])
        page.wait_for_function(f"(id) => !!{HASS}.states[id]", arg=entity_id)
    try:
        yield PROGRAM_STATES
    finally:
        for entity_id in PROGRAM_STATES:
            page.evaluate(f"(id) => {HASS}.callApi('DELETE', `states/${{id}}`)", entity_id)


@pytest.mark.parametrize("width", WIDTHS)
def test_add_program_appliance_with_a_delayed_start(
    page: Page, demo: Demo, width: int, program_dishwasher: dict[str, Any]
) -> None:
    """The start profile's fields of "Add appliance": a delayed start through a "start in" number whose maximum is
    shorter than the window needs, without a start button, is two translated field errors; the Home Connect action
    without its device is another (closed at the end: no appliance is added)."""
    walk = Walk(page, demo, width, "add-program-appliance")
    page.get_by_role("button", name="Add appliance").click()
    labels, errors = APPLIANCE["step"]["user"]["data"], APPLIANCE["error"]
    walk.step(APPLIANCE["step"]["user"]["title"], "empty")
    walk.field(labels["name"]).fill("Flow test dishwasher")
    select, operation, number = program_dishwasher
    walk.pick_entity(select)
    walk.field(labels["program"]).fill(ECO)
    walk.field(labels["power_kw"], "spinbutton").fill("1.8")
    walk.field(labels["duration_min"], "spinbutton").fill("90")
    walk.pick_entity(operation, 3)
    toggle = walk.dialog.locator("ha-selector-boolean").nth(1).locator("ha-switch")  # after "Runs without a break"
    toggle.click()
    expect(toggle).to_have_js_property("checked", True)
    walk.pick_entity(number, 4)
    walk.shot("delayed-start")
    walk.submit()
    walk.sees(errors["delay_range_short"], "delay-too-short")
    walk.sees(errors["delay_needs_start_button"], "delay-without-button")
    walk.choose(labels["program_start"], EN["selector"]["program_start"]["options"]["home_connect"], "profile")
    walk.submit()
    walk.sees(errors["home_connect_device_required"], "home-connect-without-device")
    walk.close()


@pytest.fixture
def battery_mode(page: Page) -> Iterator[str]:
    """:data:`BATTERY_MODE`, a select set through the REST API (the demo has none), removed at the end."""
    page.evaluate(f"([id, body]) => {HASS}.callApi('POST', `states/${{id}}`, body)", [BATTERY_MODE, MODE_STATE])
    page.wait_for_function(f"(id) => !!{HASS}.states[id]", arg=BATTERY_MODE)
    try:
        yield BATTERY_MODE
    finally:
        page.evaluate(f"(id) => {HASS}.callApi('DELETE', `states/${{id}}`)", BATTERY_MODE)


@pytest.fixture
def battery_power(page: Page) -> Iterator[str]:
    """:data:`BATTERY_POWER`, a number set through the REST API (the demo's are its batteries'), removed at the end."""
    page.evaluate(f"([id, body]) => {HASS}.callApi('POST', `states/${{id}}`, body)", [BATTERY_POWER, POWER_STATE])
    page.wait_for_function(f"(id) => !!{HASS}.states[id]", arg=BATTERY_POWER)
    try:
        yield BATTERY_POWER
    finally:
        page.evaluate(f"(id) => {HASS}.callApi('DELETE', `states/${{id}}`)", BATTERY_POWER)


@pytest.fixture
def soc_sensor(page: Page) -> Iterator[str]:
    """:data:`SOC_SENSOR`, a battery sensor in % set through the REST API, removed at the end: the demo's own
    ``sensor.battery_soc`` is its battery's, which the picker leaves out."""
    page.evaluate(f"([id, body]) => {HASS}.callApi('POST', `states/${{id}}`, body)", [SOC_SENSOR, SOC_STATE])
    page.wait_for_function(f"(id) => !!{HASS}.states[id]", arg=SOC_SENSOR)
    try:
        yield SOC_SENSOR
    finally:
        page.evaluate(f"(id) => {HASS}.callApi('DELETE', `states/${{id}}`)", SOC_SENSOR)


@pytest.mark.parametrize("width", WIDTHS)
def test_add_battery(
    page: Page, demo: Demo, width: int, battery_mode: str, soc_sensor: str, battery_power: str
) -> None:
    """The form pre-fills no size but the plan's defaults (0-100 %, 95 % efficiency); its SoC picker leaves out the
    demo battery's sensor and the integration's planned SoC; a capacity of 1,000,000,000 kWh, a lowest state of
    charge above the highest, then a reserve above it, and a select without its option names are translated field
    errors; with the option names (one the select lacks) and a power setpoint that reaches only 3 kW, the select's
    options and the 3 kW the plan would be clipped to are (closed at the end: no battery is added)."""
    walk = Walk(page, demo, width, "add-battery")
    page.get_by_role("button", name=BATTERY["initiate_flow"]["user"]).click()
    labels, errors = BATTERY["step"]["user"]["data"], BATTERY["error"]
    expect(walk.field(labels["name"])).to_be_visible()  # the form is drawn, not only the dialog's title
    walk.step(BATTERY["step"]["user"]["title"], "empty")
    walk.labelled(BATTERY["step"]["user"], "form")
    walk.choose(labels["phase"], PHASES["L3"], "phase")
    expect(walk.field(labels["capacity_kwh"], "spinbutton")).to_have_value("")
    expect(walk.field(labels["soc_max_pct"], "spinbutton")).to_have_value("100")
    expect(walk.field(labels["charge_efficiency"], "spinbutton")).to_have_value("0.95")
    walk.field(labels["name"]).fill("Garage battery")
    for key, value in (("capacity_kwh", "10"), ("charge_kw", "5"), ("discharge_kw", "5"), ("soc_min_pct", "80"),
                       ("soc_max_pct", "20")):
        walk.field(labels[key], "spinbutton").fill(value)
    excluded = walk.dialog.locator("ha-selector-entity").first.evaluate("(e) => e.selector.entity.exclude_entities")
    assert "sensor.battery_soc" in excluded  # the demo battery's own
    assert any(e.startswith("sensor.") and e.endswith("_planned_state_of_charge") for e in excluded), excluded
    walk.pick_entity(soc_sensor)
    walk.field(labels["capacity_kwh"], "spinbutton").fill("1000000000")
    walk.submit()
    walk.sees(errors["capacity_range"].format(capacity_kwh_min="0.5", capacity_kwh_max="250"), "capacity-absurd")
    walk.field(labels["capacity_kwh"], "spinbutton").fill("10")
    walk.submit()
    walk.sees(errors["soc_max_below_min"], "soc-min-above-max")
    walk.field(labels["soc_min_pct"], "spinbutton").fill("10")
    walk.field(labels["soc_max_pct"], "spinbutton").fill("90")
    walk.field(labels["reserve_pct"], "spinbutton").fill("95")
    walk.submit()
    walk.sees(errors["reserve_above_max"], "reserve-above-max")
    walk.field(labels["reserve_pct"], "spinbutton").fill("20")
    walk.pick_entity(battery_mode, 1)
    walk.submit()
    walk.sees(errors["select_needs_modes"], "select-without-modes")
    for key, option in (("charge_option", "Force charge"), ("discharge_option", "Force discharge"),
                        ("idle_option", "Idle")):
        walk.field(labels[key]).fill(option)
    power_picker = walk.dialog.locator("ha-selector-entity").nth(2)
    excluded = power_picker.evaluate("(e) => e.selector.entity.exclude_entities")
    assert "input_number.inverter_battery_power" in excluded  # the demo's inverter battery's own
    walk.pick_entity(battery_power, 2)
    walk.submit()
    walk.sees(errors["battery_option_unknown"].format(select_options="Force charge, Force discharge, Standby"),
              "option-the-select-lacks")
    walk.sees(errors["power_setpoint_range"].format(power_limit_kw="3"), "power-setpoint-short")
    walk.close()


def start_heat_pump(walk: Walk, page: Page, name: str, store: str, control: str) -> dict[str, str]:
    """Open "Add heat pump", fill in ``name`` and ``store`` on its first step, check the store's device step and
    fill in ``control``, the demo house's indoor temperature and weather; return the device step's labels."""
    page.get_by_role("button", name=HEAT_PUMP["initiate_flow"]["user"]).click()
    first = HEAT_PUMP["step"]["user"]
    expect(walk.field(first["data"]["name"])).to_be_visible()
    walk.step(first["title"], "store")
    expect(walk.dialog.get_by_role("radio", name=EN["selector"]["heat_store"]["options"]["space_heating"])).to_be_checked()
    walk.labelled(first, "store")
    walk.field(first["data"]["name"]).fill(name)
    walk.dialog.get_by_role("radio", name=EN["selector"]["heat_store"]["options"][store]).check()
    walk.submit()
    device = HEAT_PUMP["step"][store]
    walk.step(device["title"], "device")
    expect(walk.dialog.locator("ha-selector-time").first.locator("input")).to_have_count(2)  # hours and minutes
    walk.labelled(device, "device")
    excluded = walk.dialog.locator("ha-selector-entity").first.evaluate("(e) => e.selector.entity.exclude_entities")
    assert "climate.heat_pump" in excluded  # the demo heat pump's own thermostat: another device controls it
    walk.pick_entity(control, 0)
    walk.pick_entity("sensor.indoor_temperature", 1)
    walk.pick_entity("weather.house", 2)
    return device["data"]


# A switch no subentry of the demo controls (scripts/hems_demo/constants.py's FREE_SWITCH; the demo's heat pump has its only climate
# entity, and the integration's own switches are left out of the control picker).
FREE_SWITCH = "switch.hot_water_boost"


@pytest.mark.parametrize("width", WIDTHS)
def test_add_heat_pump_house(page: Page, demo: Demo, width: int) -> None:
    """The steps of "Add heat pump" for a house: the control picker leaves out the demo heat pump's thermostat; a
    1,000,000 kW heat pump, a 7-minute shortest run and then a highest power below the lowest are translated field
    errors naming the range; the model step, submitted without rated points, says how many it needs (closed there:
    no heat pump is added)."""
    walk = Walk(page, demo, width, "add-heat-pump")
    labels = start_heat_pump(walk, page, "Flow test house", "space_heating", FREE_SWITCH)
    errors = HEAT_PUMP["error"]
    walk.field(labels["max_kw"], "spinbutton").fill("1000000")
    walk.field(labels["min_run_min"], "spinbutton").fill("7")
    walk.submit()
    walk.sees(errors["max_power_range"].format(max_kw_min="0.1", max_kw_max="50"), "power-absurd")
    walk.sees(errors["run_time_slots"].format(min_run_min_min="0", min_run_min_max="1440"), "run-not-slots")
    walk.field(labels["min_run_min"], "spinbutton").fill("30")
    walk.field(labels["min_kw"], "spinbutton").fill("3")
    walk.field(labels["max_kw"], "spinbutton").fill("2")
    walk.submit()
    walk.sees(errors["max_below_min"], "max-below-min")
    walk.field(labels["min_kw"], "spinbutton").fill("0.5")
    walk.choose(labels["phase"], PHASES["L2"], "phase")
    walk.submit()
    model = HEAT_PUMP["step"]["model"]
    walk.step(model["title"], "model")
    expect(walk.dialog.get_by_role("radio", name=EN["selector"]["cop_mode"]["options"]["points"])).to_be_checked()
    walk.labelled(model, "model")
    walk.submit()
    walk.sees(errors["cop_points_invalid"], "no-points")
    walk.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_add_heat_pump_tank(page: Page, demo: Demo, width: int) -> None:
    """A hot-water tank: its band, room and daily draw on its device step; on the model step a Carnot fraction with
    the thermal model by hand, whose UA and C are asked for (closed there: no heat pump is added)."""
    walk = Walk(page, demo, width, "add-heat-pump-tank")
    labels = start_heat_pump(walk, page, "Flow test tank", "hot_water", FREE_SWITCH)
    for key, value in (("max_kw", "2"), ("day_low_c", "45"), ("day_high_c", "55"), ("night_low_c", "40"),
                       ("night_high_c", "55"), ("room_temp_c", "15"), ("hot_water_kwh", "6")):
        walk.field(labels[key], "spinbutton").fill(value)
    walk.submit()
    model = HEAT_PUMP["step"]["model"]
    walk.step(model["title"], "model")
    walk.dialog.get_by_role("radio", name=EN["selector"]["cop_mode"]["options"]["carnot"]).check()
    walk.field(model["data"]["flow_temp_c"], "spinbutton").fill("55")
    walk.submit()
    errors = HEAT_PUMP["error"]
    expect(walk.dialog.get_by_text(errors["ua_range"].format(ua_w_per_k_min="0.5", ua_w_per_k_max="5000"))).to_be_visible()
    capacity = errors["heat_capacity_range"].format(capacity_kwh_per_k_min="0.05", capacity_kwh_per_k_max="500")
    expect(walk.dialog.get_by_text(capacity)).to_be_visible()
    walk.dialog.get_by_text(capacity).scroll_into_view_if_needed()
    walk.shot("no-model")
    walk.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_add_heat_pump_sg_ready(page: Page, demo: Demo, width: int) -> None:
    """The SG Ready section of a house's device step: collapsed at first, opened it shows contact 2, the offset
    number, the offset, "forced" (off) and the longest block (120 min), each labelled and described; the control
    entity as contact 2 too is a translated error on the section (closed there: no heat pump is added)."""
    walk = Walk(page, demo, width, "add-heat-pump-sg-ready")
    labels = start_heat_pump(walk, page, "Flow test SG Ready", "space_heating", FREE_SWITCH)
    section = HEAT_PUMP["step"]["space_heating"]["sections"]["sg_ready"]
    walk.field(labels["max_kw"], "spinbutton").fill("3")
    header = walk.dialog.get_by_text(section["name"], exact=True)
    header.scroll_into_view_if_needed()
    expect(walk.field(section["data"]["sg_max_block_min"], "spinbutton")).to_have_count(0)  # collapsed
    header.click()
    expect(walk.field(section["data"]["sg_max_block_min"], "spinbutton")).to_have_value("120")
    forced = walk.dialog.get_by_role("switch")  # the form's only boolean; its label is the text beside it
    expect(forced).to_have_count(1)
    expect(forced).not_to_be_checked()
    expect(walk.dialog.get_by_text(section["data"]["sg_forced"], exact=True).first).to_be_visible()
    for key in ("sg_contact_2_entity", "sg_offset_entity", "sg_offset_k", "sg_forced", "sg_max_block_min"):
        expect(walk.dialog.get_by_text(section["data_description"][key])).to_be_visible()
    walk.field(section["data"]["sg_max_block_min"], "spinbutton").scroll_into_view_if_needed()
    walk.shot("sg-ready-open")
    walk.pick_entity(FREE_SWITCH, 5)  # contact 2: the control entity again
    walk.submit()
    walk.sees(HEAT_PUMP["error"]["sg_contacts_same"], "sg-contacts-same")
    walk.close()


@pytest.mark.parametrize("width", WIDTHS)
def test_reconfigure_appliance(page: Page, demo: Demo, width: int) -> None:
    """The first appliance's form opens with its values (its times without seconds) and saves them unchanged."""
    walk = Walk(page, demo, width, "reconfigure-appliance")
    page.get_by_label("Reconfigure appliance").first.click()
    walk.step(APPLIANCE["step"]["reconfigure"]["title"], "form")
    labels = APPLIANCE["step"]["reconfigure"]["data"]
    expect(walk.field(labels["power_kw"], "spinbutton")).not_to_have_value("")
    expect(walk.dialog.locator("ha-selector-time").first.locator("input")).to_have_count(2)
    walk.submit()
    # HA's frontend shows its own sentence for this reason (HA 2026.10), or the integration's.
    saved = re.compile(f"Reconfiguration was successful|{re.escape(APPLIANCE['abort']['reconfigure_successful'])}")
    expect(walk.dialog.get_by_text(saved)).to_be_visible()
    walk.shot("saved")
    walk.close()


def test_no_console_errors(page: Page) -> None:
    """No step logged a console error: every form opened (runs last in this file)."""
    assert not console_errors(CONSOLE), console_errors(CONSOLE)


WALLBOX_CURRENT = "number.flow_test_wallbox_current"
PHASE_SELECT = "select.flow_test_phase_switch"
CHARGER_STATES = {
    # HA core's wallbox: a maximum charging current without a unit, 6 A to the charger's maximum, 1 A steps
    WALLBOX_CURRENT: {"state": "16", "attributes": {"min": 6, "max": 32, "step": 1,
                                                    "friendly_name": "Flow test wallbox current"}},
    # a go-e/evcc-style phase select
    PHASE_SELECT: {"state": "3-phase", "attributes": {"options": ["auto", "1-phase", "3-phase"],
                                                      "friendly_name": "Flow test phase switch"}},
}


@pytest.fixture
def charger_entities(page: Page) -> Iterator[None]:
    """:data:`CHARGER_STATES` set through the REST API (the demo's own charger entities are its EV's), removed after."""
    for entity_id, body in CHARGER_STATES.items():
        page.evaluate(f"([id, body]) => {HASS}.callApi('POST', `states/${{id}}`, body)", [entity_id, body])
        page.wait_for_function(f"(id) => !!{HASS}.states[id]", arg=entity_id)
    try:
        yield
    finally:
        for entity_id in CHARGER_STATES:
            page.evaluate(f"(id) => {HASS}.callApi('DELETE', `states/${{id}}`)", entity_id)


@pytest.mark.parametrize("width", WIDTHS)
def test_add_ev_charger(page: Page, demo: Demo, width: int, charger_entities: None) -> None:
    """An EV charger that can be split leads to the *EV charger* step, each field labelled and described; a phase
    select with a state it does not offer, then with one phase, are translated field errors (closed there: nothing
    is added)."""
    walk = Walk(page, demo, width, "add-ev-charger")
    page.get_by_role("button", name="Add appliance").click()
    labels, errors = APPLIANCE["step"]["user"]["data"], APPLIANCE["error"]
    walk.step(APPLIANCE["step"]["user"]["title"], "empty")
    walk.field(labels["name"]).fill("Flow test wallbox")
    walk.choose(labels["kind"], EN["selector"]["kind"]["options"]["ev_charger"], "kind")
    walk.pick_entity(FREE_SWITCH)
    walk.field(labels["power_kw"], "spinbutton").fill("11")
    walk.field(labels["energy_kwh"], "spinbutton").fill("20")
    # "Runs without a break", the form's first boolean, off: the charger step follows only for a split load
    walk.dialog.locator("ha-selector-boolean").first.locator("ha-switch").click()
    walk.submit()
    charger = APPLIANCE["step"]["charger"]
    walk.step(charger["title"], "charger")
    walk.labelled(charger, "charger")
    walk.pick_entity(WALLBOX_CURRENT, 0)
    walk.pick_entity(PHASE_SELECT, 1)
    walk.field(charger["data"]["charger_phase_one"]).fill("single")
    walk.field(charger["data"]["charger_phase_three"]).fill("3-phase")
    walk.submit()
    walk.sees(errors["charger_phase_option_missing"], "phase-option")
    walk.field(charger["data"]["charger_phase_one"]).fill("1-phase")
    walk.choose(charger["data"]["charger_phases"], EN["selector"]["charger_phases"]["options"]["1"], "one-phase")
    walk.submit()
    walk.sees(errors["charger_phase_needs_three"], "needs-three")
    walk.close()
