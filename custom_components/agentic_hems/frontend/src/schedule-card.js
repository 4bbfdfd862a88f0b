// agentic-hems-schedule-card: the price curve (15-minute steps, today and tomorrow) with each
// appliance's planned slots as blocks on the same time axis, a now-marker, cost and savings. It follows
// agentic_hems/subscribe_schedule, so a changed plan, new prices, a gate decision or a run show at once.
// Doubtful prices are drawn hatched and grey, unknown ones as gaps, each with a legend line.
import { LitElement, html, css, nothing } from "lit";
import { Chart } from "./chart.js";
import {
  t, LiveSubscription, cardShell, sharedStyles, cssVar, PALETTE, registerCard, makeEditor, hassMatters,
  fmtTime, fmtDayTime, fmtSpan, fmtMoney, fmtNumber, localParts, dateFormatter, toMs, uses12h,
  CARD_PADDING_PX, headerPx, cardSize, gridOptions,
} from "./common.js";

const TAG = "agentic-hems-schedule-card";
const KNOWN = 0;
const DOUBTFUL = 1;
// px of the card's parts, for its size (the chart's two heights are .chart-wrap's in the styles; gaps: the margins
// above the tracks and the plans)
const HEIGHTS = {
  chart: 180, homeChart: 360, gaps: 12, track: 30, legendLine: 18, homeLegend: 42, homeSummary: 95, plan: 56, empty: 44,
};

/**
 * Chart points of the slots that ``keep`` selects, as steps: each slot's price from its start, and where the next
 * slot is not kept, a point at its end and a null, so that the line and fill stop there (a gap).
 */
export function stepPoints(prices, keep) {
  const points = [];
  prices.forEach((p, i) => {
    if (!keep(p)) return;
    points.push({ x: p._s, y: p._price });
    const next = prices[i + 1];
    if (!next || !keep(next) || next._s !== p._e) points.push({ x: p._e, y: p._price }, { x: p._e, y: null });
  });
  return points;
}

/** The [start, end] (ms) of each run of contiguous slots that ``keep`` selects. */
export function spansOf(prices, keep) {
  const spans = [];
  for (const p of prices) {
    if (!keep(p)) continue;
    const last = spans[spans.length - 1];
    if (last && last[1] === p._s) last[1] = p._e;
    else spans.push([p._s, p._e]);
  }
  return spans;
}

/** The whole-home plan's series (PV, house load, grid flow, battery SoC), each with its colour and axis. */
export const HOME_SERIES = [
  { key: "pv", label: "home_pv", color: "#ffb300", axis: "kw", value: (s) => s.pv_kw },
  { key: "load", label: "home_load", color: "#6d4c41", axis: "kw", value: (s) => s.load_kw },
  { key: "grid", label: "home_grid", color: "#8e24aa", axis: "kw", value: (s) => s.import_kw - s.export_kw },
  { key: "soc", label: "home_soc", color: "#2e7d32", axis: "soc", value: (s) => s.soc_pct },
];

/**
 * Chart points of one home series: a step from each slot's start to the next (the last slot ends a slot length
 * later); SoC is a level at each slot's start, so it is drawn as a line through those points.
 */
export function homePoints(slots, series) {
  const starts = slots.map((s) => toMs(s.start));
  const points = [];
  slots.forEach((s, i) => {
    const y = series.value(s);
    points.push({ x: starts[i], y: Number.isFinite(y) ? y : null });
  });
  const n = starts.length;
  if (n && series.axis === "kw") {
    const step = n > 1 ? starts[n - 1] - starts[n - 2] : 900000;
    points.push({ x: starts[n - 1] + step, y: points[n - 1].y });
  }
  return points.filter((p) => Number.isFinite(p.x));
}

/** A heat pump's colours: its planned temperature and its comfort band. */
export const HEAT_COLORS = { temp: "#e53935", band: "rgba(229,57,53,0.12)" };

/**
 * Chart datasets of the heat pumps on the ``temp`` axis (°C): per heat pump its comfort band (the area between the
 * slots' low and high edges, stepped) and its planned temperature (a line through each slot's end).
 */
export function heatSets(heatPumps, label) {
  const sets = [];
  for (const hp of heatPumps) {
    const slots = Array.isArray(hp.slots) ? hp.slots : [];
    if (!slots.length) continue;
    const starts = slots.map((s) => toMs(s.start));
    const step = starts.length > 1 ? starts[1] - starts[0] : 900000;
    const edge = (key) => {
      const points = slots.map((s, i) => ({ x: starts[i], y: Number.isFinite(s[key]) ? s[key] : null }));
      points.push({ x: starts[starts.length - 1] + step, y: points[points.length - 1].y });
      return points;
    };
    const base = { yAxisID: "temp", pointRadius: 0, pointHitRadius: 4, heat: hp.heat_pump };
    sets.push({ ...base, label: label("heat_band", hp.name), data: edge("low_c"), stepped: "after",
      borderColor: HEAT_COLORS.band, borderWidth: 0, fill: false, band: "low" });
    sets.push({ ...base, label: label("heat_band", hp.name), data: edge("high_c"), stepped: "after",
      borderColor: HEAT_COLORS.band, borderWidth: 0, backgroundColor: HEAT_COLORS.band, fill: "-1", band: "high" });
    sets.push({ ...base, label: label("heat_temp", hp.name), borderColor: HEAT_COLORS.temp, borderWidth: 1.5,
      fill: false, data: slots.map((s, i) => ({ x: starts[i] + step, y: Number.isFinite(s.temp_c) ? s.temp_c : null })) });
  }
  return sets;
}

// With a home plan the chart stacks panels on one time axis, each with its own axis and unit on the left (no axis on
// the right, so nothing crowds a narrow card): prices on top, then power (kW), the batteries' charge (%) and, with a
// heat pump, its temperature (°C). ``weight`` orders them (heavier on top), ``stackWeight`` shares out the height.
export const PANELS = { y: { weight: 4, height: 3 }, kw: { weight: 3, height: 3 }, soc: { weight: 2, height: 2 },
  temp: { weight: 1, height: 2 } };
const HEADROOM = 0.15; // a lower panel's top ticks are left out so their labels stay clear of the panel above
const AXIS_FONT = { size: 11 };

/**
 * Let the stacked axes be as wide as a quarter of the chart: Chart.js caps each vertical axis at width / 2 / their
 * count, as if all of them stood side by side, which squeezes the unit title onto the labels.
 */
function roomy(scale) {
  scale.maxWidth = Math.max(scale.maxWidth, scale.chart.width / 4);
}

/** A panel's axis under the price panel: on the left, its unit as title and no tick in its top HEADROOM. */
function panelAxis(key, unit, color, extra) {
  return {
    position: "left", stack: "home", weight: PANELS[key].weight, stackWeight: PANELS[key].height, beforeFit: roomy,
    title: { display: true, text: unit, color, font: AXIS_FONT, padding: 2 },
    afterBuildTicks: (scale) => {
      const top = scale.max - HEADROOM * (scale.max - scale.min);
      scale.ticks = scale.ticks.filter((tk) => tk.value <= top);
    },
    ...extra,
  };
}

/**
 * The hours between two time-axis labels: the smallest of 1, 2, 3, 4, 6 and 12 whose labels (``labelPx`` wide each)
 * fit side by side on ``widthPx`` for a range of ``spanH`` hours, so that every label shows and none is skipped.
 */
export function tickStepH(widthPx, spanH, labelPx) {
  const pxPerHour = widthPx / Math.max(spanH, 1);
  return [1, 2, 3, 4, 6, 12].find((step) => step * pxPerHour >= labelPx) || 24;
}

const QUARTER_MS = 900000;
const DAY_LABEL_PX = 14;

/**
 * The local midnights (ms) from ``range.min`` to before ``range.max``: the quarter hours at 00:00 in the card's time
 * zone (every zone's offset is a whole number of quarter hours, so a midnight is always one).
 */
export function midnights(hass, range) {
  const found = [];
  for (let x = Math.ceil(range.min / QUARTER_MS) * QUARTER_MS; x < range.max; x += QUARTER_MS) {
    const lp = localParts(hass, x);
    if (lp.hour === 0 && lp.minute === 0) {
      found.push(x);
      x += 20 * 3600000; // the next midnight is at least 23 hours on
    }
  }
  return found;
}

/** A diagonal hatch to shade doubtful prices with. */
function hatch(color) {
  const tile = document.createElement("canvas");
  tile.width = 8;
  tile.height = 8;
  const ctx = tile.getContext("2d");
  ctx.strokeStyle = color;
  ctx.lineWidth = 1.5;
  ctx.beginPath();
  ctx.moveTo(0, 8);
  ctx.lineTo(8, 0);
  ctx.stroke();
  return ctx.createPattern(tile, "repeat");
}

/** Contiguous slots (one's end is the next's start) become one block. */
export function blocksOf(plan) {
  const slots = (plan.slots || [])
    .filter((s) => Number.isFinite(toMs(s.start)) && Number.isFinite(toMs(s.end)))
    .slice()
    .sort((a, b) => toMs(a.start) - toMs(b.start));
  const blocks = [];
  for (const s of slots) {
    const last = blocks[blocks.length - 1];
    if (last && toMs(last.end) === toMs(s.start)) {
      last.end = s.end;
      last.slots.push(s);
    } else {
      blocks.push({ start: s.start, end: s.end, slots: [s] });
    }
  }
  return blocks;
}

/** Energy (kWh) and cost of a block from the slots' power and the price curve. */
function blockCost(block, prices) {
  let energy = 0;
  let cost = 0;
  let priced = true;
  for (const s of block.slots) {
    const a = toMs(s.start);
    const b = toMs(s.end);
    const kw = Number(s.power_kw) || 0;
    energy += (kw * (b - a)) / 3600000;
    // Sum over the price intervals the slot overlaps (an unknown price leaves the slot uncovered).
    let covered = 0;
    for (const p of prices) {
      if (p._price === null) continue;
      const lo = Math.max(a, p._s);
      const hi = Math.min(b, p._e);
      if (hi > lo) {
        cost += (kw * (hi - lo) * p._price) / 3600000;
        covered += hi - lo;
      }
    }
    if (covered < b - a) priced = false;
  }
  return { energy, cost: priced ? cost : null };
}


/** The phase a limit leaves no plan on, its net kW and limit, and the devices pushing it there, in words. */
function phaseOverText(hass, over) {
  const name = (d) => (d.name === "base" || d.name === "pv" ? t(hass, `home_device_${d.name}`) : d.name);
  const devices = over.devices.map((d) => `${name(d)} ${fmtNumber(hass, d.kw, 2)} kW`).join(", ");
  return t(hass, "home_reason_phase_named", {
    phase: over.phase, power: fmtNumber(hass, Math.abs(over.power_kw), 2), limit: fmtNumber(hass, over.limit_kw, 2),
    devices,
  });
}

/** Why there is no home plan, in words: each of the comma-separated reason codes, or the code itself; the phase
 * reason names the phase and its devices when the plan says which. */
function homeReason(hass, home) {
  return String(home.reason || "?")
    .split(",")
    .map((code) => {
      if (code === "phase" && home.phase_over) return phaseOverText(hass, home.phase_over);
      const key = `home_reason_${code}`;
      const text = t(hass, key);
      return text === key ? code : text;
    })
    .join("; ");
}

class AgenticHemsScheduleCard extends LitElement {
  static get properties() {
    return {
      hass: { attribute: false },
      _config: { state: true },
      _data: { state: true },
      _error: { state: true },
      _area: { state: true },
      _now: { state: true },
      _selected: { state: true },
    };
  }

  static getStubConfig() {
    return {};
  }

  static getConfigElement() {
    return document.createElement(`${TAG}-editor`);
  }

  setConfig(config) {
    if (!config || typeof config !== "object") throw new Error("Invalid configuration");
    const entryChanged = this._config && this._config.entry_id !== config.entry_id;
    this._config = { ...config };
    if (entryChanged && this._live) {
      this._live.dispose();
      this._data = undefined;
      this._live.start();
    }
  }

  getCardSize() {
    return cardSize(this._heightPx());
  }

  getGridOptions() {
    return gridOptions(CARD_PADDING_PX + headerPx(this._config) + HEIGHTS.chart + HEIGHTS.gaps + HEIGHTS.empty);
  }

  /**
   * The card's height in px (see cardSize in common.js): the chart (taller with a home plan), a track per appliance
   * with slots, the legends, the home plan's summary and a summary per plan (or "no plans").
   */
  _heightPx() {
    const data = this._data;
    const plans = data && Array.isArray(data.plans) ? data.plans : [];
    const home = this._homeSlots().length > 0;
    const tracks = plans.filter((p) => p.feasible !== false && blocksOf(p).length).length;
    const prices = this._prices();
    const legends = [DOUBTFUL, 2].filter((trust) => prices.some((p) => p._trust === trust)).length;
    let px = CARD_PADDING_PX + headerPx(this._config) + (home ? HEIGHTS.homeChart : HEIGHTS.chart);
    px += HEIGHTS.gaps + HEIGHTS.track * tracks + HEIGHTS.legendLine * legends;
    if (home) {
      const heat = this._heatPumps().filter((hp) => (hp.slots || []).length).length;
      px += HEIGHTS.homeLegend * (1 + heat) + HEIGHTS.homeSummary;
    } else if (data && data.home) {
      px += HEIGHTS.legendLine; // why there is no home plan
    }
    const doubtful = plans.filter((p) => p.reason === "doubtful_prices").length;
    return px + (plans.length ? HEIGHTS.plan * plans.length + HEIGHTS.legendLine * doubtful : HEIGHTS.empty);
  }

  connectedCallback() {
    super.connectedCallback();
    this._clock = setInterval(() => this._tick(), 30000); // moves the now-marker; the data itself is pushed
    if (!this._live) {
      this._live = new LiveSubscription(this, "agentic_hems/subscribe_schedule", (msg) => this._onMessage(msg),
        (err) => { this._error = err; });
    }
    this._live.start();
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    if (this._live) this._live.dispose();
    clearInterval(this._clock);
    if (this._chart) {
      this._chart.destroy();
      this._chart = undefined;
    }
  }

  _tick() {
    this._now = Date.now() + (this._skew || 0);
  }

  _onMessage(msg) {
    if (!msg || msg.type !== "schedule") return;
    const serverNow = toMs(msg.now);
    this._skew = Number.isFinite(serverNow) ? serverNow - Date.now() : 0;
    this._tick();
    this._data = msg;
    this._error = undefined;
  }

  shouldUpdate(changed) {
    return hassMatters(changed, this.hass);
  }

  willUpdate(changed) {
    if (changed.has("hass") && this._live && !this._live.active && !this._error) this._live.start();
  }

  /**
   * Prices with ms start/end, ``_price`` (null where unknown) and ``_trust`` (0 known, 1 doubtful, 2 unknown),
   * restricted to today when show_tomorrow is false.
   */
  _prices() {
    const raw = (this._data && Array.isArray(this._data.prices) ? this._data.prices : [])
      .map((p) => {
        const price = p.price === null || p.price === undefined ? null : Number(p.price);
        const known = price !== null && Number.isFinite(price);
        return { ...p, _s: toMs(p.start), _e: toMs(p.end), _price: known ? price : null,
          _trust: known ? Number(p.trust) || KNOWN : 2 };
      })
      .filter((p) => Number.isFinite(p._s) && Number.isFinite(p._e))
      .sort((a, b) => a._s - b._s);
    if (this._config && this._config.show_tomorrow === false && raw.length) {
      const today = localParts(this.hass, this._now || Date.now()).date;
      const todays = raw.filter((p) => localParts(this.hass, p._s).date === today);
      if (todays.length) return todays;
    }
    return raw;
  }

  /** The time axis range: the price curve, widened to hold every planned slot. */
  _range(prices, plans) {
    let min = Infinity;
    let max = -Infinity;
    for (const p of prices) {
      min = Math.min(min, p._s);
      max = Math.max(max, p._e);
    }
    if (!(this._config && this._config.show_tomorrow === false && prices.length)) {
      for (const plan of plans) {
        for (const s of plan.slots || []) {
          const a = toMs(s.start);
          const b = toMs(s.end);
          if (Number.isFinite(a)) min = Math.min(min, a);
          if (Number.isFinite(b)) max = Math.max(max, b);
        }
      }
    }
    if (!Number.isFinite(min) || !Number.isFinite(max) || max <= min) return null;
    return { min, max };
  }

  /** Candidate axis ticks at whole local hours (``hour`` 0-23), taken from the slots' own start times. */
  _ticks(prices, range) {
    const ticks = [];
    const times = prices.length ? prices.map((p) => p._s) : [];
    if (prices.length) times.push(prices[prices.length - 1]._e);
    if (!times.length) {
      // No prices: whole UTC hours across the range (still labelled in local time).
      for (let x = Math.ceil(range.min / 3600000) * 3600000; x <= range.max; x += 3600000) times.push(x);
    }
    for (const x of times) {
      if (x < range.min || x > range.max) continue;
      const lp = localParts(this.hass, x);
      if (lp.minute === 0) ticks.push({ value: x, hour: lp.hour, midnight: lp.hour === 0 });
    }
    return ticks;
  }

  _onArea(left, width) {
    const a = this._area;
    if (!a || Math.abs(a.left - left) > 0.5 || Math.abs(a.width - width) > 0.5) this._area = { left, width };
  }

  _chartConfig(prices, range, ticks) {
    const currency = (this._data && this._data.currency) || "";
    const text = cssVar(this, "--secondary-text-color", "#727272");
    const grid = cssVar(this, "--divider-color", "rgba(0,0,0,0.12)");
    const primary = cssVar(this, "--primary-color", "#03a9f4");
    const hass = this.hass;
    const card = this;
    const known = stepPoints(prices, (p) => p._trust === KNOWN);
    const doubtful = stepPoints(prices, (p) => p._trust === DOUBTFUL);
    const shade = hatch(text);
    this._doubtfulSpans = spansOf(prices, (p) => p._trust === DOUBTFUL);
    const spans = this._doubtfulSpans;
    const negative = prices.some((p) => p._price !== null && p._price < 0);
    // Short time labels: "6 PM" for 12-hour readers, "18:00" otherwise.
    const labelFmt = dateFormatter(hass, uses12h(hass) ? { hour: "numeric" } : { hour: "2-digit", minute: "2-digit" });
    const dayFmt = dateFormatter(hass, { weekday: "short" });
    const slots = this._homeSlots();
    const homeSets = slots.length ? HOME_SERIES.map((series) => ({
      label: t(hass, series.label),
      data: homePoints(slots, series),
      yAxisID: series.axis,
      stepped: series.axis === "kw" ? "after" : false,
      borderColor: series.color,
      borderWidth: 1.5,
      borderDash: series.key === "load" ? [5, 3] : [],
      pointRadius: 0,
      pointHitRadius: 4,
      fill: false,
    })) : [];
    const heat = slots.length ? heatSets(this._heatPumps(), (key, name) => `${name}: ${t(hass, key)}`) : [];
    return {
      type: "line",
      data: {
        datasets: [{
          label: t(hass, "price"),
          data: known,
          stepped: "before",
          borderColor: primary,
          borderWidth: 2,
          pointRadius: 0,
          pointHitRadius: 4,
          fill: { target: "origin", above: "rgba(3,169,244,0.12)", below: "rgba(76,175,80,0.25)" },
        }, {
          label: t(hass, "price"),
          data: doubtful,
          stepped: "before",
          borderColor: text,
          borderDash: [4, 3],
          borderWidth: 2,
          pointRadius: 0,
          pointHitRadius: 4,
          fill: false,
        }, ...homeSets, ...heat],
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        layout: { padding: { top: DAY_LABEL_PX } }, // a strip above the plot for the day markers' labels
        animation: false,
        parsing: false,
        normalized: true,
        interaction: { mode: "nearest", axis: "x", intersect: false },
        plugins: {
          legend: { display: false },
          tooltip: {
            // Compact, so that all lines fit inside the canvas (and so inside the card) even on a phone.
            bodyFont: { size: 11 },
            titleFont: { size: 11 },
            padding: 6,
            boxWidth: 8,
            boxHeight: 8,
            // One line per series: a comfort band's low edge is said with its high edge; no line for a gap.
            filter: (item) => item.parsed.y !== null && item.dataset.band !== "low",
            callbacks: {
              title: (items) => {
                if (!items.length) return "";
                const x = items[0].parsed.x;
                const p = prices.find((q) => q._s <= x && x < q._e);
                return p ? fmtSpan(hass, p._s, p._e) : fmtDayTime(hass, x);
              },
              label: (item) => {
                const axis = item.dataset.yAxisID;
                const name = String(item.dataset.label).replace(/ \((kW|%|°C)\)$/, "");
                if (axis === "kw") return `${name}: ${fmtNumber(hass, item.parsed.y, 2)} kW`;
                if (axis === "soc") return `${name}: ${fmtNumber(hass, item.parsed.y, 0)} %`;
                if (axis === "temp" && item.dataset.band === "high") {
                  const low = item.chart.data.datasets[item.datasetIndex - 1].data[item.dataIndex];
                  const lowText = low && low.y !== null ? `${fmtNumber(hass, low.y, 0)}–` : "";
                  return `${name}: ${lowText}${fmtNumber(hass, item.parsed.y, 0)} °C`;
                }
                if (axis === "temp") return `${name}: ${fmtNumber(hass, item.parsed.y, 1)} °C`;
                return `${fmtMoney(hass, item.parsed.y, currency, 4)}/kWh`;
              },
            },
          },
        },
        scales: {
          x: {
            type: "linear",
            min: range.min,
            max: range.max,
            // Every few hours as the width allows, always at local midnight; none skipped, none overlapping.
            afterBuildTicks: (scale) => {
              const ctx = scale.ctx;
              ctx.save();
              ctx.font = `${AXIS_FONT.size}px ${Chart.defaults.font.family}`;
              const labelPx = 10 + Math.max(...[0, 10, 12, 22].map((h) => ctx.measureText(
                h === 0 ? dayFmt.format(Date.UTC(2000, 0, 5, 12)) : labelFmt.format(Date.UTC(2000, 0, 1, h))).width));
              ctx.restore();
              const step = tickStepH(scale.maxWidth || scale.chart.width, (range.max - range.min) / 3600000, labelPx);
              scale.ticks = ticks.filter((tk) => tk.hour % step === 0).map((tk) => ({ value: tk.value }));
            },
            ticks: {
              color: text,
              font: AXIS_FONT,
              maxRotation: 0,
              autoSkip: false,
              callback: (value) => {
                const lp = localParts(hass, value);
                return lp.hour === 0 && lp.minute === 0 ? dayFmt.format(value) : labelFmt.format(value);
              },
            },
            grid: {
              color: (ctx) => {
                const v = ctx.tick && ctx.tick.value;
                return ticks.some((tk) => tk.value === v && tk.midnight) ? text : grid;
              },
            },
          },
          y: {
            min: negative ? undefined : 0, // below zero only when a price is negative
            ...(slots.length ? { stack: "home", stackWeight: PANELS.y.height, weight: PANELS.y.weight, beforeFit: roomy }
              : {}),
            title: { display: !!currency, text: `${currency}/kWh`, color: text, font: AXIS_FONT, padding: 2 },
            ticks: { color: text, font: AXIS_FONT, maxTicksLimit: slots.length ? 4 : 6,
              callback: (v) => fmtNumber(hass, v, slots.length ? 2 : 3) },
            grid: {
              color: (ctx) => (ctx.tick && ctx.tick.value === 0 ? text : grid),
            },
          },
          ...(slots.length ? {
            kw: panelAxis("kw", "kW", text, {
              ticks: { color: text, font: AXIS_FONT, maxTicksLimit: 4, callback: (v) => fmtNumber(hass, v, 0) },
              grid: { color: (ctx) => (ctx.tick && ctx.tick.value === 0 ? text : grid) } }),
            // 0-100 % with room above 100 %: gridlines at 0, 50 and 100 %.
            soc: panelAxis("soc", "%", text, { min: 0, max: 125, ticks: { color: text, font: AXIS_FONT },
              afterBuildTicks: (scale) => { scale.ticks = [0, 50, 100].map((value) => ({ value })); },
              grid: { color: grid } }),
            // A heat pump's own panel; none without one.
            ...(heat.length ? { temp: panelAxis("temp", "°C", text, {
              ticks: { color: text, font: AXIS_FONT, maxTicksLimit: 3, callback: (v) => fmtNumber(hass, v, 0) },
              grid: { color: grid } }) } : {}),
          } : {}),
        },
      },
      plugins: [{
        // Doubtful slots: the whole height of their time span greyed and hatched (a day of zeros has no area).
        id: "ahemsDoubtful",
        beforeDatasetsDraw: (chart) => {
          const { ctx, chartArea: a, scales: { x } } = chart;
          ctx.save();
          ctx.globalAlpha = 0.35;
          ctx.fillStyle = shade;
          for (const [start, end] of spans) {
            const left = Math.max(a.left, x.getPixelForValue(start));
            const right = Math.min(a.right, x.getPixelForValue(end));
            if (right > left) ctx.fillRect(left, a.top, right - left, a.bottom - a.top);
          }
          ctx.restore();
        },
      }, {
        id: "ahemsArea",
        afterLayout: (chart) => {
          const a = chart.chartArea;
          if (a) card._onArea(a.left, a.right - a.left);
        },
      }],
    };
  }

  /** The whole-home plan's heat pumps (empty without any). */
  _heatPumps() {
    const home = this._data && this._data.home;
    return home && Array.isArray(home.heat_pumps) ? home.heat_pumps : [];
  }

  /** The whole-home plan's slots (empty without one). */
  _homeSlots() {
    const home = this._data && this._data.home;
    return home && Array.isArray(home.slots) ? home.slots : [];
  }

  updated() {
    const canvas = this.renderRoot && this.renderRoot.querySelector("canvas.price-chart");
    if (!canvas) {
      if (this._chart) {
        this._chart.destroy();
        this._chart = undefined;
      }
      return;
    }
    const prices = this._prices();
    const plans = (this._data && this._data.plans) || [];
    const range = this._range(prices, plans);
    if (!range) return;
    const key = JSON.stringify([
      prices.length && prices[0]._s, prices.length && prices[prices.length - 1]._e,
      prices.map((p) => [p._price, p._trust]),
      range, this.hass && this.hass.locale, this._data && this._data.currency,
      this._homeSlots(),
    ]);
    if (this._chart && this._chart.canvas === canvas && this._chartKey === key) return;
    this._chartKey = key;
    const config = this._chartConfig(prices, range, this._ticks(prices, range));
    if (this._chart && this._chart.canvas === canvas) {
      this._chart.data = config.data;
      this._chart.options = config.options;
      this._chart.update("none");
    } else {
      if (this._chart) this._chart.destroy();
      try {
        this._chart = new Chart(canvas, config);
      } catch (err) {
        this._error = `${t(this.hass, "err_chart")}: ${err && err.message}`;
      }
    }
  }

  _select(key) {
    this._selected = this._selected === key ? undefined : key;
  }

  _renderDetails(blocks) {
    if (!this._selected) return nothing;
    const b = blocks.find((x) => x.key === this._selected);
    if (!b) return nothing;
    const hass = this.hass;
    return html`<div class="block-details" data-appliance=${b.name} data-start=${b.start} data-end=${b.end}>
      <span class="swatch" style="background:${b.color}"></span>
      <strong class="details-name">${b.name}</strong>
      <span class="details-time">${fmtSpan(hass, b.start, b.end)}</span>
      <span class="details-cost">${t(hass, "cost")}: ${fmtMoney(hass, b.cost, b.currency, 2)}</span>
      ${b.energy ? html`<span class="details-energy">${fmtNumber(hass, b.energy, 2)} kWh</span>` : nothing}
      <button class="close" @click=${() => { this._selected = undefined; }} aria-label=${t(hass, "close")}>×</button>
    </div>`;
  }

  render() {
    if (!this._config) return nothing;
    const hass = this.hass;
    const title = this._config.title;
    if (this._error) return cardShell(title, html`<div class="error">${this._error}</div>`);
    if (!this._data) return cardShell(title, html`<div class="loading">${t(hass, "loading")}</div>`);

    const currency = this._data.currency || "";
    const prices = this._prices();
    const plans = Array.isArray(this._data.plans) ? this._data.plans : [];
    const range = this._range(prices, plans);
    const area = this._area;
    const span = range ? range.max - range.min : 1;
    const pct = (ms) => Math.min(100, Math.max(0, ((ms - (range ? range.min : 0)) / span) * 100));
    const trackStyle = area ? `margin-left:${area.left}px;width:${area.width}px` : "";

    const allBlocks = [];
    const rows = plans.map((plan, i) => {
      const name = plan.name || plan.appliance_id || `#${i + 1}`;
      const color = PALETTE[i % PALETTE.length];
      const blocks = plan.feasible === false ? [] : blocksOf(plan);
      const rowBlocks = blocks.map((b, j) => {
        const { energy, cost } = blockCost(b, prices);
        const entry = {
          ...b, key: `${i}:${j}`, name, color, energy, currency: plan.currency || currency,
          cost: blocks.length === 1 && plan.cost !== undefined && plan.cost !== null ? plan.cost : cost,
        };
        allBlocks.push(entry);
        return entry;
      });
      return { plan, name, color, blocks: rowBlocks };
    });

    const now = this._now || Date.now();
    const nowVisible = range && now >= range.min && now <= range.max;
    const at = (ms) => (area ? `${area.left + (pct(ms) / 100) * area.width}px` : `${pct(ms)}%`); // a marker's left
    const dayFmt = dateFormatter(hass, { weekday: "short", day: "numeric", month: "short" });

    const content = html`
      ${range ? html`
        <div class="timeline">
          <div class="chart-wrap ${this._homeSlots().length ? "home" : ""}"><canvas class="price-chart" role="img" aria-label=${t(hass, "price_chart")}></canvas></div>
          <div class="rows">
            ${rows.filter((r) => r.blocks.length).map((r) => html`
              <div class="row" data-appliance=${r.name}>
                <div class="row-label" style=${trackStyle}>${r.name}</div>
                <div class="track" style=${trackStyle}>
                  ${r.blocks.map((b) => html`<div class="block ${this._selected === b.key ? "selected" : ""}"
                    data-appliance=${b.name} data-start=${b.start} data-end=${b.end} data-slots=${b.slots.length}
                    role="button" tabindex="0"
                    title="${b.name}: ${fmtSpan(hass, b.start, b.end)}"
                    style="left:${pct(toMs(b.start))}%;width:${Math.max(0.3, pct(toMs(b.end)) - pct(toMs(b.start)))}%;background:${b.color}"
                    @click=${() => this._select(b.key)}
                    @keydown=${(e) => { if (e.key === "Enter" || e.key === " ") { e.preventDefault(); this._select(b.key); } }}
                  ></div>`)}
                </div>
              </div>`)}
          </div>
          ${midnights(hass, range).map((ms) => html`<div class="day-marker" data-time=${new Date(ms).toISOString()}
            style="left:${at(ms)}"><span class="day-label ${pct(ms) > 75 ? "end" : ""}">${dayFmt.format(ms)}</span></div>`)}
          <div class="now-marker" data-time=${new Date(now).toISOString()}
            style="left:${at(now)};${nowVisible ? "" : "display:none"}"
            title="${t(hass, "now")}: ${fmtTime(hass, now)}"></div>
        </div>
        ${this._renderHomeLegend()}
        ${this._renderLegend(prices)}` : html`<div class="empty">${t(hass, "no_prices")}</div>`}
      ${this._renderHome(currency)}
      ${this._renderDetails(allBlocks)}
      <div class="plans">
        ${plans.length ? rows.map((r) => this._renderSummary(r, currency)) : html`<div class="empty">${t(hass, "no_plans")}</div>`}
      </div>`;
    return cardShell(title, content);
  }

  /** The local days (short weekday names) of the slots that ``keep`` selects, in order. */
  _days(prices, keep) {
    const days = new Map();
    const fmt = dateFormatter(this.hass, { weekday: "short" });
    for (const p of prices) {
      if (keep(p)) days.set(localParts(this.hass, p._s).date, fmt.format(p._s));
    }
    return [...days.values()];
  }

  /** A line for doubtful prices (with the notes' reasons) and one for unknown prices, when there are any. */
  _renderLegend(prices) {
    const hass = this.hass;
    const doubtful = this._days(prices, (p) => p._trust === DOUBTFUL);
    const unknown = this._days(prices, (p) => p._trust !== KNOWN && p._trust !== DOUBTFUL);
    if (!doubtful.length && !unknown.length) return nothing;
    const notes = Array.isArray(this._data.price_notes) ? this._data.price_notes : [];
    const issues = [...new Set(notes.filter((n) => n.trust === "doubtful").map((n) => n.issue))];
    const why = issues.length
      ? issues.map((i) => t(hass, `why_${i}`) === `why_${i}` ? t(hass, "why_doubtful") : t(hass, `why_${i}`)).join(", ")
      : t(hass, "why_doubtful");
    return html`<div class="price-legend">
      ${doubtful.length ? html`<div class="legend-doubtful" data-days=${doubtful.join(",")}>
        <span class="legend-swatch hatched"></span>${t(hass, "doubtful_legend", { days: doubtful.join(", "), why })}</div>` : nothing}
      ${unknown.length ? html`<div class="legend-unknown" data-days=${unknown.join(",")}>
        <span class="legend-swatch gap"></span>${t(hass, "unknown_legend", { days: unknown.join(", ") })}</div>` : nothing}
    </div>`;
  }

  /** One swatch per home series, when there is a home plan. */
  _renderHomeLegend() {
    if (!this._homeSlots().length) return nothing;
    return html`<div class="home-legend">
      ${HOME_SERIES.map((s) => html`<span class="home-series" data-series=${s.key}>
        <span class="legend-line" style="border-color:${s.color}"></span>${t(this.hass, s.label)}</span>`)}
      ${this._heatPumps().filter((hp) => (hp.slots || []).length).map((hp) => html`
        <span class="home-series" data-series="heat_temp" data-heat-pump=${hp.heat_pump}>
          <span class="legend-line" style="border-color:${HEAT_COLORS.temp}"></span>${hp.name}: ${t(this.hass, "heat_temp")}</span>
        <span class="home-series" data-series="heat_band" data-heat-pump=${hp.heat_pump}>
          <span class="legend-box" style="background:${HEAT_COLORS.band}"></span>${hp.name}: ${t(this.hass, "heat_band")}</span>`)}
    </div>`;
  }

  /** The home plan's cost, baseline and saving (2 decimals), or why there is none. */
  _renderHome(currency) {
    const home = this._data.home;
    if (!home) return nothing;
    const hass = this.hass;
    const cur = home.currency || currency;
    if (!this._homeSlots().length) {
      return html`<div class="home-summary" data-feasible="false">
        <strong>${t(hass, "home_plan")}</strong>: ${t(hass, "home_none", { reason: homeReason(hass, home) })}</div>`;
    }
    const saving = Number(home.saving);
    return html`<div class="home-summary" data-feasible="true" data-cost=${home.cost} data-baseline=${home.baseline}
      data-saving=${home.saving}>
      <strong>${t(hass, "home_plan")}</strong>
      <span class="home-cost" title=${t(hass, "cost")}>${t(hass, "cost")} ${fmtMoney(hass, home.cost, cur, 2)}</span>
      ${this._renderGridCost(home.grid, cur)}
      <span class="home-baseline">${t(hass, "baseline")} ${fmtMoney(hass, home.baseline, cur, 2)}</span>
      <span class="home-saving ${saving > 0 ? "positive" : ""}">${t(hass, "saves")} ${fmtMoney(hass, saving, cur, 2)}</span>
    </div>`;
  }

  /** The parts of the home plan's cost the grid tariff adds (capacity charge, grid fees), each when non-zero. */
  _renderGridCost(grid, cur) {
    if (!grid) return nothing;
    const hass = this.hass;
    const capacity = Number(grid.capacity_cost) || 0;
    const fees = Number(grid.fee_cost) || 0;
    if (!capacity && !fees) return nothing;
    return html`<div class="home-grid">
      ${capacity ? html`<span class="home-capacity" data-amount=${capacity}>${t(hass, "home_capacity", {
        amount: fmtMoney(hass, capacity, cur, 2), peak: fmtNumber(hass, grid.peak_kw, 1),
        floor: fmtNumber(hass, grid.peak_so_far_kw, 1) })}</span>` : nothing}
      ${fees ? html`<span class="home-fees" data-amount=${fees}>${t(hass, "home_fees", {
        amount: fmtMoney(hass, fees, cur, 2) })}</span>` : nothing}
    </div>`;
  }

  _renderSummary(r, currency) {
    const hass = this.hass;
    const p = r.plan;
    const cur = p.currency || currency;
    const feasible = p.feasible !== false;
    const savings = Number(p.savings);
    const doubtful = p.reason === "doubtful_prices";
    return html`<div class="plan-summary ${feasible ? "" : "infeasible"}" data-appliance=${r.name}
      data-feasible=${feasible ? "true" : "false"} data-reason=${p.reason || ""}>
      <span class="swatch" style="background:${r.color}"></span>
      <span class="plan-name" title=${r.name}>${r.name}</span>
      <span class="plan-cost" title=${t(hass, "cost")}>${feasible ? fmtMoney(hass, p.cost, cur) : "–"}</span>
      <span class="plan-time">${feasible && p.start ? fmtSpan(hass, p.start, p.end) : t(hass, "not_feasible")}</span>
      <span class="plan-savings ${savings > 0 ? "positive" : ""}" title="${t(hass, "baseline")}: ${fmtMoney(hass, p.baseline_cost, cur)}">
        ${feasible && Number.isFinite(savings) ? html`${t(hass, "saves")} ${fmtMoney(hass, savings, cur)}` : ""}
      </span>
      ${doubtful ? html`<span class="plan-warning" title=${p.detail || ""}>⚠ ${t(hass, "plan_doubtful")}</span>` : nothing}
    </div>`;
  }

  static get styles() {
    return [sharedStyles, css`
      .timeline {
        position: relative;
      }
      .chart-wrap {
        position: relative;
        height: 180px;
      }
      .chart-wrap.home {
        height: 360px;
      }
      .rows {
        margin-top: 4px;
      }
      .row-label {
        font-size: 11px;
        line-height: 14px;
        color: var(--secondary-text-color, #727272);
        white-space: nowrap;
        overflow: hidden;
        text-overflow: ellipsis;
      }
      .track {
        position: relative;
        height: 16px;
        background: var(--secondary-background-color, rgba(0, 0, 0, 0.04));
        border-radius: 3px;
        margin-bottom: 4px;
      }
      .block {
        position: absolute;
        top: 0;
        bottom: 0;
        border-radius: 3px;
        cursor: pointer;
        opacity: 0.85;
        box-sizing: border-box;
      }
      .block:hover,
      .block:focus,
      .block.selected {
        opacity: 1;
        outline: 2px solid var(--primary-text-color, #212121);
        outline-offset: 0;
      }
      .now-marker {
        position: absolute;
        top: 0;
        bottom: 0;
        width: 0;
        border-left: 2px dashed var(--error-color, #db4437);
        pointer-events: none;
      }
      .day-marker {
        position: absolute;
        top: 0;
        bottom: 0;
        width: 0;
        border-left: 1px solid var(--secondary-text-color, #727272);
        z-index: 1; /* its label over the now-marker */
        pointer-events: none;
      }
      .day-label {
        position: absolute;
        top: 0;
        left: 3px;
        font-size: 11px;
        line-height: 14px;
        white-space: nowrap;
        padding: 0 2px;
        color: var(--primary-text-color, #212121);
        background: var(--card-background-color, #fff);
      }
      .day-label.end {
        left: auto;
        right: 3px;
      }
      .block-details {
        display: flex;
        flex-wrap: wrap;
        gap: 4px 12px;
        align-items: center;
        margin: 8px 0;
        padding: 6px 10px;
        border-radius: 6px;
        background: var(--secondary-background-color, rgba(0, 0, 0, 0.05));
      }
      .block-details .close {
        margin-left: auto;
        padding: 0 8px;
      }
      .plans {
        margin-top: 8px;
      }
      .plan-summary {
        display: grid;
        grid-template-columns: 12px minmax(0, 1fr) auto;
        gap: 2px 8px;
        align-items: center;
        padding: 4px 0;
        border-top: 1px solid var(--divider-color, #e0e0e0);
        font-size: 14px;
      }
      .plan-name {
        min-width: 0;
        font-weight: 500;
        overflow: hidden;
        text-overflow: ellipsis;
        white-space: nowrap;
      }
      .plan-time {
        grid-column: 2;
        white-space: nowrap;
        color: var(--secondary-text-color, #727272);
      }
      .plan-cost,
      .plan-savings {
        text-align: right;
        white-space: nowrap;
      }
      .plan-savings {
        font-size: 12px;
      }
      .plan-warning {
        grid-column: 2 / 4;
        font-size: 12px;
        color: var(--warning-color, #b57500);
      }
      .home-legend {
        display: flex;
        flex-wrap: wrap;
        gap: 2px 12px;
        font-size: 12px;
        color: var(--secondary-text-color, #727272);
        margin: 2px 0;
      }
      .legend-box {
        display: inline-block;
        width: 14px;
        height: 8px;
        margin-right: 4px;
        vertical-align: middle;
      }
      .legend-line {
        display: inline-block;
        width: 14px;
        margin-right: 4px;
        vertical-align: middle;
        border-top: 2px solid;
      }
      .home-summary {
        display: flex;
        flex-wrap: wrap;
        gap: 2px 12px;
        padding: 4px 0;
        font-size: 14px;
      }
      .home-grid {
        flex-basis: 100%;
        display: flex;
        flex-wrap: wrap;
        gap: 0 12px;
        font-size: 12px;
        color: var(--secondary-text-color, #727272);
      }
      .home-baseline {
        color: var(--secondary-text-color, #727272);
      }
      .home-saving.positive {
        color: var(--success-color, #43a047);
      }
      .price-legend {
        font-size: 12px;
        color: var(--secondary-text-color, #727272);
        margin: 2px 0 4px;
      }
      .legend-swatch {
        display: inline-block;
        width: 14px;
        height: 10px;
        margin-right: 6px;
        vertical-align: middle;
        border: 1px dashed var(--secondary-text-color, #727272);
      }
      .legend-swatch.hatched {
        background: repeating-linear-gradient(135deg, var(--secondary-text-color, #727272) 0 1.5px, transparent 1.5px 5px);
      }
      .legend-swatch.gap {
        border-style: dotted;
      }
      .plan-summary.infeasible .plan-time {
        color: var(--error-color, #db4437);
      }
      .plan-savings.positive {
        color: var(--success-color, #43a047);
      }
      .swatch {
        display: inline-block;
        width: 12px;
        height: 12px;
        border-radius: 3px;
      }
    `];
  }
}

class AgenticHemsScheduleCardEditor extends makeEditor([
  { name: "show_tomorrow", type: "boolean", default: true },
]) {}

customElements.get(`${TAG}-editor`) || customElements.define(`${TAG}-editor`, AgenticHemsScheduleCardEditor);
registerCard(TAG, AgenticHemsScheduleCard, "Agentic HEMS schedule",
  "Price curve for today and tomorrow with each appliance's planned slots, cost and savings.",
  // the prices and every appliance's plan entities
  ["electricity_price", "tomorrow_prices", "next_start", "planned_cost", "run_now", "ready_by", "automatic_planning"]);
