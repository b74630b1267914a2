"""A local java-tron full-node HTTP API (aiohttp) answering with mainnet-shaped TRC-20 records from a chain model.

Receipts are kept as java-tron stores them (TVM hex) and rendered as its servlets render them: with `visible: true`
(which tronpy always sends) the addresses of a receipt come out in base58 and its revert message as text.
"""

from __future__ import annotations

import json
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from aiohttp import web
from tronpy import keys

TRANSFER_TOPIC = "ddf252ad1be2c89b69c2b068fc378daa952ba7f163c4a11628f55a4df523b3ef"
APPROVAL_TOPIC = "8c5be1e5ebec7d5bd14f71427d1e84f3dd0314c0f7b2291e5b200ac8c7c3b925"
# A block is solidified once 19 of the 27 super representatives have built on it.
SOLID_DEPTH = 19
RECORDED = Path(__file__).parent / "recorded" / "tron"  # answers of real nodes, with their sources in its README
HISTORY = "mainnet_trongrid_trc20_history_TL24LCps.json"


def recorded(name: str) -> Any:
    return json.loads((RECORDED / name).read_text())


def transaction_in_history(tx_hash: str) -> dict:
    """The transaction TronGrid's history carries beside a transfer (`detail`): what gettransactionbyid knows of it."""
    [entry] = [e for e in recorded(HISTORY)["data"] if e["transaction_id"] == tx_hash]
    return entry["detail"]


def _word(hex_value: str) -> str:
    return hex_value.rjust(64, "0")


def _tvm_address(address: str) -> str:
    """20-byte hex without TRON's 41 prefix: how the TVM, and so event logs, name accounts."""
    return keys.to_hex_address(address)[2:]


@dataclass
class Recorded:
    transaction: dict  # /wallet/gettransactionbyid answer
    info: dict  # /wallet/gettransactioninfobyid answer; {} until the transaction is in a block


@dataclass
class Chain:
    head: int = 72_500_000
    frozen_solid: int | None = None  # set to model too few super representatives producing: solidity stops
    # Blocks this node has not got yet although another node of the same endpoint already reported a later head.
    lagging: set[int] = field(default_factory=set)
    transactions: dict[str, Recorded] = field(default_factory=dict)
    requests: list[tuple[str, dict]] = field(default_factory=list)

    @property
    def solid(self) -> int:
        solid = self.head - SOLID_DEPTH + 1
        return solid if self.frozen_solid is None else min(solid, self.frozen_solid)

    def add_trc20_call(
        self, *, contract: str, owner: str, to: str, amount: int, depth: int | None, outcome: str = "SUCCESS",
        approval: bool = False,
    ) -> str:
        """A TriggerSmartContract to transfer(to, amount) or approve(to, amount); depth None leaves it unconfirmed."""
        txid = secrets.token_hex(32)
        selector = "095ea7b3" if approval else "a9059cbb"
        transaction = {
            "ret": [{"contractRet": outcome}],
            "signature": [secrets.token_hex(65)],
            "txID": txid,
            "raw_data": {
                "contract": [
                    {
                        "parameter": {
                            "value": {
                                "data": selector + _word(_tvm_address(to)) + _word(f"{amount:x}"),
                                "owner_address": owner,
                                "contract_address": contract,
                            },
                            "type_url": "type.googleapis.com/protocol.TriggerSmartContract",
                        },
                        "type": "TriggerSmartContract",
                    }
                ],
                "ref_block_bytes": "a1c4",
                "ref_block_hash": secrets.token_hex(8),
                "expiration": 1_722_000_060_000,
                "fee_limit": 100_000_000,
                "timestamp": 1_722_000_000_000,
            },
            "raw_data_hex": "0a02a1c42208" + secrets.token_hex(60),
        }
        info = {} if depth is None else self._info(txid, contract, owner, to, amount, depth, outcome, approval)
        self.transactions[txid] = Recorded(transaction, info)
        return txid

    def _info(
        self, txid: str, contract: str, owner: str, to: str, amount: int, depth: int, outcome: str, approval: bool
    ) -> dict:
        info = {
            "id": txid,
            "fee": 13_844_850,
            "blockNumber": self.head - depth + 1,
            "blockTimeStamp": 1_722_000_003_000,
            "contractResult": [_word("1") if outcome == "SUCCESS" else "08c379a0" + _word("20")],
            "contract_address": keys.to_hex_address(contract),  # stored as bytes; rendered per `visible`
            "receipt": {
                "energy_fee": 13_499_850,
                "energy_usage_total": 64_285,
                "net_fee": 345_000,
                "result": outcome,
            },
        }
        if outcome == "SUCCESS":
            topic = APPROVAL_TOPIC if approval else TRANSFER_TOPIC
            info["log"] = [
                {
                    "address": _tvm_address(contract),
                    "topics": [topic, _word(_tvm_address(owner)), _word(_tvm_address(to))],
                    "data": _word(f"{amount:x}"),
                }
            ]
        else:
            info["result"] = "FAILED"
            info["resMessage"] = b"REVERT opcode executed".hex()
        return info


def _base58(hex_address: str) -> str:
    """java-tron's JsonFormat for an address field under visible=true; a 20-byte TVM address gets 41 first."""
    return keys.to_base58check_address(hex_address if len(hex_address) == 42 else "41" + hex_address[-40:])


def visible_info(info: dict) -> dict:
    """GetTransactionInfoByIdServlet with visible=true: Log.address, contract_address and the internal transactions'
    addresses in base58 (HttpSelfFormatFieldName.AddressFieldNameMap), resMessage as text (NameFieldNameMap)."""
    shown = dict(info)
    if "log" in info:
        shown["log"] = [{**log, "address": _base58(log["address"])} if log.get("address") else log
                        for log in info["log"]]
    if info.get("contract_address"):
        shown["contract_address"] = _base58(info["contract_address"])
    if "internal_transactions" in info:
        shown["internal_transactions"] = [
            {**tx, **{key: _base58(tx[key]) for key in ("caller_address", "transferTo_address") if tx.get(key)}}
            for tx in info["internal_transactions"]
        ]
    if info.get("resMessage"):
        shown["resMessage"] = bytes.fromhex(info["resMessage"]).decode(errors="replace")
    return shown


def _block_line(number: int) -> str:
    return f"Num:{number},ID:{number:016x}{secrets.token_hex(24)}"


def build_app(chain: Chain) -> web.Application:
    async def record(request: web.Request) -> dict:
        body = await request.json() if request.can_read_body else {}
        chain.requests.append((request.path, body))
        return body

    async def transaction_by_id(request: web.Request) -> web.Response:
        body = await record(request)
        found = chain.transactions.get(body["value"])
        return web.json_response(found.transaction if found else {})

    async def transaction_info_by_id(request: web.Request) -> web.Response:
        body = await record(request)
        found = chain.transactions.get(body["value"])
        info = found.info if found else {}
        return web.json_response(visible_info(info) if body.get("visible") and info else info)

    def in_block(number: int) -> list[Recorded]:
        return [r for r in chain.transactions.values() if r.info.get("blockNumber") == number]

    async def infos_in_block(request: web.Request) -> web.Response:
        body = await record(request)
        # java-tron answers a block it has not got like a block without transactions.
        infos = [] if body["num"] in chain.lagging else [r.info for r in in_block(body["num"])]
        infos = [visible_info(info) for info in infos] if body.get("visible") else infos
        return web.json_response(infos if infos else {})  # java-tron answers {} for a block without transactions

    async def block_by_num(request: web.Request) -> web.Response:
        number = (await record(request))["num"]
        if number > chain.head or number in chain.lagging:
            return web.json_response({})
        block = {
            "blockID": f"{number:016x}{secrets.token_hex(24)}",
            "block_header": {
                "raw_data": {
                    "number": number,
                    "txTrieRoot": secrets.token_hex(32),
                    "witness_address": "41" + secrets.token_hex(20),
                    "parentHash": f"{number - 1:016x}{secrets.token_hex(24)}",
                    "version": 34,
                    "timestamp": 1_722_000_000_000 + number * 3000,
                },
                "witness_signature": secrets.token_hex(65),
            },
        }
        transactions = [r.transaction for r in in_block(number)]
        # JsonFormat leaves out an empty repeated field: a block without transactions has no "transactions" member.
        return web.json_response({**block, "transactions": transactions} if transactions else block)

    async def node_info(request: web.Request) -> web.Response:
        await record(request)
        return web.json_response(
            {
                "activeConnectCount": 12,
                "beginSyncNum": chain.head - 5,
                "block": _block_line(chain.head),
                "cheatWitnessInfoMap": {},
                "configNodeInfo": {"codeVersion": "4.7.6", "p2pVersion": "11111", "versionNum": "18631"},
                "currentConnectCount": 30,
                "listenPort": 18888,
                "machineInfo": {"cpuCount": 16, "javaVersion": "1.8.0_412", "osName": "Linux"},
                "passiveConnectCount": 18,
                "peerInfoList": [],
                "solidityBlock": _block_line(chain.solid),
                "totalFlow": 0,
            }
        )

    app = web.Application()
    app.router.add_post("/wallet/gettransactionbyid", transaction_by_id)
    app.router.add_post("/wallet/gettransactioninfobyid", transaction_info_by_id)
    app.router.add_post("/wallet/gettransactioninfobyblocknum", infos_in_block)
    app.router.add_post("/wallet/getblockbynum", block_by_num)
    app.router.add_post("/wallet/getnodeinfo", node_info)
    return app
