"""Model round trips and tokens for "Schedule all flexible loads" (three appliances) against a per-appliance flow.

Run: ``.venv/bin/python benchmarks/bench_orchestrator.py``. No tokenizer is available offline, so tokens are counted
as characters / 4 of the JSON messages sent (prompt) and received (completion), as the scripted server of
``tests/ha/test_llm.py`` counts them. Two conversations go through the real loop, system prompt and parser:

- this integration: compact observations (a price summary, never the table) and one joint SCHEDULE;
- the reference, the per-appliance flow of the design this project started from (7 iterations): the 96-slot price
  table in the first observation and re-sent with every agent call, one CALL_AGENT and one SCHEDULE per appliance.

That design reports 7 iterations and 3,245 tokens; the target is <= 4 round trips and <= 2,000 tokens.
Exit status 1 when the target is missed. Not a test: pytest never collects this directory.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from dataclasses import dataclass, field
import json
from pathlib import Path
import sys
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from custom_components.agentic_hems.orchestrator.actions import Action  # noqa: E402
from custom_components.agentic_hems.orchestrator.loop import run_loop  # noqa: E402
from custom_components.agentic_hems.orchestrator.parser import Reply  # noqa: E402
from custom_components.agentic_hems.security import wrap  # noqa: E402

PROMPT = (Path(__file__).resolve().parents[1] / "custom_components/agentic_hems/prompts/hems_orchestrator.md").read_text()
PRICES = [round(0.08 + 0.04 * ((i // 4) % 24 in range(17, 21)) + 0.001 * (i % 7), 4) for i in range(96)]
APPLIANCES = ["Dishwasher", "Washing machine", "EV charger"]


def tokens(value: Any) -> int:
    return len(json.dumps(value, ensure_ascii=False)) // 4


@dataclass
class Counting:
    """Replies in order and counts characters / 4 both ways."""

    replies: list[str]
    name: str = "scripted"
    prompt_tokens: int = 0
    completion_tokens: int = 0
    round_trips: int = 0

    async def complete(self, messages: Sequence[dict[str, Any]]) -> Reply:
        self.round_trips += 1
        self.prompt_tokens += tokens(list(messages))
        reply = self.replies.pop(0)
        self.completion_tokens += tokens({"role": "assistant", "content": reply})
        return Reply(reply)


@dataclass
class Stub:
    """Observations shaped like the HA tools' (``assistant.HassTools``), or the reference's with the full table."""

    full_table: bool
    ran: list[str] = field(default_factory=list)

    async def run(self, action: Action) -> dict[str, Any]:
        self.ran.append(action.type)
        if action.type == "GET_PRICES":
            if self.full_table:
                return {"action": "GET_PRICES", "unit": "EUR/kWh", "prices": PRICES}
            return {"action": "GET_PRICES", "unit": "EUR/kWh", "from_local": "Mon 00:45", "to_local": "Wed 00:00",
                    "slots": 189, "min": 0.0, "max": 0.1155, "mean": 0.0612,
                    "cheapest": {"start_local": "Mon 03:45", "price": 0.0}}
        if action.type == "CALL_AGENT":
            return {"action": "CALL_AGENT", "appliance": action.args["appliance"], "prices": PRICES,
                    "recommendation": {"slot": "02:30", "duration_min": 150, "cost": 0.22, "reasoning": "cheapest"}}
        names = [n.strip() for n in str(action.args.get("appliance", "")).split(",")]
        return {"action": "SCHEDULE", "plans": [
            {"appliance": n, "feasible": True, "start_local": "Mon 02:30", "end_local": "Mon 05:00", "cost": 0.2186,
             "savings": 0.0109, "currency": "EUR"} for n in names]}


async def conversation(replies: list[str], full_table: bool) -> Counting:
    model = Counting(replies)
    await run_loop(wrap("Schedule all flexible loads"), model, Stub(full_table), system_prompt=PROMPT)
    return model


async def main() -> int:
    ours = await conversation([
        "Thought: prices first.\nACTION: GET_PRICES",
        f"Thought: plan all three together.\nACTION: SCHEDULE | appliance={', '.join(APPLIANCES)}",
        "Thought: done.\nACTION: FINISH | summary=Dishwasher, washing machine and EV are planned in the cheapest slots.",
    ], full_table=False)
    reference = await conversation([
        "Thought: prices first.\nACTION: GET_PRICES",
        *[f"Thought: ask the agent.\nACTION: CALL_AGENT | appliance={name}" for name in APPLIANCES[:2]],
        *[f"Thought: store it.\nACTION: SCHEDULE | appliance={name}" for name in APPLIANCES],
        "Thought: done.\nACTION: FINISH | summary=Dishwasher, washing machine and EV are planned in the cheapest slots.",
    ], full_table=True)
    print(f"{'conversation':<56} {'round trips':>11} {'prompt':>8} {'completion':>10} {'tokens':>8}")
    for label, run in (("this integration (compact observations, joint SCHEDULE)", ours),
                       ("reference: per-appliance flow, price table re-sent", reference)):
        total = run.prompt_tokens + run.completion_tokens
        print(f"{label:<56} {run.round_trips:>11} {run.prompt_tokens:>8} {run.completion_tokens:>10} {total:>8}")
    print("the reference design reports 7 iterations and 3,245 tokens; tokens here are characters / 4 (no tokenizer "
          "offline)")
    ok = ours.round_trips <= 4 and ours.prompt_tokens + ours.completion_tokens <= 2000
    print(f"target <= 4 round trips and <= 2,000 tokens: {'pass' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(asyncio.run(main()))
