"""Password guessing on the playground's login is throttled per client address."""

from __future__ import annotations

import httpx2
import pytest

from docs_mcp_server.auth import LOGIN_ATTEMPTS, LoginThrottle
from docs_mcp_server.options import BuildInfo
from docs_mcp_server.playground import Playground

PASSWORD = "correct horse battery staple"


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _client(page: Playground, address: str) -> httpx2.AsyncClient:
    transport = httpx2.ASGITransport(app=page, client=(address, 40000))
    return httpx2.AsyncClient(transport=transport, base_url="http://127.0.0.1", follow_redirects=False)


@pytest.mark.anyio
async def test_wrong_passwords_from_one_address_are_throttled_then_released() -> None:
    clock = Clock()
    page = Playground(
        BuildInfo("docs", "1"), password=PASSWORD, throttle=LoginThrottle(window_seconds=60, clock=clock)
    )
    async with _client(page, "203.0.113.7") as attacker, _client(page, "198.51.100.2") as other:
        for _ in range(LOGIN_ATTEMPTS):
            wrong = await attacker.post("/login", data={"password": "guess"})
            assert wrong.status_code == 401
        blocked = await attacker.post("/login", data={"password": PASSWORD})
        assert blocked.status_code == 429
        assert blocked.headers["retry-after"] == "60"
        assert "Too many wrong passwords. Try again in 60 seconds." in blocked.text
        assert "set-cookie" not in blocked.headers

        # another address is not affected
        fine = await other.post("/login", data={"password": PASSWORD})
        assert fine.status_code == 303 and "set-cookie" in fine.headers

        clock.now += 45
        still = await attacker.post("/login", data={"password": PASSWORD})
        assert still.status_code == 429 and still.headers["retry-after"] == "15"

        clock.now += 15  # the oldest failures have left the window
        released = await attacker.post("/login", data={"password": PASSWORD})
        assert released.status_code == 303 and "set-cookie" in released.headers


def test_a_success_clears_the_failures_and_memory_stays_bounded() -> None:
    clock = Clock()
    throttle = LoginThrottle(attempts=3, window_seconds=10, clock=clock)
    for _ in range(2):
        throttle.failed("a")
    throttle.succeeded("a")
    for _ in range(2):
        throttle.failed("a")
    assert throttle.retry_after("a") == 0.0
    throttle.failed("a")
    assert throttle.retry_after("a") == pytest.approx(10.0)
    clock.now += 10.5
    assert throttle.retry_after("a") == 0.0
