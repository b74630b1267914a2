"""The Python server library (clients/python): every operation of the live OpenAPI document has a method, the
conformance cases pass with the synchronous and the asyncio client against a real deployment, and the rules that
need no server (retry waits, undecodable answers, webhook verification) hold."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json

import httpx
import pytest
from service_client import (
    OPERATIONS,
    Client,
    ConnectionFailed,
    DecodeError,
    InvalidRequestError,
    WebhookVerificationError,
    retries,
    verify_webhook,
)
from service_client.operations import covered

from tests.clients import python_runner
from tests.clients.harness import load_cases

HTTP_METHODS = {"get", "post", "put", "patch", "delete"}


async def live_operations(stack) -> set[tuple[str, str]]:
    async with stack.http.get(stack.base_url + "/b2b/v1/openapi.json") as answer:
        assert answer.status == 200
        document = await answer.json()
    return {(method.upper(), path) for path, item in document["paths"].items() for method in item
            if method in HTTP_METHODS}


async def test_every_operation_of_the_live_openapi_document_has_a_method(stack):
    live = await live_operations(stack)
    assert live, "the document lists no operation"
    missing = sorted(live - covered())
    assert not missing, f"operations without a method in clients/python/service_client/operations.py: {missing}"
    stale = sorted(covered() - live)
    assert not stale, f"methods for operations the service does not have: {stale}"
    assert len({(op.resource, op.name) for op in OPERATIONS}) == len(OPERATIONS)


@pytest.mark.parametrize("case", load_cases(), ids=lambda c: c["name"][:60])
async def test_conformance_with_the_sync_client(harness, case):
    running, pool, vault = harness
    env = await running.runner_env(pool, vault, "python sync")
    await asyncio.to_thread(python_runner.run_all, [case], env, python_runner.sync_client(env))


async def test_conformance_with_the_asyncio_client(harness):
    running, pool, vault = harness
    env = await running.runner_env(pool, vault, "python asyncio")
    make, stop = python_runner.async_client(env)
    try:
        await asyncio.to_thread(python_runner.run_all, load_cases(), env, make)
    finally:
        stop()


def _client(handler, max_retries: int = 2) -> Client:
    return Client("pk_test_x", "sk_test_x", base_url="http://service.test", merchant_id="mer_1",
                  max_retries=max_retries, http_client=httpx.Client(transport=httpx.MockTransport(handler)))


def test_retries_keep_the_idempotency_key_and_sign_each_attempt(monkeypatch):
    monkeypatch.setattr("time.sleep", lambda s: None)
    seen: list[httpx.Request] = []

    def handler(request: httpx.Request) -> httpx.Response:
        seen.append(request)
        if len(seen) == 1:
            raise httpx.ReadError("dropped")
        if len(seen) == 2:
            return httpx.Response(503, json={"error": {"type": "api_error", "code": "service_unavailable",
                                                       "message": "down"}})
        return httpx.Response(201, json={"order_id": "ord_1", "order_number": "1", "livemode": False,
                                         "status": "PENDING", "amount": "1.00", "amount_paid": "0",
                                         "amount_refunded": "0", "amount_due": "1.00", "line_items": [],
                                         "external_ref": None, "metadata": {}, "payments": [],
                                         "created_at": "2026-01-01T00:00:00Z", "a_field_added_later": 1})
    order = _client(handler).orders.create(amount="1.00")
    assert order.order_id == "ord_1" and order.a_field_added_later == 1 and order.response.attempts == 3
    keys = {r.headers["Idempotency-Key"] for r in seen}
    assert len(keys) == 1 and len(next(iter(keys))) >= 32
    for r in seen:
        message = f"POST\n/b2b/v1/orders\n{r.headers['X-Timestamp']}\n".encode() + r.content
        assert r.headers["X-Signature"] == hmac.new(b"sk_test_x", message, hashlib.sha256).hexdigest()
    assert json.loads(seen[0].content) == {"amount": "1.00"}


@pytest.mark.parametrize("status,code", [(400, "invalid_json"), (401, "bad_signature"), (404, "order_not_found"),
                                         (409, "idempotency_key_reused"), (422, "invalid_field")])
def test_a_4xx_is_never_retried(status, code):
    calls = []

    def handler(request):
        calls.append(request)
        return httpx.Response(status, headers={"X-Request-Id": "req_9"},
                              json={"error": {"type": "invalid_request_error", "code": code, "message": "no",
                                              "param": "amount"}})
    with pytest.raises(Exception) as raised:
        _client(handler).orders.retrieve("ord_1")
    assert len(calls) == 1
    err = raised.value
    assert (err.status, err.code, err.param, err.request_id) == (status, code, "amount", "req_9")


def test_connection_errors_past_the_maximum_raise_connection_failed(monkeypatch):
    monkeypatch.setattr("time.sleep", lambda s: None)
    calls = []

    def handler(request):
        calls.append(request)
        raise httpx.ConnectError("refused")
    with pytest.raises(ConnectionFailed):
        _client(handler, max_retries=4).orders.retrieve("ord_1")
    assert len(calls) == 5


@pytest.mark.parametrize("answer", [
    httpx.Response(200, text="<html>not json</html>", headers={"Content-Type": "text/html"}),
    httpx.Response(200, json=["a", "list"]),
    httpx.Response(200, json={"order_id": 7}),
])
def test_an_answer_that_cannot_be_decoded_is_a_clear_decode_error(answer):
    with pytest.raises(DecodeError) as raised:
        _client(lambda request: answer).orders.retrieve("ord_1")
    assert "orders.retrieve" in str(raised.value) or "/b2b/v1/orders/ord_1" in str(raised.value)


def test_bad_arguments_are_refused_before_any_request():
    client = _client(lambda request: pytest.fail("sent"))
    with pytest.raises(TypeError):
        client.orders.retrieve()
    with pytest.raises(TypeError):
        Client("pk_test_x", "sk", base_url="http://x").refunds.create(amount="1.00")  # no merchant id
    assert InvalidRequestError.__mro__[1].__name__ == "ApiError"


@pytest.mark.parametrize("headers,code,retry_number,expected", [
    ({"retry-after": "3"}, "rate_limited", 1, (3.0, 3.1)),
    ({"retry-after": "0"}, "rate_limited", 2, (0.0, 0.1)),
    ({"retry-after": "120"}, "rate_limited", 1, None),          # longer than a client should hold a call
    ({}, "service_unavailable", 1, (0.25, 0.5)),
    ({}, "service_unavailable", 3, (1.0, 2.0)),
    ({}, "service_unavailable", 10, (4.0, 8.0)),                 # capped
])
@pytest.mark.parametrize("jitter", [0.0, 1.0])
def test_waits_are_jittered_exponential_and_honour_retry_after(headers, code, retry_number, expected, jitter):
    wait = retries.delay(retry_number, headers, code, now=100.25, jitter=lambda: jitter)
    if expected is None:
        assert wait is None
    else:
        assert expected[0] <= wait <= expected[1]


@pytest.mark.parametrize("status,code,again", [(None, None, True), (429, "rate_limited", True), (503, "x", True),
                                               (504, "command_timeout", True), (409, "idempotency_key_in_use", True),
                                               (409, "order_not_cancelable", False), (500, "internal_error", False),
                                               (401, "signature_replayed", True), (401, "bad_signature", False)])
def test_which_answers_are_retried(status, code, again):
    assert retries.retryable(status, code) is again


def _signed(body: bytes, secret: str, timestamp: int) -> dict:
    digest = hmac.new(secret.encode(), f"{timestamp}.".encode() + body, hashlib.sha256).hexdigest()
    return {"X-Service-Timestamp": str(timestamp), "X-Service-Signature": f"sha256=0000,sha256={digest}"}


def test_verify_webhook_accepts_any_listed_signature_and_refuses_replays():
    body = b'{"id":"evt_1","type":"payment.settled","created_at":"2026-01-01T00:00:00Z","livemode":false,"data":{}}'
    headers = _signed(body, "whsec_a", 1_000)
    assert verify_webhook(body, headers, "whsec_a", now=1_000).type == "payment.settled"
    assert verify_webhook(body, headers, "whsec_a", now=1_300).id == "evt_1"
    for args in ((body, headers, "whsec_b"), (body + b" ", headers, "whsec_a"), (body, {}, "whsec_a")):
        with pytest.raises(WebhookVerificationError):
            verify_webhook(*args, now=1_000)
    with pytest.raises(WebhookVerificationError):
        verify_webhook(body, headers, "whsec_a", now=1_301)
    with pytest.raises(WebhookVerificationError):
        verify_webhook(b"[1]", _signed(b"[1]", "whsec_a", 1_000), "whsec_a", now=1_000)


def test_a_webhook_endpoint_is_named_by_webhook_endpoint_id_and_endpoint_id_still_fills_the_path():
    """The endpoint's id is `webhook_endpoint_id` like every other object's `<object>_id`; `endpoint_id=`, the path
    parameter's name before, still works for one version."""
    endpoint = {"object": "webhook_endpoint", "webhook_endpoint_id": "we_1", "id": "we_1", "url": "https://shop.test/h",
                "enabled_events": ["*"], "status": "enabled", "livemode": False}
    paths = []

    def handler(request: httpx.Request) -> httpx.Response:
        paths.append(request.url.path)
        return httpx.Response(200, json=endpoint)

    client = _client(handler)
    assert client.webhook_endpoints.retrieve("we_1").webhook_endpoint_id == "we_1"
    client.webhook_endpoints.retrieve(webhook_endpoint_id="we_1")
    client.webhook_endpoints.retrieve(endpoint_id="we_1")
    assert paths == ["/b2b/v1/merchants/mer_1/webhook-endpoints/we_1"] * 3
