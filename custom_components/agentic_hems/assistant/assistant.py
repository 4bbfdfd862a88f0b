"""The assistant of one site: ``ask`` runs the security layer, the rate limits and the cost cap, then the ReAct loop.

:class:`Assistant` chooses the model (the configured OpenAI-compatible one, else the offline planner), runs the loop
with :class:`.tools.HassTools` as the user who asked, fires ``agentic_hems_run_step`` per iteration and
``agentic_hems_run_finished`` per run, and keeps the last ``MAX_RUNS`` runs, redacted, in its store
(:mod:`.runs`). What ``ask`` returns and Assist speaks reports outcomes, not the model's claims.
"""

from __future__ import annotations

from datetime import datetime, timedelta
import math
from typing import TYPE_CHECKING, Any
import uuid

from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError
from homeassistant.helpers import translation
from homeassistant.helpers.storage import Store
from homeassistant.util import dt as dt_util

from ..bounds import MAX_ASK_CHARS, TOOL_CALLS_PER_DAY, TOOL_CALLS_PER_HOUR, TOOL_CALLS_PER_USER_MINUTE
from ..const import (
    CONF_CALENDAR_ENTITY,
    CONF_CALENDAR_KEYWORD,
    CONF_DAILY_COST_CAP,
    CONF_LLM_API_KEY,
    CONF_LLM_BASE_URL,
    CONF_LLM_MODEL,
    CONF_LLM_PRICE_INPUT,
    CONF_LLM_PRICE_OUTPUT,
    CONF_SHARE_CALENDAR_TITLES,
    DOMAIN,
    EVENT_RUN_FINISHED,
    EVENT_RUN_STEP,
    LOGGER,
    REAUTH_LLM,
    STORAGE_VERSION,
)
from ..gates.models import RequestedAction
from ..gates.redact import redact
from ..listeners import ChangeListeners
from ..orchestrator.actions import EVALUATE_COMMAND
from ..orchestrator.intent import CANCEL_ACTION, SCHEDULE_ACTION
from ..orchestrator.loop import RunResult, Step, run_loop
from ..orchestrator.offline import ApplianceRef, OfflinePlanner
from ..orchestrator.outcomes import COMMAND, claims_action, fulfilled, refused_command, report
from ..orchestrator.texts import language as text_language, local_time, rejection, say, window as window_text
from ..security import assess, clearly_out_of_scope, wrap
from ..security.ratelimit import RateLimiter, Refusal
from ..service_helpers import invalid
from ..storage import async_load_store
from .llm import OpenAIModel, ProviderHealth, prompt
from .runs import MAX_RUNS, ask_response, cost_since, refused_record, run_record, run_stats
from .tools import HassTools

if TYPE_CHECKING:
    from ..runtime import AgenticHemsConfigEntry


class Assistant(ChangeListeners):
    """Rate limits, runs and their store for one site.

    ``limiter`` counts ``ask`` requests (day and hour for all users together: they spend the site's model budget;
    administrators pass those two, so no one can lock the owner out);
    ``tool_limiter`` counts calls of the site's LLM API tools per user, so no one uses up another's calls.
    """

    def __init__(
        self, hass: HomeAssistant, entry: AgenticHemsConfigEntry, limiter: RateLimiter, options: dict[str, Any]
    ) -> None:
        """Keep the site's ``limiter`` and ``options``; the runs are restored by :meth:`async_load`."""
        self.hass = hass
        self.entry = entry
        self.limiter = limiter
        self.tool_limiter = RateLimiter(
            TOOL_CALLS_PER_DAY, TOOL_CALLS_PER_HOUR, TOOL_CALLS_PER_USER_MINUTE, shared=False
        )
        self.options = options
        self.runs: list[dict[str, Any]] = []
        self.provider_health = ProviderHealth()  # the site's provider outage, logged once
        self._store: Store[dict[str, Any]] = Store(hass, STORAGE_VERSION, f"{DOMAIN}.{entry.entry_id}.runs")

    async def async_load(self) -> None:
        """Restore the stored runs (unreadable data is dropped)."""
        data = await async_load_store(self._store, "stored runs")
        if data is not None and isinstance(data.get("runs"), list):
            self.runs = [r for r in data["runs"] if isinstance(r, dict)][-MAX_RUNS:]

    def _llm(self) -> bool:
        return bool(self.entry.data.get(CONF_LLM_BASE_URL) and self.options.get(CONF_LLM_MODEL))

    def model(self, lang: str = "en") -> OpenAIModel | OfflinePlanner:
        """Return the configured OpenAI-compatible model, else the offline planner (answering in ``lang``)."""
        if self._llm():
            return OpenAIModel(
                self.hass,
                str(self.entry.data[CONF_LLM_BASE_URL]),
                self.entry.data.get(CONF_LLM_API_KEY),
                str(self.options[CONF_LLM_MODEL]),
                self.provider_health,
            )
        appliances = self.entry.runtime_data.planner.appliances.values()
        home = self.entry.runtime_data.home
        config = home.config if home is not None else None
        home_devices = [ApplianceRef(b.name, "battery") for b in config.batteries] if config else []
        home_devices += [ApplianceRef(h.name, "heat_pump") for h in config.heat_pumps] if config else []
        return OfflinePlanner(
            [ApplianceRef(a.name, a.kind, a.entity_id) for a in appliances],
            calendar=bool(self.options.get(CONF_CALENDAR_ENTITY)),
            lang=lang,
            devices=self._device_pairs,
            home_devices=home_devices,
        )

    def _device_pairs(self, text: str) -> list[RequestedAction]:
        """Return the pairs of devices that ``text`` asks for, with their values (the Policy gate's reading)."""
        pairs = self.entry.runtime_data.control.read_request(text)
        return [p for p in pairs if p.action not in (SCHEDULE_ACTION, CANCEL_ACTION)]

    def price(self, result: RunResult) -> float:
        """Return the run's cost from the per-model price table (per million prompt and completion tokens)."""
        per_in, per_out = float(self.options[CONF_LLM_PRICE_INPUT]), float(self.options[CONF_LLM_PRICE_OUTPUT])
        return round((result.prompt_tokens * per_in + result.completion_tokens * per_out) / 1e6, 6)

    def cost_today(self, now: datetime) -> float:
        """Return what the runs of the last 24 hours cost."""
        return cost_since(self.runs, now - timedelta(days=1))

    def stats(self, runs: list[dict[str, Any]] | None = None) -> dict[str, float | int | None]:
        """Return analytics over the stored runs (or ``runs``, a selection of them).

        The count, success rate (%), mean iterations and tokens, and the total cost (:func:`.runs.run_stats`).
        """
        return run_stats(self.runs if runs is None else runs)

    def _refused(self, flags: tuple[str, ...], reason: str, context: Context) -> None:
        """Record a request refused before any model call (the text itself is not kept)."""
        self._add(refused_record(flags, reason, context.user_id))

    def _add(self, record: dict[str, Any]) -> None:
        self.runs.append(record)
        del self.runs[:-MAX_RUNS]
        self._store.async_delay_save(lambda: {"runs": self.runs}, 1.0)
        self.async_notify_listeners()

    async def async_flush(self) -> None:
        """Write the runs now (unload)."""
        await self._store.async_save({"runs": self.runs})

    async def async_ask(self, text: str, context: Context, language: str | None = None) -> dict[str, Any]:
        """Run one request: security layer, rate limits, then the loop; return the service response.

        ``language`` (Assist's; HA's configured language when None) chooses the language of the summary, English
        or German: outcome sentences, the offline planner's answer, the out-of-scope refusal and why a run stopped
        (a provider failure, the time budget, the iteration limit), and of the rejection's reason and the rate
        limit's window in the errors; the run record keeps the English reason in ``error``.

        Raises:
            ServiceValidationError: the request is longer than ``MAX_ASK_CHARS`` (``input_too_large_chars``,
                checked before anything reads it), it was rejected (``request_rejected``), a rate limit is reached
                (``rate_limited``) or today's model cost reached the cap (``cost_cap_reached``); nothing ran.

        """
        lang = text_language(language or self.hass.config.language)
        request = await self._admit(text, context, lang)
        started = dt_util.utcnow()
        if (spent := self.cost_today(started)) >= float(self.options[CONF_DAILY_COST_CAP]) > 0 and self._llm():
            raise invalid("cost_cap_reached", cost=f"{spent:.4f}")
        model = self.model(lang)
        out_of_scope = clearly_out_of_scope(request)
        tools = self._tools(context, request, model, out_of_scope=out_of_scope)
        run_id = uuid.uuid4().hex
        if out_of_scope:  # refused before any model call
            result = RunResult(run_id, model.name, True, say("out_of_scope", lang), [])
        else:
            result = await self._run(run_id, request, model, tools)
        return await self._finish(result, tools, started=started, llm=isinstance(model, OpenAIModel), lang=lang)

    async def _admit(self, text: str, context: Context, lang: str) -> str:
        """Check ``text`` (size, security layer, rate limits) and return it sanitized; record a refusal.

        ``lang`` is the language of the rejection's reason and the rate limit's window.

        Raises:
            ServiceValidationError: ``input_too_large_chars``, ``request_rejected`` or ``rate_limited``.

        """
        if len(text) > MAX_ASK_CHARS:
            self._refused(("too_large",), f"longer than {MAX_ASK_CHARS} characters", context)
            raise invalid("input_too_large_chars", maximum=str(MAX_ASK_CHARS), path="text")
        assessment = assess(text)
        if not assessment.accepted:
            self._refused(assessment.flags, assessment.reason, context)
            raise invalid("request_rejected", reason=rejection(assessment, lang))
        now = dt_util.utcnow()
        user = await self.hass.auth.async_get_user(context.user_id) if context.user_id else None
        if (refusal := self.limiter.check(context.user_id, now, exempt=user is not None and user.is_admin)) is not None:
            self._refused(("rate_limited",), f"limit per {refusal.window}", context)
            raise rate_limited(refusal, now, lang)
        if not assessment.in_scope:
            LOGGER.info("A request without home-energy keywords; the planner decides")
        return assessment.sanitized

    def _tools(
        self, context: Context, request: str, model: OpenAIModel | OfflinePlanner, *, out_of_scope: bool
    ) -> HassTools:
        """Return the tools for one run of ``request`` as the user of ``context``."""
        return HassTools(
            self.hass,
            self.entry,
            context,
            calendar_entity=self.options.get(CONF_CALENDAR_ENTITY) or None,
            calendar_keyword=str(self.options.get(CONF_CALENDAR_KEYWORD) or "car"),
            share_calendar_titles=bool(self.options.get(CONF_SHARE_CALENDAR_TITLES, False)),
            agent_model=model if isinstance(model, OpenAIModel) else None,
            request=request,
            # an out-of-scope request is answered with the refusal alone: it asks for nothing here
            requested=frozenset() if out_of_scope else self.entry.runtime_data.control.read_request(request),
        )

    async def _run(self, run_id: str, request: str, model: OpenAIModel | OfflinePlanner, tools: HassTools) -> RunResult:
        """Run the loop on ``request``, firing a run step event per iteration; start a reauth if the key failed."""
        system = await self.hass.async_add_executor_job(prompt, "hems_orchestrator.md")

        def _step(step: Step) -> None:
            self.hass.bus.async_fire(
                EVENT_RUN_STEP,
                {
                    "config_entry_id": self.entry.entry_id,
                    "run_id": run_id,
                    "iteration": step.iteration,
                    "action": (step.action or {}).get("type"),
                    "status": step.status,
                },
                context=tools.context,
            )

        result = await run_loop(
            wrap(request),
            model,
            tools,
            system_prompt=system,
            on_step=_step,
            run_id=run_id,
            usage=model.usage if isinstance(model, OpenAIModel) else None,
        )
        result.prompt_tokens += tools.agent_usage.prompt_tokens
        result.completion_tokens += tools.agent_usage.completion_tokens
        if result.auth_failed:
            self.entry.async_start_reauth(self.hass, data={REAUTH_LLM: True})
        return result

    async def _finish(
        self, result: RunResult, tools: HassTools, *, started: datetime, llm: bool, lang: str
    ) -> dict[str, Any]:
        """Judge the run by its outcomes, record it, fire the run finished event and return the service response."""
        tools.outcomes.extend(  # commands that never reached the gates (invalid) are outcomes too
            refused_command(s.action, str(s.observation.get("error")))
            for s in result.steps
            if not s.executed and (s.action or {}).get("type") == EVALUATE_COMMAND
        )
        made_up = llm and result.success and not tools.outcomes and claims_action(result.summary)
        # a model's answer or a refusal before the loop answers; an offline run that only finished understood nothing
        answered = llm or not result.steps or any(s.executed for s in result.steps)
        success = (
            result.success
            and all(p.get("feasible", True) for p in tools.plans.values())
            and fulfilled(tools.outcomes, asked=bool(tools.requested), answered=answered)
            and not made_up
        )
        model_summary = result.summary
        result.summary = await self._summary(result, tools, llm=llm, lang=lang)
        data = self.entry.runtime_data.coordinator.data
        record = run_record(
            result,
            tools,
            request=tools.request,
            started=started,
            cost=self.price(result),
            curve=None if data is None else data.total,
        )
        record |= {"success": success, "outcomes": redact(tools.outcomes), "model_summary": redact(model_summary)}
        self._add(record)
        self.hass.bus.async_fire(
            EVENT_RUN_FINISHED,
            {
                "config_entry_id": self.entry.entry_id,
                "run_id": result.run_id,
                "success": success,
                "summary": result.summary,
            },
            context=tools.context,
        )
        return ask_response(result, tools, success=success)

    async def _summary(self, result: RunResult, tools: HassTools, *, llm: bool, lang: str) -> str:
        """Return what ``ask`` returns and Assist speaks, in ``lang``.

        Outcomes, not claims: the outcome report (and why the run stopped) after a run that stopped (a provider
        failure, the budget, the iteration limit) and after a model's run that did anything, or did nothing although
        the request asked for something or its closing text claims an action ("Nothing was done."). Else the run's
        own summary: a model's answer to a question, or the offline planner's (built from the observations).
        """
        stopped = None
        if result.error_key is not None:  # a provider failure: the integration's translated message
            stopped = await async_exception_text(self.hass, lang, result.error_key)
        elif result.stop_key is not None:
            stopped = say(result.stop_key, lang, **result.stop_args)
        claim = result.success and (bool(tools.requested) or claims_action(result.summary))
        commands = any(o.get("kind") == COMMAND for o in tools.outcomes)  # the offline planner's included
        if (llm and (tools.outcomes or claim)) or commands or stopped is not None:
            return report(tools.outcomes, lang, stopped)
        return result.summary


def rate_limited(refusal: Refusal, now: datetime, lang: str) -> ServiceValidationError:
    """Return the translated ``rate_limited`` error of ``refusal`` at ``now`` (aware UTC), in ``lang``.

    Placeholders: ``window`` (in ``lang``), ``time`` (when a call is possible again, rounded up to the minute: local
    "HH:MM", with the local weekday when that is not today's) and ``minutes`` (how long until then, at least 1).
    """
    minutes = max(1, math.ceil((refusal.retry_at - now).total_seconds() / 60))
    local = dt_util.as_local(now + timedelta(minutes=minutes)).replace(second=0, microsecond=0)
    when = local.strftime("%H:%M")
    if local.date() != dt_util.as_local(now).date():
        when = f"{local_time(local.strftime('%a'), lang)} {when}"
    return invalid("rate_limited", window=window_text(refusal.window, lang), time=when, minutes=str(minutes))


async def async_exception_text(
    hass: HomeAssistant, language: str, key: str, placeholders: dict[str, str] | None = None
) -> str | None:
    """Return the integration's ``exceptions.<key>`` message in ``language``, filled in.

    HA falls back to English; None when there is no such string or the placeholders do not fill it.
    """
    strings = await translation.async_get_translations(hass, language, "exceptions", [DOMAIN])
    template = strings.get(f"component.{DOMAIN}.exceptions.{key}.message")
    if template is None:
        return None
    try:
        return template.format(**(placeholders or {}))
    except KeyError, IndexError, ValueError:
        return None
