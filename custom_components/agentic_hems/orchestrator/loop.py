"""The ReAct loop: Thought -> Action -> Observation, at most 15 iterations and a wall-clock budget.

The loop is pure: it talks to a :class:`Model` (an OpenAI-compatible client in the shell, or the offline planner)
and carries out actions through :class:`Tools` (the shell's planner, gates and calendar). Each reply is parsed into
one action (:mod:`.parser`), checked against the registry (:mod:`.actions`), and its compact Observation goes back
to the model. Parse and validation errors are Observations too; nothing that failed to parse ever runs.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
import json
import time
from typing import Any, Protocol
import uuid

from ..validation import describe, vol
from .actions import FINISH, GROUP_TOPICS, REGISTRY, Action, validate
from .parser import Reply, bounded_reply, parse

MAX_ITERATIONS = 15
DEFAULT_BUDGET_S = 120.0
MAX_OBSERVATION_CHARS = 1200


class ModelError(Exception):
    """The model could not answer (HTTP error, timeout, rejected key); the message says why."""


class ModelAuthError(ModelError):
    """The provider rejected the API key (the shell starts a reauth flow)."""


@dataclass(frozen=True)
class Usage:
    """Tokens of one model call."""

    prompt_tokens: int = 0
    completion_tokens: int = 0


class Model(Protocol):
    """What the loop needs from a model."""

    @property
    def name(self) -> str:
        """The model's name (recorded in the run)."""
        ...

    async def complete(self, messages: Sequence[dict[str, Any]]) -> Reply:
        """Return the reply to ``messages`` (OpenAI chat format).

        Raises:
            ModelError: the call failed.

        """
        ...


class Tools(Protocol):
    """What carries out actions: returns a compact, JSON-safe Observation (``action`` and the result)."""

    async def run(self, action: Action) -> dict[str, Any]:
        """Carry out ``action`` (validated)."""
        ...


@dataclass
class Step:
    """One iteration: what the model asked for and what came back."""

    iteration: int
    action: dict[str, Any] | None
    status: str  # "ok", "error" (parse, validation or tool error), "finish"
    observation: dict[str, Any]
    thought: str = ""
    ignored: list[str] = field(default_factory=list)
    executed: bool = False  # the tools ran the action (validation passed, not FINISH)

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "iteration": self.iteration,
            "action": self.action,
            "status": self.status,
            "executed": self.executed,
            "observation": self.observation,
            "thought": self.thought,
            "ignored": self.ignored,
        }


@dataclass
class RunResult:
    """One run: success, the final summary, every step, tokens and timing."""

    run_id: str
    model: str
    success: bool
    summary: str
    steps: list[Step]
    prompt_tokens: int = 0
    completion_tokens: int = 0
    round_trips: int = 0
    duration_s: float = 0.0
    error: str | None = None
    auth_failed: bool = False
    error_key: str | None = None  # the model error's ``translation_key`` (the shell translates it), if it has one
    stop_key: str | None = None  # why the loop stopped itself, a :mod:`.texts` message id, with its ``stop_args``
    stop_args: dict[str, Any] = field(default_factory=dict)

    @property
    def iterations(self) -> int:
        """Model round trips that produced a step."""
        return len(self.steps)

    @property
    def tokens(self) -> int:
        """Prompt plus completion tokens."""
        return self.prompt_tokens + self.completion_tokens


def compact(observation: dict[str, Any]) -> str:
    """Return the Observation text sent to the model: compact JSON, cut at ``MAX_OBSERVATION_CHARS``."""
    text = json.dumps(observation, separators=(",", ":"), ensure_ascii=False, default=str)
    return text if len(text) <= MAX_OBSERVATION_CHARS else text[: MAX_OBSERVATION_CHARS - 3] + "..."


def instructions(request: str = "") -> str:
    """Return the ReAct instructions appended to the orchestrator prompt.

    They give the format and the registered actions (a group's actions only when ``request`` mentions its topic, to
    keep every round trip short).
    """
    lines = [f"- {name}: {spec.description}" for name, spec in REGISTRY.items() if not spec.group]
    groups: dict[str, list[str]] = {}
    for name, spec in REGISTRY.items():
        if spec.group and GROUP_TOPICS[spec.group].search(request):
            groups.setdefault(spec.group, []).append(f"{name}({spec.description})")
    lines += [f"- {group}: {', '.join(names)}" for group, names in groups.items()]
    actions = "\n".join(lines)
    return (
        "Each turn: one short Thought line, then one line ACTION: TYPE | key=value | ...\n"
        f"Actions:\n{actions}\n"
        "Each action returns an Observation. End with ACTION: FINISH | summary=<one or two sentences>."
    )


async def run_loop(
    request: str,
    model: Model,
    tools: Tools,
    *,
    system_prompt: str,
    max_iterations: int = MAX_ITERATIONS,
    budget_s: float = DEFAULT_BUDGET_S,
    clock: Callable[[], float] = time.monotonic,
    on_step: Callable[[Step], Awaitable[None] | None] | None = None,
    usage: Callable[[], Usage] | None = None,
    run_id: str | None = None,
) -> RunResult:
    """Run one request (already assessed, sanitized and wrapped) to FINISH, an error, or the limits.

    ``usage`` returns the tokens of the model's last call (the shell's client counts them); ``on_step`` sees each
    step as it happens (the shell fires ``agentic_hems_run_step``).
    """
    started = clock()
    result = RunResult(run_id or uuid.uuid4().hex, model.name, False, "", [])
    messages: list[dict[str, Any]] = [
        {"role": "system", "content": f"{system_prompt}\n\n{instructions(request)}"},
        {"role": "user", "content": request},
    ]
    for iteration in range(1, max_iterations + 1):
        remaining = budget_s - (clock() - started)
        reply = await _complete(model, messages, result, remaining=remaining, budget_s=budget_s, usage=usage)
        if reply is None:
            break
        step = await _step(iteration, reply, tools, messages)
        result.steps.append(step)
        if on_step is not None and (pending := on_step(step)) is not None:
            await pending
        if step.status == "finish":
            result.success = True
            result.summary = str(step.observation.get("summary", ""))
            break
    else:
        _stopped(
            result,
            "stop.iterations",
            f"stopped after {max_iterations} iterations without FINISH",
            iterations=max_iterations,
        )
    if not result.success and not result.summary:
        result.summary = result.error or "stopped"
    result.duration_s = round(clock() - started, 3)
    return result


async def _complete(
    model: Model,
    messages: list[dict[str, Any]],
    result: RunResult,
    *,
    remaining: float,
    budget_s: float,
    usage: Callable[[], Usage] | None,
) -> Reply | None:
    """Return the model's reply within ``remaining`` seconds, counting the round trip and its tokens in ``result``.

    None when the loop stops: the budget is spent (before or during the call) or the model failed (``result.error``,
    ``error_key`` and ``auth_failed`` set).
    """
    if remaining > 0:
        try:
            async with asyncio.timeout(remaining):
                reply = await model.complete(messages)
        except TimeoutError:
            pass
        except ModelError as err:
            result.error = str(err)
            result.error_key = getattr(err, "translation_key", None)
            result.auth_failed = isinstance(err, ModelAuthError)
            return None
        else:
            result.round_trips += 1
            if usage is not None:
                used = usage()
                result.prompt_tokens += used.prompt_tokens
                result.completion_tokens += used.completion_tokens
            return reply
    _stopped(result, "stop.budget", f"stopped: the {budget_s:g} s budget is spent", budget=f"{budget_s:g}")
    return None


def _stopped(result: RunResult, key: str, error: str, **args: Any) -> None:
    """Record that the loop stops itself: ``error`` (English, for the run record), message ``key`` with ``args``."""
    result.error, result.stop_key, result.stop_args = error, key, args


async def _step(iteration: int, reply: Reply, tools: Tools, messages: list[dict[str, Any]]) -> Step:
    parsed = parse(reply)  # an oversized reply is refused first, and only a placeholder of it is kept below
    reply = bounded_reply(reply)
    call_ids = [c.id or f"call_{iteration}_{i}" for i, c in enumerate(reply.tool_calls)]
    if reply.tool_calls:
        messages.append(
            {
                "role": "assistant",
                "content": reply.content or "",
                "tool_calls": [
                    {"id": cid, "type": "function", "function": {"name": c.name, "arguments": c.arguments}}
                    for cid, c in zip(call_ids, reply.tool_calls, strict=True)
                ],
            }
        )
    else:
        messages.append({"role": "assistant", "content": reply.content or ""})
    if parsed.action is None:
        observation: dict[str, Any] = {"error": parsed.error}
        step = Step(iteration, None, "error", observation, parsed.thought)
    else:
        try:
            action = validate(parsed.action)
        except vol.Invalid as err:
            observation = {"action": parsed.action.type, "error": f"invalid action: {describe(err)}"}
            step = Step(iteration, parsed.action.as_dict(), "error", observation, parsed.thought, parsed.ignored)
        else:
            if action.type == FINISH:
                observation = {"action": FINISH, "summary": action.args.get("summary", "")}
                step = Step(iteration, action.as_dict(), "finish", observation, parsed.thought, parsed.ignored)
            else:
                observation = await tools.run(action)
                status = "error" if "error" in observation else "ok"
                step = Step(iteration, action.as_dict(), status, observation, parsed.thought, parsed.ignored, True)
        if parsed.ignored:
            step.observation = {**observation, "ignored": f"only the first action runs; not executed: {parsed.ignored}"}
    text = f"Observation: {compact(step.observation)}"
    if reply.tool_calls:
        messages.append({"role": "tool", "tool_call_id": call_ids[0], "content": text})
        messages.extend(
            {"role": "tool", "tool_call_id": cid, "content": "Observation: not executed, one action per reply"}
            for cid in call_ids[1:]
        )
    else:
        messages.append({"role": "user", "content": text})
    return step
