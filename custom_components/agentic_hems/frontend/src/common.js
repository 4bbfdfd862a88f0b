// Shared helpers for the agentic_hems cards: texts (en/de), time zone aware formatting,
// websocket error messages, the ha-card wrapper with its fallback, and card registration.
import { LitElement, html, css } from "lit";
import { STRINGS } from "./strings.js";

export const DOMAIN = "agentic_hems";

/** The language code ("en", "de") of the HA user, falling back to en. */
export function langOf(hass) {
  const raw = (hass && ((hass.locale && hass.locale.language) || hass.language)) || "en";
  const base = String(raw).toLowerCase().split(/[-_]/)[0];
  return STRINGS[base] ? base : "en";
}

/** The full locale tag for Intl (keeps e.g. "de-CH"), "en" when unknown. */
export function localeOf(hass) {
  const raw = (hass && ((hass.locale && hass.locale.language) || hass.language)) || "en";
  try {
    return Intl.getCanonicalLocales(raw)[0] || "en";
  } catch (_e) {
    return "en";
  }
}

/** A translated text; {name} placeholders are filled from vars. */
export function t(hass, key, vars) {
  const lang = langOf(hass);
  let s = (STRINGS[lang] && STRINGS[lang][key]) || STRINGS.en[key] || key;
  if (vars) for (const [k, v] of Object.entries(vars)) s = s.split(`{${k}}`).join(String(v));
  return s;
}

/**
 * The IANA time zone to show times in: the server's when the user chose "server"
 * (hass.locale.time_zone), otherwise undefined, i.e. the browser's own zone.
 */
export function timeZoneOf(hass) {
  const loc = hass && hass.locale;
  if (loc && loc.time_zone === "server" && hass.config && hass.config.time_zone) return hass.config.time_zone;
  return undefined;
}

function hour12Of(hass) {
  const tf = hass && hass.locale && hass.locale.time_format;
  if (tf === "12") return true;
  if (tf === "24") return false;
  return undefined;
}

const _fmtCache = new Map();

/** A cached Intl.DateTimeFormat for the user's locale and time zone. */
export function dateFormatter(hass, opts) {
  const locale = localeOf(hass);
  const timeZone = timeZoneOf(hass);
  const hour12 = opts.hour !== undefined ? hour12Of(hass) : undefined;
  const key = JSON.stringify([locale, timeZone, hour12, opts]);
  let f = _fmtCache.get(key);
  if (!f) {
    const o = { ...opts };
    if (timeZone) o.timeZone = timeZone;
    if (hour12 !== undefined) o.hour12 = hour12;
    try {
      f = new Intl.DateTimeFormat(locale, o);
    } catch (_e) {
      delete o.timeZone; // an unknown zone name: fall back to the browser's zone
      f = new Intl.DateTimeFormat(locale, o);
    }
    // a 12-hour clock writes "9:48 AM" (as HA does and the schedule's spans do), never "09:48 AM"
    if (o.hour === "2-digit" && f.resolvedOptions().hour12) f = new Intl.DateTimeFormat(locale, { ...o, hour: "numeric" });
    _fmtCache.set(key, f);
  }
  return f;
}

export function toMs(iso) {
  const ms = typeof iso === "number" ? iso : Date.parse(iso);
  return Number.isFinite(ms) ? ms : NaN;
}

/** "14:15" in the user's zone. */
export function fmtTime(hass, iso) {
  const ms = toMs(iso);
  if (!Number.isFinite(ms)) return "–";
  return dateFormatter(hass, { hour: "2-digit", minute: "2-digit" }).format(ms);
}

/** "Mo., 14:15" in the user's zone. */
export function fmtDayTime(hass, iso) {
  const ms = toMs(iso);
  if (!Number.isFinite(ms)) return "–";
  return dateFormatter(hass, { weekday: "short", hour: "2-digit", minute: "2-digit" }).format(ms);
}

/** A span, compact and in the user's zone: "Wed 04:00 – 06:30" (the day once), "Wed 22:00 – Thu 01:00". */
export function fmtSpan(hass, start, end) {
  const a = toMs(start);
  const b = toMs(end);
  if (!Number.isFinite(a) || !Number.isFinite(b)) return "–";
  const f = dateFormatter(hass, { weekday: "short", hour: "2-digit", minute: "2-digit" });
  return b > a ? f.formatRange(a, b) : f.format(a);
}

/** Whether the user reads 12-hour times (hass.locale.time_format: 12, 24, or the language's or system's habit). */
export function uses12h(hass) {
  return !!dateFormatter(hass, { hour: "numeric", minute: "2-digit" }).resolvedOptions().hour12;
}

/**
 * ``text`` (a sentence from the server, whose local times are written "14:30") with each such time in the user's
 * time format ("2:30 PM" for 12-hour readers), so a card never shows 24-hour times beside 12-hour ones.
 */
export function localizeClock(hass, text) {
  if (text === undefined || text === null || !uses12h(hass)) return text;
  const f = new Intl.DateTimeFormat(localeOf(hass), { hour: "numeric", minute: "2-digit", hour12: true, timeZone: "UTC" });
  return String(text).replace(/(^|[^\w:.])([01]\d|2[0-3]):([0-5]\d)(?![\w:])/g,
    (_m, before, h, m) => `${before}${f.format(Date.UTC(2000, 0, 1, Number(h), Number(m)))}`);
}

/** How far an instant is from now, in the user's language: "in 9 minutes", "vor 2 Minuten". */
export function fmtRelative(hass, iso, now = Date.now()) {
  const ms = toMs(iso);
  if (!Number.isFinite(ms)) return "–";
  const minutes = Math.round((ms - now) / 60000);
  const f = new Intl.RelativeTimeFormat(localeOf(hass), { numeric: "auto" });
  return Math.abs(minutes) < 90 ? f.format(minutes, "minute") : f.format(Math.round(minutes / 60), "hour");
}

/** "12.05., 14:15:03" in the user's zone. */
export function fmtDateTime(hass, iso, withSeconds = false) {
  const ms = toMs(iso);
  if (!Number.isFinite(ms)) return "–";
  const o = { day: "2-digit", month: "2-digit", hour: "2-digit", minute: "2-digit" };
  if (withSeconds) o.second = "2-digit";
  return dateFormatter(hass, o).format(ms);
}

/** The local calendar date ("2025-05-12") and hour/minute of an instant in the user's zone. */
export function localParts(hass, ms) {
  const f = dateFormatter(hass, {
    year: "numeric", month: "2-digit", day: "2-digit", hour: "2-digit", minute: "2-digit", hourCycle: "h23",
  });
  const p = {};
  for (const part of f.formatToParts(ms)) p[part.type] = part.value;
  const hour = Number(p.hour) % 24;
  return { date: `${p.year}-${p.month}-${p.day}`, hour, minute: Number(p.minute) };
}

/** The Intl locale for numbers from the user's number format setting (as HA's frontend maps it). */
export function numberLocale(hass) {
  const format = hass && hass.locale && hass.locale.number_format;
  if (format === "comma_decimal") return ["en-US", "en"];
  if (format === "decimal_comma") return ["de", "es", "it"];
  if (format === "space_comma") return ["fr", "sv", "cs"];
  if (format === "system") return undefined;
  return localeOf(hass); // "language", "none" or unset
}

function grouping(hass) {
  return !(hass && hass.locale && hass.locale.number_format === "none");
}

/** Money: "0,23 €"; falls back to a plain number when the currency code is unknown. */
export function fmtMoney(hass, value, currency, digits = 2) {
  if (value === null || value === undefined || !Number.isFinite(Number(value))) return "–";
  const locale = numberLocale(hass);
  // Rounded first, so that -0.001 reads "0.00", not "-0.00".
  const rounded = Math.round(Number(value) * 10 ** digits) / 10 ** digits || 0;
  try {
    if (currency) {
      return new Intl.NumberFormat(locale, {
        style: "currency", currency, minimumFractionDigits: digits, maximumFractionDigits: digits,
        useGrouping: grouping(hass),
      }).format(rounded);
    }
  } catch (_e) {
    /* unknown currency code */
  }
  const n = new Intl.NumberFormat(locale, {
    minimumFractionDigits: digits, maximumFractionDigits: digits, useGrouping: grouping(hass),
  }).format(rounded);
  return currency ? `${n} ${currency}` : n;
}

export function fmtNumber(hass, value, digits = 0) {
  if (value === null || value === undefined || !Number.isFinite(Number(value))) return "–";
  return new Intl.NumberFormat(numberLocale(hass), {
    maximumFractionDigits: digits, minimumFractionDigits: 0, useGrouping: grouping(hass),
  }).format(Number(value));
}

/**
 * errorText, with a translated message first: a service error carries its translation_key, which is looked up in
 * the integration's exception strings in the user's language (the server's message is in the server's language).
 */
export async function localizedErrorText(hass, err) {
  const key = err && err.translation_key;
  const domain = (err && err.translation_domain) || DOMAIN;
  if (key && hass && typeof hass.localize === "function") {
    try {
      // loadBackendTranslation resolves to a localize function that knows the newly loaded strings.
      const localize = typeof hass.loadBackendTranslation === "function"
        ? (await hass.loadBackendTranslation("exceptions", domain)) || hass.localize
        : hass.localize;
      const message = localize(`component.${domain}.exceptions.${key}.message`, err.translation_placeholders || {});
      if (message) return errorText(hass, { ...err, message });
    } catch (_e) {
      /* fall back to the server's message */
    }
  }
  return errorText(hass, err);
}

/** A readable message for a failed websocket command or service call. */
export function errorText(hass, err) {
  if (!err) return t(hass, "err_unknown");
  const code = err.code || (err.error && err.error.code);
  const message = err.message || (err.error && err.error.message) || (typeof err === "string" ? err : "");
  if (code === "unknown_command") return t(hass, "err_not_loaded");
  const entryProblem = /entry/i.test(message) && /not (found|loaded)|missing|unknown|no /i.test(message);
  if (/not_found|entry/i.test(String(code || "")) || entryProblem) {
    return `${t(hass, "err_entry")}${message ? ` (${message})` : ""}`;
  }
  if (code === "unauthorized" || code === "Unauthorized") return `${t(hass, "err_unauthorized")}${message ? ` (${message})` : ""}`;
  if (code === "service_not_found" || /service.*not found/i.test(message)) return t(hass, "err_not_loaded");
  if (message) return message;
  if (code) return String(code);
  try {
    return JSON.stringify(err);
  } catch (_e) {
    return String(err);
  }
}

/**
 * HA sets a new hass object on every state change; the cards only need to re-render when
 * something they show depends on changed (first hass, language, time zone, number format).
 */
export function hassMatters(changed, hass) {
  if (!(changed.size === 1 && changed.has("hass"))) return true;
  const old = changed.get("hass");
  if (!old || !hass) return true;
  return old.locale !== hass.locale || old.language !== hass.language
    || (old.config && old.config.time_zone) !== (hass.config && hass.config.time_zone);
}

/** The websocket message with the optional entry id. */
export function wsMessage(type, config) {
  const msg = { type };
  if (config && config.entry_id) msg.entry_id = config.entry_id;
  return msg;
}

/**
 * A live websocket subscription of a card (``host``: the card element, with ``hass`` and ``_config``). Messages go to
 * ``onMessage``; ``onError(text | undefined)`` reports a failure (undefined once it works again). When the
 * integration's entry is reloaded (options changed), the server sends ``{type: "unloaded"}``: the subscription is
 * started again, retrying while the entry loads.
 */
export class LiveSubscription {
  constructor(host, type, onMessage, onError) {
    Object.assign(this, { host, type, onMessage, onError, gen: 0, unsub: undefined, retries: 0 });
  }

  get active() {
    return this.unsub !== undefined;
  }

  start() {
    const { hass, _config: config } = this.host;
    if (!hass || !config || this.unsub || !this.host.isConnected) return;
    const conn = hass.connection;
    if (!conn || typeof conn.subscribeMessage !== "function") {
      this.onError(t(hass, "err_no_connection"));
      return;
    }
    const gen = (this.gen += 1);
    this.unsub = conn
      .subscribeMessage((msg) => {
        if (gen !== this.gen) return;
        if (msg && msg.type === "unloaded") {
          this.restart(RESUBSCRIBE_MS);
          return;
        }
        this.retries = 0;
        this.onMessage(msg);
      }, wsMessage(this.type, config))
      .then((unsub) => {
        this.onError(undefined);
        return unsub;
      })
      .catch((err) => {
        if (gen !== this.gen) return undefined;
        this.unsub = undefined;
        if (this.retries > 0 && this.retries < MAX_RETRIES) this.restart(RESUBSCRIBE_MS);
        else this.onError(errorText(hass, err));
        return undefined;
      });
  }

  restart(delayMs) {
    this.stop();
    this.retries += 1;
    clearTimeout(this.timer);
    this.timer = setTimeout(() => this.start(), delayMs);
  }

  stop() {
    this.gen += 1;
    const p = this.unsub;
    this.unsub = undefined;
    if (p) p.then((unsub) => (typeof unsub === "function" ? Promise.resolve(unsub()) : undefined)).catch(() => {});
  }

  dispose() {
    clearTimeout(this.timer);
    this.retries = 0;
    this.stop();
  }
}
const RESUBSCRIBE_MS = 2000;
const MAX_RETRIES = 15;

/** Service data with the optional config entry id (the services call it config_entry_id). */
export function serviceData(data, config) {
  const out = { ...data };
  if (config && config.entry_id) out.config_entry_id = config.entry_id;
  return out;
}

// A card's height for the dashboards' layouts. Each card estimates it in px from what it shows, at a masonry column's
// width (about 400 px): the masonry layout counts it in units of 50 px (getCardSize); the sections layout sizes the
// card to its content (rows "auto": its lists and the plans grow and shrink live) and keeps at least the rows of 56 px
// (8 px apart) its smallest content needs (min_rows).
export const CARD_PADDING_PX = 28; // .card-content's padding, top and bottom
const SIZE_UNIT_PX = 50;
const ROW_PX = 56;
const ROW_GAP_PX = 8;

/** The px the card's title takes (none without one). */
export function headerPx(config) {
  return config && config.title ? 40 : 0;
}

/** getCardSize's value for a card ``px`` high: units of 50 px, at least 1. */
export function cardSize(px) {
  return Math.max(1, Math.ceil(px / SIZE_UNIT_PX));
}

/** The sections grid's rows that hold ``px``: n rows are n × 56 px plus the 8 px gaps between them. */
export function gridRows(px) {
  return Math.max(1, Math.ceil((px + ROW_GAP_PX) / (ROW_PX + ROW_GAP_PX)));
}

/** getGridOptions's value: the full width (half at least), the content's height, at least ``minPx``. */
export function gridOptions(minPx) {
  return { columns: 12, rows: "auto", min_columns: 6, min_rows: gridRows(minPx) };
}

/** ha-card when HA provides it, otherwise a div with the same class, so the card always renders. */
export function cardShell(title, content, extraClass = "") {
  const cls = `ahems-card ${extraClass}`.trim();
  if (customElements.get("ha-card")) {
    return html`<ha-card class=${cls}>
      ${title ? html`<h1 class="card-header">${title}</h1>` : ""}
      <div class="card-content">${content}</div>
    </ha-card>`;
  }
  return html`<div class="${cls} fallback-card">
    ${title ? html`<h1 class="card-header">${title}</h1>` : ""}
    <div class="card-content">${content}</div>
  </div>`;
}

export const sharedStyles = css`
  :host {
    display: block;
  }
  .ahems-card {
    display: block;
    height: 100%;
    box-sizing: border-box;
    overflow: hidden;
  }
  .fallback-card {
    background: var(--ha-card-background, var(--card-background-color, #fff));
    color: var(--primary-text-color, #212121);
    border-radius: var(--ha-card-border-radius, 12px);
    border: 1px solid var(--divider-color, #e0e0e0);
    font-family: var(--paper-font-body1_-_font-family, Roboto, sans-serif);
  }
  .card-header {
    margin: 0;
    padding: 12px 16px 0;
    font-size: var(--ha-card-header-font-size, 20px);
    font-weight: 400;
    line-height: 1.4;
  }
  .card-content {
    padding: 12px 16px 16px;
  }
  .error {
    color: var(--error-color, #db4437);
    background: rgba(219, 68, 55, 0.08);
    border-left: 3px solid var(--error-color, #db4437);
    padding: 8px 12px;
    margin: 4px 0 8px;
    border-radius: 4px;
    white-space: pre-wrap;
    word-break: break-word;
  }
  .error.warning {
    color: var(--warning-color, #b57500);
    border-left-color: var(--warning-color, #ffa600);
    background: rgba(255, 166, 0, 0.08);
  }
  .muted {
    color: var(--secondary-text-color, #727272);
  }
  .loading,
  .empty {
    color: var(--secondary-text-color, #727272);
    padding: 8px 0;
  }
  button {
    font: inherit;
    cursor: pointer;
    border-radius: 6px;
    border: 1px solid var(--divider-color, #ccc);
    background: var(--secondary-background-color, #f5f5f5);
    color: var(--primary-text-color, #212121);
    padding: 4px 10px;
  }
  button.primary {
    background: var(--primary-color, #03a9f4);
    border-color: var(--primary-color, #03a9f4);
    color: var(--text-primary-color, #fff);
  }
  button[disabled] {
    opacity: 0.5;
    cursor: default;
  }
`;

/** A CSS custom property's value on an element, with a default. */
export function cssVar(el, name, fallback) {
  try {
    const v = getComputedStyle(el).getPropertyValue(name).trim();
    return v || fallback;
  } catch (_e) {
    return fallback;
  }
}

export const PALETTE = [
  "#03a9f4", "#ff9800", "#4caf50", "#e91e63", "#9c27b0", "#009688", "#795548", "#3f51b5", "#cddc39", "#607d8b",
];

/**
 * The config entry of an agentic_hems entity and its translation key, from the frontend's registries
 * (hass.entities, hass.devices); undefined for another integration's entity.
 */
export function ourEntity(hass, entityId) {
  const entity = hass && hass.entities && hass.entities[entityId];
  if (!entity || entity.platform !== DOMAIN) return undefined;
  const device = entity.device_id && hass.devices ? hass.devices[entity.device_id] : undefined;
  const entryId = device ? device.primary_config_entry || (device.config_entries || [])[0] : undefined;
  return { key: entity.translation_key, entryId };
}

/**
 * The card picker's suggestion of card ``tag`` for an entity (HA 2026.10's "by entity" tab lists what
 * window.customCards' getEntitySuggestion(hass, entityId) returns under "Community"): the card for that entity's
 * config entry when the entity is one of agentic_hems's with a translation key in ``keys``, else null.
 */
export function entitySuggestion(tag, keys, hass, entityId) {
  const ours = ourEntity(hass, entityId);
  if (!ours || !keys.includes(ours.key)) return null;
  const config = { type: `custom:${tag}` };
  if (ours.entryId) config.entry_id = ours.entryId;
  return { config };
}

/**
 * Defines the element once and lists it in window.customCards for the card picker: name, description, a live
 * preview, and, for the entities in ``suggestFor`` (translation keys), a suggestion of this card.
 */
export function registerCard(tag, cls, name, description, suggestFor = []) {
  if (!customElements.get(tag)) customElements.define(tag, cls);
  window.customCards = window.customCards || [];
  if (!window.customCards.some((c) => c.type === tag)) {
    window.customCards.push({
      type: tag, name, description, preview: true,
      documentationURL: "https://github.com/agentic-hems/agentic_hems",
      getEntitySuggestion: (hass, entityId) => entitySuggestion(tag, suggestFor, hass, entityId),
    });
  }
}

/**
 * A small editor: one form field per option, fires config-changed with the whole config.
 * fields: [{name, type: "text"|"number"|"boolean"|"select", options?: [..], min?, max?}]
 */
export function makeEditor(fields) {
  return class extends LitElement {
    static get properties() {
      return { hass: { attribute: false }, _config: { state: true }, _entries: { state: true } };
    }

    setConfig(config) {
      this._config = { ...config };
    }

    updated(changed) {
      if (changed.has("hass") && this.hass && this._entries === undefined) {
        this._entries = null;
        // Admins may list config entries; everyone else types the id (or leaves it empty).
        Promise.resolve()
          .then(() => this.hass.callWS({ type: "config_entries/get", domain: DOMAIN }))
          .then((entries) => { this._entries = Array.isArray(entries) ? entries : null; })
          .catch(() => { this._entries = null; });
      }
    }

    _set(name, value) {
      const config = { ...this._config };
      if (value === "" || value === undefined || value === null || Number.isNaN(value)) delete config[name];
      else config[name] = value;
      this._config = config;
      this.dispatchEvent(new CustomEvent("config-changed", { detail: { config }, bubbles: true, composed: true }));
    }

    _field(f) {
      const cfg = this._config || {};
      const label = t(this.hass, `opt_${f.name}`);
      const id = `opt-${f.name}`;
      if (f.name === "entry_id" && this._entries && this._entries.length) {
        return html`<label for=${id}>${label}</label>
          <select id=${id} name=${f.name} @change=${(e) => this._set(f.name, e.target.value)}>
            <option value="" ?selected=${!cfg.entry_id}>${t(this.hass, "opt_entry_auto")}</option>
            ${this._entries.map((e) => html`<option value=${e.entry_id} ?selected=${cfg.entry_id === e.entry_id}>
              ${e.title || e.entry_id}</option>`)}
          </select>`;
      }
      if (f.type === "boolean") {
        const checked = cfg[f.name] === undefined ? !!f.default : !!cfg[f.name];
        return html`<label class="check"><input type="checkbox" id=${id} name=${f.name} .checked=${checked}
          @change=${(e) => this._set(f.name, e.target.checked)} /> ${label}</label><span></span>`;
      }
      if (f.type === "select") {
        const value = cfg[f.name] === undefined ? f.default : cfg[f.name];
        return html`<label for=${id}>${label}</label>
          <select id=${id} name=${f.name} @change=${(e) => this._set(f.name, e.target.value)}>
            ${f.options.map((o) => html`<option value=${o} ?selected=${value === o}>${t(this.hass, `opt_${f.name}_${o}`)}</option>`)}
          </select>`;
      }
      if (f.type === "number") {
        return html`<label for=${id}>${label}</label>
          <input type="number" id=${id} name=${f.name} min=${f.min ?? ""} max=${f.max ?? ""}
            .value=${cfg[f.name] === undefined ? "" : String(cfg[f.name])} placeholder=${f.default ?? ""}
            @change=${(e) => this._set(f.name, e.target.value === "" ? undefined : Number(e.target.value))} />`;
      }
      return html`<label for=${id}>${label}</label>
        <input type="text" id=${id} name=${f.name} .value=${cfg[f.name] || ""}
          @change=${(e) => this._set(f.name, e.target.value.trim())} />`;
    }

    render() {
      if (!this._config) return html``;
      return html`<form class="editor" @submit=${(e) => e.preventDefault()}>
        ${[{ name: "entry_id", type: "text" }, { name: "title", type: "text" }, ...fields].map((f) => this._field(f))}
      </form>`;
    }

    static get styles() {
      return css`
        .editor {
          display: grid;
          grid-template-columns: max-content 1fr;
          gap: 8px 12px;
          align-items: center;
          padding: 8px 0;
        }
        input[type="text"],
        input[type="number"],
        select {
          font: inherit;
          padding: 6px 8px;
          border: 1px solid var(--divider-color, #ccc);
          border-radius: 4px;
          background: var(--card-background-color, #fff);
          color: var(--primary-text-color, #212121);
        }
        .check {
          grid-column: 1 / 2;
        }
      `;
    }
  };
}
