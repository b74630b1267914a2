"""Find payments that came without a hash: by unique amount (EVM, TRON), Solana Pay reference and TON comment.

Each find becomes a payment attempt, so it is verified by the very path of a hash the page reported.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable

from chain_watchers import references, store, unique_amounts
from chain_watchers.base import BlockNotAvailable, SeenTransfer
from chain_watchers.registry import Network
from chain_watchers.watch import Watch
from common import metrics, money


async def discover(watch: Watch, network: Network, head: int | None = None) -> int:
    """Payments found on the network this tick (new attempts); no chain is read where no merchant takes payments.
    `head` is the newest block announced (None: unknown)."""
    if not await store.receivable(watch.pool, network.slug):
        return 0
    if network.family == "evm":
        return await _evm(watch, network, head)
    finder = {"tron": _tron, "solana": _solana, "ton": _ton}[network.family]
    return await finder(watch, network)


async def _record(watch: Watch, network: Network, finds: Iterable[tuple[store.Session, str]], cursor: int,
                  scope: str = "") -> int:
    """The attempts and the cursor past them in one transaction: a crash between the two can neither skip nor repeat."""
    async with watch.pool.acquire() as conn, conn.transaction():
        added = [await store.add_found_attempt(conn, session, network.slug, tx_hash) for session, tx_hash in finds]
        await store.move_cursor(conn, network.slug, cursor, scope)
    if not scope:  # a block cursor (EVM, TRON); TON's are per wallet, in logical time
        metrics.chain_position(network.slug, processed=cursor)
    return sum(added)


async def _reserved(watch: Watch, network: Network, edge: int) -> tuple[int | None, list]:
    """The block cursor and the amounts reserved on the network.

    With none reserved nothing can be missed: the cursor moves to `edge`, where a later session's scan begins.
    """
    async with watch.pool.acquire() as conn:
        cursor = await store.cursor(conn, network.slug)
    reservations = await unique_amounts.reserved(watch.pool, network.slug, watch.now)
    if not reservations:
        await _record(watch, network, (), max(cursor or 0, edge))
    return cursor, reservations


def _by_amount(network: Network, adapter, reservations: list[unique_amounts.Reservation]) -> dict:
    """(recipient, token, exact base units) -> the session that quotes that amount there."""
    keyed = {}
    for r in reservations:
        for coin in network.stablecoins:
            try:
                units = money.to_base_units(money.format(r.amount), coin.decimals)
            except money.InvalidAmount:
                continue  # finer than the token can carry, so the page quoted no such amount in it
            session = store.Session(session_id=r.session_id, order_id=r.order_id, merchant_id=r.merchant_id,
                                    livemode=r.livemode, open=True, address=r.address)
            keyed[(r.address, adapter.validate_address(coin.address), units)] = session
    return keyed


def _matches(seen: list[SeenTransfer], keyed: dict) -> list[tuple[store.Session, str]]:
    finds = []
    for s in seen:
        session = keyed.get((s.transfer.to_address, s.transfer.token_address, s.transfer.amount_base_units))
        if session is not None:
            finds.append((session, s.tx_hash))
    return finds


async def _evm(watch: Watch, network: Network, announced: int | None) -> int:
    adapter = await watch.adapter(network)
    # With nothing reserved the announced head moves the cursor and the node is not asked. With amounts reserved the
    # scan reads the head from the node it reads logs from: an announcement from another backend may be ahead of it.
    head = await adapter.head() if announced is None else announced
    metrics.chain_position(network.slug, head=head)
    cursor, reservations = await _reserved(watch, network, head - network.confirmations + 1)
    if not reservations:
        return 0
    if announced is not None:
        head = await adapter.head()
    final_edge = head - network.confirmations + 1  # blocks at or below it are at the required depth
    keyed = _by_amount(network, adapter, reservations)
    recipients = sorted({r.address for r in reservations})
    start = cursor + 1 if cursor is not None else max(0, head - watch.options.first_lookback)
    found = 0
    for _ in range(watch.options.scan_chunks):
        if start > head:
            break
        end = min(head, start + watch.options.scan_chunk - 1)
        seen = await adapter.transfers_to(recipients, start, end)
        # Blocks above the final edge are read again next tick, so a reorganisation there cannot hide a payment.
        found += await _record(watch, network, _matches(seen, keyed), max(cursor or 0, min(end, final_edge)))
        start = end + 1
    return found


async def _tron(watch: Watch, network: Network) -> int:
    adapter = await watch.adapter(network)
    solid = await adapter.solid_head()  # solidified blocks cannot be reorganised: read once, never again
    metrics.chain_position(network.slug, head=solid)
    cursor, reservations = await _reserved(watch, network, solid)
    if not reservations:
        return 0
    start = cursor + 1 if cursor is not None else max(0, solid - watch.options.tron_blocks + 1)
    end = min(solid, start + watch.options.tron_blocks - 1)
    seen, read = [], start - 1
    for number in range(start, end + 1):
        try:
            seen += await adapter.transfers_in_block(number)
        except BlockNotAvailable:
            break  # the cursor stops before it: the block is read again next tick, once the node has it
        read = number
    return await _record(watch, network, _matches(seen, _by_amount(network, adapter, reservations)),
                         max(cursor or 0, read))


async def _searched(watch: Watch, network: Network) -> list[store.Session]:
    """Open sessions every tick; ended ones (a late payment is still recorded) one tick in `late_every`."""
    ended_after = watch.now - unique_amounts.RESERVED_AFTER_EXPIRY
    found = await store.sessions(watch.pool, network.slug, not network.testnet, ended_after, watch.now)
    late_tick = watch.tick % watch.options.late_every == 0
    return [s for s in found if s.open or late_tick]


async def _solana(watch: Watch, network: Network) -> int:
    sessions = await _searched(watch, network)
    if not sessions:
        return 0
    adapter = await watch.adapter(network)
    finds = []
    for session in sessions:
        for signature in await adapter.find_by_reference(references.reference(network, session.session_id)):
            finds.append((session, adapter.validate_tx_hash(signature)))
    async with watch.pool.acquire() as conn, conn.transaction():
        return sum([await store.add_found_attempt(conn, s, network.slug, tx_hash) for s, tx_hash in finds])


async def _ton(watch: Watch, network: Network) -> int:
    sessions = await _searched(watch, network)
    if not sessions:
        return 0
    adapter = await watch.adapter(network)
    by_wallet: dict[str, dict[str, store.Session]] = defaultdict(dict)
    for session in sessions:
        comment = references.reference(network, session.session_id)
        by_wallet[adapter.validate_address(session.address)][comment] = session
    found = 0
    for wallet, by_comment in by_wallet.items():
        async with watch.pool.acquire() as conn:
            after = await store.cursor(conn, network.slug, wallet) or 0
        seen, newest = await adapter.transfers_since(wallet, after)
        finds = [(by_comment[s.transfer.memo.strip()], s.tx_hash) for s in seen
                 if s.transfer.memo and s.transfer.memo.strip() in by_comment]
        found += await _record(watch, network, finds, newest, wallet)
    return found
