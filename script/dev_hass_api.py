"""A small client for a running Home Assistant: REST, websocket and login.

The dev instance scripts (dev_provision, develop_check) drive HA only through
its public HTTP and websocket APIs, the same ones the frontend uses, so what
they set up is what a person clicking through the UI would get.
"""

from __future__ import annotations

import asyncio
from collections.abc import Callable
import itertools
import time
from typing import Any

import aiohttp

REQUEST_TIMEOUT = aiohttp.ClientTimeout(total=60)


class HassApiError(Exception):
    """HA answered, but not with what the caller needed."""


class HassApi:
    """One authenticated session against one HA instance."""

    def __init__(self, session: aiohttp.ClientSession, base_url: str) -> None:
        self._session = session
        self.base_url = base_url.rstrip("/")
        # HA's login wants a client id on the address it serves (IndieAuth).
        self.client_id = f"{self.base_url}/"
        self.token: str | None = None
        self._ws: aiohttp.ClientWebSocketResponse | None = None
        self._ids = itertools.count(1)

    # ---- reaching HA -------------------------------------------------------

    async def wait_until_up(
        self,
        limit: float,
        is_alive: Callable[[], bool] | None = None,
        progress: Callable[[float], None] | None = None,
    ) -> float:
        """Poll until HA's HTTP API answers; return the seconds it took.

        /auth/providers needs no token (polling /api/ would log failed logins
        and raise a "Login attempt failed" notification) and answers 200, or
        400 before onboarding, once the server is up. `is_alive`
        stops the wait as soon as the hass process dies; `progress` is called
        about once a minute with the seconds waited so far.
        """
        start = time.monotonic()
        next_progress = start + 60
        while (now := time.monotonic()) < start + limit:
            if is_alive is not None and not is_alive():
                raise HassApiError("Home Assistant exited before its API came up")
            if progress is not None and now >= next_progress:
                progress(now - start)
                next_progress += 60
            try:
                async with self._session.get(
                    f"{self.base_url}/auth/providers",
                    timeout=aiohttp.ClientTimeout(total=5),
                ) as resp:
                    if resp.status in (200, 400):
                        return time.monotonic() - start
            except (aiohttp.ClientError, TimeoutError):
                pass
            await asyncio.sleep(1)
        raise HassApiError(f"{self.base_url} did not come up within {limit:.0f} s")

    async def wait_until_running(self, limit: float) -> None:
        """Wait until HA reports it finished starting (all integrations set up)."""
        deadline = time.monotonic() + limit
        state = None
        while time.monotonic() < deadline:
            state = (await self.get("/api/config")).get("state")
            if state == "RUNNING":
                return
            await asyncio.sleep(1)
        raise HassApiError(f"Home Assistant still {state!r} after {limit:.0f} s")

    # ---- auth --------------------------------------------------------------

    async def onboarding_status(self) -> dict[str, bool]:
        """Map each onboarding step to whether it is done.

        Once onboarding is complete HA no longer serves /api/onboarding (404),
        so that answer means every step is done.
        """
        status, steps = await self.request("GET", "/api/onboarding", auth=False)
        if status == 404:
            return {
                "user": True,
                "core_config": True,
                "analytics": True,
                "integration": True,
            }
        if status != 200:
            raise HassApiError(f"GET /api/onboarding -> HTTP {status}: {steps}")
        return {step["step"]: step["done"] for step in steps}

    async def onboard_owner(self, name: str, username: str, password: str) -> None:
        """Create the owner through onboarding's user step, then hold a token."""
        answer = await self._json(
            "POST",
            "/api/onboarding/users",
            auth=False,
            json={
                "client_id": self.client_id,
                "name": name,
                "username": username,
                "password": password,
                "language": "en",
            },
        )
        await self._exchange_code(answer["auth_code"])

    async def login(self, username: str, password: str) -> None:
        """Log in with the login flow the UI uses and hold an access token."""
        flow = await self._json(
            "POST",
            "/auth/login_flow",
            auth=False,
            json={
                "client_id": self.client_id,
                "handler": ["homeassistant", None],
                "redirect_uri": f"{self.client_id}?auth_callback=1",
            },
        )
        result = await self._json(
            "POST",
            f"/auth/login_flow/{flow['flow_id']}",
            auth=False,
            json={
                "client_id": self.client_id,
                "username": username,
                "password": password,
            },
        )
        if result.get("type") != "create_entry":
            raise HassApiError(f"login as {username!r} failed: {result.get('errors')}")
        await self._exchange_code(result["result"])

    async def _exchange_code(self, code: str) -> None:
        async with self._session.post(
            f"{self.base_url}/auth/token",
            data={
                "grant_type": "authorization_code",
                "code": code,
                "client_id": self.client_id,
            },
            timeout=REQUEST_TIMEOUT,
        ) as resp:
            if resp.status != 200:
                raise HassApiError(f"token exchange failed: {await resp.text()}")
            self.token = (await resp.json())["access_token"]

    # ---- REST --------------------------------------------------------------

    async def get(self, path: str) -> Any:
        return await self._json("GET", path)

    async def post(self, path: str, payload: dict[str, Any] | None = None) -> Any:
        return await self._json("POST", path, json=payload or {})

    async def request(
        self,
        method: str,
        path: str,
        json: Any = None,
        auth: bool = True,
        allow_redirects: bool = True,
    ) -> tuple[int, Any]:
        """Send one request; return (status, decoded JSON or text)."""
        headers = {}
        if auth:
            headers["Authorization"] = f"Bearer {self.token}"
        async with self._session.request(
            method,
            f"{self.base_url}{path}",
            json=json,
            headers=headers,
            timeout=REQUEST_TIMEOUT,
            allow_redirects=allow_redirects,
        ) as resp:
            if resp.content_type == "application/json":
                return resp.status, await resp.json()
            return resp.status, await resp.text()

    async def _json(self, method: str, path: str, **kwargs: Any) -> Any:
        status, body = await self.request(method, path, **kwargs)
        if status >= 400:
            raise HassApiError(f"{method} {path} -> HTTP {status}: {body}")
        return body

    # ---- websocket ---------------------------------------------------------

    async def ws(self, command: str, **fields: Any) -> Any:
        """Send one websocket command and return its result."""
        if self._ws is None:
            self._ws = await self._session.ws_connect(
                f"{self.base_url}/api/websocket", timeout=REQUEST_TIMEOUT
            )
            await self._ws.receive_json()  # auth_required
            await self._ws.send_json({"type": "auth", "access_token": self.token})
            hello = await self._ws.receive_json()
            if hello.get("type") != "auth_ok":
                raise HassApiError(f"websocket auth failed: {hello}")
        msg_id = next(self._ids)
        await self._ws.send_json({"id": msg_id, "type": command, **fields})
        async with asyncio.timeout(60):
            while True:
                msg = await self._ws.receive_json()
                if msg.get("id") == msg_id and msg.get("type") == "result":
                    break
        if not msg["success"]:
            raise HassApiError(f"{command} failed: {msg['error']}")
        return msg["result"]

    async def close(self) -> None:
        if self._ws is not None:
            await self._ws.close()
            self._ws = None
