"""A scripted OpenAI-compatible chat server on a real local socket (aiohttp on 127.0.0.1): each chat request takes
the next scripted reply. The tests of the assistant with a model (test_llm, test_bounds, test_hostile) share it."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncGenerator
from dataclasses import dataclass, field
import json
from typing import Any

from aiohttp import web
import pytest

MODEL = "scripted-1"


@dataclass
class Scripted:
    """An OpenAI-compatible server: each chat request takes the next reply (a dict, or a fault name); ``served`` keeps
    the replies given, in order."""

    replies: list[Any] = field(default_factory=list)
    requests: list[dict[str, Any]] = field(default_factory=list)
    served: list[Any] = field(default_factory=list)
    key: str = "sk-test-key"

    async def models(self, request: web.Request) -> web.Response:
        if request.headers.get("Authorization") != f"Bearer {self.key}":
            return web.json_response({"error": {"message": "bad key"}}, status=401)
        return web.json_response({"object": "list", "data": [{"id": MODEL, "object": "model"}, {"id": "other", "object": "model"}]})

    async def chat(self, request: web.Request) -> web.StreamResponse:
        body = await request.json()
        self.requests.append(body)
        if request.headers.get("Authorization") != f"Bearer {self.key}":
            return web.json_response({"error": {"message": "invalid api key"}}, status=401)
        reply = self.replies.pop(0) if self.replies else "ACTION: FINISH | summary=out of script"
        self.served.append(reply)
        if reply == "429":
            return web.json_response({"error": {"message": "slow down"}}, status=429, headers={"Retry-After": "0"})
        if reply == "500":
            return web.json_response({"error": {"message": "boom"}}, status=500)
        if reply == "html":
            return web.Response(text="<html><body>Bad gateway</body></html>", content_type="text/html")
        if reply == "sleep":
            await asyncio.sleep(5)
        message: dict[str, Any] = {"role": "assistant", "content": None}
        finish = "stop"
        if isinstance(reply, dict):
            message["tool_calls"] = [
                {"id": f"call_{i}", "type": "function", "function": {"name": n, "arguments": json.dumps(a)}}
                for i, (n, a) in enumerate(reply["tool_calls"])
            ]
            finish = "tool_calls"
        elif isinstance(reply, tuple):  # (text, finish_reason)
            message["content"], finish = reply
        else:
            message["content"] = reply
        prompt = sum(len(json.dumps(m)) for m in body["messages"]) // 4
        completion = len(json.dumps(message)) // 4
        return web.json_response({
            "id": "chatcmpl-1", "object": "chat.completion", "created": 0, "model": body["model"],
            "choices": [{"index": 0, "message": message, "finish_reason": finish}],
            "usage": {"prompt_tokens": prompt, "completion_tokens": completion, "total_tokens": prompt + completion},
        })


@pytest.fixture
async def provider(socket_enabled: None) -> AsyncGenerator[tuple[Scripted, str]]:
    scripted = Scripted()
    app = web.Application()
    app.router.add_get("/v1/models", scripted.models)
    app.router.add_post("/v1/chat/completions", scripted.chat)
    runner = web.AppRunner(app, access_log=None)  # its line format reads the clock, which freezegun breaks
    await runner.setup()
    site = web.TCPSite(runner, "127.0.0.1", 0)
    await site.start()
    port = site._server.sockets[0].getsockname()[1]  # type: ignore[union-attr]
    yield scripted, f"http://127.0.0.1:{port}/v1"
    await runner.cleanup()
