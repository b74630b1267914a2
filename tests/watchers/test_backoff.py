"""A failing or rate-limiting RPC pauses its network with exponential backoff; the family's other networks go on."""

from __future__ import annotations

import pytest
from aiohttp import web
from aiohttp.test_utils import TestServer

from chain_watchers.clients import open_adapter
from chain_watchers.registry import load_registry
from chain_watchers.runner import Backoff
from tests.chain.fake_solana_rpc import FINALIZED_DEPTH, Cluster, build_app
from tests.watchers import api
from tests.watchers.solana_refund import NETWORK, refund_on

# (failures in a row, shortest pause, longest pause): base 2 s doubling, capped at 60 s, jitter within +-20%
PAUSES = [(1, 1.6, 2.4), (2, 3.2, 4.8), (3, 6.4, 9.6), (5, 25.6, 38.4), (6, 48.0, 72.0), (9, 48.0, 72.0)]


@pytest.mark.parametrize(("failures", "shortest", "longest"), PAUSES, ids=[f"{row[0]}-failures" for row in PAUSES])
def test_pause_doubles_per_failure_up_to_the_cap(failures: int, shortest: float, longest: float) -> None:
    backoff = Backoff(2.0, 60.0)
    for _ in range(failures - 1):
        backoff.failed("polygon", 0.0)
    pause = backoff.failed("polygon", 100.0)
    assert shortest <= pause <= longest
    assert not backoff.ready("polygon", 100.0 + pause - 0.01) and backoff.ready("polygon", 100.0 + pause)
    assert backoff.ready("base", 100.0)  # other networks are not held back


def test_success_resets_the_count() -> None:
    backoff = Backoff(2.0, 60.0)
    backoff.failed("tron", 0.0)
    backoff.failed("tron", 0.0)
    backoff.succeeded("tron")
    assert backoff.ready("tron", 0.0) and 1.6 <= backoff.failed("tron", 0.0) <= 2.4


async def test_rate_limited_rpc_is_retried_and_the_refund_still_executes(merchant, watchers) -> None:
    cluster, limited = Cluster(), {"answers": 2}

    @web.middleware
    async def rate_limit(request, handler):
        if limited["answers"] > 0:
            limited["answers"] -= 1
            return web.json_response({"error": "Too many requests"}, status=429)
        return await handler(request)

    app = build_app(cluster)
    app.middlewares.append(rate_limit)
    _order_id, refund_id, _signature = await refund_on(cluster, merchant, "3.00", depth=FINALIZED_DEPTH)
    async with TestServer(app) as server:
        network = load_registry(env={"SOLANA_DEVNET_RPC_URL": str(server.make_url("/"))}).network(NETWORK)
        watcher = watchers("solana", (network,), open_adapter)
        assert (await watcher.run_once()).failed == ("solana-devnet",)
        assert (await watcher.run_once()).failed == ("solana-devnet",)
        assert watcher.backoff.failures == {"solana-devnet": 2}
        tick = await watcher.run_once()
    assert (tick.failed, tick.refunds) == ((), 1)
    assert watcher.backoff.failures == {}
    assert (await api.read_refund(merchant, refund_id))["status"] == "EXECUTED"


@pytest.mark.parametrize(("raised", "level", "with_traceback"), [
    (TypeError("unsupported operand"), "ERROR", True),  # a fault of the watcher's code
    (AttributeError("no attribute 'slot'"), "ERROR", True),
    (ValueError("RPC error -32005: limit exceeded"), "WARNING", False),  # the node's trouble, as web3 reports it
    (KeyError("result"), "WARNING", False),  # an unreadable answer
], ids=["type-error", "attribute-error", "rpc-error", "unreadable-answer"])
async def test_a_code_fault_is_logged_with_its_traceback_and_a_node_fault_is_not(
        watchers, monkeypatch, caplog, raised, level, with_traceback) -> None:
    async def broken(*_):
        raise raised

    monkeypatch.setattr("chain_watchers.discovery.discover", broken)
    network = load_registry(env={}).network(NETWORK)
    watcher = watchers("solana", (network,), open_adapter)
    with caplog.at_level("WARNING", logger="chain_watchers.runner"):
        assert (await watcher.run_once()).failed == (NETWORK,)
    [record] = [r for r in caplog.records if r.name == "chain_watchers.runner"]
    assert record.levelname == level
    assert (record.exc_info is not None) is with_traceback
    assert watcher.backoff.failures == {NETWORK: 1}  # either way the network backs off


async def test_a_node_that_does_not_answer_is_one_line_until_it_answers_again(watchers, monkeypatch, caplog) -> None:
    """`service dev` on a machine with no network: a network in use says once that its node does not answer,
    instead of a warning at every retry; a network nobody uses is never asked anything."""
    down = {"passes": 4}

    async def unreachable(*_):
        if down["passes"] > 0:
            down["passes"] -= 1
            raise OSError("[Errno -3] Temporary failure in name resolution")
        return 0

    monkeypatch.setattr("chain_watchers.discovery.discover", unreachable)
    network = load_registry(env={}).network(NETWORK)
    watcher = watchers("solana", (network,), open_adapter)
    with caplog.at_level("DEBUG", logger="chain_watchers.runner"):
        for _ in range(4):
            watcher.backoff.until.clear()  # each pass as if its pause had run out
            assert (await watcher.run_once()).failed == (NETWORK,)
        watcher.backoff.until.clear()
        assert (await watcher.run_once()).failed == ()
    lines = [(r.levelname, r.getMessage()) for r in caplog.records if r.name == "chain_watchers.runner"]
    loud = [line for line in lines if line[0] != "DEBUG"]
    assert len(loud) == 2, lines
    assert loud[0][0] == "WARNING" and "does not answer" in loud[0][1] and "name resolution" in loud[0][1]
    assert loud[1] == ("INFO", f"watch {NETWORK}: its node answers again, after 4 failed passes")
