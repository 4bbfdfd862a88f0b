"""An OpenAI-compatible chat model for the orchestrator, and the prompts the models are given.

Any server with the OpenAI chat API works (OpenAI, OpenRouter, Cerebras, Ollama, LM Studio): the base URL includes
``/v1``. The client is the ``openai`` package at the version Home Assistant pins (2.x on HA 2026.4, 3.x on 2026.10) on
HA's shared httpx client, which is never closed here, with an explicit timeout and retry count; as HA core's
``openai_conversation`` does, the client's platform headers (which read the OS) are computed once in the executor. The
library (about 35 MB with pydantic) and HA's httpx helper are imported by the first client, in executor jobs, never at
start-up or on the event loop. Every failure becomes a :class:`.orchestrator.loop.ModelError` with a clear message; a
rejected key becomes :class:`ModelAuthError` so the shell can start a reauth flow. Each carries a ``translation_key``
(``exceptions`` in translations/) so Assist speaks it in the speaker's language.

A provider outage is logged once: :class:`ProviderHealth` (one per site) logs one warning with the reason at the
first failure, nothing at the next failures, and one info line when a call succeeds again. The API key is never
logged.

The prompts are markdown files in the integration's ``prompts/`` folder (:func:`prompt`).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import cache
from importlib import import_module
from pathlib import Path
import sys
from typing import TYPE_CHECKING, Any, cast

from homeassistant.core import HomeAssistant

from ..const import LOGGER
from ..gates.redact import redact_url
from ..orchestrator.loop import ModelAuthError, ModelError, Usage
from ..orchestrator.parser import Reply, ToolCall

if TYPE_CHECKING:
    import httpx
    import openai

TIMEOUT_S = 60.0
MAX_RETRIES = 1
MAX_COMPLETION_TOKENS = 400
PROMPTS = Path(__file__).resolve().parents[1] / "prompts"  # the integration's prompts/ folder


@cache
def prompt(name: str) -> str:
    """Return the markdown prompt ``prompts/<name>`` of the integration (read once; call it in the executor).

    Raises:
        FileNotFoundError: there is no such prompt.

    """
    return (PROMPTS / name).read_text(encoding="utf-8")


class ProviderError(ModelError):
    """A provider failure with a translated message (``exceptions.<translation_key>``)."""

    translation_key = "provider_invalid"  # the message (str(error)) is the English reason with details, for logs


class ProviderAuthError(ModelAuthError, ProviderError):
    """The provider rejected the API key."""

    translation_key = "provider_auth"


class ProviderRateLimited(ProviderError):
    """HTTP 429."""

    translation_key = "provider_rate_limited"


class ProviderTimeout(ProviderError):
    """No answer within the timeout."""

    translation_key = "provider_timeout"


class ProviderUnreachable(ProviderError):
    """No connection (refused, DNS, TLS)."""

    translation_key = "provider_unreachable"


class ProviderHttpError(ProviderError):
    """Another HTTP error status."""

    translation_key = "provider_http"


class ProviderHealth:
    """Logs a provider outage once: one warning at its first failure, one info line at the next success."""

    def __init__(self) -> None:
        """Start healthy."""
        self.outage: str | None = None

    def failed(self, base_url: str, err: ModelError) -> None:
        """Note a failed call: a warning when this starts an outage, else nothing."""
        if self.outage is None:
            address = redact_url(base_url)
            LOGGER.warning(
                "The model provider at %s failed: %s (further failures are not logged until it recovers)",
                address,
                str(err).replace(base_url, address),
            )
        self.outage = str(err)

    def succeeded(self, base_url: str) -> None:
        """Note a successful call: an info line when this ends an outage."""
        if self.outage is not None:
            LOGGER.info("The model provider at %s recovered", redact_url(base_url))
        self.outage = None


async def async_client(
    hass: HomeAssistant, base_url: str, api_key: str | None, *, timeout_s: float | None = None
) -> openai.AsyncOpenAI:
    """Return an ``AsyncOpenAI`` on HA's shared httpx client.

    A local server without a key gets a placeholder key; ``timeout_s`` defaults to ``TIMEOUT_S``.
    """
    if "homeassistant.helpers.httpx_client" not in sys.modules:  # httpx (with its CLI's rich and pygments): 8 MB
        await hass.async_add_import_executor_job(import_module, "homeassistant.helpers.httpx_client")
    from homeassistant.helpers.httpx_client import get_async_client  # noqa: PLC0415 - imported above, in the executor

    http_client = get_async_client(hass)  # on the event loop, as HA requires
    return await hass.async_add_import_executor_job(_new_client, http_client, base_url, api_key, timeout_s or TIMEOUT_S)


def _new_client(
    http_client: httpx.AsyncClient, base_url: str, api_key: str | None, timeout_s: float
) -> openai.AsyncOpenAI:
    """Import the library (the first time), then build and prepare the client: run it in the executor.

    The platform headers are cached by the library (they read the OS); the chat resource's first use imports the
    library's chat types (about 0.3 s that would stall the event loop).
    """
    import openai  # noqa: PLC0415 - heavy (pydantic, its types): imported by the first client, in the executor

    client = openai.AsyncOpenAI(
        base_url=base_url,
        api_key=api_key or "not-needed",
        # openai 3.x types its client for httpx2; HA's shared httpx client is supported at run time.
        http_client=cast("Any", http_client),
        timeout=timeout_s,
        max_retries=MAX_RETRIES,
    )
    client.platform_headers()
    _ = client.chat.completions
    return client


async def async_list_models(hass: HomeAssistant, base_url: str, api_key: str | None) -> list[str]:
    """Return the model ids of ``GET {base_url}/models``, sorted.

    Raises:
        ModelAuthError: the key was rejected.
        ModelError: the server could not be reached or did not answer with a model list.

    """
    try:
        page = await (await async_client(hass, base_url, api_key, timeout_s=20.0)).models.list()
    except Exception as err:  # noqa: BLE001 - every client failure becomes a clear ModelError
        raise _model_error(err, base_url) from err
    return sorted({model.id for model in page.data})


def _retry_after(err: openai.APIStatusError) -> str:
    value = err.response.headers.get("retry-after") if err.response is not None else None
    return f" (retry after {value} s)" if value else ""


def _model_error(err: Exception, base_url: str) -> ModelError:
    if "openai" not in sys.modules:  # no client was built (the import failed): err is none of the library's errors
        return ProviderError(f"the provider's answer is not a valid chat response ({type(err).__name__})")
    import openai  # noqa: PLC0415 - already loaded by the client that failed: a dictionary look-up

    if isinstance(err, openai.AuthenticationError | openai.PermissionDeniedError):
        return ProviderAuthError("the provider rejected the API key")
    if isinstance(err, openai.RateLimitError):
        return ProviderRateLimited(f"the provider is rate limiting requests{_retry_after(err)}")
    if isinstance(err, openai.APITimeoutError):
        return ProviderTimeout("the model did not answer in time")
    if isinstance(err, openai.APIConnectionError):
        return ProviderUnreachable(f"cannot connect to {base_url}")
    if isinstance(err, openai.APIStatusError):
        return ProviderHttpError(f"the provider answered HTTP {err.status_code}")
    return ProviderError(f"the provider's answer is not a valid chat response ({type(err).__name__})")


class OpenAIModel:
    """A :class:`.orchestrator.loop.Model` over the chat completions API.

    ``last_usage`` holds the last call's tokens.
    """

    def __init__(
        self, hass: HomeAssistant, base_url: str, api_key: str | None, model: str, health: ProviderHealth | None = None
    ) -> None:
        """``health`` is the site's outage log (a fresh one when None)."""
        self.name = model
        self.health = health if health is not None else ProviderHealth()
        self.base_url = base_url
        self._hass = hass
        self._api_key = api_key
        self._client: openai.AsyncOpenAI | None = None
        self.last_usage = Usage()

    def usage(self) -> Usage:
        """Return the last call's tokens (for the loop's ``usage`` hook)."""
        return self.last_usage

    async def complete(self, messages: Sequence[dict[str, Any]]) -> Reply:
        """One chat completion at temperature 0.

        Raises:
            ModelAuthError: the key was rejected.
            ModelError: any other failure (rate limit, timeout, HTTP error, a body that is not a chat response).

        """
        self.last_usage = Usage()
        try:
            if self._client is None:
                self._client = await async_client(self._hass, self.base_url, self._api_key)
            response = await self._client.chat.completions.create(
                model=self.name,
                messages=list(messages),  # type: ignore[arg-type]
                temperature=0,
                max_completion_tokens=MAX_COMPLETION_TOKENS,  # replaces the deprecated max_tokens
            )
            choice = response.choices[0]
        except Exception as err:  # noqa: BLE001 - every client failure becomes a clear ModelError
            error = _model_error(err, self.base_url)
            self.health.failed(self.base_url, error)
            raise error from err
        self.health.succeeded(self.base_url)
        if response.usage is not None:
            self.last_usage = Usage(response.usage.prompt_tokens, response.usage.completion_tokens)
        calls = [
            ToolCall(call.function.name, call.function.arguments or "{}", call.id)
            for call in choice.message.tool_calls or []
            if call.type == "function"
        ]
        return Reply(choice.message.content, calls, choice.finish_reason)
