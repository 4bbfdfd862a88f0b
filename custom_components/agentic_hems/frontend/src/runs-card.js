// agentic-hems-runs-card: analytics over the assistant's runs (agentic_hems/runs): totals,
// a chart over time of iterations, tokens or cost per model, and a per-model table.
import { LitElement, html, css, nothing } from "lit";
import { Chart } from "./chart.js";
import {
  t, errorText, LiveSubscription, wsMessage, cardShell, sharedStyles, cssVar, PALETTE, registerCard, makeEditor, hassMatters,
  fmtNumber, fmtMoney, fmtDateTime, dateFormatter, toMs, CARD_PADDING_PX, headerPx, cardSize, gridOptions,
} from "./common.js";

const TAG = "agentic-hems-runs-card";
const REFRESH_MS = 60 * 1000;
const METRICS = ["iterations", "tokens", "cost"];
const FIELD = { iterations: "iterations", tokens: "total_tokens", cost: "total_cost" };
// px of the card's parts, for its size: the figures (two lines of them in a narrow card), the metric buttons, the
// chart (.chart-wrap's height), the table's head and margin and a model's row, "no runs"
const HEIGHTS = { stats: 135, metrics: 48, chart: 180, tableHead: 48, model: 49, empty: 36 };

/** Per-model aggregates of the runs (a refused run has no model). */
export function byModel(runs) {
  const groups = new Map();
  for (const r of runs) {
    const key = r.model || "";
    if (!groups.has(key)) groups.set(key, []);
    groups.get(key).push(r);
  }
  return [...groups.entries()].map(([model, list]) => {
    const n = list.length;
    const sum = (f) => list.reduce((a, r) => a + (Number(r[f]) || 0), 0);
    return {
      model,
      runs: list,
      count: n,
      success_rate: n ? (100 * list.filter((r) => r.success).length) / n : null,
      mean_iterations: n ? sum("iterations") / n : null,
      mean_tokens: n ? sum("total_tokens") / n : null,
      total_cost: sum("total_cost"),
    };
  }).sort((a, b) => b.count - a.count);
}

class AgenticHemsRunsCard extends LitElement {
  static get properties() {
    return {
      hass: { attribute: false },
      _config: { state: true },
      _data: { state: true },
      _error: { state: true },
      _metric: { state: true },
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
    this._metric = METRICS.includes(config.metric) ? config.metric : this._metric || "iterations";
    if (entryChanged) {
      this._data = undefined;
      this._fetch();
    }
  }

  getCardSize() {
    return cardSize(this._heightPx());
  }

  getGridOptions() {
    return gridOptions(CARD_PADDING_PX + headerPx(this._config) + HEIGHTS.stats + HEIGHTS.empty);
  }

  /**
   * The card's height in px (see cardSize in common.js): the five figures and, once there are runs, the metric
   * buttons, the chart and a table row per model (else "no runs").
   */
  _heightPx() {
    const px = CARD_PADDING_PX + headerPx(this._config) + HEIGHTS.stats;
    const runs = this._data ? this._runs() : [];
    if (!runs.length) return px + HEIGHTS.empty;
    return px + HEIGHTS.metrics + HEIGHTS.chart + HEIGHTS.tableHead + HEIGHTS.model * byModel(runs).length;
  }

  connectedCallback() {
    super.connectedCallback();
    this._timer = setInterval(() => this._fetch(), REFRESH_MS);
    if (this.hass && this._config) this._fetch();
    // The user's own runs end live (agentic_hems/subscribe_run): refetch then; others show at the next poll.
    if (!this._live) {
      this._live = new LiveSubscription(this, "agentic_hems/subscribe_run",
        (msg) => { if (msg && msg.type === "finished") this._fetch(); }, () => undefined);
    }
    this._live.start();
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    if (this._live) this._live.dispose();
    clearInterval(this._timer);
    if (this._chart) {
      this._chart.destroy();
      this._chart = undefined;
    }
  }

  shouldUpdate(changed) {
    return hassMatters(changed, this.hass);
  }

  willUpdate(changed) {
    if (changed.has("hass") && this._live && !this._live.active) this._live.start();
    if (changed.has("hass") && this.hass && this._config && this._data === undefined && !this._error) this._fetch();
  }

  async _fetch() {
    if (!this.hass || !this._config || this._loading) return;
    this._loading = true;
    try {
      const data = await this.hass.callWS(wsMessage("agentic_hems/runs", this._config));
      this._data = data || {};
      this._error = undefined;
    } catch (err) {
      this._error = errorText(this.hass, err);
    } finally {
      this._loading = false;
    }
  }

  _runs() {
    const runs = (this._data && Array.isArray(this._data.runs) ? this._data.runs : [])
      .filter((r) => Number.isFinite(toMs(r.timestamp)));
    return runs.slice().sort((a, b) => toMs(a.timestamp) - toMs(b.timestamp));
  }

  _modelLabel(model) {
    return model || t(this.hass, "no_model");
  }

  /**
   * The LLM cost in the card's ``currency`` (else Home Assistant's currency), in the user's number format: two
   * decimals, four for a cost below one cent (a few calls cost fractions of a cent).
   */
  _cost(value) {
    const cur = (this._config && this._config.currency) || (this.hass && this.hass.config && this.hass.config.currency);
    const v = Number(value);
    const digits = Number.isFinite(v) && v !== 0 && Math.abs(v) < 0.01 ? 4 : 2;
    return fmtMoney(this.hass, value, cur, digits);
  }

  updated() {
    const canvas = this.renderRoot && this.renderRoot.querySelector("canvas.runs-chart");
    if (!canvas) {
      if (this._chart) {
        this._chart.destroy();
        this._chart = undefined;
      }
      return;
    }
    const runs = this._runs();
    const key = JSON.stringify([runs.map((r) => r.run_id), this._metric, this.hass && this.hass.locale]);
    if (this._chart && this._chart.canvas === canvas && key === this._chartKey) return;
    this._chartKey = key;
    const config = this._chartConfig(runs);
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

  _chartConfig(runs) {
    const hass = this.hass;
    const metric = this._metric;
    const field = FIELD[metric];
    const text = cssVar(this, "--secondary-text-color", "#727272");
    const grid = cssVar(this, "--divider-color", "rgba(0,0,0,0.12)");
    const groups = byModel(runs);
    const fmt = dateFormatter(hass, { day: "2-digit", month: "2-digit", hour: "2-digit", minute: "2-digit" });
    const xs = runs.map((r) => toMs(r.timestamp));
    let min = Math.min(...xs);
    let max = Math.max(...xs);
    // A margin on both sides, so that the first and last points (radius 3) are not clipped at the axis.
    const margin = min === max ? 3600000 : (max - min) * 0.05;
    min -= margin;
    max += margin;
    return {
      type: "line",
      data: {
        datasets: groups.map((g, i) => ({
          label: this._modelLabel(g.model),
          data: g.runs.map((r) => ({ x: toMs(r.timestamp), y: Number(r[field]) || 0 })),
          borderColor: PALETTE[i % PALETTE.length],
          backgroundColor: PALETTE[i % PALETTE.length],
          borderWidth: 1.5,
          pointRadius: 3,
          tension: 0,
        })),
      },
      options: {
        responsive: true,
        maintainAspectRatio: false,
        animation: false,
        parsing: false,
        interaction: { mode: "nearest", intersect: false },
        plugins: {
          legend: { display: groups.length > 1, labels: { color: text, boxWidth: 12 } },
          tooltip: {
            callbacks: {
              title: (items) => (items.length ? fmtDateTime(hass, items[0].parsed.x) : ""),
              label: (item) => `${item.dataset.label}: ${metric === "cost" ? this._cost(item.parsed.y) : fmtNumber(hass, item.parsed.y)}`,
            },
          },
        },
        scales: {
          x: {
            type: "linear",
            min,
            max,
            ticks: { color: text, maxRotation: 0, autoSkipPadding: 12, callback: (v) => fmt.format(v) },
            grid: { color: grid },
          },
          y: {
            beginAtZero: true,
            title: { display: true, text: t(hass, `metric_${metric}`), color: text },
            ticks: {
              color: text,
              precision: metric === "cost" ? undefined : 0, // whole iterations and tokens: no repeated labels
              callback: (v) => (metric === "cost" ? this._cost(v) : fmtNumber(hass, v)),
            },
            grid: { color: grid },
          },
        },
      },
    };
  }

  _stat(name, value) {
    return html`<div class="stat" data-stat=${name}>
      <div class="stat-value">${value}</div>
      <div class="stat-label">${t(this.hass, `stat_${name}`)}</div>
    </div>`;
  }

  render() {
    if (!this._config) return nothing;
    const hass = this.hass;
    const title = this._config.title;
    if (this._error) return cardShell(title, html`<div class="error">${this._error}</div>`);
    if (!this._data) return cardShell(title, html`<div class="loading">${t(hass, "loading")}</div>`);
    const stats = this._data.stats || {};
    const runs = this._runs();
    const groups = byModel(runs);
    const pct = (v) => (v === null || v === undefined ? "–" : `${fmtNumber(hass, v, 1)} %`);
    return cardShell(title, html`
      <div class="stats">
        ${this._stat("runs", fmtNumber(hass, stats.runs ?? runs.length))}
        ${this._stat("success_rate", pct(stats.success_rate))}
        ${this._stat("mean_iterations", fmtNumber(hass, stats.mean_iterations, 2))}
        ${this._stat("mean_tokens", fmtNumber(hass, stats.mean_tokens, 0))}
        ${this._stat("total_cost", this._cost(stats.total_cost))}
      </div>
      ${runs.length ? html`
        <div class="metrics" role="group">
          ${METRICS.map((m) => html`<button class="metric ${m === this._metric ? "active primary" : ""}" data-metric=${m}
            aria-pressed=${m === this._metric ? "true" : "false"} @click=${() => { this._metric = m; }}>
            ${t(hass, `metric_${m}`)}</button>`)}
        </div>
        <div class="chart-wrap"><canvas class="runs-chart" role="img" aria-label=${t(hass, "runs_chart")}></canvas></div>
        <table class="models">
          <thead><tr>
            <th>${t(hass, "model")}</th><th>${t(hass, "stat_runs")}</th><th>${t(hass, "stat_success_rate")}</th>
            <th>${t(hass, "stat_mean_iterations")}</th><th>${t(hass, "stat_mean_tokens")}</th><th>${t(hass, "stat_total_cost")}</th>
          </tr></thead>
          <tbody>
            ${groups.map((g, i) => html`<tr class="model-row" data-model=${g.model}>
              <td class="model-name"><span class="swatch" style="background:${PALETTE[i % PALETTE.length]}"></span>${this._modelLabel(g.model)}</td>
              <td>${fmtNumber(hass, g.count)}</td>
              <td>${pct(g.success_rate)}</td>
              <td>${fmtNumber(hass, g.mean_iterations, 2)}</td>
              <td>${fmtNumber(hass, g.mean_tokens, 0)}</td>
              <td>${this._cost(g.total_cost)}</td>
            </tr>`)}
          </tbody>
        </table>` : html`<div class="empty">${t(hass, "no_runs")}</div>`}
    `);
  }

  static get styles() {
    return [sharedStyles, css`
      .stats {
        display: grid;
        grid-template-columns: repeat(auto-fit, minmax(90px, 1fr));
        gap: 8px;
        margin-bottom: 10px;
      }
      .stat {
        text-align: center;
        padding: 6px 4px;
        border-radius: 6px;
        background: var(--secondary-background-color, rgba(0, 0, 0, 0.04));
      }
      .stat-value {
        font-size: 18px;
        font-weight: 500;
      }
      .stat-label {
        font-size: 11px;
        color: var(--secondary-text-color, #727272);
      }
      .metrics {
        display: flex;
        gap: 6px;
        margin-bottom: 6px;
      }
      .chart-wrap {
        position: relative;
        height: 180px;
      }
      table.models {
        width: 100%;
        border-collapse: collapse;
        margin-top: 8px;
        font-size: 13px;
      }
      table.models th,
      table.models td {
        text-align: right;
        padding: 3px 4px;
        border-bottom: 1px solid var(--divider-color, #e0e0e0);
      }
      table.models th:first-child,
      table.models td:first-child {
        text-align: left;
      }
      table.models th {
        font-weight: 500;
        color: var(--secondary-text-color, #727272);
      }
      .swatch {
        display: inline-block;
        width: 10px;
        height: 10px;
        border-radius: 2px;
        margin-right: 6px;
      }
    `];
  }
}

class AgenticHemsRunsCardEditor extends makeEditor([
  { name: "metric", type: "select", options: METRICS, default: "iterations" },
  { name: "currency", type: "text" },
]) {}

customElements.get(`${TAG}-editor`) || customElements.define(`${TAG}-editor`, AgenticHemsRunsCardEditor);
registerCard(TAG, AgenticHemsRunsCard, "Agentic HEMS runs",
  "Analytics over the assistant's runs: totals, iterations, tokens and cost over time per model.",
  ["run_runs", "run_success_rate", "run_mean_iterations", "run_mean_tokens", "run_total_cost"]);
