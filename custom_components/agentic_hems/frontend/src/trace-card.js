// agentic-hems-trace-card: the latest gate decisions live from agentic_hems/subscribe_decisions,
// each as a row of the eight gates, plus pending confirmations with Confirm and Reject.
import { LitElement, html, css, nothing } from "lit";
import {
  DOMAIN, t, errorText, localizedErrorText, LiveSubscription, wsMessage, serviceData, cardShell, sharedStyles, registerCard, makeEditor, hassMatters, fmtDateTime,
} from "./common.js";

const TAG = "agentic-hems-trace-card";
export const GATES = [
  "input_guard", "schema", "device_resolved", "capability", "freshness", "policy", "dry_run", "execution",
];
const MAX_KEPT = 20;

class AgenticHemsTraceCard extends LitElement {
  static get properties() {
    return {
      hass: { attribute: false },
      _config: { state: true },
      _decisions: { state: true },
      _pending: { state: true },
      _isAdmin: { state: true },
      _error: { state: true },
      _busy: { state: true },
      _actionErrors: { state: true },
    };
  }

  static getStubConfig() {
    return {};
  }

  static getConfigElement() {
    return document.createElement(`${TAG}-editor`);
  }

  constructor() {
    super();
    this._busy = {};
    this._actionErrors = {};
  }

  setConfig(config) {
    if (!config || typeof config !== "object") throw new Error("Invalid configuration");
    const entryChanged = this._config && this._config.entry_id !== config.entry_id;
    this._config = { ...config };
    if (entryChanged && this._live) {
      this._live.dispose();
      this._decisions = undefined;
      this._live.start();
    }
  }

  getCardSize() {
    return 2 + Math.min(this._max(), (this._decisions || []).length) + (this._pending || []).length;
  }

  getGridOptions() {
    return { columns: 12, rows: 5, min_columns: 6, min_rows: 2 };
  }

  _max() {
    const n = Number(this._config && this._config.max_decisions);
    return Number.isFinite(n) && n > 0 ? Math.min(MAX_KEPT, Math.floor(n)) : 10;
  }

  connectedCallback() {
    super.connectedCallback();
    if (!this._live) {
      this._live = new LiveSubscription(this, "agentic_hems/subscribe_decisions", (msg) => this._onMessage(msg),
        (err) => { this._error = err; });
    }
    this._live.start();
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    if (this._live) this._live.dispose();
  }

  shouldUpdate(changed) {
    return hassMatters(changed, this.hass);
  }

  willUpdate(changed) {
    if (changed.has("hass") && this._live && !this._live.active && !this._error) this._live.start();
  }

  _onMessage(msg) {
    if (!msg || typeof msg !== "object") return;
    if (msg.type === "snapshot") {
      this._decisions = Array.isArray(msg.decisions) ? msg.decisions.slice(0, MAX_KEPT) : [];
      this._pending = Array.isArray(msg.pending) ? msg.pending.slice() : [];
      this._isAdmin = !!msg.is_admin;
      this._error = undefined;
    } else if (msg.type === "decision" && msg.decision) {
      const d = msg.decision;
      const rest = (this._decisions || []).filter((x) => x.trace_id !== d.trace_id);
      this._decisions = [d, ...rest].slice(0, MAX_KEPT);
      const pending = (this._pending || []).filter((id) => id !== d.trace_id);
      if (d.outcome === "pending_confirmation") pending.unshift(d.trace_id);
      this._pending = pending;
      if (this._actionErrors[d.trace_id]) {
        const errs = { ...this._actionErrors };
        delete errs[d.trace_id];
        this._actionErrors = errs;
      }
    }
  }

  async _act(traceId, service) {
    this._busy = { ...this._busy, [traceId]: service };
    const errs = { ...this._actionErrors };
    delete errs[traceId];
    this._actionErrors = errs;
    try {
      await this.hass.callService(DOMAIN, service, serviceData({ trace_id: traceId }, this._config), undefined, false);
    } catch (err) {
      this._actionErrors = { ...this._actionErrors, [traceId]: await localizedErrorText(this.hass, err) };
    } finally {
      const busy = { ...this._busy };
      delete busy[traceId];
      this._busy = busy;
    }
  }

  _renderGates(d) {
    const results = Array.isArray(d.gate_results) ? d.gate_results : [];
    const byGate = new Map(results.map((r) => [r.gate, r]));
    // The eight known gates in order, then any unknown gate the backend reported.
    const names = [...GATES, ...results.map((r) => r.gate).filter((g) => !GATES.includes(g))];
    return html`<div class="gates">
      ${names.map((g, i) => {
        const r = byGate.get(g);
        const state = r ? (r.passed ? "passed" : "failed") : (d.failed_gate === g ? "failed" : "skipped");
        const label = t(this.hass, `gate_${g}`);
        const title = r && r.reason ? `${label}: ${r.reason}` : `${label}: ${t(this.hass, `gate_state_${state}`)}`;
        return html`<span class="gate ${state}" data-gate=${g} title=${title}>
          <span class="gate-icon">${state === "passed" ? "✓" : state === "failed" ? "✕" : "·"}</span>
          <span class="gate-label">${i + 1}</span>
        </span>`;
      })}
    </div>`;
  }

  _renderDecision(d) {
    const hass = this.hass;
    const outcome = d.outcome || "unknown";
    return html`<div class="decision" data-trace-id=${d.trace_id} data-outcome=${outcome}>
      <div class="decision-head">
        <span class="outcome outcome-${outcome}">${t(hass, `outcome_${outcome}`) === `outcome_${outcome}` ? outcome : t(hass, `outcome_${outcome}`)}</span>
        <span class="entity">${d.entity_id || "–"}</span>
        <span class="time muted">${fmtDateTime(hass, d.timestamp, true)}</span>
      </div>
      ${this._config.show_gates === false ? nothing : this._renderGates(d)}
      <div class="decision-meta muted">
        ${d.source_agent ? html`<span class="agent">${d.source_agent}</span>` : nothing}
        ${d.failed_gate ? html`<span class="failed-gate">${t(hass, "failed_at")}: ${t(hass, `gate_${d.failed_gate}`)}</span>` : nothing}
      </div>
    </div>`;
  }

  _renderPending(id) {
    const hass = this.hass;
    const d = (this._decisions || []).find((x) => x.trace_id === id);
    const busy = this._busy[id];
    const err = this._actionErrors[id];
    return html`<div class="pending" data-trace-id=${id}>
      <div class="pending-head">
        <span class="entity">${d ? d.entity_id || "–" : id}</span>
        ${d && d.source_agent ? html`<span class="agent muted">${d.source_agent}</span>` : nothing}
        ${d ? html`<span class="time muted">${fmtDateTime(hass, d.timestamp)}</span>` : nothing}
        <span class="pending-actions">
          <button class="confirm primary" ?disabled=${!!busy} @click=${() => this._act(id, "confirm")}>
            ${busy === "confirm" ? "…" : t(hass, "confirm")}</button>
          <button class="reject" ?disabled=${!!busy} @click=${() => this._act(id, "reject")}>
            ${busy === "reject" ? "…" : t(hass, "reject")}</button>
        </span>
      </div>
      ${err ? html`<div class="error action-error">${err}</div>` : nothing}
    </div>`;
  }

  render() {
    if (!this._config) return nothing;
    const hass = this.hass;
    const title = this._config.title;
    if (this._error) return cardShell(title, html`<div class="error">${this._error}</div>`);
    if (this._decisions === undefined) return cardShell(title, html`<div class="loading">${t(hass, "loading")}</div>`);
    const pending = this._pending || [];
    const decisions = this._decisions.slice(0, this._max());
    return cardShell(title, html`
      ${pending.length ? html`<div class="pending-list">
        <div class="section-title">${t(hass, "pending_title")}
          ${this._isAdmin ? nothing : html`<span class="muted admin-hint">(${t(hass, "admins_only")})</span>`}</div>
        ${pending.map((id) => this._renderPending(id))}
      </div>` : nothing}
      <div class="decisions">
        ${decisions.length ? decisions.map((d) => this._renderDecision(d)) : html`<div class="empty">${t(hass, "no_decisions")}</div>`}
      </div>`);
  }

  static get styles() {
    return [sharedStyles, css`
      .section-title {
        font-weight: 500;
        margin-bottom: 4px;
      }
      .pending-list {
        margin-bottom: 12px;
      }
      .pending {
        padding: 6px 8px;
        border-radius: 6px;
        background: rgba(255, 166, 0, 0.1);
        border-left: 3px solid var(--warning-color, #ffa600);
        margin-bottom: 6px;
      }
      .pending-head,
      .decision-head {
        display: flex;
        flex-wrap: wrap;
        gap: 4px 10px;
        align-items: center;
      }
      .pending-actions {
        margin-left: auto;
        display: flex;
        gap: 6px;
      }
      .decision {
        padding: 6px 0;
        border-top: 1px solid var(--divider-color, #e0e0e0);
      }
      .decision:first-child {
        border-top: none;
      }
      .entity {
        font-family: var(--code-font-family, monospace);
        font-size: 13px;
        word-break: break-all;
      }
      .time {
        margin-left: auto;
        font-size: 12px;
      }
      .outcome {
        font-size: 12px;
        font-weight: 500;
        padding: 1px 8px;
        border-radius: 10px;
        background: var(--secondary-background-color, #eee);
      }
      .outcome-executed {
        background: rgba(67, 160, 71, 0.18);
        color: var(--success-color, #2e7d32);
      }
      .outcome-dry_run {
        background: rgba(3, 169, 244, 0.15);
      }
      .outcome-blocked,
      .outcome-failed,
      .outcome-rejected {
        background: rgba(219, 68, 55, 0.15);
        color: var(--error-color, #c62828);
      }
      .outcome-pending_confirmation {
        background: rgba(255, 166, 0, 0.2);
      }
      .gates {
        display: flex;
        gap: 3px;
        margin: 6px 0 2px;
      }
      .gate {
        flex: 1 1 0;
        display: flex;
        justify-content: center;
        align-items: center;
        gap: 3px;
        height: 20px;
        border-radius: 4px;
        font-size: 11px;
        background: var(--secondary-background-color, #eee);
        color: var(--secondary-text-color, #727272);
        cursor: help;
      }
      .gate.passed {
        background: rgba(67, 160, 71, 0.25);
        color: var(--success-color, #2e7d32);
      }
      .gate.failed {
        background: rgba(219, 68, 55, 0.3);
        color: var(--error-color, #c62828);
        font-weight: 700;
      }
      .gate.skipped {
        opacity: 0.5;
      }
      .decision-meta {
        display: flex;
        gap: 10px;
        font-size: 12px;
      }
    `];
  }
}

class AgenticHemsTraceCardEditor extends makeEditor([
  { name: "max_decisions", type: "number", min: 1, max: MAX_KEPT, default: 10 },
  { name: "show_gates", type: "boolean", default: true },
]) {}

customElements.get(`${TAG}-editor`) || customElements.define(`${TAG}-editor`, AgenticHemsTraceCardEditor);
registerCard(TAG, AgenticHemsTraceCard, "Agentic HEMS decisions",
  "Latest gate decisions with the eight safety gates, and pending confirmations to confirm or reject.",
  ["last_decision", "allow_device_control"]);
