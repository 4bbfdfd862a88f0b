"""The four Lovelace cards in Chromium against the demo's Home Assistant.

The tests run in file order on one logged-in page (``dashboard``): the ask and confirm tests change what the runs
and trace cards show, and the screenshots (desktop 1280 px and phone 390 px wide) follow them so that they show
those results; a reload comes last. Playwright's CSS selectors pierce the open shadow roots of HA and of the cards.
Doubtful and unknown prices are shown by a schedule card that this file adds to the page with a stand-in connection
(the demo's prices are all known).
"""

from __future__ import annotations

from datetime import datetime, timedelta
from pathlib import Path
import re
from typing import Any
from zoneinfo import ZoneInfo

import pytest
from playwright.sync_api import Locator, Page, expect

from .conftest import CARDS, CONSOLE, Demo, console_errors, settles

APPLIANCES = ("Dishwasher", "Washing machine", "EV charger")
ASK_REQUEST = "Schedule all flexible loads"
# What each card shows once it has loaded (the cards' DOM contract).
RENDERED = {
    "schedule": (".block", ".now-marker", ".plan-summary"),
    "trace": (".decision", ".gate.passed", ".pending"),
    "ask": ("#ask-input", "#ask-submit"),
    "runs": (".stat", ".model-row"),
}
HASS = "document.querySelector('home-assistant').hass"
HOME_ZONE = ZoneInfo("Europe/Brussels")  # scripts/demo's home, also the page's zone
OWNER = "Demo Owner"  # scripts/demo's owner, who asked to open the garage door
GATE_NAMES = ["Input check", "Valid command", "Device found", "Device can do it", "Fresh state", "Your rules",
              "Dry run", "Execution"]  # a command that waits: its Execution gate is not "Executed" (yet)
USER_ID = re.compile(r"\b[0-9a-f]{32}\b")  # an HA user id (or a trace id): never what a person reads
WIDTHS = {"desktop": 1280, "phone": 390}


def card(page: Page, name: str) -> Locator:
    return page.locator(f"agentic-hems-{name}-card")


def when(iso: str) -> datetime:
    return datetime.fromisoformat(iso.replace("Z", "+00:00"))


def plan_blocks(plan: dict[str, Any]) -> list[tuple[datetime, datetime]]:
    """A plan's running slots from agentic_hems/schedule, contiguous ones merged into one block."""
    blocks: list[tuple[datetime, datetime]] = []
    for slot in plan["slots"]:
        start, end = when(slot["start"]), when(slot["end"])
        if blocks and blocks[-1][1] == start:
            blocks[-1] = (blocks[-1][0], end)
        else:
            blocks.append((start, end))
    return blocks


def test_login_opens_the_dashboard(dashboard: Page, demo: Demo) -> None:
    """HA's login page took the demo's credentials; /energy-plan holds the four cards, none an error card."""
    assert dashboard.url.split("?")[0].startswith(demo.dashboard)
    for name in CARDS:
        expect(card(dashboard, name)).to_have_count(1)
    expect(dashboard.locator("hui-error-card")).to_have_count(0)  # e.g. "Custom element doesn't exist"


@pytest.mark.parametrize("name", CARDS)
def test_each_card_renders(dashboard: Page, demo: Demo, name: str) -> None:
    """Each card shows its elements and no ``.error``."""
    element = card(dashboard, name)
    for selector in RENDERED[name]:
        expect(element.locator(selector).first).to_be_attached()
    expect(element.locator(".error")).to_have_count(0)
    if name == "schedule":
        expect(element.locator(".plan-summary")).to_have_count(len(APPLIANCES))
    elif name == "trace":
        pending = element.locator(f'.pending[data-trace-id="{demo.garage_trace_id}"]')
        expect(pending.locator("button.confirm")).to_be_visible()
        expect(pending.locator("button.reject")).to_be_visible()
        expect(element.locator(f'.decision[data-trace-id="{demo.garage_trace_id}"]')).to_have_attribute(
            "data-outcome", "pending_confirmation")
    elif name == "runs":  # the demo asked the offline planner once
        expect(element.locator('.model-row[data-model="offline"]')).to_have_count(1)


def test_schedule_blocks_match_the_plan(dashboard: Page) -> None:
    """Per appliance, the blocks are the agentic_hems/schedule plan's slots (contiguous ones merged); tapping a
    block shows its details."""
    element = card(dashboard, "schedule")
    for attempt in range(2):  # a re-plan between the two reads is pushed to the card: read both again once
        schedule = dashboard.evaluate(f"() => {HASS}.callWS({{type: 'agentic_hems/schedule'}})")
        plans = {plan["name"]: plan for plan in schedule["plans"]}
        assert set(plans) == set(APPLIANCES), schedule["plans"]
        expect(element.locator(".block").first).to_be_attached()
        shown = element.locator(".block").evaluate_all(
            "els => els.map(e => [e.dataset.appliance, e.dataset.start, e.dataset.end])")
        blocks = {name: sorted((when(start), when(end)) for appliance, start, end in shown if appliance == name)
                  for name in plans}
        wanted = {name: plan_blocks(plan) for name, plan in plans.items()}
        if blocks == wanted or attempt:
            break
        dashboard.wait_for_timeout(2000)
    for name, plan in plans.items():
        assert plan["feasible"] and plan["slots"], plan
        assert blocks[name] == wanted[name], (name, blocks[name], plan["slots"])
    assert len(shown) == sum(len(b) for b in wanted.values()), shown
    summaries = element.locator(".plan-summary").evaluate_all("els => els.map(e => e.dataset.appliance)")
    assert sorted(summaries) == sorted(APPLIANCES)
    expect(element.locator(".now-marker")).to_have_count(1)

    first = element.locator(".block").first
    appliance, start = first.get_attribute("data-appliance"), first.get_attribute("data-start")
    first.click()
    details = element.locator(".block-details")
    expect(details).to_be_visible()
    expect(details).to_have_attribute("data-appliance", appliance or "")
    expect(details).to_have_attribute("data-start", start or "")


def test_ask_schedules_all_flexible_loads(dashboard: Page) -> None:
    """A typed request: the offline planner's iterations stream in, then its summary and each appliance's plan.

    An appliance whose plan a person set (the demo's own ask pinned them) keeps it: the summary says it stays, and
    no new plan is shown for it; every other appliance gets a plan.
    """
    element = card(dashboard, "ask")
    element.locator("#ask-input").fill(ASK_REQUEST)
    element.locator("#ask-submit").click()
    expect(element.locator(".summary")).to_be_visible()
    expect(element.locator(".summary")).to_have_attribute("data-success", "true")
    expect(element.locator(".iteration").first).to_be_attached()
    summary = element.locator(".summary").inner_text()
    kept = {name for name in APPLIANCES if f"{name}: the plan you set stays" in summary}
    expect(element.locator(".result-plan")).to_have_count(len(APPLIANCES) - len(kept))
    names = element.locator(".result-plan").evaluate_all("els => els.map(e => e.dataset.appliance)")
    assert sorted(names) == sorted(set(APPLIANCES) - kept)
    expect(element.locator(".error")).to_have_count(0)
    # The runs card hears the run end (subscribe_run) and counts it without a reload.
    expect(card(dashboard, "runs").locator('.stat[data-stat="runs"] .stat-value')).to_have_text("2")


def shown_blocks(element: Locator, appliance: str) -> list[list[str]]:
    return element.locator(f'.block[data-appliance="{appliance}"]').evaluate_all(
        "els => els.map(e => [e.dataset.start, e.dataset.end])")


def test_the_schedule_card_shows_a_plan_the_ask_card_changed(dashboard: Page) -> None:
    """The ask card moves the dishwasher to another start: the schedule card shows the new plan without a reload
    (agentic_hems/subscribe_schedule), its block and its summary."""
    schedule = card(dashboard, "schedule")
    before = shown_blocks(schedule, "Dishwasher")
    assert len(before) == 1, before
    old_start = when(before[0][0]).astimezone(HOME_ZONE)
    now = datetime.now(HOME_ZONE)
    hour = next(h for h in (2, 3, 4) if (now + timedelta(hours=h)).hour != old_start.hour)
    start = (now + timedelta(hours=hour)).replace(minute=0, second=0, microsecond=0)
    ask = card(dashboard, "ask")
    ask.locator("#ask-input").fill(f"Schedule the dishwasher at {start:%H:%M}")  # plans; "run" would also start it now
    ask.locator("#ask-submit").click()
    expect(ask.locator(".summary")).to_have_attribute("data-success", "true")
    planned = ask.locator('.result-plan[data-appliance="Dishwasher"]')
    expect(planned).to_have_count(1)
    new_start, new_end = planned.get_attribute("data-start"), planned.get_attribute("data-end")
    assert new_start and new_end and when(new_start) == start, (new_start, start)
    block = schedule.locator('.block[data-appliance="Dishwasher"]')
    expect(block).to_have_count(1)
    expect(block).to_have_attribute("data-start", new_start)
    expect(block).to_have_attribute("data-end", new_end)
    # en-US: "Tue, 8:00 – 10:30 PM"
    summary = schedule.locator('.plan-summary[data-appliance="Dishwasher"] .plan-time')
    expect(summary).to_contain_text(f"{start:%a}, {start.hour % 12 or 12}:{start:%M}")


# The card's rendered height (the oracle), its masonry size and its sections grid options.
SIZES = """(c) => ({height: c.shadowRoot.querySelector('.ahems-card').getBoundingClientRect().height,
    size: c.getCardSize(), grid: c.getGridOptions()})"""


@pytest.mark.parametrize("name", CARDS)
def test_each_card_tells_the_layouts_its_height(dashboard: Page, name: str) -> None:
    """Masonry's getCardSize (units of 50 px) is the card's rendered height, within a unit or a tenth of it, after the
    ask card's run (its iterations, summary and plans); in the sections layout the card takes its content's height
    ("auto"), the full width, at least half of it, and at least min_rows rows (56 px, 8 px apart), which its content
    fills."""
    element = card(dashboard, name)

    def read() -> tuple[Any, ...]:
        got = element.evaluate(SIZES)
        height, grid = got["height"], got["grid"]
        near = abs(got["size"] * 50 - height) <= max(50, height / 10)
        return near, grid["rows"], grid["columns"], grid["min_columns"], grid["min_rows"] * 64 - 8 <= height

    settles(read, (True, "auto", 12, 6, True))


def test_the_pending_command_reads_as_a_sentence(dashboard: Page, demo: Demo) -> None:
    """The garage door waits for confirmation: who asked for what on which device, and when it expires (local time
    and how long from now); its Execution gate says it waits, with no green tick."""
    element = card(dashboard, "trace")
    pending = element.locator(f'.pending[data-trace-id="{demo.garage_trace_id}"]')
    assert dashboard.evaluate(f"() => {HASS}.user.name") == OWNER
    expect(pending.locator(".request")).to_have_text(f"{OWNER} asks to open Garage door")
    expiry = demo.report["gates"]["garage door"]["gate_results"][-1]["evidence"]["expires_at"]
    local = f"{when(expiry).astimezone(HOME_ZONE):%I:%M %p}".removeprefix("0")  # en-US, 12-hour clock: "6:55 PM"
    expect(pending.locator(".expires")).to_have_text(re.compile(
        rf"^expires {local} \((in \d+ minutes?|in [12] hours?|now)\)$"))
    decision = element.locator(f'.decision[data-trace-id="{demo.garage_trace_id}"]')
    assert decision.locator(".gate .gate-label").all_inner_texts() == GATE_NAMES
    execution = decision.locator('.gate[data-gate="execution"]')
    expect(execution).to_have_attribute("data-state", "waiting")
    expect(execution).to_contain_text("waiting for confirmation")
    expect(execution.locator(".gate-icon")).not_to_have_text("✓")
    expect(decision.locator('.gate[data-gate="policy"]')).to_have_attribute(
        "title", "Your rules ask an administrator to confirm this.")
    expect(decision.locator(".gate-note")).to_have_text(re.compile(
        rf"^Waiting for an administrator to confirm, until {local} \(.+\)\.$"))
    expect(decision.locator(".entity")).to_have_text("Garage door")


def test_a_dry_run_is_not_shown_as_executed(dashboard: Page, demo: Demo) -> None:
    """The demo's scheduled starts were dry runs: their Execution gate says "not executed", never a green tick."""
    trace_id = demo.report["gates"]["Dishwasher"]["trace_id"]
    decision = card(dashboard, "trace").locator(f'.decision[data-trace-id="{trace_id}"]')
    expect(decision).to_have_attribute("data-outcome", "dry_run")
    execution = decision.locator('.gate[data-gate="execution"]')
    expect(execution).to_have_attribute("data-state", "not_executed")
    expect(execution).to_contain_text("not executed")
    expect(execution.locator(".gate-icon")).not_to_have_text("✓")
    expect(decision.locator(".gate-note")).to_have_text("Not executed: only a dry run was asked for.")


def test_confirm_the_pending_garage_door(dashboard: Page, demo: Demo) -> None:
    """Confirm on the pending garage-door command executes it: its decision's outcome becomes ``executed``, the
    pending row goes, and the door opens."""
    trace_id = demo.garage_trace_id
    element = card(dashboard, "trace")
    element.locator(f'.pending[data-trace-id="{trace_id}"] button.confirm').click()
    expect(element.locator(f'.decision[data-trace-id="{trace_id}"]')).to_have_attribute("data-outcome", "executed")
    expect(element.locator(f'.pending[data-trace-id="{trace_id}"]')).to_have_count(0)
    dashboard.wait_for_function(f"() => {HASS}.states['cover.garage_door'].state === 'open'")
    expect(element.locator(".error")).to_have_count(0)
    decision = element.locator(f'.decision[data-trace-id="{trace_id}"]')
    expect(decision.locator('.gate[data-gate="execution"]')).to_have_attribute("data-state", "passed")
    expect(decision.locator(".gate-note")).to_have_text(f"Confirmed by {OWNER}; Garage door: open – done.")
    texts = element.evaluate("el => [el.shadowRoot.textContent, ...[...el.shadowRoot.querySelectorAll('[title]')]"
                             ".map(e => e.title)].join(' ')")
    assert not USER_ID.search(texts), texts


def test_the_trace_card_follows_an_entry_reload(dashboard: Page) -> None:
    """Options changes reload the entry: the card subscribes again by itself and shows the next decision live."""
    entry_id = dashboard.evaluate(f"async () => (await {HASS}.callWS({{type: 'agentic_hems/schedule'}})).entry_id")
    dashboard.evaluate(f"() => {HASS}.callApi('POST', 'config/config_entries/entry/{entry_id}/reload')")
    dashboard.wait_for_timeout(3000)  # the card waits 2 s before it subscribes again
    response = dashboard.evaluate(
        f"""async () => (await {HASS}.callService('agentic_hems', 'evaluate_command', {{source_agent: 'browser',
            model_candidate: {{intent: 'turn_on', device_alias: 'input_boolean.dishwasher'}}, dry_run: true}},
            undefined, false, true)).response"""
    )
    element = card(dashboard, "trace")
    expect(element.locator(f'.decision[data-trace-id="{response["trace_id"]}"]')).to_have_attribute(
        "data-outcome", response["outcome"])
    expect(element.locator(".error")).to_have_count(0)


def test_numbers_and_axes(dashboard: Page) -> None:
    """The runs card's total cost carries HA's currency (en-US: "€0.00"); its chart's range holds the first and last
    runs with room for their points; the price axis starts at 0 unless a price is negative."""
    runs = card(dashboard, "runs")
    assert dashboard.evaluate(f"() => {HASS}.config.currency") == "EUR"
    data = dashboard.evaluate(f"() => {HASS}.callWS({{type: 'agentic_hems/runs'}})")
    total = data["stats"]["total_cost"]
    wanted = "€0.00" if total == 0 else re.compile(r"^€\d")
    expect(runs.locator('.stat[data-stat="total_cost"] .stat-value')).to_have_text(wanted)
    x_range = runs.evaluate("el => [el._chart.scales.x.min, el._chart.scales.x.max]")
    stamps = [when(r["timestamp"]).timestamp() * 1000 for r in data["runs"]]
    assert x_range[0] < min(stamps) and x_range[1] > max(stamps), (x_range, stamps)
    schedule = dashboard.evaluate(f"() => {HASS}.callWS({{type: 'agentic_hems/schedule'}})")
    lowest = min(p["price"] for p in schedule["prices"] if p["price"] is not None)
    y_min = card(dashboard, "schedule").evaluate("el => el._chart.scales.y.min")
    assert (y_min == 0) if lowest >= 0 else (y_min <= lowest), (y_min, lowest)
    # Plan costs like the entities': two decimals, the currency, and no "-€0.00" for a cost that rounds to zero.
    costs = card(dashboard, "schedule").locator(".plan-cost").all_inner_texts()
    assert costs and all(re.fullmatch(r"(-?€\d+\.\d\d)", c.strip()) and c.strip() != "-€0.00" for c in costs), costs


@pytest.mark.parametrize("width", WIDTHS)
def test_screenshots(dashboard: Page, artifacts: Path, width: str) -> None:
    """An element screenshot of every card (after the ask and the confirmation) at desktop and phone width in
    tests/browser/artifacts/; nothing sticks out of a card and a plan's times stay on one line."""
    dashboard.set_viewport_size({"width": WIDTHS[width], "height": 1800})
    try:
        for name in CARDS:
            element = card(dashboard, name)
            expect(element).to_be_visible()
            element.scroll_into_view_if_needed()
            path = artifacts / f"{name}-card-{width}.png"
            element.screenshot(path=str(path), animations="disabled")
            assert path.stat().st_size > 1000
            overflow = element.evaluate("el => { const c = el.shadowRoot.querySelector('.ahems-card');"
                                        " return c.scrollWidth - c.clientWidth; }")
            assert overflow <= 0, (name, width, overflow)
        rows = [row for name in ("schedule", "ask") for row in card(dashboard, name).locator(".plan-time").evaluate_all(
            "els => els.map(e => { const r = e.getBoundingClientRect(); const row = e.closest('.plan-summary,"
            " .result-plan').getBoundingClientRect(); return [e.textContent, r.height,"
            " parseFloat(getComputedStyle(e).lineHeight) || 20, r.right <= row.right + 0.5]; })")]
        assert len(rows) == len(APPLIANCES) + 1, rows  # the schedule's plans, the ask card's dishwasher
        for text, height, line, inside in rows:
            assert height < 1.5 * line and inside, (width, text, height, line, inside)
    finally:
        dashboard.set_viewport_size({"width": 1400, "height": 1800})


# A schedule card on the page with a stand-in connection that pushes ``window.__schedule`` (this page's real schedule,
# changed by the test) as agentic_hems/subscribe_schedule would.
STANDIN = """(payload) => {
    window.__schedule = payload;
    const real = document.querySelector('home-assistant').hass;
    const el = document.createElement('agentic-hems-schedule-card');
    el.id = 'standin-schedule';
    el.setConfig({title: 'Doubtful prices'});
    el.hass = {...real, connection: {subscribeMessage: (cb) => {
        setTimeout(() => cb({type: 'schedule', ...window.__schedule}), 0);
        return Promise.resolve(() => undefined);
    }}};
    el.style.cssText = 'display:block;max-width:600px;margin:8px';
    document.body.prepend(el);
}"""


def test_doubtful_and_unknown_prices(dashboard: Page, artifacts: Path) -> None:
    """Tomorrow's prices doubtful (a day of zeros), tonight's last hour unknown, the dishwasher planned on doubtful
    prices: the card draws the doubtful slots as their own hatched series and leaves a gap for the unknown hour, says
    so in a legend line for each, and warns on the dishwasher's plan."""
    payload = dashboard.evaluate(f"() => {HASS}.callWS({{type: 'agentic_hems/schedule'}})")
    today = datetime.now(HOME_ZONE).replace(hour=0, minute=0, second=0, microsecond=0)
    tomorrow, day_after = today + timedelta(days=1), today + timedelta(days=2)
    gap = (tomorrow - timedelta(hours=1), tomorrow)
    for price in payload["prices"]:
        start = when(price["start"])
        if tomorrow <= start < day_after:
            price.update(price=0.0, trust=1)
        elif gap[0] <= start < gap[1]:
            price.update(price=None, trust=2)
        else:
            price.update(price=abs(price["price"]), trust=0)
    payload["price_notes"] = [{"start": tomorrow.isoformat(), "end": day_after.isoformat(), "issue": "zero_day",
                               "trust": "doubtful", "detail": "every price of the day is zero"}]
    for plan in payload["plans"]:
        if plan["name"] == "Dishwasher":
            plan.update(reason="doubtful_prices", detail="uses doubtful prices")
    dashboard.evaluate(STANDIN, payload)
    element = dashboard.locator("#standin-schedule")
    expect(element.locator("canvas.price-chart")).to_be_attached()
    expect(element.locator(".legend-doubtful")).to_have_text(
        f"Prices for {tomorrow:%a} are doubtful (a day of zeros)")
    expect(element.locator(".legend-unknown")).to_have_text(f"No prices for {today:%a} (gaps in the curve)")
    expect(element.locator('.plan-summary[data-appliance="Dishwasher"] .plan-warning')).to_have_text(
        "⚠ Planned on doubtful prices")
    expect(element.locator(".plan-warning")).to_have_count(1)
    element.evaluate("el => new Promise((resolve) => requestAnimationFrame(resolve))")
    known, doubtful, y_min = element.evaluate(
        "el => [...el._chart.data.datasets.slice(0, 2).map(d => d.data.filter(p => p.y !== null).map(p => p.x)),"
        " el._chart.scales.y.min]")
    day = (tomorrow.timestamp() * 1000, day_after.timestamp() * 1000)
    hole = (gap[0].timestamp() * 1000, gap[1].timestamp() * 1000)
    assert doubtful and all(day[0] <= x <= day[1] for x in doubtful), doubtful
    assert {day[0], day[1]} <= set(doubtful)
    assert element.evaluate("el => el._doubtfulSpans") == [list(day)]  # the band shaded over the chart's height
    assert known and not any(hole[0] < x < hole[1] or day[0] < x < day[1] for x in known), known
    assert y_min == 0, y_min
    for width, pixels in WIDTHS.items():
        dashboard.set_viewport_size({"width": pixels, "height": 1800})
        element.screenshot(path=str(artifacts / f"schedule-card-doubtful-{width}.png"), animations="disabled")
    dashboard.set_viewport_size({"width": 1400, "height": 1800})

    payload["prices"][0].update(price=-0.05, trust=0)  # one negative price: the axis goes below zero for it
    dashboard.evaluate("(p) => { window.__schedule = p; const el = document.getElementById('standin-schedule');"
                       " el._live.dispose(); el._live.start(); }", payload)
    dashboard.wait_for_function("() => document.getElementById('standin-schedule')._chart.scales.y.min <= -0.05")
    dashboard.evaluate("() => document.getElementById('standin-schedule').remove()")


# A card on the page with a stand-in connection that pushes ``message`` once, as its subscription would; ``locale``
# replaces the user's locale settings (time_format: "12" or "24").
STANDIN_CARD = """([tag, id, message, locale]) => {
    const real = document.querySelector('home-assistant').hass;
    const el = document.createElement(tag);
    el.id = id;
    el.setConfig({});
    el.hass = {...real, locale: {...real.locale, ...locale}, connection: {subscribeMessage: (cb) => {
        if (message) setTimeout(() => cb(message), 0);
        return Promise.resolve(() => undefined);
    }}};
    el.style.cssText = 'display:block;max-width:420px;margin:8px';
    document.body.prepend(el);
}"""
GARAGE = {"entity_id": "cover.garage_door", "source_agent": "orchestrator", "timestamp": "2026-12-07T13:05:00+00:00",
          "command": {"intent": "open", "data": {}}, "history": []}
PASSED = [{"gate": g, "passed": True, "reason": "ok", "evidence": {}} for g in (
    "input_guard", "schema", "device_resolved", "capability", "freshness", "policy", "dry_run")]
ENDED = {  # outcome -> the Execution gate's label, icon and the decision's badge
    "rejected": ("Rejected", "✕", "rejected"), "expired": ("Expired", "✕", "expired"),
    "cancelled": ("Cancelled", "✕", "cancelled"), "failed": ("Not executed", "✕", "failed"),
}


def test_the_trace_card_says_what_became_of_a_command(dashboard: Page) -> None:
    """A rejected, expired, cancelled or failed command is never shown as "✕ Executed"; a set temperature that ran
    says its value ("Heat pump: set to 21.5 °C – done.", not "set the temperature of – done."); who proposed it is a
    word ("Assistant"), not "orchestrator"; the device is its name, not its entity id."""
    decisions = [{**GARAGE, "trace_id": f"t_{outcome}", "outcome": outcome, "gate_results": [
        *PASSED, {"gate": "execution", "passed": False, "reason": outcome, "evidence": {}}]} for outcome in ENDED]
    decisions.append({**GARAGE, "trace_id": "t_heat", "outcome": "executed", "entity_id": "climate.heat_pump",
                      "source_agent": "scheduler", "command": {"intent": "set_temperature", "data": {"temperature": 21.5}},
                      "gate_results": [*PASSED, {"gate": "execution", "passed": True, "reason": "ok", "evidence": {}}]})
    labels = {"entities": {"cover.garage_door": "Garage door", "climate.heat_pump": "Heat pump"}, "users": {}}
    snapshot = {"type": "snapshot", "decisions": decisions, "pending": [], "is_admin": True, "labels": labels}
    dashboard.evaluate(STANDIN_CARD, ["agentic-hems-trace-card", "standin-trace", snapshot, {}])
    element = dashboard.locator("#standin-trace")
    try:
        for outcome, (label, icon, badge) in ENDED.items():
            decision = element.locator(f'.decision[data-trace-id="t_{outcome}"]')
            execution = decision.locator('.gate[data-gate="execution"]')
            expect(execution.locator(".gate-label")).to_have_text(label)
            expect(execution.locator(".gate-icon")).to_have_text(icon)
            expect(decision.locator(".outcome")).to_have_text(badge)
            expect(decision.locator(".entity")).to_have_text("Garage door")
            expect(decision.locator(".agent")).to_have_text("Assistant")
        expect(element.locator(".gate-label", has_text=re.compile(r"^Executed$"))).to_have_count(1)  # the heat pump
        heat = element.locator('.decision[data-trace-id="t_heat"]')
        expect(heat.locator(".gate-note")).to_have_text("Heat pump: set to 21.5 °C – done.")
        expect(heat.locator(".agent")).to_have_text("Schedule")
        expect(heat.locator(".action")).to_have_text("set temperature")  # the headline, not "set the temperature of"
        text = element.evaluate("el => el.shadowRoot.textContent")
        assert not re.search(r"orchestrator|scheduler|cover\.garage_door|climate\.|temperature of", text), text
    finally:
        dashboard.evaluate("() => document.getElementById('standin-trace').remove()")


SUMMARY = "Dishwasher: Mon 02:15 to Mon 04:45, 0.41 EUR (saves 0.25 EUR). EV charger: Mon 22:00 to Tue 06:30, 1.20 EUR."
STEPS = [{"iteration": 1, "action": "GET_PRICES", "status": "ok"}, {"iteration": 2, "action": "SCHEDULE", "status": "ok"},
         {"iteration": 3, "action": "EXPLAIN_DEVICE", "status": "error"}, {"iteration": 4, "action": "FINISH",
                                                                           "status": "finish"},
         {"iteration": 5, "action": None, "status": "error"}, {"iteration": 6, "action": "RUN_POWER_FLOW", "status": "ok"}]


@pytest.mark.parametrize(("time_format", "times"), [
    ("12", ("2:15 AM", "4:45 AM", "10:00 PM", "6:30 AM")), ("24", ("02:15", "04:45", "22:00", "06:30"))])
def test_the_ask_card_reads_in_words_and_one_time_format(dashboard: Page, time_format: str,
                                                        times: tuple[str, ...]) -> None:
    """The steps are translated labels, never the constants EXPLAIN_DEVICE, SCHEDULE or FINISH; the summary's times
    follow the user's time format like the plans under it, so no 24-hour time stands beside a 12-hour one."""
    dashboard.evaluate(STANDIN_CARD, ["agentic-hems-ask-card", "standin-ask", None, {"time_format": time_format}])
    element = dashboard.locator("#standin-ask")
    try:
        start = datetime(2026, 12, 7, 2, 15, tzinfo=HOME_ZONE).isoformat()
        end = datetime(2026, 12, 7, 4, 45, tzinfo=HOME_ZONE).isoformat()
        element.evaluate("(el, [steps, summary, plan]) => { el._steps = steps; el._result = {summary, success: true,"
                         " plans: [plan], currency: 'EUR'}; }",
                         [STEPS, SUMMARY, {"name": "Dishwasher", "start": start, "end": end, "cost": 0.41}])
        expect(element.locator(".it-action")).to_have_text([
            "Look up the prices", "Plan appliances", "Explain a device", "Answer", "Reply not understood",
            "Compute the power flow"])
        expect(element.locator(".it-status")).to_have_text(["done", "done", "error", "finished", "error", "done"])
        summary = element.locator(".summary").inner_text()
        plan = element.locator(".plan-time").inner_text()
        for time in times:
            assert time in summary, (summary, time)
        clock12 = re.compile(r"\d{1,2}:\d\d\s?[AP]M")
        clock24 = re.compile(r"\b\d\d:\d\d\b(?!\s?[AP]M)")
        if time_format == "12":
            assert not clock24.search(summary) and clock12.search(plan), (summary, plan)
        else:
            assert not clock12.search(summary + plan) and clock24.search(plan), (summary, plan)
        text = element.evaluate("el => el.shadowRoot.textContent")
        assert not re.search(r"[A-Z]{3,}_[A-Z_]+|\bFINISH\b|\bSCHEDULE\b", text), text
    finally:
        dashboard.evaluate("() => document.getElementById('standin-ask').remove()")


def test_a_refused_grid_command_names_the_approved_one(dashboard: Page) -> None:
    """The Policy gate's sentence for a grid command whose grant covers another command on that entity in that slot
    (its ``approved_command`` evidence), and for one on a grid setpoint without it, in English and German."""
    sentences = card(dashboard, "trace").evaluate("""el => {
        const hass = el.hass, out = [];
        const off = {entity_id: "switch.boost", command: {intent: "turn_off", data: {}}};
        const warmer = {entity_id: "climate.test_boiler", command: {intent: "set_temperature", data: {temperature: 23}}};
        const approved = (intent, data) => ({evidence: {grid_setpoint: true, approved_command: {intent, data}}});
        for (const language of ["en", "de"]) {
            el.hass = {...hass, locale: {...hass.locale, language}};
            out.push(el._sentence(off, "policy", approved("turn_on", {}), "failed"),
                     el._sentence(warmer, "policy", approved("set_temperature", {temperature: 21.5}), "failed"),
                     el._sentence(off, "policy", {evidence: {grid_setpoint: true}}, "failed"));
        }
        el.hass = hass;
        return out;
    }""")
    assert sentences == [
        "The approval for this slot covers “turn on” on switch.boost, not “turn off”.",
        "The approval for this slot covers “21.5 °C” on climate.test_boiler, not “23 °C”.",
        "Only an approved authorization request sets switch.boost, and only in its slots.",
        "Die Freigabe für diesen Zeitraum gilt für „einschalten“ an switch.boost, nicht für „ausschalten“.",
        "Die Freigabe für diesen Zeitraum gilt für „21.5 °C“ an climate.test_boiler, nicht für „23 °C“.",
        "Nur eine genehmigte Freigabeanfrage setzt switch.boost, und nur in ihren Zeiträumen.",
    ]


REFUSED_VALUES_JS = """el => {
    const hass = el.hass, out = [];
    const boiler = {entity_id: "water_heater.boiler", command: {intent: "set_temperature", data: {temperature: 60}}};
    const refused = (reason_key, asked, proposed) => ({evidence: {action: "deny", reason_key,
        reason_placeholders: {entity_id: "water_heater.boiler", intent: "set_temperature", asked, proposed}}});
    const waits = {evidence: {action: "confirm", intent_binding: {value_asked: false, proposed: "65.5°"}}};
    for (const [language, number_format] of [["en", "comma_decimal"], ["de", "decimal_comma"]]) {
        el.hass = {...hass, locale: {...hass.locale, language, number_format}};
        out.push(el._sentence(boiler, "policy", refused("value_not_requested", "50.5°", "60°"), "failed"),
                 el._sentence(boiler, "policy", refused("value_not_planned", "6900 W", "16 A"), "failed"),
                 el._sentence(boiler, "policy", refused("plan_no_value", "", "16 A"), "failed"),
                 el._sentence(boiler, "policy", refused("not_requested"), "failed"),
                 el._sentence(boiler, "policy", refused("nothing_requested"), "failed"),
                 el._sentence(boiler, "policy", waits, "passed"));
    }
    el.hass = hass;
    return out;
}"""


def test_a_value_refusal_says_both_values_in_the_users_language(dashboard: Page) -> None:
    """Intent binding's refusals by their reason key and placeholders (the Policy gate's evidence), in English and
    German with the user's number format; a value nobody named waits for an administrator and says so."""
    assert card(dashboard, "trace").evaluate(REFUSED_VALUES_JS) == [
        "The request asks for 50.5°, not 60°.",
        "The plan sets 6,900 W, not 16 A.",
        "The plan sets no value for water_heater.boiler.",
        "The request does not ask for this on water_heater.boiler.",
        "The request asks for no device action.",
        "The request names no value, so an administrator decides on 65.5°.",
        "Die Anfrage verlangt 50,5°, nicht 60°.",
        "Der Plan sieht 6.900 W vor, nicht 16 A.",
        "Der Plan sieht keinen Wert für water_heater.boiler vor.",
        "Die Anfrage verlangt das an water_heater.boiler nicht.",
        "Die Anfrage verlangt keine Geräteaktion.",
        "Die Anfrage nennt keinen Wert, daher entscheidet ein Administrator über 65,5°.",
    ]


VALUES_JS = """el => {
    const hass = el.hass, out = [];
    const states = {...hass.states, "input_number.setpoint": {entity_id: "input_number.setpoint", state: "0",
                    attributes: {unit_of_measurement: "kW"}}};
    const warmer = {entity_id: "climate.heat_pump", command: {intent: "set_temperature", data: {temperature: 70}}};
    const setpoint = {entity_id: "input_number.setpoint", command: {intent: "set_value", data: {value: -4.7}}};
    for (const temperature of ["°C", "°F"]) {
        const unit_system = {...(hass.config.unit_system || {}), temperature};
        el.hass = {...hass, states, config: {...hass.config, unit_system}};
        out.push(el._value(warmer), el._value(setpoint));
    }
    el.hass = hass;
    return out;
}"""


def test_a_set_value_carries_its_unit(dashboard: Page) -> None:
    """A set temperature is in HA's unit (commands carry it so: 70 is °F in US customary units, never "70 °C"); a
    number entity's value carries its unit ("-4.7 kW", not a bare "-4.7")."""
    assert card(dashboard, "trace").evaluate(VALUES_JS) == ["70 °C", "-4.7 kW", "70 °F", "-4.7 kW"]


def test_a_12_hour_clock_has_no_leading_zero(dashboard: Page) -> None:
    """A decision at 08:05 UTC reads "8:05:00 AM" or "9:05:00 AM" (the demo's zone) for a 12-hour reader, as the
    schedule's spans and HA write it, never "09:05:00 AM"; a 24-hour reader keeps "09:05:00"."""
    early = {**GARAGE, "trace_id": "t_early", "outcome": "executed", "timestamp": "2026-12-07T08:05:00+00:00",
             "gate_results": [*PASSED, {"gate": "execution", "passed": True, "reason": "ok", "evidence": {}}]}
    snapshot = {"type": "snapshot", "decisions": [early], "pending": [], "is_admin": True,
                "labels": {"entities": {"cover.garage_door": "Garage door"}, "users": {}}}
    times = []
    for time_format in ("12", "24"):
        dashboard.evaluate(STANDIN_CARD, ["agentic-hems-trace-card", "standin-clock", snapshot,
                                          {"time_format": time_format}])
        element = dashboard.locator("#standin-clock")
        try:
            times.append(element.locator('.decision[data-trace-id="t_early"] .time').inner_text())
        finally:
            dashboard.evaluate("() => document.getElementById('standin-clock').remove()")
    assert re.search(r"(?<!\d)[1-9]:05:00\s?AM$", times[0]), times
    assert re.search(r"(?<!\d)0[89]:05:00$", times[1]), times


def test_screenshot_dashboard(dashboard: Page, artifacts: Path) -> None:
    """The whole dashboard, and its first 1000 px as the README and the docs show it (docs/assets/dashboard.png)."""
    dashboard.screenshot(path=str(artifacts / "dashboard.png"), full_page=True)
    dashboard.screenshot(path=str(artifacts / "dashboard-docs.png"), clip={"x": 0, "y": 0, "width": 1400, "height": 1000})


def test_a_reload_shows_the_new_state(dashboard: Page, demo: Demo) -> None:
    """After a reload the cards load what HA stored: three runs (the demo's and this page's two asks), the garage door's
    decision executed and nothing pending."""
    runs = dashboard.evaluate(f"() => {HASS}.callWS({{type: 'agentic_hems/runs'}})")
    assert len(runs["runs"]) == 3 and {r["model"] for r in runs["runs"]} == {"offline"}, runs
    dashboard.reload()
    runs_card = card(dashboard, "runs")
    expect(runs_card.locator('.stat[data-stat="runs"] .stat-value')).to_have_text("3")
    expect(runs_card.locator('.model-row[data-model="offline"]')).to_have_count(1)
    trace = card(dashboard, "trace")
    expect(trace.locator(f'.decision[data-trace-id="{demo.garage_trace_id}"]')).to_have_attribute(
        "data-outcome", "executed")
    expect(trace.locator(".pending")).to_have_count(0)
    for name in CARDS:
        expect(card(dashboard, name).locator(".error")).to_have_count(0)


def test_no_console_errors(dashboard: Page) -> None:
    """Nothing above logged an error in the page's console or threw: neither the cards nor HA's frontend around them
    (a failed websocket command or resource load shows up here too)."""
    assert console_errors(CONSOLE) == [], "\n".join(CONSOLE)
