"""The schedule card's whole-home plan in Chromium against the demo's Home Assistant (its simulated PV and battery).

The card stacks panels on one time axis, each with its axis and unit on the left: the prices, then PV, house load and
grid flow (import +, export −) in kW, the battery's charge on a 0-100 % axis and the heat pump's planned temperature
and comfort band in °C, with a legend line per series, time labels every few hours (none skipped, none overlapping), a line and the day's name at each local midnight, and a line with the home plan's
cost (and the capacity charge and grid fees in it), baseline and saving. The values are checked against
agentic_hems/schedule's ``home`` field. It shares the session's logged-in page with ``test_cards.py``
(it runs after it and changes nothing there); screenshots go to ``tests/browser/artifacts/schedule-card-home-*.png``.
"""

from __future__ import annotations

from datetime import UTC, datetime
from decimal import ROUND_HALF_UP, Decimal
from pathlib import Path
from typing import Any
from zoneinfo import ZoneInfo

from playwright.sync_api import Error as PlaywrightError, Locator, Page, expect

from .conftest import CONSOLE, console_errors

HASS = "document.querySelector('home-assistant').hass"
SERIES = {  # legend key -> (dataset label in English, axis, the value a slot gives)
    "pv": ("PV (kW)", "kw", lambda s: s["pv_kw"]),
    "load": ("House load (kW)", "kw", lambda s: s["load_kw"]),
    "grid": ("Grid: import +, export − (kW)", "kw", lambda s: s["import_kw"] - s["export_kw"]),
    "soc": ("Battery charge (%)", "soc", lambda s: s["soc_pct"]),
}
WIDTHS = {"desktop": 1280, "phone": 390}
DATASETS = "el => el._chart.data.datasets.map(d => [d.label, d.yAxisID || 'y', d.data.map(p => [p.x, p.y])])"
AXES = """el => Object.fromEntries(['y', 'kw', 'soc', 'temp'].map(k => { const s = el._chart.scales[k]; return [k, {
  top: s.top, bottom: s.bottom, left: s.left, right: s.right, display: s.options.display,
  widest: s._labelSizes ? s._labelSizes.widest.width : 0,
  title: s.options.title.display ? s.options.title.text : null,
  ticks: s.ticks.map(t => [t.label, s.getPixelForValue(t.value)])}]; }))"""
LABEL_PX = 11  # the axes' tick label font size (the card's)
# What a vertical axis needs beside its widest label: the tick (8 px), the label's padding (3 px) and the rotated title
# (an 11 px font's 13.2 px line and the card's 2 x 2 px padding).
AXIS_EXTRA_PX = 8 + 3 + 13.2 + 4
PANELS = ("y", "kw", "soc", "temp")  # top to bottom
X_TICKS = """el => { const s = el._chart.scales.x; return { width: s._labelSizes ? s._labelSizes.widest.width : 0,
  area: [el._chart.chartArea.left, el._chart.chartArea.right],
  ticks: s.ticks.map(t => [t.value, s.getPixelForValue(t.value)]) }; }"""


# the schedule websocket's answer; while the entry reloads (it refuses then) no home plan
SCHEDULE_OR_NONE = f"() => {HASS}.callWS({{type: 'agentic_hems/schedule'}}).catch(() => ({{home: null}}))"


def read_axes(page: Page, element: Locator) -> dict[str, Any]:
    """:data:`AXES` once the chart has all its panels (it is rebuilt when a re-plan or a resize comes between)."""
    ready = f"el => !!el._chart && {list(PANELS)!r}.every(k => !!el._chart.scales[k])"
    for _ in range(40):
        if element.evaluate(ready):
            try:
                return dict(element.evaluate(AXES))
            except PlaywrightError:  # rebuilt between the two reads
                pass
        page.wait_for_timeout(250)
    return dict(element.evaluate(AXES))


def schedule_card(page: Page) -> Locator:
    return page.locator("agentic-hems-schedule-card:not(#standin-schedule)").first


def read_home(page: Page, element: Locator) -> tuple[dict[str, Any], list[Any]]:
    """The websocket's home plan and the card's datasets, read again if a re-plan came between the reads or there is
    no plan yet (an entry reloaded by an earlier test plans again first: seconds on a loaded machine)."""
    for _ in range(30):
        home = page.evaluate(SCHEDULE_OR_NONE)["home"]
        expect(element.locator(".home-summary")).to_be_visible()
        datasets = element.evaluate(DATASETS)
        again = page.evaluate(SCHEDULE_OR_NONE)["home"]
        if home is not None and again == home:
            return home, datasets
        page.wait_for_timeout(2000)
    raise AssertionError("no home plan, or it kept changing, for a minute")


def test_the_schedule_card_draws_the_home_plan(dashboard: Page) -> None:
    """Each home series is a dataset on its axis with one point per slot at the slot's value (the kW steps end one
    slot after the last start); the legend names the four series."""
    element = schedule_card(dashboard)
    home, datasets = read_home(dashboard, element)
    expect(element.locator(".home-legend .home-series")).to_have_count(len(SERIES) + 2 * len(home["heat_pumps"]))
    slots = home["slots"]
    assert slots, home
    by_label = {label: (axis, points) for label, axis, points in datasets}
    for key, (label, axis, value) in SERIES.items():
        got_axis, points = by_label[label]
        assert got_axis == axis, (label, got_axis)
        wanted = [value(s) for s in slots]
        assert [y for _, y in points[: len(slots)]] == wanted, (label, points[:4], wanted[:4])
        assert len(points) == len(slots) + (1 if axis == "kw" else 0), (label, len(points), len(slots))
        expect(element.locator(f'.home-series[data-series="{key}"]')).to_contain_text(label)
    assert max(s["pv_kw"] for s in slots) > 1  # the demo's clear-sky PV shines tomorrow at noon


def test_the_home_plan_line_shows_cost_baseline_and_saving(dashboard: Page) -> None:
    """The cost line: the websocket's cost, baseline and saving, each in euros with two decimals (en-US: "€4.67")."""
    element = schedule_card(dashboard)
    summary = element.locator('.home-summary[data-feasible="true"]')
    expect(summary).to_be_visible()
    home, _ = read_home(dashboard, element)
    for part, key in (("cost", "cost"), ("baseline", "baseline"), ("saving", "saving")):
        expect(summary.locator(f".home-{part}")).to_contain_text(euros(home[key]))
    assert abs(home["baseline_net_cost"] - home["net_cost"] - home["saving"]) < 1e-3, home


def euros(amount: float) -> str:
    """An amount as the card writes it in en-US: "€4.67", "-€0.12"."""
    return f"€{amount:.2f}" if amount >= 0 else f"-€{-amount:.2f}"


def kw_text(value: float) -> str:
    """A kW figure as the card writes it in en-US: at most one decimal, rounded half up ("10.1", "2.5", "3")."""
    return f"{Decimal(str(value)).quantize(Decimal('0.1'), ROUND_HALF_UP):f}".removesuffix(".0")


def capacity_text(grid: dict[str, Any]) -> str:
    return (f"incl. capacity charge {euros(grid['capacity_cost'])} (peak {kw_text(grid['peak_kw'])} kW, month so far "
            f"{kw_text(grid['peak_so_far_kw'])} kW)")


def assert_grid_cost(summary: Locator, grid: dict[str, Any]) -> None:
    """The capacity charge (with the plan's and the month's peak) and the grid fees, each shown only when non-zero."""
    capacity, fees = summary.locator(".home-capacity"), summary.locator(".home-fees")
    if grid["capacity_cost"]:
        expect(capacity).to_have_text(capacity_text(grid))
    else:
        expect(capacity).to_have_count(0)
    if grid["fee_cost"]:
        expect(fees).to_have_text(f"incl. grid fees {euros(grid['fee_cost'])}")
    else:
        expect(fees).to_have_count(0)


def test_the_home_plan_line_names_the_capacity_charge_and_grid_fees(dashboard: Page) -> None:
    """The cost line says what of the cost the grid tariff adds: the demo's capacity tariff (3.37 EUR per kW above
    the month's peak so far) as the payload has it, then set payloads: a capacity charge and fees, and neither."""
    element = schedule_card(dashboard)
    summary = element.locator('.home-summary[data-feasible="true"]')
    expect(summary).to_be_visible()
    home, _ = read_home(dashboard, element)
    assert_grid_cost(summary, home["grid"])
    cases = [
        {"fee_cost": 0.8123, "capacity_cost": 12.3412, "peak_so_far_kw": 2.5, "peak_kw": 6.27, "phase_limit_kw": None},
        {"fee_cost": 0.0, "capacity_cost": 0.0, "peak_so_far_kw": 4.0, "peak_kw": 3.1, "phase_limit_kw": 5.75},
    ]
    try:
        for grid in cases:
            element.evaluate("(el, grid) => { el._data = {...el._data, home: {...el._data.home, grid}}; }", grid)
            assert_grid_cost(summary, grid)
    finally:
        element.evaluate("(el, grid) => { el._data = {...el._data, home: {...el._data.home, grid}}; }", home["grid"])


def test_the_schedule_card_draws_the_heat_pump(dashboard: Page) -> None:
    """The simulated house's heat pump: its planned temperature at each slot's end and its comfort band (low and high
    edges, stepped, the area between them filled) on a °C axis, with two legend entries."""
    element = schedule_card(dashboard)
    home, datasets = read_home(dashboard, element)
    (heat,) = [h for h in home["heat_pumps"] if h["name"] == "Heat pump"]  # the demo's SG Ready tank is another
    slots = heat["slots"]
    assert slots, heat
    house = [(label, axis, points) for label, axis, points in datasets if label.startswith("Heat pump:")]
    temp = [points for label, axis, points in house if axis == "temp" and label.endswith("planned temperature (°C)")]
    band = [points for label, axis, points in house if axis == "temp" and label.endswith("comfort band (°C)")]
    assert len(temp) == 1 and len(band) == 2, [(label, axis) for label, axis, _ in datasets]
    assert [y for _, y in temp[0]] == [s["temp_c"] for s in slots]
    assert temp[0][0][0] - band[0][0][0] == 15 * 60 * 1000  # the temperature at the first slot's end
    assert [y for _, y in band[0][: len(slots)]] == [s["low_c"] for s in slots]
    assert [y for _, y in band[1][: len(slots)]] == [s["high_c"] for s in slots]
    fill = element.evaluate(
        "el => el._chart.data.datasets.filter(d => d.yAxisID === 'temp' && d.label.startsWith('Heat pump:'))"
        ".map(d => d.fill)"
    )
    assert fill == [False, "-1", False], fill
    expect(element.locator(f'.home-series[data-series="heat_temp"][data-heat-pump="{heat["heat_pump"]}"]')).to_contain_text("Heat pump: planned temperature")
    expect(element.locator(f'.home-series[data-series="heat_band"][data-heat-pump="{heat["heat_pump"]}"]')).to_contain_text("Heat pump: comfort band")


def local_midnight(start: str, zone: ZoneInfo) -> bool:
    local = datetime.fromisoformat(start).astimezone(zone)
    return (local.hour, local.minute) == (0, 0)


def ms(start: str) -> int:
    return round(datetime.fromisoformat(start).timestamp() * 1000)


def test_the_time_axis_marks_each_local_midnight(dashboard: Page) -> None:
    """A day marker at each local midnight (the home's zone) in the chart's time range, one per price slot starting
    then; the home plan's slot at local midnight has its marker at the x where the chart draws that slot's start,
    labelled with the day ("Thu, Dec 3", en-US)."""
    element = schedule_card(dashboard)
    home, _ = read_home(dashboard, element)
    zone = ZoneInfo(dashboard.evaluate(f"() => {HASS}.config.time_zone"))
    prices = dashboard.evaluate(f"() => {HASS}.callWS({{type: 'agentic_hems/schedule'}})")["prices"]
    low, high = element.evaluate("el => [el._chart.scales.x.min, el._chart.scales.x.max]")
    wanted = [ms(p["start"]) for p in prices if local_midnight(p["start"], zone) and low <= ms(p["start"]) < high]
    markers = element.locator(".day-marker")
    assert [ms(t) for t in markers.evaluate_all("els => els.map(e => e.dataset.time)")] == wanted, (wanted, low, high)
    starts = [ms(s["start"]) for s in home["slots"] if local_midnight(s["start"], zone)]
    assert starts, "the home plan spans no local midnight (the demo plans today and tomorrow)"
    for start in starts:
        marker = markers.nth(wanted.index(start))
        box = marker.bounding_box()
        x = element.evaluate("(el, ms) => el._chart.canvas.getBoundingClientRect().left"
                             " + el._chart.scales.x.getPixelForValue(ms)", start)
        assert box is not None and abs(box["x"] - x) < 1, (start, box, x)
        day = datetime.fromtimestamp(start / 1000, UTC).astimezone(zone)
        expect(marker.locator(".day-label")).to_have_text(f"{day:%a}, {day:%b} {day.day}")


def assert_axes_clear(axes: dict[str, Any], width: str) -> None:
    """Four panels stacked top to bottom, price, kW, % and °C, each axis on the left (none on the right) with its
    unit beside its labels; each lower panel's top label at least a label's height below the panel above, so no two
    labels overlap."""
    assert [axes[k]["title"] for k in PANELS] == ["EUR/kWh", "kW", "%", "°C"], (width, axes)
    assert [label for label, _ in axes["soc"]["ticks"]] == ["0", "50", "100"], (width, axes["soc"]["ticks"])
    for upper, lower in zip(PANELS, PANELS[1:]):
        assert axes[upper]["bottom"] == axes[lower]["top"], (width, upper, lower, axes)
        assert (axes[upper]["left"], axes[upper]["right"]) == (axes[lower]["left"], axes[lower]["right"]), (width, axes)
        assert axes[lower]["ticks"], (width, lower)
        highest = min(y for _, y in axes[lower]["ticks"])
        assert highest - axes[lower]["top"] >= LABEL_PX, (width, lower, highest, axes[lower]["top"])
    assert axes["y"]["left"] < 5, (width, axes["y"])  # on the left edge: no axis on the right
    for key, axis in axes.items():  # the title beside the labels, not on them
        need = axis["widest"] + AXIS_EXTRA_PX
        assert axis["right"] - axis["left"] >= need - 0.5, (width, key, axis, need)


def assert_time_labels_clear(element: Locator, hass_zone: ZoneInfo, width: str) -> None:
    """Time labels at most 12 h apart, evenly, one at each local midnight in the range, and no two overlapping."""
    x = element.evaluate(X_TICKS)
    values = [value for value, _ in x["ticks"]]
    pixels = [pixel for _, pixel in x["ticks"]]
    assert len(values) >= 4, (width, x)
    steps = {round((b - a) / 3_600_000) for a, b in zip(values, values[1:])}
    assert len(steps) <= 2 and max(steps) <= 12, (width, steps)  # a DST day may make one step an hour longer
    low, high = element.evaluate("el => [el._chart.scales.x.min, el._chart.scales.x.max]")
    hour = 3_600_000
    midnights = [ms for ms in range(int(low // hour) * hour, int(high), hour)
                 if low <= ms <= high and local_midnight(datetime.fromtimestamp(ms / 1000, UTC).isoformat(), hass_zone)]
    assert midnights and set(midnights) <= set(values), (width, midnights, values)
    gaps = [b - a for a, b in zip(pixels, pixels[1:])]
    assert min(gaps) >= x["width"] + 2, (width, min(gaps), x["width"])


def assert_tooltip_inside(dashboard: Page, element: Locator, width: str, shot: Path) -> None:
    """The tooltip at the chart's right edge and its left part after now, with every series' line, stays inside the canvas (``shot``:
    a screenshot with the right edge's tooltip)."""
    canvas = element.locator("canvas.price-chart")
    box = canvas.bounding_box()
    assert box is not None, width
    # The plan starts now: the left point is the later of 35 % across and just after now (past slots show the price).
    now_x = element.evaluate("el => el._chart.scales.x.getPixelForValue(Date.now())") / box["width"]
    for fraction in (0.93, max(0.35, now_x + 0.05)):
        canvas.hover(position={"x": box["width"] * fraction, "y": box["height"] * 0.5}, force=True)
        dashboard.wait_for_timeout(200)
        tip = element.evaluate("el => { const t = el._chart.tooltip; return {x: t.x, y: t.y, width: t.width,"
                               " height: t.height, lines: (t.body || []).length, opacity: t.opacity,"
                               " text: (t.body || []).map(b => b.lines.join(' ')), title: t.title,"
                               " canvas: [el._chart.width, el._chart.height]}; }")
        assert tip["opacity"] > 0 and tip["lines"] >= 6, (width, fraction, tip["text"], tip["title"])  # price, 3 kW, SoC, heat pump
        assert 0 <= tip["x"] and tip["x"] + tip["width"] <= tip["canvas"][0], (width, fraction, tip)
        assert 0 <= tip["y"] and tip["y"] + tip["height"] <= tip["canvas"][1], (width, fraction, tip)
        if fraction > 0.5:
            element.screenshot(path=str(shot), animations="disabled")
    dashboard.mouse.move(0, 0)


def test_home_plan_screenshots(dashboard: Page, artifacts: Path) -> None:
    """At 1280 and 390 px: nothing sticks out of the card, every axis keeps its unit and its labels clear of the
    others (the % axis reads 0, 50, 100), the time labels are a few hours apart and clear of each other, and the
    tooltip stays inside the chart."""
    element = schedule_card(dashboard)
    try:
        for width, pixels in WIDTHS.items():
            dashboard.set_viewport_size({"width": pixels, "height": 1800})
            element.scroll_into_view_if_needed()
            dashboard.wait_for_timeout(300)  # the chart redraws on the next update after the resize
            path = artifacts / f"schedule-card-home-{width}.png"
            element.screenshot(path=str(path), animations="disabled")
            assert path.stat().st_size > 1000
            overflow = element.evaluate("el => { const c = el.shadowRoot.querySelector('.ahems-card');"
                                        " return c.scrollWidth - c.clientWidth; }")
            assert overflow <= 0, (width, overflow)
            assert_axes_clear(read_axes(dashboard, element), width)
            assert_time_labels_clear(element, ZoneInfo(dashboard.evaluate(f"() => {HASS}.config.time_zone")), width)
            assert_tooltip_inside(dashboard, element, width, artifacts / f"schedule-card-home-{width}-tooltip.png")
            canvas = element.locator("canvas.price-chart").bounding_box() or {"x": 0.0, "width": -1.0}  # none: fails below
            labels = element.locator(".day-label").all()
            assert labels, width
            for label in labels:  # each day's name within the chart
                box = label.bounding_box()
                assert box is not None and (
                    canvas["x"] <= box["x"] < box["x"] + box["width"] <= canvas["x"] + canvas["width"]), (width, box, canvas)
    finally:
        dashboard.set_viewport_size({"width": 1400, "height": 1800})


def test_no_console_errors_with_the_home_plan(dashboard: Page) -> None:
    """Drawing the home plan logged no error in the page's console."""
    assert console_errors(CONSOLE) == [], "\n".join(CONSOLE)
