// Entry point of agentic-hems-cards.js: defines the four cards and their editors.
import "./schedule-card.js";
import "./trace-card.js";
import "./ask-card.js";
import "./runs-card.js";

const VERSION = "0.1.0";
// eslint-disable-next-line no-console
console.info(`%c AGENTIC-HEMS-CARDS %c ${VERSION} `, "color:#fff;background:#03a9f4;font-weight:700", "color:#03a9f4");
