"""The synchronous and the asyncio client: the same resources and methods (made from operations.OPERATIONS),
driving the same plan of a call (exchange.run) over httpx."""

from __future__ import annotations

import asyncio
import time
from collections.abc import AsyncIterator, Iterator
from typing import Any

import httpx

from . import exchange
from .downloads import AsyncDownload, Download
from .errors import DecodeError
from .models import ApiObject
from .operations import OPERATIONS, Op

DEFAULT_TIMEOUT_S = 30.0
DEFAULT_MAX_RETRIES = 2


class _Resource:
    """`client.orders`, `client.refunds`, ...: one method per operation of that resource."""

    def __init__(self, client: Any, name: str):
        self._name = name
        for op in OPERATIONS:
            if op.resource == name:
                setattr(self, op.name, client._method(op))

    def __repr__(self) -> str:
        return f"<{self._name}: {', '.join(op.name for op in OPERATIONS if op.resource == self._name)}>"


class _Base:
    def __init__(self, public_key: str, secret_key: str, *, base_url: str, merchant_id: str | None = None,
                 max_retries: int = DEFAULT_MAX_RETRIES):
        if not public_key.startswith(("pk_test_", "pk_live_")) or not secret_key:
            raise ValueError("public_key is pk_test_... or pk_live_..., with its secret_key (sk_...)")
        self._config = exchange.Config(public_key, secret_key, merchant_id, base_url.rstrip("/"), max_retries)
        for name in dict.fromkeys(op.resource for op in OPERATIONS):
            setattr(self, name, _Resource(self, name))

    @property
    def livemode(self) -> bool:
        return self._config.public_key.startswith("pk_live_")


class Client(_Base):
    """The synchronous client. `with Client(...) as client:` closes its connections at the end."""

    def __init__(self, public_key: str, secret_key: str, *, base_url: str, merchant_id: str | None = None,
                 max_retries: int = DEFAULT_MAX_RETRIES, timeout: float = DEFAULT_TIMEOUT_S,
                 http_client: httpx.Client | None = None):
        super().__init__(public_key, secret_key, base_url=base_url, merchant_id=merchant_id, max_retries=max_retries)
        self._http = http_client or httpx.Client(timeout=timeout, follow_redirects=False)

    def __enter__(self) -> Client:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def close(self) -> None:
        self._http.close()

    def _drive(self, call: exchange.Call) -> tuple[dict, Any]:
        plan = exchange.run(self._config, call)
        step = next(plan)
        while True:
            try:
                if isinstance(step, exchange.Sleep):
                    time.sleep(step.seconds)
                    step = plan.send(None)
                    continue
                try:
                    answer: Any = self._http.send(step, stream=call.op.streams)
                    if call.op.streams and answer.status_code >= 400:
                        answer.read()  # an error before the file: JSON, read for the plan
                        answer.close()
                except httpx.TransportError as exc:
                    answer = exc
                step = plan.send(answer)
            except StopIteration as done:
                return done.value

    def _method(self, op: Op):
        def call(*args: Any, idempotency_key: str | None = None, **params: Any) -> Any:
            if op.pages:
                return _Pages(self, op, args, params)
            body, info = self._drive(exchange.build(self._config, op, args, params, idempotency_key))
            if not op.streams:
                return exchange.decode(op, body, info)
            try:
                return Download(op, body, info)
            except DecodeError:
                body.close()
                raise
        call.__name__ = op.name
        call.__doc__ = f"{op.method} {op.path}"
        return call


class AsyncClient(_Base):
    """The asyncio client: the same methods, awaited; list methods are async iterators."""

    def __init__(self, public_key: str, secret_key: str, *, base_url: str, merchant_id: str | None = None,
                 max_retries: int = DEFAULT_MAX_RETRIES, timeout: float = DEFAULT_TIMEOUT_S,
                 http_client: httpx.AsyncClient | None = None):
        super().__init__(public_key, secret_key, base_url=base_url, merchant_id=merchant_id, max_retries=max_retries)
        self._http = http_client or httpx.AsyncClient(timeout=timeout, follow_redirects=False)

    async def __aenter__(self) -> AsyncClient:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.aclose()

    async def aclose(self) -> None:
        await self._http.aclose()

    async def _drive(self, call: exchange.Call) -> tuple[dict, Any]:
        plan = exchange.run(self._config, call)
        step = next(plan)
        while True:
            try:
                if isinstance(step, exchange.Sleep):
                    await asyncio.sleep(step.seconds)
                    step = plan.send(None)
                    continue
                try:
                    answer: Any = await self._http.send(step, stream=call.op.streams)
                    if call.op.streams and answer.status_code >= 400:
                        await answer.aread()
                        await answer.aclose()
                except httpx.TransportError as exc:
                    answer = exc
                step = plan.send(answer)
            except StopIteration as done:
                return done.value

    def _method(self, op: Op):
        if op.pages:
            def pages(*args: Any, **params: Any) -> _AsyncPages:
                return _AsyncPages(self, op, args, params)
            pages.__name__, pages.__doc__ = op.name, f"{op.method} {op.path}, every page"
            return pages

        async def call(*args: Any, idempotency_key: str | None = None, **params: Any) -> Any:
            body, info = await self._drive(exchange.build(self._config, op, args, params, idempotency_key))
            if not op.streams:
                return exchange.decode(op, body, info)
            try:
                return AsyncDownload(op, body, info)
            except DecodeError:
                await body.aclose()
                raise
        call.__name__, call.__doc__ = op.name, f"{op.method} {op.path}"
        return call


class _Pages:
    """Every item of a list, fetched a page at a time as iteration reaches it."""

    def __init__(self, client: Client, op: Op, args: tuple, params: dict):
        self._client, self._op, self._args, self._params = client, op, args, params

    def __iter__(self) -> Iterator[ApiObject]:
        cursor: str | None = None
        while True:
            params = dict(self._params, **({"cursor": cursor} if cursor else {}))
            body, info = self._client._drive(exchange.build(self._client._config, self._op, self._args, params, None))
            items, cursor = exchange.page(self._op, body)
            yield from (exchange.decode(self._op, item, info) for item in items)
            if not cursor:
                return


class _AsyncPages:
    def __init__(self, client: AsyncClient, op: Op, args: tuple, params: dict):
        self._client, self._op, self._args, self._params = client, op, args, params

    async def __aiter__(self) -> AsyncIterator[ApiObject]:
        cursor: str | None = None
        while True:
            params = dict(self._params, **({"cursor": cursor} if cursor else {}))
            call = exchange.build(self._client._config, self._op, self._args, params, None)
            body, info = await self._client._drive(call)
            items, cursor = exchange.page(self._op, body)
            for item in items:
                yield exchange.decode(self._op, item, info)
            if not cursor:
                return
