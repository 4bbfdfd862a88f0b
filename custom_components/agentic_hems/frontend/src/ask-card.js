// agentic-hems-ask-card: ask the assistant (agentic_hems.ask with a response), follow its
// iterations live from agentic_hems/subscribe_run, then show the summary and the plans.
import { LitElement, html, css, nothing } from "lit";
import {
  DOMAIN, t, errorText, localizedErrorText, LiveSubscription, wsMessage, serviceData, cardShell, sharedStyles, registerCard, makeEditor, hassMatters,
  fmtSpan, fmtMoney, localizeClock, CARD_PADDING_PX, headerPx, cardSize, gridOptions,
} from "./common.js";

const TAG = "agentic-hems-ask-card";
// px of the card's parts, for its size: the form (its two-line textarea), the margin above the iterations and the
// plans, an iteration's line, the summary's margin and padding and a line of it, an error, a plan (two lines)
const HEIGHTS = { form: 60, gap: 10, iteration: 26, summary: 26, line: 20, error: 40, plan: 56 };

/**
 * An iteration's step as a person reads it: the translated label of its action ("Plan appliances" for SCHEDULE),
 * an unknown action in words ("Some tool"), or "reply not understood" when the model's reply named none.
 */
export function stepLabel(hass, action) {
  if (!action) return t(hass, "step_none");
  const key = `step_${String(action).toLowerCase()}`;
  const text = t(hass, key);
  if (text !== key) return text;
  const words = String(action).toLowerCase().replace(/_/g, " ");
  return words.charAt(0).toUpperCase() + words.slice(1);
}

/** An iteration's status in words ("done", "error", "finished"); an unknown one as it is. */
export function statusLabel(hass, status) {
  const key = `step_status_${status}`;
  return status ? (t(hass, key) === key ? status : t(hass, key)) : "";
}

class AgenticHemsAskCard extends LitElement {
  static get properties() {
    return {
      hass: { attribute: false },
      _config: { state: true },
      _busy: { state: true },
      _steps: { state: true },
      _result: { state: true },
      _finished: { state: true },
      _askError: { state: true },
      _subError: { state: true },
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
    this._steps = [];
    this._busy = false;
  }

  setConfig(config) {
    if (!config || typeof config !== "object") throw new Error("Invalid configuration");
    const entryChanged = this._config && this._config.entry_id !== config.entry_id;
    this._config = { ...config };
    if (entryChanged && this._live) {
      this._live.dispose();
      this._live.start();
    }
  }

  getCardSize() {
    return cardSize(this._heightPx());
  }

  getGridOptions() {
    return gridOptions(CARD_PADDING_PX + headerPx(this._config) + HEIGHTS.form);
  }

  /**
   * The card's height in px (see cardSize in common.js): the question's form and, for the latest run, its
   * iterations (and "working…" while it runs), its summary (its lines of about 40 characters), its error and its plans.
   */
  _heightPx() {
    const r = this._result;
    const plans = (r && Array.isArray(r.plans) && r.plans) || [];
    const summary = r ? r.summary : this._finished && this._finished.summary;
    const steps = this._steps.length + (this._busy ? 1 : 0);
    let px = CARD_PADDING_PX + headerPx(this._config) + HEIGHTS.form;
    px += steps ? HEIGHTS.gap + HEIGHTS.iteration * steps : 0;
    if (summary !== undefined && summary !== null) {
      px += HEIGHTS.summary + HEIGHTS.line * Math.max(1, Math.ceil(String(summary).length / 40));
    }
    px += [this._askError, this._subError, r && r.error].filter(Boolean).length * HEIGHTS.error;
    return px + (plans.length ? HEIGHTS.gap + HEIGHTS.plan * plans.length : 0);
  }

  connectedCallback() {
    super.connectedCallback();
    if (!this._live) {
      this._live = new LiveSubscription(this, "agentic_hems/subscribe_run", (msg) => this._onMessage(msg),
        (err) => { this._subError = err && `${t(this.hass, "err_live")}: ${err}`; });
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
    if (changed.has("hass") && this._live && !this._live.active && !this._subError) this._live.start();
  }

  _onMessage(msg) {
    if (!msg || typeof msg !== "object") return;
    // While a question runs, follow the first run that reports; afterwards only that run's late messages.
    if (this._busy && !this._runId && msg.run_id) this._runId = msg.run_id;
    if (!msg.run_id || msg.run_id !== this._runId) return;
    if (msg.type === "step") {
      const key = `${msg.iteration}|${msg.action}`;
      const steps = this._steps.slice();
      const i = steps.findIndex((s) => `${s.iteration}|${s.action}` === key);
      if (i >= 0) steps[i] = { ...msg };
      else steps.push({ ...msg });
      this._steps = steps;
    } else if (msg.type === "finished") {
      this._finished = msg;
    }
  }

  async _submit(e) {
    if (e) e.preventDefault();
    if (this._busy) return;
    const input = this.renderRoot.querySelector("#ask-input");
    const text = input ? input.value.trim() : "";
    if (!text) {
      this._askError = t(this.hass, "err_empty");
      return;
    }
    this._busy = true;
    this._steps = [];
    this._result = undefined;
    this._finished = undefined;
    this._askError = undefined;
    this._runId = undefined;
    try {
      const res = await this.hass.callService(DOMAIN, "ask", serviceData({ text }, this._config), undefined, false, true);
      const response = (res && (res.response !== undefined ? res.response : res)) || {};
      this._result = response;
      if (response.run_id) {
        if (this._runId && this._runId !== response.run_id) {
          this._steps = [];
          this._finished = undefined;
        }
        this._runId = response.run_id;
      }
    } catch (err) {
      this._askError = await localizedErrorText(this.hass, err);
    } finally {
      this._busy = false;
    }
  }

  _onKey(e) {
    if (e.key === "Enter" && (e.ctrlKey || e.metaKey)) this._submit(e);
  }

  _renderPlan(p, currency) {
    const hass = this.hass;
    const name = p.name || p.appliance_id || "–";
    const feasible = p.feasible !== false && p.start;
    return html`<div class="result-plan ${feasible ? "" : "infeasible"}" data-appliance=${name}
      data-start=${p.start || ""} data-end=${p.end || ""}>
      <span class="plan-name">${name}</span>
      <span class="plan-time">${feasible
        ? fmtSpan(hass, p.start, p.end)
        : t(hass, "not_feasible")}</span>
      <span class="plan-cost">${feasible ? fmtMoney(hass, p.cost, p.currency || currency) : ""}</span>
    </div>`;
  }

  render() {
    if (!this._config) return nothing;
    const hass = this.hass;
    const r = this._result;
    const summary = r ? r.summary : this._finished ? this._finished.summary : undefined;
    const success = r ? r.success : this._finished ? this._finished.success : undefined;
    const plans = (r && Array.isArray(r.plans) && r.plans) || [];
    return cardShell(this._config.title, html`
      ${this._subError ? html`<div class="error warning">${this._subError}</div>` : nothing}
      <form class="ask-form" @submit=${(e) => this._submit(e)}>
        <textarea id="ask-input" rows="2" ?disabled=${this._busy}
          placeholder=${this._config.placeholder || t(hass, "ask_placeholder")}
          aria-label=${t(hass, "ask_label")} @keydown=${(e) => this._onKey(e)}></textarea>
        <button id="ask-submit" class="primary" type="submit" ?disabled=${this._busy}>
          ${this._busy ? t(hass, "asking") : t(hass, "ask")}</button>
      </form>
      ${this._askError ? html`<div class="error ask-error">${this._askError}</div>` : nothing}
      ${this._steps.length || this._busy ? html`<div class="iterations ${this._busy ? "running" : ""}">
        ${this._steps.map((s) => html`<div class="iteration" data-iteration=${s.iteration} data-status=${s.status || ""}
          data-action=${s.action || ""}>
          <span class="it-no">${s.iteration}</span>
          <span class="it-action">${stepLabel(hass, s.action)}</span>
          <span class="it-status status-${s.status || "unknown"}">${statusLabel(hass, s.status)}</span>
        </div>`)}
        ${this._busy ? html`<div class="working muted">${t(hass, "working")}</div>` : nothing}
      </div>` : nothing}
      ${summary !== undefined && summary !== null ? html`<div class="summary ${success ? "success" : "failed"}"
        data-success=${success ? "true" : "false"}>${localizeClock(hass, summary)}</div>` : nothing}
      ${r && r.error ? html`<div class="error run-error">${localizeClock(hass, r.error)}</div>` : nothing}
      ${plans.length ? html`<div class="result-plans">${plans.map((p) => this._renderPlan(p, r.currency))}</div>` : nothing}
    `);
  }

  static get styles() {
    return [sharedStyles, css`
      .ask-form {
        display: flex;
        gap: 8px;
        align-items: stretch;
      }
      #ask-input {
        flex: 1;
        font: inherit;
        resize: vertical;
        min-height: 40px;
        padding: 6px 8px;
        border-radius: 6px;
        border: 1px solid var(--divider-color, #ccc);
        background: var(--card-background-color, #fff);
        color: var(--primary-text-color, #212121);
      }
      .iterations {
        margin-top: 10px;
        font-size: 13px;
      }
      .iteration {
        display: grid;
        grid-template-columns: 2em 1fr auto;
        gap: 8px;
        padding: 2px 0;
        border-bottom: 1px dotted var(--divider-color, #e0e0e0);
      }
      .it-no {
        color: var(--secondary-text-color, #727272);
        text-align: right;
      }
      .it-action {
        overflow-wrap: anywhere;
      }
      .status-error,
      .status-failed,
      .status-blocked {
        color: var(--error-color, #c62828);
      }
      .working {
        padding-top: 4px;
        font-style: italic;
      }
      .summary {
        margin-top: 10px;
        padding: 8px 10px;
        border-radius: 6px;
        white-space: pre-wrap;
        background: var(--secondary-background-color, rgba(0, 0, 0, 0.05));
        border-left: 3px solid var(--success-color, #43a047);
      }
      .summary.failed {
        border-left-color: var(--error-color, #db4437);
      }
      .result-plans {
        margin-top: 8px;
      }
      .result-plan {
        display: grid;
        grid-template-columns: minmax(0, 1fr) auto;
        gap: 2px 10px;
        padding: 4px 0;
        border-top: 1px solid var(--divider-color, #e0e0e0);
      }
      .result-plan .plan-time {
        grid-row: 2;
        white-space: nowrap;
        color: var(--secondary-text-color, #727272);
      }
      .result-plan .plan-cost {
        text-align: right;
      }
      .result-plan.infeasible .plan-time {
        color: var(--error-color, #db4437);
      }
    `];
  }
}

class AgenticHemsAskCardEditor extends makeEditor([{ name: "placeholder", type: "text" }]) {}

customElements.get(`${TAG}-editor`) || customElements.define(`${TAG}-editor`, AgenticHemsAskCardEditor);
registerCard(TAG, AgenticHemsAskCard, "Agentic HEMS ask",
  "Ask the energy assistant; follow its steps live and see the resulting plans.",
  ["assistant"]); // the conversation entity
