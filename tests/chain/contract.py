"""The adapter contract: one abstract suite that every chain family's test module subclasses with its own world."""

from __future__ import annotations

import contextlib
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Protocol

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from chain_watchers.base import ChainAdapter, TokenTransfer, TxObservation
from chain_watchers.clients import open_adapter
from chain_watchers.registry import load_registry
from chain_watchers.verify import due_height


@dataclass(frozen=True)
class Sent:
    """A transaction a world put on its chain, and exactly the transfers the adapter must report for it."""

    tx_hash: str
    expected: tuple[TokenTransfer, ...]
    depth: int | None = None  # the confirmations the adapter must report, where the world fixes them exactly
    account: str | None = None  # where to look, for chains that find transactions through an account (TON)
    intended_recipient: str | None = None  # set when the money went somewhere else on purpose


@contextlib.asynccontextmanager
async def adapter_behind(app: web.Application, url_variable: str, slug: str) -> AsyncIterator[ChainAdapter]:
    """Serve `app` on this machine and open the shipped `slug` network with its URL variable pointing there."""
    async with TestServer(app) as server:
        registry = load_registry(env={url_variable: str(server.make_url("/"))})
        adapter = await open_adapter(registry.network(slug))
        try:
            yield adapter
        finally:
            await adapter.close()


class World(Protocol):
    """A chain the tests can drive: real client library, local protocol server or double behind it."""

    adapter: ChainAdapter

    async def finalized_transfer(self) -> Sent: ...

    async def failed_transfer(self) -> Sent: ...

    async def shallow_transfer(self) -> Sent | None:
        """In a block but below the required depth; None where the chain shows no such state."""

    async def transfer_to_someone_else(self) -> Sent: ...

    def unknown(self) -> Sent: ...

    async def advance(self, blocks: int) -> None: ...

    def respell(self, tx_hash: str) -> str | None:
        """Another accepted spelling of the same hash (case, encoding), or None where there is only one."""


class AdapterContract:
    """Subclass with a `world` fixture; every test here must hold for every adapter."""

    @pytest.fixture
    def world(self) -> World:
        raise NotImplementedError("each family's test class provides its world")

    async def fetch(self, world: World, sent: Sent, tx_hash: str | None = None) -> TxObservation:
        return await world.adapter.fetch(tx_hash or sent.tx_hash, account=sent.account)

    async def test_finalized_transfer_is_reported_with_exact_base_units(self, world: World) -> None:
        sent = await world.finalized_transfer()
        seen = await self.fetch(world, sent)
        assert (seen.found, seen.success, seen.final, seen.reason) == (True, True, True, None)
        assert seen.network == world.adapter.network.slug
        assert seen.tx_hash == world.adapter.validate_tx_hash(sent.tx_hash)
        assert seen.confirmations == sent.depth >= world.adapter.network.confirmations
        assert seen.transfers == sent.expected
        assert seen.block_ref

    async def test_unknown_hash_is_not_found(self, world: World) -> None:
        sent = world.unknown()
        seen = await self.fetch(world, sent)
        assert (seen.found, seen.success, seen.final, seen.confirmations, seen.transfers) == (False, None, False, 0, ())
        assert seen.reason

    async def test_failed_transaction_is_reported_failed(self, world: World) -> None:
        sent = await world.failed_transfer()
        seen = await self.fetch(world, sent)
        assert (seen.found, seen.success) == (True, False)
        assert seen.reason is not None and seen.reason.startswith("failed")
        assert seen.transfers == sent.expected

    async def test_transfer_below_required_depth_is_not_final(self, world: World) -> None:
        sent = await self._shallow(world)
        seen = await self.fetch(world, sent)
        assert (seen.found, seen.success, seen.final) == (True, True, False)
        assert seen.confirmations == sent.depth
        assert 1 <= seen.confirmations < world.adapter.network.confirmations
        assert seen.transfers == sent.expected
        assert seen.reason and "confirmations" in seen.reason

    async def test_depth_grows_with_the_chain_until_final(self, world: World) -> None:
        sent = await self._shallow(world)
        before = await self.fetch(world, sent)
        missing = world.adapter.network.confirmations - before.confirmations
        await world.advance(missing - 1)
        almost = await self.fetch(world, sent)
        assert (almost.confirmations, almost.final) == (before.confirmations + missing - 1, False)
        await world.advance(1)
        after = await self.fetch(world, sent)
        assert (after.confirmations, after.final, after.reason) == (world.adapter.network.confirmations, True, None)

    async def test_payment_elsewhere_is_reported_as_a_transfer_to_that_address(self, world: World) -> None:
        sent = await world.transfer_to_someone_else()
        seen = await self.fetch(world, sent)
        assert seen.success is True
        assert seen.transfers == sent.expected
        assert sent.intended_recipient is not None
        intended = world.adapter.validate_address(sent.intended_recipient)
        assert all(transfer.to_address != intended for transfer in seen.transfers)

    async def test_another_spelling_of_the_hash_finds_the_same_transaction(self, world: World) -> None:
        sent = await world.finalized_transfer()
        spelling = world.respell(sent.tx_hash)
        if spelling is None:
            pytest.skip("this family has one spelling per hash")
        assert spelling != sent.tx_hash
        assert await self.fetch(world, sent, spelling) == await self.fetch(world, sent)

    async def test_the_head_is_counted_in_the_unit_of_confirmations(self, world: World) -> None:
        """A watcher re-checks a transaction when the head reaches its due height: head and depth must agree."""
        sent = await self._shallow(world)
        seen = await self.fetch(world, sent)
        head, required = await world.adapter.head(), world.adapter.network.confirmations
        assert due_height(seen.block_ref, required) == head + required - seen.confirmations
        await world.advance(2)
        assert await world.adapter.head() == head + 2

    async def _shallow(self, world: World) -> Sent:
        sent = await world.shallow_transfer()
        if sent is None:
            pytest.skip("this chain shows no transaction below its required depth")
        return sent
