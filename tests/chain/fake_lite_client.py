"""A pytoniq LiteClient double answering liteserver queries from TL-B cells built with pytoniq-core; never connects."""

from __future__ import annotations

import base64
import hashlib
import os
from dataclasses import dataclass, field

from nacl.signing import SigningKey
from pytoniq import LiteClient
from pytoniq.liteclient.client import LiteServerError
from pytoniq_core import Address, Cell, VmStack, begin_cell
from pytoniq_core.crypto.crc import crc16
from pytoniq_core.tl.block import BlockIdExt
from pytoniq_core.tlb.account import (
    Account,
    AccountState,
    AccountStorage,
    StateInit,
    StorageExtraInfo,
    StorageInfo,
    StorageUsed,
)
from pytoniq_core.tlb.block import CurrencyCollection

NOW = 1_722_000_000
BASECHAIN_SHARD = -(2**63)  # the single shard 0x8000000000000000, as a signed long on the wire


def boc(*roots: Cell) -> bytes:
    """Serialise several root cells into one bag of cells (pytoniq-core's Cell.to_boc writes a single root)."""
    indexed: dict[Cell, None] = {}
    for root in roots:
        root.order(indexed)  # moves every cell after its parents, as the format requires
    index = {cell: i for i, cell in enumerate(indexed)}
    size = max(1, (len(index).bit_length() + 7) // 8)
    payload = b"".join(cell.serialize(index, size) for cell in index)
    offset = max(1, (len(payload).bit_length() + 7) // 8)
    return (
        b"\xb5\xee\x9c\x72" + bytes([size, offset]) + len(index).to_bytes(size, "big")
        + len(roots).to_bytes(size, "big") + bytes(size) + len(payload).to_bytes(offset, "big")
        + b"".join(index[root].to_bytes(size, "big") for root in roots) + payload
    )


def comment_cell(text: str) -> Cell:
    return begin_cell().store_uint(0, 32).store_snake_string(text).end_cell()


def notification_body(amount: int, sender: Address, comment: str | None) -> Cell:
    """TEP-74 transfer_notification#7362d09c query_id amount sender forward_payload:(Either Cell ^Cell)."""
    body = begin_cell().store_uint(0x7362D09C, 32).store_uint(7, 64).store_coins(amount).store_address(sender)
    if comment is None:
        return body.store_bit(0).end_cell()
    return body.store_bit(1).store_ref(comment_cell(comment)).end_cell()


def internal_message(src: Address, dest: Address, body: Cell, value: int = 1) -> Cell:
    info = (
        begin_cell().store_uint(0, 1).store_bool(True).store_bool(False).store_bool(False)
        .store_address(src).store_address(dest).store_coins(value).store_bit(0)  # no extra currencies
        .store_coins(0).store_coins(266_669).store_uint(1, 64).store_uint(NOW, 32)
    )
    return info.store_bit(0).store_bit(1).store_ref(body).end_cell()  # no StateInit; body by reference


def _description(outcome: str) -> Cell:
    """trans_ord with credit, compute and action phases; `outcome` is ok, compute_failed, action_failed or skipped."""
    builder = begin_cell().store_uint(0, 4).store_bool(False).store_bit(0)  # credit_first, no storage phase
    builder.store_bit(1).store_bit(0).store_coins(1).store_bit(0)  # credit phase: 1 nanoton, no extra currencies
    if outcome == "skipped":
        builder.store_bit(0).store_uint(0, 2)  # cskip_no_state: an undeployed wallet
    else:
        exit_code = 0 if outcome != "compute_failed" else 33
        vm = (
            begin_cell().store_var_uint(1_000, 3).store_var_uint(1_000_000, 3).store_bit(0).store_int(0, 8)
            .store_int(exit_code, 32).store_bit(0).store_uint(40, 32).store_bytes(bytes(32)).store_bytes(bytes(32))
            .end_cell()
        )
        builder.store_bit(1).store_bool(exit_code == 0).store_bool(False).store_bool(False).store_coins(400_000)
        builder.store_ref(vm)
    if outcome in ("ok", "action_failed"):
        ok = outcome == "ok"
        action = (
            begin_cell().store_bool(ok).store_bool(True).store_bool(not ok).store_bit(0)  # status unchanged
            .store_bit(0).store_bit(0).store_int(0 if ok else 37, 32).store_bit(0)
            .store_uint(0, 16).store_uint(0, 16).store_uint(0, 16).store_uint(0, 16)
            .store_bytes(bytes(32)).store_var_uint(0, 3).store_var_uint(0, 3).end_cell()
        )
        builder.store_bit(1).store_ref(action)
    else:
        builder.store_bit(0)
    return builder.store_bool(outcome != "ok").store_bit(0).store_bool(False).end_cell()


def transaction_cell(account: Address, lt: int, prev_hash: bytes, prev_lt: int, in_msg: Cell, outcome: str) -> Cell:
    """transaction$0111 with its in_msg, no out messages, fees, HASH_UPDATE and an ordinary description."""
    messages = begin_cell().store_maybe_ref(in_msg).store_bit(0).end_cell()
    state_update = begin_cell().store_uint(0x72, 8).store_bytes(os.urandom(32)).store_bytes(os.urandom(32)).end_cell()
    return (
        begin_cell().store_uint(0b0111, 4).store_bytes(account.hash_part).store_uint(lt, 64)
        .store_bytes(prev_hash).store_uint(prev_lt, 64).store_uint(NOW, 32).store_uint(0, 15)
        .store_uint(0b10, 2).store_uint(0b10, 2)  # active before and after
        .store_ref(messages).store_coins(400_000).store_bit(0)
        .store_ref(state_update).store_ref(_description(outcome)).end_cell()
    )


def _account_cell(address: Address, last_lt: int) -> Cell:
    code, data = begin_cell().store_uint(0xFF00, 16).end_cell(), begin_cell().store_uint(0, 32).end_cell()
    state = AccountState("account_active", state_init=StateInit(code=code, data=data))
    storage = AccountStorage(last_lt, CurrencyCollection(10**9), state)
    info = StorageInfo(StorageUsed(3, 1_200), StorageExtraInfo("storage_extra_none"), NOW, None)
    return Account(address, info, storage).serialize()


def _account_proof(address: Address, account: Cell, last_hash: bytes, last_lt: int) -> tuple[Cell, bytes]:
    """A shard block whose state update leads to a ShardStateUnsplit holding this one account: what pytoniq checks."""
    balance = begin_cell().store_uint(0, 5).store_coins(10**9).store_bit(0).end_cell()  # DepthBalanceInfo
    leaf = (
        begin_cell().store_uint(0b10, 2).store_uint(256, 9).store_bytes(address.hash_part)  # hml_long: whole key
        .store_cell(balance).store_ref(account).store_bytes(last_hash).store_uint(last_lt, 64).end_cell()
    )
    accounts = begin_cell().store_bit(1).store_ref(leaf).store_cell(balance).end_cell()
    totals = (
        begin_cell().store_uint(0, 64).store_uint(0, 64).store_coins(10**9).store_bit(0).store_coins(0).store_bit(0)
        .store_bit(0).store_bit(0).end_cell()
    )
    state = (
        begin_cell().store_uint(0x9023AFE2, 32).store_int(-239, 32)
        .store_uint(0, 2).store_uint(0, 6).store_int(address.wc, 32).store_uint(2**63, 64)  # ShardIdent
        .store_uint(1, 32).store_uint(0, 32).store_uint(NOW, 32).store_uint(1, 64).store_uint(1, 32)
        .store_ref(Cell.empty()).store_bit(0).store_ref(accounts).store_ref(totals).store_bit(0).end_cell()
    )
    update = begin_cell().store_ref(Cell.empty()).store_ref(state).end_cell()
    block = (
        begin_cell().store_uint(0x11EF55AA, 32).store_int(-239, 32)
        .store_ref(Cell.empty()).store_ref(Cell.empty()).store_ref(update).end_cell()
    )
    proof = boc(begin_cell().store_ref(block).end_cell(), begin_cell().store_ref(state).end_cell())
    return block, proof


@dataclass
class Ledger:
    """Accounts with their transaction chains (newest first) and jetton masters that derive wallets."""

    masters: set[str] = field(default_factory=set)
    histories: dict[str, list[tuple[Cell, BlockIdExt]]] = field(default_factory=dict)
    last_block: BlockIdExt = field(
        default_factory=lambda: BlockIdExt(-1, None, 41_000_000, os.urandom(32), os.urandom(32))
    )
    next_lt: int = 50_000_000_000_001
    queries: list[str] = field(default_factory=list)

    # (master raw, owner raw) -> the jetton wallet a real minter derives (TVM-computed, e.g. by @ton/sandbox)
    wallets: dict[tuple[str, str], Address] = field(default_factory=dict)

    def wallet_of(self, master: Address, owner: Address) -> Address:
        key = (master.to_str(is_user_friendly=False), owner.to_str(is_user_friendly=False))
        if key in self.wallets:
            return self.wallets[key]
        return Address((0, hashlib.sha256("".join(key).encode()).digest()))

    def add(self, account: Address, in_msg: Cell, outcome: str = "ok") -> str:
        history = self.histories.get(account.to_str(is_user_friendly=False), [])
        prev_hash, prev_lt = (history[0][0].hash, self._lt(history[0][0])) if history else (bytes(32), 0)
        cell = transaction_cell(account, self.next_lt, prev_hash, prev_lt, in_msg, outcome)
        self.next_lt += 1_000
        return self.add_cell(account, cell)

    def add_cell(self, account: Address, cell: Cell) -> str:
        """A transaction cell made elsewhere (a TVM run, a recording) becomes the account's newest transaction."""
        history = self.histories.setdefault(account.to_str(is_user_friendly=False), [])
        block = BlockIdExt(account.wc, BASECHAIN_SHARD, 46_000_000 + len(history), os.urandom(32), os.urandom(32))
        history.insert(0, (cell, block))
        return cell.hash.hex()

    @staticmethod
    def _lt(cell: Cell) -> int:
        return cell.begin_parse().skip_bits(4 + 256).load_uint(64)


class FakeLiteClient(LiteClient):
    """Overrides only liteserver_request: queries and answers pass through pytoniq's own TL (de)serialisation."""

    def __init__(self, ledger: Ledger, trust_level: int = 2) -> None:
        key = base64.b64encode(bytes(SigningKey.generate().verify_key)).decode()
        super().__init__(host="127.0.0.1", port=1, server_pub_key=key, trust_level=trust_level)
        self.ledger = ledger

    async def liteserver_request(self, tl_schema_name: str, data: dict) -> dict:
        self.schemas.serialize(self.schemas.get_by_name("liteServer." + tl_schema_name), data)  # query well formed
        self.ledger.queries.append(tl_schema_name)
        answer_schema, answer = getattr(self, "_" + tl_schema_name)(data)
        wire = self.schemas.serialize(self.schemas.get_by_name(answer_schema), answer)
        return self.schemas.deserialize(wire)[0]

    def _getMasterchainInfo(self, data: dict) -> tuple[str, dict]:
        zero = {"workchain": -1, "root_hash": bytes(32).hex(), "file_hash": bytes(32).hex()}
        return "liteServer.masterchainInfo", {
            "last": self.ledger.last_block.to_dict(), "state_root_hash": os.urandom(32).hex(), "init": zero,
        }

    def _getAccountState(self, data: dict) -> tuple[str, dict]:
        address = Address((data["account"]["workchain"], bytes.fromhex(data["account"]["id"])))
        history = self.ledger.histories.get(address.to_str(is_user_friendly=False))
        answer = {"id": data["id"], "shardblk": data["id"], "shard_proof": b"", "proof": b"", "state": b""}
        if history:
            last_cell = history[0][0]
            account = _account_cell(address, Ledger._lt(last_cell))
            block, proof = _account_proof(address, account, last_cell.hash, Ledger._lt(last_cell))
            shard = BlockIdExt(address.wc, BASECHAIN_SHARD, 46_000_000, block.hash, os.urandom(32))
            answer |= {"shardblk": shard.to_dict(), "proof": proof, "state": account.to_boc()}
        return "liteServer.accountState", answer

    def _getTransactions(self, data: dict) -> tuple[str, dict]:
        account = f"{data['account']['workchain']}:{data['account']['id']}"
        history = self.ledger.histories.get(account, [])
        start = next((i for i, (cell, _) in enumerate(history) if cell.hash.hex() == data["hash"]), None)
        if start is None or Ledger._lt(history[start][0]) != data["lt"]:
            raise LiteServerError(-400, "cannot locate transaction in block with specified logical time")
        page = history[start : start + data["count"]]
        return "liteServer.transactionList", {
            "ids": [block.to_dict() for _, block in page], "transactions": boc(*(cell for cell, _ in page)),
        }

    def _runSmcMethod(self, data: dict) -> tuple[str, dict]:
        master = Address((data["account"]["workchain"], bytes.fromhex(data["account"]["id"])))
        get_wallet_address = int.from_bytes(crc16(b"get_wallet_address"), "big") & 0xFFFF | 0x10000
        if master.to_str(is_user_friendly=False) not in self.ledger.masters or data["method_id"] != get_wallet_address:
            return "liteServer.runMethodResult", self._method_result(data, exit_code=11, stack=None)
        owner = VmStack.deserialize(Cell.one_from_boc(data["params"]).begin_parse())[0].load_address()
        wallet = begin_cell().store_address(self.ledger.wallet_of(master, owner)).end_cell().begin_parse()
        return "liteServer.runMethodResult", self._method_result(data, exit_code=0, stack=[wallet])

    @staticmethod
    def _method_result(data: dict, exit_code: int, stack: list | None) -> dict:
        result = VmStack.serialize(stack).to_boc() if stack is not None else b""
        return {
            "mode": data["mode"], "id": data["id"], "shardblk": data["id"], "shard_proof": b"", "proof": b"",
            "state_proof": b"", "exit_code": exit_code, "result": result,
        }
