"""A local Solana JSON-RPC server (aiohttp) answering with mainnet-shaped responses from a small cluster model."""

from __future__ import annotations

from dataclasses import dataclass, field

from aiohttp import web
from solders.keypair import Keypair
from solders.signature import Signature

from common.money import from_base_units

TOKEN_PROGRAM = "TokenkegQfeZyiNwAJbNbGKPFXCWuBvf9Ss623VQ5DA"
# Rooting needs 31+ confirmed blocks on top (max lockout 32); the model calls a slot finalized at that depth.
FINALIZED_DEPTH = 32
INSTRUCTION_ERROR = {"InstructionError": [0, {"Custom": 1}]}  # SPL Token error 1: insufficient funds


@dataclass
class Recorded:
    slot: int
    result: dict  # the getTransaction result, jsonParsed
    processed_only: bool = False  # seen by the leader, not yet voted on


@dataclass
class Cluster:
    """Head slot plus recorded transactions; the statuses follow from depth the way a validator reports them."""

    head: int = 280_000_000
    frozen_root: int | None = None  # set to model stalled voting: no slot after it gets rooted
    transactions: dict[str, Recorded] = field(default_factory=dict)
    calls: list[str] = field(default_factory=list)
    recorded: dict[str, object] = field(default_factory=dict)  # method -> a result recorded from a node, served as is

    def status_of(self, record: Recorded) -> dict:
        depth = self.head - record.slot + 1
        if record.processed_only:
            level, confirmations = "processed", 0
        elif depth >= FINALIZED_DEPTH and (self.frozen_root is None or record.slot <= self.frozen_root):
            level, confirmations = "finalized", None  # rooted: the RPC reports null confirmations
        else:
            level, confirmations = "confirmed", depth - 1
        err = record.result["meta"]["err"]
        return {
            "slot": record.slot,
            "confirmations": confirmations,
            "err": err,
            "status": {"Ok": None} if err is None else {"Err": err},
            "confirmationStatus": level,
        }

    def add_transfer(
        self, *, slot: int, mint: str, sender: str, recipient: str, amount: int, reference: str | None = None,
        failed: bool = False, processed_only: bool = False,
    ) -> str:
        signature = str(Signature.new_unique())
        self.transactions[signature] = Recorded(
            slot, spl_transfer_result(signature, slot, mint, sender, recipient, amount, reference, failed),
            processed_only,
        )
        return signature


def _token_balance(index: int, mint: str, owner: str, amount: int) -> dict:
    return {
        "accountIndex": index,
        "mint": mint,
        "owner": owner,
        "programId": TOKEN_PROGRAM,
        "uiTokenAmount": {
            "amount": str(amount),
            "decimals": 6,
            "uiAmount": amount / 10**6 if amount else None,
            "uiAmountString": from_base_units(amount, 6),
        },
    }


def _key(pubkey: str, signer: bool, writable: bool) -> dict:
    return {"pubkey": pubkey, "signer": signer, "source": "transaction", "writable": writable}


def spl_transfer_result(
    signature: str, slot: int, mint: str, sender: str, recipient: str, amount: int, reference: str | None,
    failed: bool,
) -> dict:
    """A v0 transferChecked between two associated token accounts, shaped like mainnet's jsonParsed answer."""
    source_ata, dest_ata = str(Keypair().pubkey()), str(Keypair().pubkey())
    before_sender, before_recipient = 900_000_000, 5_000_000
    moved = 0 if failed else amount  # a failed transaction leaves every token balance as it was
    keys = [_key(sender, True, True), _key(source_ata, False, True), _key(dest_ata, False, True)]
    if reference is not None:
        keys.append(_key(reference, False, False))  # Solana Pay: the reference rides as a read-only key
    keys += [_key(mint, False, False), _key(TOKEN_PROGRAM, False, False)]
    log_tail = (
        [f"Program {TOKEN_PROGRAM} failed: custom program error: 0x1"]
        if failed else [f"Program {TOKEN_PROGRAM} success"]
    )
    return {
        "blockTime": 1_722_000_000 + slot % 1000,
        "meta": {
            "computeUnitsConsumed": 6_200,
            "err": INSTRUCTION_ERROR if failed else None,
            "fee": 5_000,
            "innerInstructions": [],
            "loadedAddresses": {"readonly": [], "writable": []},
            "logMessages": [
                f"Program {TOKEN_PROGRAM} invoke [1]",
                "Program log: Instruction: TransferChecked",
                f"Program {TOKEN_PROGRAM} consumed 6200 of 200000 compute units",
                *log_tail,
            ],
            "postBalances": [1_461_600_000, 2_039_280, 2_039_280, 0, 1_461_600, 934_087_680][: len(keys)],
            "postTokenBalances": [
                _token_balance(1, mint, sender, before_sender - moved),
                _token_balance(2, mint, recipient, before_recipient + moved),
            ],
            "preBalances": [1_461_605_000, 2_039_280, 2_039_280, 0, 1_461_600, 934_087_680][: len(keys)],
            "preTokenBalances": [
                _token_balance(1, mint, sender, before_sender),
                _token_balance(2, mint, recipient, before_recipient),
            ],
            "rewards": [],
            "status": {"Err": INSTRUCTION_ERROR} if failed else {"Ok": None},
        },
        "slot": slot,
        "transaction": {
            "message": {
                "accountKeys": keys,
                "addressTableLookups": [],
                "instructions": [
                    {
                        "parsed": {
                            "info": {
                                "authority": sender,
                                "destination": dest_ata,
                                "mint": mint,
                                "source": source_ata,
                                "tokenAmount": {
                                    "amount": str(amount),
                                    "decimals": 6,
                                    "uiAmount": amount / 10**6,
                                    "uiAmountString": from_base_units(amount, 6),
                                },
                            },
                            "type": "transferChecked",
                        },
                        "program": "spl-token",
                        "programId": TOKEN_PROGRAM,
                        "stackHeight": None,
                    }
                ],
                "recentBlockhash": "EkSnNWid2cvwEVnVx9aBqawnmiCNiDgp3gUdkDPTKN1N",
            },
            "signatures": [signature],
        },
        "version": 0,
    }


def build_app(cluster: Cluster) -> web.Application:
    def get_transaction(params: list) -> dict | None:
        signature, config = params
        if config.get("encoding") != "jsonParsed" or config.get("maxSupportedTransactionVersion") != 0:
            raise ValueError("this recording holds jsonParsed v0 answers only")
        record = cluster.transactions.get(signature)
        if record is None or record.processed_only or config.get("commitment") == "processed":
            return None
        if config.get("commitment") == "finalized" and cluster.status_of(record)["confirmationStatus"] != "finalized":
            return None
        return record.result

    def get_signature_statuses(params: list) -> dict:
        signatures, _config = params
        value = [
            cluster.status_of(cluster.transactions[s]) if s in cluster.transactions else None for s in signatures
        ]
        return {"context": {"apiVersion": "2.0.15", "slot": cluster.head}, "value": value}

    def get_slot(params: list) -> int:
        return cluster.head

    def get_signatures_for_address(params: list) -> list[dict]:
        address, config = params
        mentioning = [
            (signature, record) for signature, record in cluster.transactions.items()
            if not record.processed_only
            and any(key["pubkey"] == address for key in record.result["transaction"]["message"]["accountKeys"])
        ]
        mentioning.sort(key=lambda item: item[1].slot, reverse=True)
        return [
            {
                "blockTime": record.result["blockTime"],
                "confirmationStatus": cluster.status_of(record)["confirmationStatus"],
                "err": record.result["meta"]["err"],
                "memo": None,
                "signature": signature,
                "slot": record.slot,
            }
            for signature, record in mentioning[: config.get("limit") or 1000]
        ]

    methods = {
        "getTransaction": get_transaction,
        "getSignatureStatuses": get_signature_statuses,
        "getSlot": get_slot,
        "getSignaturesForAddress": get_signatures_for_address,
    }

    async def rpc(request: web.Request) -> web.Response:
        body = await request.json()
        cluster.calls.append(body["method"])
        if body["method"] in cluster.recorded:
            return web.json_response({"jsonrpc": "2.0", "result": cluster.recorded[body["method"]], "id": body["id"]})
        handler = methods.get(body["method"])
        if handler is None:
            error = {"code": -32601, "message": "Method not found"}
            return web.json_response({"jsonrpc": "2.0", "error": error, "id": body["id"]})
        return web.json_response({"jsonrpc": "2.0", "result": handler(body.get("params", [])), "id": body["id"]})

    app = web.Application()
    app.router.add_post("/", rpc)
    return app
