// agentic-hems-trace-card: the latest gate decisions live from agentic_hems/subscribe_decisions,
// each as a row of the eight gates (named, with a sentence each), plus pending confirmations with
// who asked for what and when it expires, and Confirm and Reject. Devices and people are shown by
// name (the subscription's labels); a person's id is never shown.
import { LitElement, html, css, nothing } from "lit";
import {
  DOMAIN, t, localizedErrorText, LiveSubscription, serviceData, cardShell, sharedStyles, registerCard, makeEditor,
  hassMatters, fmtDateTime, fmtNumber, fmtTime, fmtRelative, CARD_PADDING_PX, headerPx, cardSize, gridOptions,
} from "./common.js";

const TAG = "agentic-hems-trace-card";
export const GATES = [
  "input_guard", "schema", "device_resolved", "capability", "freshness", "policy", "dry_run", "execution",
];
const MAX_KEPT = 20;
// px of the card's parts, for its size: a decision with and without its gates, the pending list's title and margin,
// a pending confirmation with its buttons, "no decisions"
const HEIGHTS = { gatedDecision: 180, decision: 64, pendingTitle: 36, pending: 77, empty: 36 };
const ICONS = { passed: "✓", failed: "✕", skipped: "·", not_executed: "–", waiting: "⏳" };

/**
 * A gate's label as a person reads it. Execution says what became of the command: "Executed" only when it ran;
 * "Rejected", "Expired", "Cancelled" or "Not executed" when it did not; "Execution" while it waits or was not
 * reached. Other gates keep their name ("Your rules"); an unknown gate its own id.
 */
export function gateLabel(hass, d, gate, state) {
  if (gate === "execution" && state !== "passed") {
    if (state === "failed") {
      const key = `gate_execution_${d.outcome}`;
      return t(hass, key) === key ? t(hass, "gate_execution_failed") : t(hass, key);
    }
    return t(hass, "gate_execution_pending");
  }
  const key = `gate_${gate}`;
  return t(hass, key) === key ? gate : t(hass, key);
}

/** The gate results of a decision by gate name. */
function resultsOf(d) {
  return new Map((Array.isArray(d.gate_results) ? d.gate_results : []).map((r) => [r.gate, r]));
}

/** The HA user who asked for a decision's command (history[0]), or null (an automation, the scheduler). */
function requesterOf(d) {
  const first = Array.isArray(d.history) && d.history[0];
  return (first && first.user_id) || null;
}

/**
 * A gate's state as a person reads it: passed, failed, skipped (not reached), and for Execution also
 * not_executed (a dry run) and waiting (for an administrator's confirmation), which are never a green tick.
 */
export function gateState(d, gate, r) {
  if (!r) return d.failed_gate === gate ? "failed" : "skipped";
  if (gate === "execution" && r.passed) {
    if (d.outcome === "pending_confirmation") return "waiting";
    if (d.outcome === "dry_run" || (r.evidence && r.evidence.dry_run)) return "not_executed";
  }
  return r.passed ? "passed" : "failed";
}

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
      _now: { state: true },
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
    this._labels = { entities: {}, users: {} };
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
    return cardSize(this._heightPx());
  }

  getGridOptions() {
    return gridOptions(CARD_PADDING_PX + headerPx(this._config) + HEIGHTS.empty);
  }

  /**
   * The card's height in px (see cardSize in common.js): the pending confirmations under their title and the latest
   * decisions, each with its eight gates unless show_gates is off; before the first snapshot, max_decisions of them.
   */
  _heightPx() {
    const pending = (this._pending || []).length;
    const shown = this._decisions === undefined ? this._max() : Math.min(this._max(), this._decisions.length);
    const decision = this._config && this._config.show_gates === false ? HEIGHTS.decision : HEIGHTS.gatedDecision;
    const px = CARD_PADDING_PX + headerPx(this._config) + (pending ? HEIGHTS.pendingTitle + HEIGHTS.pending * pending : 0);
    return px + (shown ? decision * shown : HEIGHTS.empty);
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
    this._clock = setInterval(() => { this._now = Date.now(); }, 30000); // "expires in 9 minutes" counts down
  }

  disconnectedCallback() {
    super.disconnectedCallback();
    if (this._live) this._live.dispose();
    clearInterval(this._clock);
  }

  shouldUpdate(changed) {
    return hassMatters(changed, this.hass);
  }

  willUpdate(changed) {
    if (changed.has("hass") && this._live && !this._live.active && !this._error) this._live.start();
  }

  _addLabels(labels) {
    if (!labels || typeof labels !== "object") return;
    this._labels = {
      entities: { ...this._labels.entities, ...(labels.entities || {}) },
      users: { ...this._labels.users, ...(labels.users || {}) },
    };
  }

  _onMessage(msg) {
    if (!msg || typeof msg !== "object") return;
    this._addLabels(msg.labels);
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

  /** The device's friendly name (the entity id only when HA has no state for it). */
  _device(d) {
    return (d.entity_id && this._labels.entities[d.entity_id]) || d.entity_id || "–";
  }

  /** The action asked for, in words ("open", "öffnen"). */
  _action(d) {
    const intent = (d.command && d.command.intent) || (d.candidate && d.candidate.intent) || "";
    const key = `action_${intent}`;
    return t(this.hass, key) === key ? String(intent).replace(/_/g, " ") : t(this.hass, key);
  }

  /** The value a command sets, in words ("21.5 °C", "40 %", "-4.7 kW", "eco"), or "" for a command without one. */
  _value(d) {
    const data = (d.command && d.command.data) || (d.candidate && d.candidate.params) || {};
    return this._values(data, d.entity_id);
  }

  /**
   * ``data``'s values in words: a temperature in HA's unit (commands carry it so: °F in US customary units), a
   * brightness in %, a number entity's value in its ``unit_of_measurement`` (``entityId``'s state), else as it is.
   */
  _values(data, entityId) {
    const config = (this.hass && this.hass.config) || {};
    const tempUnit = (config.unit_system && config.unit_system.temperature) || "°C";
    const state = entityId && this.hass && this.hass.states ? this.hass.states[entityId] : undefined;
    const unit = state && state.attributes ? state.attributes.unit_of_measurement : undefined;
    const word = (k, v) => {
      if (k === "temperature") return `${v} ${tempUnit}`;
      if (k === "brightness") return `${v} %`;
      return k === "value" && unit ? `${v} ${unit}` : String(v);
    };
    return Object.entries(data || {}).map(([k, v]) => word(k, v)).join(", ");
  }

  /** What was done, for "Heat pump: set to 21.5 °C – done." (never an unfinished "set the temperature of"). */
  _done(d) {
    const value = this._value(d);
    if (value) return t(this.hass, "set_to", { value });
    const intent = (d.command && d.command.intent) || (d.candidate && d.candidate.intent) || "";
    const key = `done_${intent}`;
    return t(this.hass, key) === key ? this._action(d) : t(this.hass, key);
  }

  /** Who or what proposed a command, in words ("Assistant", "Schedule"); an outside agent's own name as it is. */
  _agent(d) {
    const key = `agent_${d.source_agent}`;
    return t(this.hass, key) === key ? d.source_agent : t(this.hass, key);
  }

  /** A person's name: their HA user name when the card may know it, else ``fallback`` (never the id). */
  _person(userId, fallback) {
    return (userId && this._labels.users[userId]) || t(this.hass, fallback);
  }

  _requester(d) {
    const userId = requesterOf(d);
    return userId ? this._person(userId, "who_someone") : t(this.hass, "who_automation");
  }

  /** The pending command's expiry (the Execution gate's evidence), "14:32 (in 9 minutes)" parts. */
  _expiry(d) {
    const r = resultsOf(d).get("execution");
    const at = r && r.evidence && r.evidence.expires_at;
    return at ? { time: fmtTime(this.hass, at), relative: fmtRelative(this.hass, at, this._now || Date.now()) } : null;
  }

  /** One sentence on what a gate found, with names instead of ids. */
  _sentence(d, gate, r, state) {
    const hass = this.hass;
    const vars = { device: this._device(d), action: this._action(d) };
    if (state === "skipped") return t(hass, "s_not_reached", { gate: t(hass, `gate_${gate}`) });
    const ev = (r && r.evidence) || {};
    if (gate === "policy") {
      if (state === "failed") return this._policyRefusal(d, ev, vars);
      const binding = ev.intent_binding || {};
      if (ev.action === "confirm" && binding.value_asked === false) {
        return t(hass, "s_policy_confirm_value", { proposed: this._valueWords(binding.proposed) });
      }
      return t(hass, ev.action === "confirm" ? "s_policy_confirm" : "s_policy_allow");
    }
    if (gate === "dry_run" && state === "failed" && /duplicate/.test((r && r.reason) || "")) {
      return t(hass, "s_dry_run_duplicate");
    }
    if (gate === "execution") return this._executionSentence(d, r, state, vars);
    if (!GATES.includes(gate)) return `${gate}: ${t(hass, `gate_state_${state}`)}`;
    return t(hass, `s_${gate}_${state === "passed" ? "ok" : "fail"}`, vars);
  }

  /** A value in the gates' words ("21.5°", "6900 W") with its numbers in the user's number format ("21,5°"). */
  _valueWords(text) {
    return String(text || "").replace(/-?\d+(?:\.\d+)?/g, (n) => fmtNumber(this.hass, Number(n), 3));
  }

  /**
   * Why Policy refused: the request or the plan did not ask for it (its reason key: the values asked and proposed),
   * a grant for another command (the approved one), a grid setpoint, or the rules.
   */
  _policyRefusal(d, ev, vars) {
    const hass = this.hass;
    const key = `s_policy_${ev.reason_key}`;
    if (ev.reason_key && t(hass, key) !== key) {
      const p = ev.reason_placeholders || {};
      return t(hass, key, { ...vars, asked: this._valueWords(p.asked), proposed: this._valueWords(p.proposed) });
    }
    const approved = ev.approved_command;
    if (approved) {
      const asked = d.command || {};
      return t(hass, "s_policy_other_command", {
        ...vars,
        approved: this._commandText(approved.intent, approved.data, d.entity_id),
        asked: this._commandText(asked.intent || ev.operation, asked.data, d.entity_id),
      });
    }
    return t(hass, ev.grid_setpoint ? "s_policy_grid_setpoint" : "s_policy_fail", vars);
  }

  /** A command in words: its action without data ("turn on"), else its values ("21.5 °C", "Auto"). */
  _commandText(intent, data, entityId) {
    const values = Object.entries(data || {});
    if (!values.length) {
      const key = `action_${intent}`;
      return t(this.hass, key) === key ? String(intent).replace(/_/g, " ") : t(this.hass, key);
    }
    return this._values(data, entityId);
  }

  _executionSentence(d, r, state, vars) {
    const hass = this.hass;
    const ev = (r && r.evidence) || {};
    const admin = (id) => this._person(id, "by_admin");
    if (state === "waiting") return t(hass, "s_execution_waiting", this._expiry(d) || { time: "–", relative: "–" });
    if (state === "not_executed") {
      return t(hass, /dry run requested/.test((r && r.reason) || "") ? "s_execution_dry_run" : "s_execution_control_off");
    }
    if (state === "passed") {
      const by = d.execution_result && d.execution_result.confirmed_by;
      const done = { ...vars, action: this._done(d) };
      return by ? t(hass, "s_execution_confirmed", { ...done, name: admin(by) }) : t(hass, "s_execution_ok", done);
    }
    if (d.outcome === "rejected") return t(hass, "s_execution_rejected", { name: admin(ev.user_id) });
    if (d.outcome === "expired") return t(hass, "s_execution_expired");
    if (d.outcome === "cancelled") return t(hass, "s_execution_cancelled", { name: admin(ev.confirmed_by) });
    return t(hass, "s_execution_fail");
  }

  _renderGates(d) {
    const results = resultsOf(d);
    // The eight known gates in order, then any unknown gate the backend reported.
    const names = [...GATES, ...[...results.keys()].filter((g) => !GATES.includes(g))];
    const gates = names.map((g) => {
      const r = results.get(g);
      const state = gateState(d, g, r);
      return { g, state, sentence: this._sentence(d, g, r, state) };
    });
    // The gate a person should read about: the one that stopped it, or an Execution that did not run (yet).
    const notable = gates.find((x) => x.state === "failed")
      || gates.find((x) => x.state === "waiting" || x.state === "not_executed")
      || gates.find((x) => x.g === "execution" && x.state === "passed");
    return html`<div class="gates">
      ${gates.map((x) => html`<span class="gate ${x.state}" data-gate=${x.g} data-state=${x.state} title=${x.sentence}>
          <span class="gate-icon" aria-hidden="true">${ICONS[x.state]}</span>
          <span class="gate-label">${gateLabel(this.hass, d, x.g, x.state)}</span>
          ${x.state === "not_executed" || x.state === "waiting"
            ? html`<span class="gate-state">${t(this.hass, `gate_state_${x.state}`)}</span>` : nothing}
        </span>`)}
    </div>
    ${notable ? html`<div class="gate-note ${notable.state}" data-gate=${notable.g}>${notable.sentence}</div>` : nothing}`;
  }

  _outcomeText(outcome) {
    const key = `outcome_${outcome}`;
    return t(this.hass, key) === key ? outcome : t(this.hass, key);
  }

  _renderDecision(d) {
    const hass = this.hass;
    const outcome = d.outcome || "unknown";
    return html`<div class="decision" data-trace-id=${d.trace_id} data-outcome=${outcome}>
      <div class="decision-head">
        <span class="outcome outcome-${outcome}">${this._outcomeText(outcome)}</span>
        <span class="entity" data-entity-id=${d.entity_id || ""} title=${d.entity_id || ""}>${this._device(d)}</span>
        <span class="action">${this._action(d)}</span>
        <span class="time muted">${fmtDateTime(hass, d.timestamp, true)}</span>
      </div>
      ${this._config.show_gates === false ? nothing : this._renderGates(d)}
      <div class="decision-meta muted">
        <span class="requester">${this._requester(d)}</span>
        ${d.source_agent ? html`<span class="agent" data-agent=${d.source_agent}>${this._agent(d)}</span>` : nothing}
      </div>
    </div>`;
  }

  _renderPending(id) {
    const hass = this.hass;
    const d = (this._decisions || []).find((x) => x.trace_id === id);
    const busy = this._busy[id];
    const err = this._actionErrors[id];
    const expiry = d && this._expiry(d);
    return html`<div class="pending" data-trace-id=${id}>
      <div class="pending-what">${d
        ? html`<span class="request">${this._value(d)
          ? t(hass, "asks_to_value", { who: this._requester(d), value: this._value(d), device: this._device(d) })
          : t(hass, "asks_to", { who: this._requester(d), action: this._action(d), device: this._device(d) })}</span>`
        : html`<span class="request">${t(hass, "pending_title")}</span>`}
      </div>
      <div class="pending-head">
        ${expiry ? html`<span class="expires muted">${t(hass, "expires", expiry)}</span>` : nothing}
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
        font-weight: 500;
        overflow-wrap: anywhere;
      }
      .pending-what {
        margin-bottom: 4px;
      }
      .expires {
        font-size: 12px;
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
      .outcome-rejected,
      .outcome-expired,
      .outcome-cancelled {
        background: rgba(219, 68, 55, 0.15);
        color: var(--error-color, #c62828);
      }
      .outcome-pending_confirmation {
        background: rgba(255, 166, 0, 0.2);
      }
      .gates {
        display: grid;
        grid-template-columns: repeat(auto-fill, minmax(96px, 1fr));
        gap: 3px;
        margin: 6px 0 2px;
      }
      .gate {
        display: grid;
        grid-template-columns: auto minmax(0, 1fr);
        align-items: center;
        gap: 0 4px;
        min-height: 22px;
        padding: 2px 6px;
        box-sizing: border-box;
        border-radius: 4px;
        font-size: 11px;
        line-height: 1.3;
        background: var(--secondary-background-color, #eee);
        color: var(--secondary-text-color, #727272);
      }
      .gate-state {
        grid-column: 2;
        font-style: italic;
      }
      .gate.not_executed {
        background: rgba(3, 169, 244, 0.12);
        color: var(--primary-text-color, #212121);
      }
      .gate.waiting {
        background: rgba(255, 166, 0, 0.2);
        color: var(--primary-text-color, #212121);
      }
      .gate-note {
        font-size: 13px;
        margin: 2px 0;
      }
      .gate-note.failed {
        color: var(--error-color, #c62828);
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
        flex-wrap: wrap;
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
