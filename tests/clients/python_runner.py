"""The conformance cases (clients/conformance/cases.json) run with the Python library, synchronous or asyncio."""

from __future__ import annotations

import asyncio
import base64
import json
import secrets
import threading
import time
import urllib.request
from collections.abc import Callable
from typing import Any

from service_client import ApiError, AsyncClient, AsyncDownload, Client, WebhookVerificationError, verify_webhook


def dig(obj: Any, dotted: str) -> Any:
    for part in dotted.split("."):
        obj = obj[int(part)] if isinstance(obj, list) else obj.get(part)
    return obj


class Case:
    def __init__(self, case: dict, env: dict, make_client: Callable[[dict], Any]):
        self.case, self.env, self.make_client = case, env, make_client
        unique = f"conf-{secrets.token_hex(6)}"
        self.saved: dict[str, Any] = {"unique": unique, "email": f"{unique}@example.com",
                                      "receiver_url": env["receiver_url"]}
        self.client = make_client(env["merchants"][case.get("client", "default")])

    def resolve(self, value: Any, index: int = 0) -> Any:
        if isinstance(value, str) and value.startswith("$"):
            return str(index) if value == "$index" else dig(self.saved, value[1:])
        if isinstance(value, list):
            return [self.resolve(v, index) for v in value]
        if isinstance(value, dict):
            return {k: self.resolve(v, index) for k, v in value.items()}
        return value

    def method(self, dotted: str) -> Callable:
        resource, name = dotted.split(".")
        return getattr(getattr(self.client, resource), name)

    def call(self, step: dict, index: int = 0) -> tuple[Any, float]:
        started = time.monotonic()
        key = self.resolve(step.get("idempotency_key"), index)
        kwargs = {"idempotency_key": key} if key else {}
        try:
            result = self.method(step["call"])(*self.resolve(step.get("args", []), index),
                                               **self.resolve(step.get("params", {}), index), **kwargs)
        except ApiError as exc:
            result = exc
        return result, time.monotonic() - started

    def run(self) -> None:
        for number, step in enumerate(self.case["steps"]):
            where = f"{self.case['name']} / step {number}"
            if "fault" in step:
                post(self.env["control_url"] + "/faults", step["fault"])
            if "walk" in step:
                self.walk(step, where)
            elif "export" in step:
                self.export(step, where)
            elif "await_delivery" in step:
                self.saved[step["save"]] = await_delivery(self.env, self.resolve(step["await_delivery"]))
            elif "verify_webhook" in step:
                self.verify(step, where)
            elif "create_many" in step:
                for i in range(step["create_many"]):
                    result, _ = self.call(step, i)
                    assert not isinstance(result, ApiError), (where, i, result)
            else:
                results = [self.call(step, i) for i in range(step.get("repeat", 1))]
                self.check(results, self.resolve(step.get("expect", {})), where)
                if "save" in step:
                    self.saved[step["save"]] = results[-1][0].to_dict()

    def check(self, results: list[tuple[Any, float]], expect: dict, where: str) -> None:
        for result, _ in results:
            if "error" in expect:
                assert isinstance(result, ApiError), (where, "expected an error", result)
                for field, value in expect["error"].items():
                    assert getattr(result, field) == value, (where, field, getattr(result, field), value)
                assert result.request_id and result.message, (where, result)
                continue
            assert not isinstance(result, ApiError), (where, result)
            info = result.response
            assert info.status == expect.get("status", info.status), (where, info.status)
            assert info.attempts == expect.get("attempts", info.attempts), (where, "attempts", info.attempts)
            for field, value in expect.get("fields", {}).items():
                assert dig(result.to_dict(), field) == value, (where, field, dig(result.to_dict(), field), value)
        if "max_attempts_at_least" in expect:
            assert max(r.response.attempts for r, _ in results) >= expect["max_attempts_at_least"], where
        if "slowest_call_at_least_s" in expect:
            assert max(s for _, s in results) >= expect["slowest_call_at_least_s"], where

    def walk(self, step: dict, where: str) -> None:
        found = [o.to_dict() for o in self.method(step["walk"])(**self.resolve(step.get("params", {})))]
        self.match(found, step, where)

    def export(self, step: dict, where: str) -> None:
        """The whole file read as rows (a cut-off or undecodable file raises), then matched like a walk's items."""
        download = self.method(step["export"])(**self.resolve(step.get("params", {})))
        expect = self.resolve(step["expect"])
        assert download.format == expect.get("format", download.format), (where, download.format)
        self.match([row.to_dict() for row in download.rows()], step, where)

    def match(self, found: list[dict], step: dict, where: str) -> None:
        where_fields = self.resolve(step.get("where", {}))
        matching = [o for o in found if all(dig(o, k) == v for k, v in where_fields.items())]
        expect = self.resolve(step["expect"])
        assert len(matching) == expect.get("count", len(matching)), (where, len(matching))
        ids = [o.get("order_id") or o.get("payment_link_id") or o.get("id") for o in matching]
        if expect.get("distinct"):
            assert len(set(ids)) == len(ids), (where, "an item came twice")
        assert set(expect.get("ids", [])) <= set(ids), (where, ids)
        for field, value in expect.get("fields", {}).items():
            assert all(dig(o, field) == value for o in matching), (where, field, [dig(o, field) for o in matching])

    def verify(self, step: dict, where: str) -> None:
        spec = self.resolve(step["verify_webhook"])
        delivery = self.saved["delivery"]
        body = base64.b64decode(delivery["body"])
        if spec.get("tamper"):
            body = body.replace(b'"livemode":false', b'"livemode":true')
        now = int(delivery["headers"]["x-service-timestamp"]) + spec.get("now_offset_s", 0)
        expect = self.resolve(step["expect"])
        try:
            event = verify_webhook(body, delivery["headers"], spec["secret"], now=now)
        except WebhookVerificationError:
            assert expect["ok"] is False, (where, "refused")
            return
        assert expect["ok"] is True, (where, "accepted")
        for field, value in expect.get("fields", {}).items():
            assert dig(event.to_dict(), field) == value, (where, field)


def post(url: str, payload: dict) -> None:
    req = urllib.request.Request(url, json.dumps(payload).encode(), {"Content-Type": "application/json"})
    urllib.request.urlopen(req, timeout=10).read()


def await_delivery(env: dict, want: dict, timeout_s: float = 30) -> dict:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        with urllib.request.urlopen(env["control_url"] + "/deliveries", timeout=10) as answer:
            for delivery in json.load(answer):
                event = json.loads(base64.b64decode(delivery["body"]))
                if event["type"] == want["type"] and event["data"].get("order_id") == want["order_id"]:
                    return delivery
        time.sleep(0.2)
    raise AssertionError(f"no {want} delivered within {timeout_s} s")


def sync_client(env: dict) -> Callable[[dict], Client]:
    return lambda m: Client(m["public_key"], m["secret_key"], base_url=env["base_url"],
                            merchant_id=m["merchant_id"], max_retries=3)


def _collect(items: Any, loop: asyncio.AbstractEventLoop) -> list:
    async def collect() -> list:
        return [item async for item in items]
    return asyncio.run_coroutine_threadsafe(collect(), loop).result()


class _BlockingDownload:
    """An AsyncDownload whose rows are read to the end on the client's loop."""

    def __init__(self, download: AsyncDownload, loop: asyncio.AbstractEventLoop):
        self.format = download.format
        self._download, self._loop = download, loop

    def rows(self) -> list:
        return _collect(self._download.rows(), self._loop)


class _Blocking:
    """The asyncio client's methods, each run to completion on a loop of its own thread, so the same runner
    drives both clients (a list method's pages are walked the same way, an export's rows read the same way)."""

    def __init__(self, client: AsyncClient, loop: asyncio.AbstractEventLoop, resource: str | None = None):
        self._client, self._loop, self._resource = client, loop, resource

    def __getattr__(self, name: str) -> Any:
        if self._resource is None:
            return _Blocking(self._client, self._loop, name)
        method = getattr(getattr(self._client, self._resource), name)

        def call(*args: Any, **kwargs: Any) -> Any:
            answer = method(*args, **kwargs)
            if hasattr(answer, "__aiter__"):
                return _collect(answer, self._loop)
            result = asyncio.run_coroutine_threadsafe(answer, self._loop).result()
            return _BlockingDownload(result, self._loop) if isinstance(result, AsyncDownload) else result
        return call


def async_client(env: dict) -> tuple[Callable[[dict], _Blocking], Callable[[], None]]:
    loop = asyncio.new_event_loop()
    thread = threading.Thread(target=loop.run_forever, daemon=True)
    thread.start()

    def make(m: dict) -> _Blocking:
        async def build() -> AsyncClient:
            return AsyncClient(m["public_key"], m["secret_key"], base_url=env["base_url"],
                               merchant_id=m["merchant_id"], max_retries=3)
        return _Blocking(asyncio.run_coroutine_threadsafe(build(), loop).result(), loop)

    return make, lambda: loop.call_soon_threadsafe(loop.stop)


def run_all(cases: list[dict], env: dict, make_client: Callable[[dict], Any]) -> None:
    for case in cases:
        Case(case, env, make_client).run()
