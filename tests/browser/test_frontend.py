"""The cards in HA 2026.10's own editor UI, and the integration's brand icon, as the owner sees them.

- The card picker: "Add card" in a dashboard's edit mode opens on "By entity"; picking an agentic_hems entity lists,
  under "Community", the card that ``window.customCards``' ``getEntitySuggestion`` offers for it (set to the entity's
  config entry), with a live preview; picking the suggestion adds the card and "Done" saves it.
- The card's visual editor in HA's card dialog: its fields, the live preview following them, "Save".
- The integrations page shows the icon that HA's brands integration serves from the integration's ``brand/`` folder.

These tests run in their own browser context (so nothing here reaches ``test_cards.py``'s page and console), on a
dashboard of their own, ``/energy-plan-picker``, which they delete at the end; each test sets its cards itself.
pytest runs this file last. On a frontend without card suggestions by entity (HA 2026.4) the picker tests skip.
"""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
from playwright.sync_api import Page, expect

from .conftest import ARTIFACTS, Demo, console_errors, open_page

PICKER_URL_PATH = "energy-plan-picker"
HASS = "document.querySelector('home-assistant').hass"
# The card the picker suggests for an entity, by the entity's translation key (one or two of each card's keys; the
# cards' sources list them all), and an entity of another integration for which it suggests none of them.
SUGGESTED = {
    "next_start": "schedule",
    "electricity_price": "schedule",
    "last_decision": "trace",
    "allow_device_control": "trace",
    "assistant": "ask",
    "run_runs": "runs",
}
FOREIGN_ENTITY = "input_boolean.dishwasher"  # the demo's stand-in for the dishwasher
RENDERED = {  # what each card's live preview shows (the cards' DOM contract)
    "schedule": ".plan-summary",
    "trace": ".decision",
    "ask": "#ask-input",
    "runs": ".stat",
}
CONSOLE: list[str] = []


@pytest.fixture(scope="module")
def owner(browser: Any, demo: Demo, artifacts: Path) -> Iterator[Page]:
    """The owner's own browser context, logged in on /energy-plan."""
    context, page = open_page(browser, demo.dashboard, demo.username, demo.password, timezone_id="Europe/Brussels",
                              console=CONSOLE)
    try:
        yield page
    finally:
        (artifacts / "console-editor.log").write_text("\n".join(CONSOLE) + "\n")
        context.close()


def ws(page: Page, message: dict[str, Any]) -> Any:
    """A websocket command through the page's own connection (the owner is an administrator)."""
    return page.evaluate(f"(message) => {HASS}.callWS(message)", message)


@pytest.fixture(scope="module")
def picker_dashboard(owner: Page, demo: Demo) -> Iterator[str]:
    """An empty storage dashboard (one masonry view, "picker"), deleted at the end; yields its view's URL."""
    created = ws(owner, {"type": "lovelace/dashboards/create", "url_path": PICKER_URL_PATH, "title": "Card picker",
                         "mode": "storage", "show_in_sidebar": False, "require_admin": True})
    set_cards(owner, [])
    try:
        yield demo.dashboard.replace("/energy-plan", f"/{PICKER_URL_PATH}/picker")
    finally:
        ws(owner, {"type": "lovelace/dashboards/delete", "dashboard_id": created["id"]})


def set_cards(page: Page, cards: list[dict[str, Any]]) -> None:
    """The picker dashboard's view holds ``cards`` (saved over the websocket API)."""
    ws(page, {"type": "lovelace/config/save", "url_path": PICKER_URL_PATH,
              "config": {"views": [{"title": "Picker", "path": "picker", "cards": cards}]}})


def entity_with_key(page: Page, key: str) -> str:
    """The agentic_hems entity with translation key ``key``, from the frontend's entity registry."""
    entity_id = page.evaluate(
        f"""(key) => Object.values({HASS}.entities)
            .find((e) => e.platform === 'agentic_hems' && e.translation_key === key)?.entity_id""", key)
    assert entity_id, f"no agentic_hems entity with translation key {key!r}"
    return str(entity_id)


def enable_entity(page: Page, key: str) -> None:
    """Enable the agentic_hems entity with translation key ``key`` if it is disabled by default (the assistant's
    statistics are), as a user does on the device page, and reload its entry at once so it gets a state."""
    registry = ws(page, {"type": "config/entity_registry/list"})
    entity = next(e for e in registry if e["platform"] == "agentic_hems" and e["translation_key"] == key)
    if entity["disabled_by"] is not None:
        ws(page, {"type": "config/entity_registry/update", "entity_id": entity["entity_id"], "disabled_by": None})
        page.evaluate(f"(id) => {HASS}.callApi('POST', `config/config_entries/entry/${{id}}/reload`)",
                      entity["config_entry_id"])
    page.wait_for_function(f"(id) => !!{HASS}.states[id]", arg=entity["entity_id"])


def pick_entity(page: Page, entity_id: str) -> None:
    """In the open card picker's "By entity" tab: search for the entity and pick it."""
    tree = page.locator("hui-suggestion-entity-tree")
    name = page.evaluate(f"(id) => {HASS}.states[id].attributes.friendly_name || id", entity_id)
    tree.locator("input").first.fill(name)
    tree.locator(f'[data-entity-id="{entity_id}"]').click()
    expect(page.locator("hui-suggestion-card").first).to_be_visible()


def edit_view(page: Page, view_url: str) -> None:
    """Open ``view_url`` in edit mode, as ``?edit=1`` does. HA enters edit mode from that parameter on the view's
    first render only if the user is already known to be an administrator; on a loaded machine the user can arrive
    later, so edit mode is entered as the parameter would, once the user is known."""
    page.goto(view_url + "?edit=1")
    page.wait_for_function(f"() => !!{HASS}?.user?.is_admin")
    page.locator("hui-root").evaluate("(root) => root.lovelace.editMode || root.lovelace.setEditMode(true)")


@pytest.fixture(scope="module")
def suggests_by_entity(owner: Page, picker_dashboard: str) -> bool:
    """Whether this HA's card picker suggests cards by entity (HA 2026.10; HA 2026.4's picker lists card types and
    builds an entities card from picked entities). Probed in a page of its own, whose console is not checked: the old
    picker's previews of HA's own cards fetch from the internet."""
    page = owner.context.new_page()
    try:
        edit_view(page, picker_dashboard)
        page.get_by_text("Add card").click()
        page.locator("hui-suggestion-picker").or_(page.locator("hui-card-picker")).first.wait_for(state="attached")
        return page.locator("hui-suggestion-picker").count() > 0
    finally:
        page.close()


def open_card_picker(page: Page, view_url: str, suggests_by_entity: bool) -> None:
    """The view in edit mode, "Add card": the picker on its "By entity" tab (skips on a frontend without it)."""
    if not suggests_by_entity:
        version = page.evaluate(f"() => {HASS}.config.version")
        pytest.skip(f"HA {version}'s card picker has no suggestions by entity (window.customCards' "
                    f"getEntitySuggestion; HA 2026.10 has them)")
    edit_view(page, view_url)
    page.get_by_text("Add card").click()
    expect(page.locator("hui-suggestion-picker")).to_be_visible()


def suggested_configs(page: Page) -> list[dict[str, Any]]:
    """The configs of the suggestion cards shown (core and community)."""
    return [json.loads(text) for text in page.locator("hui-suggestion-card").evaluate_all(
        "els => els.map(e => JSON.stringify(e.suggestion.config))")]


def test_the_card_picker_suggests_each_card(owner: Page, picker_dashboard: str, suggests_by_entity: bool) -> None:
    """By entity: each card is suggested, for its entry, under "Community" for its own entities (with a live preview
    that shows its elements and no error), and none for another integration's entity."""
    entry_id = ws(owner, {"type": "agentic_hems/schedule"})["entry_id"]
    enable_entity(owner, "run_runs")
    open_card_picker(owner, picker_dashboard, suggests_by_entity)
    picker = owner.locator("hui-suggestion-picker")
    for key, name in SUGGESTED.items():
        entity_id = entity_with_key(owner, key)
        pick_entity(owner, entity_id)
        ours = [c for c in suggested_configs(owner) if c["type"].startswith("custom:agentic-hems-")]
        assert ours == [{"type": f"custom:agentic-hems-{name}-card", "entry_id": entry_id}], (entity_id, ours)
        expect(picker.locator("ha-section-title", has_text="Community")).to_be_visible()
        suggestion = owner.locator("hui-suggestion-card").filter(has=owner.locator(f"agentic-hems-{name}-card"))
        expect(suggestion).to_have_count(1)
        expect(suggestion.locator(".card-header")).to_have_text(
            owner.evaluate("(t) => window.customCards.find((c) => c.type === t).name", f"agentic-hems-{name}-card"))
        expect(suggestion.locator(f"agentic-hems-{name}-card {RENDERED[name]}").first).to_be_attached()
        expect(suggestion.locator(f"agentic-hems-{name}-card .error")).to_have_count(0)
    pick_entity(owner, FOREIGN_ENTITY)
    assert not [c for c in suggested_configs(owner) if c["type"].startswith("custom:agentic-hems-")]
    expect(picker.locator("ha-section-title", has_text="Community")).to_have_count(0)


def test_picking_a_suggestion_adds_the_card(owner: Page, picker_dashboard: str, suggests_by_entity: bool) -> None:
    """Picking the schedule card's suggestion for the dishwasher's next start adds it to the view; "Done" saves the
    card with the entity's config entry."""
    entry_id = ws(owner, {"type": "agentic_hems/schedule"})["entry_id"]
    set_cards(owner, [])
    open_card_picker(owner, picker_dashboard, suggests_by_entity)
    pick_entity(owner, entity_with_key(owner, "next_start"))
    owner.locator("hui-suggestion-card").filter(
        has=owner.locator("agentic-hems-schedule-card")).locator(".overlay").click()
    expect(owner.locator("hui-suggestion-picker")).to_have_count(0)
    added = owner.locator("agentic-hems-schedule-card")
    expect(added).to_have_count(1)
    expect(added.locator(".plan-summary").first).to_be_attached()
    owner.get_by_role("button", name="Done").click()
    owner.wait_for_function(
        f"""async (path) => ((await {HASS}.callWS({{type: 'lovelace/config', url_path: path}})).views[0].cards
            || []).length === 1""", arg=PICKER_URL_PATH)
    saved = ws(owner, {"type": "lovelace/config", "url_path": PICKER_URL_PATH})
    assert saved["views"][0]["cards"] == [{"type": "custom:agentic-hems-schedule-card", "entry_id": entry_id}], saved


def test_the_visual_editor_edits_the_card(owner: Page, picker_dashboard: str) -> None:
    """The card's "Edit" opens HA's card dialog with the card's own editor: the card's config entry (an
    administrator picks from the entries), a title that the live preview follows, and "Save" stores it."""
    entry_id = ws(owner, {"type": "agentic_hems/schedule"})["entry_id"]
    set_cards(owner, [{"type": "custom:agentic-hems-schedule-card", "entry_id": entry_id}])
    edit_view(owner, picker_dashboard)
    # The options' "Edit" button (HA labels it from the lovelace translations, which can arrive after the options
    # render: the button is then there without its label until the next render).
    owner.locator("hui-card-options").filter(has=owner.locator("agentic-hems-schedule-card")).locator(
        ".card-actions > ha-button").click()
    dialog = owner.locator("hui-dialog-edit-card")
    editor = dialog.locator("agentic-hems-schedule-card-editor")
    expect(editor).to_be_visible()
    expect(editor.locator("#opt-entry_id")).to_have_value(entry_id)  # admins choose from the entries
    editor.locator("#opt-title").fill("Picked plan")
    editor.locator("#opt-title").press("Tab")
    expect(dialog.locator("agentic-hems-schedule-card .card-header")).to_have_text("Picked plan")
    dialog.get_by_role("button", name="Save").click()
    expect(editor).not_to_be_visible()  # the dialog closes (HA keeps its element)
    owner.get_by_role("button", name="Done").click()
    owner.wait_for_function(
        f"""async (path) => ((await {HASS}.callWS({{type: 'lovelace/config', url_path: path}})).views[0].cards
            || [])[0]?.title === 'Picked plan'""", arg=PICKER_URL_PATH)
    saved = ws(owner, {"type": "lovelace/config", "url_path": PICKER_URL_PATH})
    assert saved["views"][0]["cards"] == [
        {"type": "custom:agentic-hems-schedule-card", "entry_id": entry_id, "title": "Picked plan"}], saved
    expect(owner.locator("agentic-hems-schedule-card .card-header")).to_have_text("Picked plan")


def test_no_console_errors_in_the_editor(owner: Page) -> None:
    """The card picker with the cards' previews, and adding a card, logged no error in the console and threw none."""
    assert console_errors(CONSOLE) == [], "\n".join(CONSOLE)


def test_the_integrations_page_shows_the_brand_icon(owner: Page, demo: Demo) -> None:
    """Settings > Integrations: the Agentic HEMS card's icon is the brand icon HA serves from the integration's
    brand/ folder (icon.png 256x256 or icon@2x.png 512x512, as the frontend asks), loaded."""
    page = owner.context.new_page()  # its console is not checked: without internet, core integrations' icons 404
    try:
        page.goto(f"{demo.base}/config/integrations/dashboard")
        icon = page.locator('img[src*="/api/brands/integration/agentic_hems/"]').first
        expect(icon).to_be_visible()
        page.wait_for_function("(img) => img.complete && img.naturalWidth > 0", arg=icon.element_handle())
        src, width, height = icon.evaluate("img => [img.src, img.naturalWidth, img.naturalHeight]")
        side = 512 if "/icon@2x.png" in src else 256
        assert "/icon.png" in src or "/icon@2x.png" in src, src
        assert (width, height) == (side, side), (src, width, height)
        icon.screenshot(path=str(ARTIFACTS / "brand-icon.png"))
    finally:
        page.close()
