"""Bounded work: the largest allowed input and a 4 MB one, through a service call, ``ask``, Assist and a model reply,
while a probe on HA's event loop measures the most CPU time the loop's thread spends between two of its 10 ms
wake-ups: the longest step that holds the loop. It must stay under 100 ms each time, and the oversized input must get
the translated error before anything scans it. CPU time of the loop's thread (``time.thread_time``), not wall time:
other processes on a loaded machine delay the loop without anything holding it, and executor jobs run on other
threads. Blocking I/O on the loop is HA's own test harness's check."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator, Awaitable, Callable
from dataclasses import dataclass
import time
from typing import Any

import pytest
from pytest_homeassistant_custom_component.common import MockConfigEntry

from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError

from custom_components.agentic_hems.bounds import MAX_ASK_CHARS, MAX_REPLY_CHARS, MAX_TEXT_CHARS, MAX_TOTAL_CHARS
from custom_components.agentic_hems.const import DOMAIN

from .model_server import Scripted, provider  # noqa: F401 - provider is a fixture
from .test_llm import ask, llm_entry  # noqa: F401 - llm_entry is a fixture

HUGE = "a" * (4 * 1024 * 1024)
MAX_GAP_S = 0.1


@dataclass
class Probe:
    """The most CPU time (s) the loop's thread spends between two wake-ups of a task that sleeps 10 ms at a time."""

    gap_s: float = 0.0
    running: bool = True

    async def run(self) -> None:
        last = time.thread_time()
        while self.running:
            await asyncio.sleep(0.01)
            now = time.thread_time()
            self.gap_s = max(self.gap_s, now - last)
            last = now


@pytest.fixture
async def probed(hass: HomeAssistant) -> AsyncGenerator[Callable[[Awaitable[Any]], Awaitable[tuple[Any, float]]]]:
    """Await a coroutine under a fresh probe; returns its result (or the exception it raised) and the longest gap."""

    async def measure(work: Awaitable[Any]) -> tuple[Any, float]:
        probe = Probe()
        task = hass.async_create_background_task(probe.run(), "loop probe")
        await asyncio.sleep(0.02)  # the probe is running
        probe.gap_s = 0.0
        try:
            result: Any = await work
        except Exception as err:  # noqa: BLE001 - the caller checks which
            result = err
        await asyncio.sleep(0.02)  # one more wake-up after the work
        probe.running = False
        await task
        print(f"max loop gap {probe.gap_s * 1000:.1f} ms")
        return result, probe.gap_s

    yield measure


def _too_large(err: Any, limit: str = "chars") -> None:
    assert isinstance(err, ServiceValidationError), err
    assert err.translation_domain == DOMAIN and err.translation_key == f"input_too_large_{limit}", err.translation_key
    assert str(err).startswith("The input is")


async def _evaluate(hass: HomeAssistant, data: dict[str, Any]) -> Any:
    return await hass.services.async_call(
        DOMAIN, "evaluate_command", {"source_agent": "probe", **data}, blocking=True, return_response=True
    )


async def test_a_service_call_never_stalls_the_loop(
    hass: HomeAssistant, llm_entry: MockConfigEntry, probed: Callable[[Awaitable[Any]], Awaitable[tuple[Any, float]]]
) -> None:
    # The largest input allowed: every character the caps admit goes through the InputGuard's scan.
    largest = {
        "raw_input": "x " * (MAX_TEXT_CHARS // 2),
        "model_candidate": {"intent": "turn_on", "device_alias": "y " * ((MAX_TOTAL_CHARS - MAX_TEXT_CHARS - 100) // 2)},
    }
    response, gap = await probed(_evaluate(hass, largest))
    assert isinstance(response, dict) and response["outcome"] == "blocked", response
    assert gap < MAX_GAP_S
    for data, limit in (
        ({"model_candidate": {"intent": "turn_on", "device_alias": HUGE}}, "chars"),
        ({"raw_input": HUGE}, "chars"),
        ({"model_candidate": {"intent": "turn_on", "params": {str(i): "z" * MAX_TEXT_CHARS for i in range(500)}}}, "total_chars"),
        ({"model_candidate": {"intent": "turn_on", "params": {"list": list(range(1_000_000))}}}, "items"),
    ):
        err, gap = await probed(_evaluate(hass, data))
        _too_large(err, limit)
        assert gap < MAX_GAP_S
    deep: dict[str, Any] = {}
    for _ in range(100_000):
        deep = {"d": deep}
    err, gap = await probed(_evaluate(hass, {"model_candidate": deep}))
    _too_large(err, "depth")
    assert gap < MAX_GAP_S
    assert not llm_entry.runtime_data.control.traces.get("nothing")  # the oversized calls left no trace
    assert len(llm_entry.runtime_data.control.traces) == 1


async def test_ask_and_assist_never_stall_the_loop(
    hass: HomeAssistant, llm_entry: MockConfigEntry, provider: tuple[Scripted, str],
    probed: Callable[[Awaitable[Any]], Awaitable[tuple[Any, float]]],
) -> None:
    from homeassistant.components import conversation

    scripted, _ = provider
    err, gap = await probed(ask(hass, "b " * (MAX_ASK_CHARS // 2)))  # allowed in, refused by the security layer
    assert isinstance(err, ServiceValidationError) and err.translation_key == "request_rejected"
    assert gap < MAX_GAP_S
    err, gap = await probed(ask(hass, HUGE))
    _too_large(err)
    assert gap < MAX_GAP_S
    agent = "conversation.agentic_hems"
    for language, start in (("en", "The input is too large"), ("de", "Die Eingabe ist zu groß")):
        result, gap = await probed(
            conversation.async_converse(hass, HUGE, None, Context(), language=language, agent_id=agent)
        )
        assert result.response.response_type.value == "error"
        assert result.response.speech["plain"]["speech"].startswith(start)
        assert gap < MAX_GAP_S
    assert scripted.requests == []  # nothing reached the model


async def test_a_model_reply_never_stalls_the_loop(
    hass: HomeAssistant, llm_entry: MockConfigEntry, provider: tuple[Scripted, str],
    probed: Callable[[Awaitable[Any]], Awaitable[tuple[Any, float]]],
) -> None:
    scripted, _ = provider
    largest = "Thought: " + "c " * ((MAX_REPLY_CHARS - 100) // 2) + "\nACTION: GET_PRICES"
    assert len(largest) <= MAX_REPLY_CHARS
    scripted.replies = [largest, HUGE, {"tool_calls": [("schedule", {"appliance": HUGE})]},
                        "ACTION: FINISH | summary=Prices are lowest tonight."]  # an answer ("done" claims an action)
    response, gap = await probed(ask(hass, "What do prices look like today?"))
    assert isinstance(response, dict) and response["success"], response
    assert gap < MAX_GAP_S
    steps = llm_entry.runtime_data.assistant.runs[-1]["actions_taken"]
    assert steps[0]["status"] == "ok" and steps[0]["action"]["type"] == "GET_PRICES"
    for step in steps[1:3]:
        assert step["observation"]["error"].startswith(f"the reply is longer than {MAX_REPLY_CHARS} characters")
    # What went back to the model stands in for the oversized replies; no request carries them again.
    assert all(len(str(request["messages"])) < 4 * MAX_REPLY_CHARS for request in scripted.requests)


async def test_websocket_ids_are_capped(
    hass: HomeAssistant, llm_entry: MockConfigEntry, hass_ws_client: Any
) -> None:
    client = await hass_ws_client(hass)
    await client.send_json_auto_id({"type": "agentic_hems/runs", "entry_id": "e" * 65})
    reply = await client.receive_json()
    assert not reply["success"] and reply["error"]["code"] == "invalid_format"
    await client.send_json_auto_id({"type": "agentic_hems/runs", "entry_id": llm_entry.entry_id})
    assert (await client.receive_json())["success"]
