"""What Home Assistant's own pages show of agentic_hems: the integration page, a device page, more-info dialogs.

A page of its own (the owner, logged in through HA's login page; the home's zone), at desktop (1280 px) and phone
(390 px) widths. Each test saves ``<what>-<width>.png`` to ``tests/browser/artifacts/``; the last one fails on any
console error of this page. Playwright's CSS selectors pierce HA's open shadow roots.

On the desktop, HA 2026.10's device page puts its cards in three columns: beside the 12-hour time input (hh, mm,
AM/PM) a time entity's name has about 25 px, so any name is cut there (HA shows the whole one on hover); in one
column (the phone) or with a 24-hour clock, "Ready by" shows whole.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
import re
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from .conftest import Demo, console_errors, open_page, settles

WIDTHS = {"desktop": 1280, "phone": 390}
HASS = "document.querySelector('home-assistant').hass"
CONSOLE: list[str] = []
DIALOG = "ha-more-info-dialog"


@pytest.fixture(scope="module")
def page(browser: Any, demo: Demo, artifacts: Path) -> Iterator[Page]:
    """The owner's page, logged in on the dashboard."""
    context, tab = open_page(browser, demo.dashboard, demo.username, demo.password, timezone_id="Europe/Brussels",
                             console=CONSOLE)
    try:
        yield tab
    finally:
        (artifacts / "console-more-info.log").write_text("\n".join(CONSOLE) + "\n")
        context.close()


def go(page: Page, demo: Demo, path: str, width: int) -> None:
    """Open ``path`` at ``width`` px and wait until HA is connected and has loaded the user and the registries."""
    page.set_viewport_size({"width": width, "height": 1000})
    page.goto(f"{demo.base.rstrip('/')}{path}")
    page.wait_for_function(f"() => {{ const h = {HASS}; return !!(h && h.connected && h.user && h.entities && "
                           "h.devices && h.states); }")


def device_id(page: Page, name: str) -> str:
    """The registry id of the device named ``name``, read from the frontend's own device list."""
    found = page.evaluate(f"(name) => Object.values({HASS}.devices).filter(d => d.name === name).map(d => d.id)",
                          name)
    assert len(found) == 1, (name, found)
    return str(found[0])


def more_info(page: Page, entity_id: str, view: str = "info") -> Any:
    """Open HA's more-info dialog of ``entity_id`` as a tap on the entity does: its main view, or ``details`` (the
    ⋮ menu's Details: the entity's fields and every attribute)."""
    page.evaluate("([id, view]) => document.querySelector('home-assistant').dispatchEvent(new CustomEvent("
                  "'hass-more-info', {detail: {entityId: id, view}, bubbles: true, composed: true}))", [entity_id, view])
    dialog = page.locator(DIALOG)
    expect(dialog.locator(f"ha-more-info-{view}").first).to_be_visible()
    page.wait_for_function("() => document.getAnimations().every((a) => a.playState !== 'running' "
                           "|| a.effect.getComputedTiming().iterations === Infinity)")  # the dialog has opened
    return dialog


def close(page: Page) -> None:
    """Close the more-info dialog (from any of its views)."""
    dialog = page.locator(DIALOG)
    dialog.evaluate("(dialog) => dialog.closeDialog()")
    expect(dialog.locator("ha-more-info-info, ha-more-info-details")).to_have_count(0)


@pytest.mark.parametrize("width", WIDTHS)
def test_integration_page_shows_appliances_as_devices(page: Page, demo: Demo, artifacts: Path, width: str) -> None:
    """The integration page offers "Add appliance" as a visible button and never says "service" for an appliance:
    each appliance row counts one device; the entry's own button adds a price source, not a "service"."""
    go(page, demo, "/config/integrations/integration/agentic_hems", WIDTHS[width])
    add = page.get_by_role("button", name="Add appliance")
    expect(add).to_be_visible()
    expect(page.get_by_role("button", name="Add price source")).to_be_visible()
    expect(page.get_by_role("button", name=re.compile("add service", re.IGNORECASE))).to_have_count(0)
    for appliance in ("Dishwasher", "Washing machine", "EV charger"):
        row = page.locator("ha-config-sub-entry-row").filter(has_text=appliance)
        expect(row.first).to_contain_text("1 device")
        expect(row.first).not_to_contain_text("service")
    page.screenshot(path=str(artifacts / f"integration-page-{width}.png"), full_page=True)


@pytest.mark.parametrize("width", WIDTHS)
def test_device_page_is_a_device_with_full_names(page: Page, demo: Demo, artifacts: Path, width: str) -> None:
    """An appliance's device page says "Device info" with its model, and shows "Ready by" whole, not cut."""
    go(page, demo, f"/config/devices/device/{device_id(page, 'Dishwasher')}", WIDTHS[width])
    info = page.locator("ha-device-info-card")
    expect(info).to_contain_text("Device info")
    expect(info).to_contain_text("Dishwasher")
    expect(page.locator("ha-config-device-page")).not_to_contain_text("Service info")
    name = page.locator("hui-time-entity-row .info").first
    expect(name).to_have_attribute("title", "Ready by")  # the whole name, on hover where it is cut
    room = name.evaluate("(el) => [el.scrollWidth, el.clientWidth]")
    page.screenshot(path=str(artifacts / f"device-page-{width}.png"), full_page=True)
    print(f"Ready by at {WIDTHS[width]} px: needs {room[0]} px, has {room[1]} px")
    if width == "phone":  # one column: the name shows whole (see the module docstring for the desktop's three)
        assert room[0] <= room[1] + 1, room


@pytest.mark.parametrize("width", WIDTHS)
def test_more_info_shows_small_readable_attributes(page: Page, demo: Demo, artifacts: Path, width: str) -> None:
    """Run now shows its start and end, not slot arrays; the last decision shows no trace; the planned cost shows
    the currency and cents."""
    go(page, demo, "/energy-plan", WIDTHS[width])
    run_now = more_info(page, "binary_sensor.dishwasher_run_now", "details")
    attributes = run_now.locator("ha-more-info-details ha-grouped-list").last.locator("ha-list-item-value")
    expect(attributes).to_have_count(3)
    settles(lambda: sorted(attributes.evaluate_all("(rows) => rows.map((row) => row.label)")),
            ["End", "Friendly name", "Start"])  # the dialog re-renders its rows when the entity's state changes
    for raw in ("Slot", "slot_starts", "+00:00"):
        expect(run_now).not_to_contain_text(raw)
    page.screenshot(path=str(artifacts / f"more-info-run-now-{width}.png"))
    close(page)

    decision = more_info(page, "sensor.agentic_hems_last_gate_decision", "details")
    details = decision.locator("ha-more-info-details")
    for label in ("Trace ID", "Reason", "Source agent"):
        expect(details).to_contain_text(label)
    for raw in ("gate_results", "Gate results", "Trace:", "candidate", "evidence"):
        expect(decision).not_to_contain_text(raw)
    page.screenshot(path=str(artifacts / f"more-info-last-decision-{width}.png"))
    close(page)

    cost = more_info(page, "sensor.dishwasher_planned_cost")
    expect(cost.locator("ha-more-info-info")).to_contain_text(re.compile(r"€\s?-?\d+\.\d\d(?!\d)"))
    page.screenshot(path=str(artifacts / f"more-info-planned-cost-{width}.png"))
    close(page)


def test_no_console_errors(page: Page) -> None:
    """This page logged no error on any of the pages above."""
    assert console_errors(CONSOLE) == [], CONSOLE
