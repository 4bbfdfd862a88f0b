"""The REST and websocket client of the demo's Home Assistant, and the config-flow form helpers."""

from __future__ import annotations

import asyncio
import json
import time
from collections.abc import Callable, Mapping
from typing import Any

try:
    import aiohttp
except ModuleNotFoundError:  # only for `--help`, which scripts/demo prints with any python3 before it builds the venv
    aiohttp = None  # type: ignore[assignment]

from .constants import DOMAIN, LANGUAGE, OWNER_NAME, PASSWORD, START_DEADLINE_S, USERNAME
from .devices import EV_CHARGER_STEP
from .process import DemoError, HassProcess, log


class HassClient:
    """REST and websocket calls against the demo instance."""

    def __init__(self, session: aiohttp.ClientSession, base: str) -> None:
        self.session = session
        self.base = base
        self.token: str | None = None

    @property
    def client_id(self) -> str:
        return f"{self.base}/"

    def _headers(self) -> dict[str, str]:
        return {"Authorization": f"Bearer {self.token}"} if self.token else {}

    async def request(self, method: str, path: str, *, expect: tuple[int, ...] = (200,), **kwargs: Any) -> Any:
        """One REST call; DemoError (with the response body) unless the status is in ``expect``."""
        async with self.session.request(
            method, self.base + path, headers=self._headers(), timeout=aiohttp.ClientTimeout(total=60), **kwargs
        ) as resp:
            body = await resp.text()
            if resp.status not in expect:
                raise DemoError(f"{method} {path} -> HTTP {resp.status}: {body[:2000]}")
            try:
                return json.loads(body) if body else None
            except json.JSONDecodeError:
                return body

    async def wait_http(self, deadline: float, hass: HassProcess) -> None:
        """Wait until HA's HTTP server answers (the onboarding API needs no auth)."""
        last = "no answer yet"
        while time.monotonic() < deadline:
            if (code := hass.exited()) is not None:
                raise DemoError(f"Home Assistant exited with code {code} while starting")
            try:
                async with self.session.get(
                    self.base + "/api/onboarding", timeout=aiohttp.ClientTimeout(total=5)
                ) as resp:
                    if resp.status == 200:
                        return
                    last = f"HTTP {resp.status}"
            except (TimeoutError, aiohttp.ClientError) as err:
                last = type(err).__name__
            await asyncio.sleep(0.5)
        raise DemoError(f"Home Assistant did not answer on {self.base} within {START_DEADLINE_S:.0f} s ({last})")

    async def onboard(self) -> None:
        """Create the owner, log in and finish the remaining onboarding steps."""
        steps = {s["step"]: s["done"] for s in await self.request("GET", "/api/onboarding")}
        if steps.get("user"):
            raise DemoError("onboarding's user step is already done: the config directory was not fresh")
        created = await self.request(
            "POST",
            "/api/onboarding/users",
            json={
                "client_id": self.client_id,
                "name": OWNER_NAME,
                "username": USERNAME,
                "password": PASSWORD,
                "language": LANGUAGE,
            },
        )
        tokens = await self.request(
            "POST",
            "/auth/token",
            data={"grant_type": "authorization_code", "code": created["auth_code"], "client_id": self.client_id},
        )
        self.token = tokens["access_token"]
        await self.request("POST", "/api/onboarding/core_config", json={})
        await self.request("POST", "/api/onboarding/analytics", json={})
        await self.request(
            "POST",
            "/api/onboarding/integration",
            json={"client_id": self.client_id, "redirect_uri": f"{self.base}/?auth_callback=1"},
        )
        steps = {s["step"]: s["done"] for s in await self.request("GET", "/api/onboarding")}
        if not all(steps.values()):
            raise DemoError(f"onboarding is incomplete: {steps}")

    async def wait_running(self, deadline: float, hass: HassProcess) -> dict[str, Any]:
        """Wait until HA reports state RUNNING; return /api/config."""
        config: dict[str, Any] = {}
        while time.monotonic() < deadline:
            if (code := hass.exited()) is not None:
                raise DemoError(f"Home Assistant exited with code {code} while starting")
            config = await self.request("GET", "/api/config")
            if config.get("state") == "RUNNING":
                return config
            await asyncio.sleep(0.5)
        raise DemoError(
            f"Home Assistant did not reach RUNNING within {START_DEADLINE_S:.0f} s (state {config.get('state')!r})"
        )

    async def ws(self, messages: list[dict[str, Any]]) -> list[Any]:
        """Send websocket commands one after another; return their results (DemoError on failure)."""
        results = []
        for message, reply in zip(messages, await self.ws_replies(messages), strict=True):
            if not reply.get("success"):
                raise DemoError(f"websocket {message['type']} failed: {reply.get('error')}")
            results.append(reply.get("result"))
        return results

    async def ws_replies(self, messages: list[dict[str, Any]]) -> list[dict[str, Any]]:
        """Send websocket commands one after another; return their result messages, failed ones included."""
        replies = []
        async with self.session.ws_connect(
            self.base + "/api/websocket", timeout=aiohttp.ClientWSTimeout(ws_close=10), max_msg_size=0
        ) as conn:
            if (await conn.receive_json(timeout=30)).get("type") != "auth_required":
                raise DemoError("websocket: expected auth_required")
            await conn.send_json({"type": "auth", "access_token": self.token})
            if (reply := await conn.receive_json(timeout=30)).get("type") != "auth_ok":
                raise DemoError(f"websocket auth failed: {reply}")
            for number, message in enumerate(messages, start=1):
                await conn.send_json({"id": number, **message})
                while True:
                    reply = await conn.receive_json(timeout=60)
                    if reply.get("id") == number and reply.get("type") == "result":
                        break
                replies.append(reply)
        return replies

    async def drive_flow(self, kind: str, start_path: str, handler: Any, answers: Callable[[dict], dict]) -> dict:
        """Run a config or subentry flow over REST to its end; return the final result.

        ``answers(step)`` gives the user input for a form step (the step's JSON as HA returns it).
        """
        result = await self.request("POST", start_path, json={"handler": handler, "show_advanced_options": False})
        for _ in range(10):
            rtype = result.get("type")
            if rtype == "create_entry":
                return result
            if rtype == "abort":
                raise DemoError(
                    f"{kind} flow aborted: {result.get('reason')} {result.get('description_placeholders') or ''}"
                )
            flow_id = result["flow_id"]
            if rtype == "menu":
                raise DemoError(
                    f"{kind} flow shows a menu at step {result.get('step_id')!r}: {result.get('menu_options')}"
                )
            if rtype != "form":
                raise DemoError(f"{kind} flow: unexpected result {result}")
            if result.get("errors"):
                raise DemoError(f"{kind} flow step {result.get('step_id')!r} rejected the input: {result['errors']}")
            data = answers(result)
            step = result
            result = await self.request("POST", f"{start_path}/{flow_id}", json=data, expect=(200, 400))
            if not isinstance(result, dict) or "type" not in result:  # HTTP 400
                hint = ""
                if not isinstance(result, dict):  # a bare "400: Bad Request": vol.Invalid escaped the step handler
                    hint = " (a voluptuous error escaped the flow's step handler, e.g. an invalid selector config)"
                raise DemoError(f"{kind} flow step {step.get('step_id')!r} rejected {data}: {result}{hint}")
        raise DemoError(f"{kind} flow did not finish within 10 steps")

    async def states(self, entities: Mapping[str, str]) -> dict[str, Any]:
        """Each entity's state under its name in ``entities`` (name -> entity id); None for one that does not exist."""
        return {name: ((await self.request("GET", f"/api/states/{e}", expect=(200, 404))) or {}).get("state")
                for name, e in entities.items()}

    async def wait_states(self, entities: Mapping[str, str], name: str, wanted: str, seconds: int = 30) -> dict[str, Any]:
        """:meth:`states`, read each second until the one under ``name`` is ``wanted`` or ``seconds`` have passed."""
        for _ in range(seconds - 1):
            if (found := await self.states(entities))[name] == wanted:
                return found
            await asyncio.sleep(1)
        return await self.states(entities)

    async def call_service(self, service: str, data: dict[str, Any]) -> Any:
        """Call agentic_hems.<service> for its response."""
        reply = await self.request("POST", f"/api/services/{DOMAIN}/{service}?return_response", json=data)
        if not isinstance(reply, dict) or "service_response" not in reply:
            raise DemoError(f"{DOMAIN}.{service} returned no service_response: {reply}")
        return reply["service_response"]


def fill_form(step: dict[str, Any], wanted: dict[str, Any], what: str) -> dict[str, Any]:
    """Answer a form with the fields of ``wanted`` its schema has; DemoError on a required field we cannot fill."""
    schema = step.get("data_schema") or []
    names = {field["name"] for field in schema}
    missing = [f["name"] for f in schema if f.get("required") and f["name"] not in wanted and "default" not in f]
    if missing:
        raise DemoError(f"{what}: step {step.get('step_id')!r} requires {missing}, which the demo does not know")
    unused = sorted(set(wanted) - names)
    if unused:
        log(f"  note: {what} step {step.get('step_id')!r} has no field(s) {unused}; not sent")
    return {key: value for key, value in wanted.items() if key in names}


def step_fields(step: dict[str, Any], appliance: dict[str, Any]) -> dict[str, Any]:
    """An appliance's fields for its form ``step``: the charger step's (:data:`EV_CHARGER_STEP`) there, the rest else."""
    charger = step.get("step_id") == "charger"
    return {key: value for key, value in appliance.items() if (key in EV_CHARGER_STEP) == charger}


def keep_form(step: dict[str, Any], wanted: dict[str, Any], what: str) -> dict[str, Any]:
    """Answer a form with its current values (each field's default or suggested value), ``wanted`` overriding them;
    DemoError when ``wanted`` names a field the form does not have."""
    schema = step.get("data_schema") or []
    unknown = sorted(set(wanted) - {field["name"] for field in schema})
    if unknown:
        raise DemoError(f"{what}: step {step.get('step_id')!r} has no field(s) {unknown}")
    answer: dict[str, Any] = {}
    for field in schema:
        name = field["name"]
        current = field.get("default", (field.get("description") or {}).get("suggested_value"))
        value = wanted.get(name, current)
        if value is not None:
            answer[name] = value
    return answer
