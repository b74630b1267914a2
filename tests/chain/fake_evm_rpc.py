"""A local EVM JSON-RPC server (aiohttp) answering with bodies recorded from public networks (recorded/evm/).

A recorded body goes out as it was recorded except for the JSON-RPC `id`, which must echo the request's. eth_getLogs
answers the way a node does: the recorded log objects, unchanged, that match the filter's block range, addresses and
topics. Anything not recorded is unknown to this node (`result: null`, what nodes answer for an unknown hash).
"""

from __future__ import annotations

import json
import pathlib
from dataclasses import dataclass, field

from aiohttp import web

RECORDED = pathlib.Path(__file__).parent / "recorded" / "evm"


def recorded(name: str) -> dict:
    return json.loads((RECORDED / name).read_text())


@dataclass
class Node:
    """What the node answers: whole recorded bodies by (method, first parameter), and recorded logs to filter."""

    answers: dict[tuple[str, str | None], dict] = field(default_factory=dict)
    logs: list[dict] = field(default_factory=list)
    head: int | None = None  # a chosen chain head, where no eth_blockNumber of the same provider was recorded
    calls: list[dict] = field(default_factory=list)

    def serve(self, method: str, name: str) -> dict:
        """Answer `method` with the recorded body in `name`, keyed by the hash it is about (none: eth_blockNumber)."""
        body = recorded(name)
        result = body["result"]
        key = None if isinstance(result, str) else (result.get("transactionHash") or result.get("hash")).lower()
        self.answers[(method, key)] = body
        return body

    def answer(self, call: dict) -> dict:
        method, params = call["method"], call.get("params") or []
        if method == "eth_blockNumber" and self.head is not None:
            return {"jsonrpc": "2.0", "id": call["id"], "result": hex(self.head)}
        if method == "eth_getLogs":
            return {"jsonrpc": "2.0", "id": call["id"], "result": [log for log in self.logs if _matches(log, params[0])]}
        key = params[0].lower() if params and isinstance(params[0], str) else None
        body = self.answers.get((method, key))
        if body is None:
            return {"jsonrpc": "2.0", "id": call["id"], "result": None}
        return {**body, "id": call["id"]}


def _matches(log: dict, query: dict) -> bool:
    """The eth_getLogs filter as nodes apply it: inclusive block range, any of the addresses, topics by position."""
    number = int(log["blockNumber"], 16)
    if not int(query["fromBlock"], 16) <= number <= int(query["toBlock"], 16):
        return False
    addresses = query.get("address") or []
    addresses = [addresses] if isinstance(addresses, str) else addresses
    if addresses and log["address"].lower() not in {a.lower() for a in addresses}:
        return False
    for position, wanted in enumerate(query.get("topics") or []):
        if wanted is None:
            continue
        options = {w.lower() for w in ([wanted] if isinstance(wanted, str) else wanted)}
        if position >= len(log["topics"]) or log["topics"][position].lower() not in options:
            return False
    return True


def build_app(node: Node) -> web.Application:
    async def rpc(request: web.Request) -> web.Response:
        payload = await request.json()
        calls = payload if isinstance(payload, list) else [payload]
        node.calls.extend(calls)
        answers = [node.answer(call) for call in calls]
        return web.json_response(answers if isinstance(payload, list) else answers[0])

    app = web.Application()
    app.router.add_post("/", rpc)
    return app
