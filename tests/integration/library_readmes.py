"""The server libraries' README examples, run as written against a running service: each code block of
clients/python/README.md and clients/node/README.md in order, its placeholders (`pk_test_...`, the base URL) filled
with a real merchant's, and the names a block leaves to the reader (`fulfil`, `share`, `ledger`, ...) given stand-ins
that record what they are handed. The webhook receivers the READMEs show are handed a real delivery."""

from __future__ import annotations

import ast
import asyncio
import http.server
import json
import os
import queue
import re
import subprocess
import threading
from datetime import date
from pathlib import Path
from types import SimpleNamespace

ROOT = Path(__file__).resolve().parents[2]
NODE_DIR = ROOT / "clients" / "node"


def blocks(readme: Path, language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", readme.read_text(), re.S)


# The team's routes answer a live key only (docs/api.md, Test keys and live mode): a merchant runs the README's team
# example with its live key, the rest with its test key.
_TEAM_CALLS = {"python": ("client.staff.", "client.audit_events."), "ts": ("client.staff.", "client.auditEvents.")}
_LIVE_CLIENT = {"python": "live_client", "ts": "liveClient"}


def on_live_key(code: str, language: str) -> str:
    for call in _TEAM_CALLS[language]:
        code = code.replace(call, f"{_LIVE_CLIENT[language]}.{call.removeprefix('client.')}")
    return code


def filled(code: str, keys: dict, base_url: str) -> str:
    for placeholder, value in (("pk_test_...", keys["public_key"]), ("sk_test_...", keys["secret_key"]),
                               ("mer_...", keys["merchant_id"]), ("https://api.example.com", base_url)):
        code = code.replace(f'"{placeholder}"', json.dumps(value)).replace(f"'{placeholder}'", json.dumps(value))
    return code


class Receiver:
    """A merchant's webhook endpoint: it keeps each delivery's headers and exact body."""

    def __init__(self):
        self.deliveries: queue.Queue = queue.Queue()
        received = self.deliveries

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_POST(self):
                received.put(({k.lower(): v for k, v in self.headers.items()},
                              self.rfile.read(int(self.headers["Content-Length"]))))
                self.send_response(204)
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.HTTPServer(("127.0.0.1", 0), Handler)
        self.url = f"http://127.0.0.1:{self.server.server_port}/hooks"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def next(self, event_type: str) -> tuple[dict, bytes]:
        while True:
            headers, body = self.deliveries.get(timeout=60)
            if json.loads(body)["type"] == event_type:
                return headers, body

    def close(self) -> None:
        self.server.shutdown()


def run_python(keys: dict, live_keys: dict, base_url: str, network: str, token_address: str, workdir: Path) -> dict:
    """Every Python block of the library's README in one namespace; the first payment's receiver is then handed the
    real payment.settled delivery of the order its session made. What the stand-ins saw is returned."""
    from service_client import Client

    seen: dict[str, list] = {name: [] for name in ("redirect_buyer_to", "fulfil", "send_to_ana", "share", "ledger")}
    namespace = {name: (lambda *args, _name=name: seen[_name].append(args)) for name in seen if name != "ledger"}
    namespace |= {"ledger": SimpleNamespace(add=lambda *args: seen["ledger"].append(args)), "URL": base_url,
                  "start": date(2026, 3, 1), "end": date.today()}
    setup = Client(keys["public_key"], keys["secret_key"], merchant_id=keys["merchant_id"], base_url=base_url)
    namespace["live_client"] = Client(live_keys["public_key"], live_keys["secret_key"],
                                      merchant_id=live_keys["merchant_id"], base_url=base_url)
    receiver = Receiver()
    cwd = os.getcwd()
    os.chdir(workdir)  # the exports example saves a file where it runs
    try:
        namespace["secret"] = setup.webhook_endpoints.create(url=receiver.url,
                                                             enabled_events=["payment.settled"]).secret
        first, *rest = blocks(ROOT / "clients" / "python" / "README.md", "python")
        exec(compile(filled(first, keys, base_url), "clients/python/README.md", "exec"), namespace)  # noqa: S102
        session = namespace["session"]
        setup.test_helpers.simulate_payment(session.order_id, amount="25.00", network=network,
                                            token_address=token_address)
        headers, body = receiver.next("payment.settled")
        seen["receive"] = [namespace["receive"](body, headers), namespace["receive"](body + b" ", headers)]
        for code in rest:
            # The asyncio client's example awaits at its top level, and its `client` is its own.
            scope = dict(namespace) if "AsyncClient" in code else namespace
            flags = ast.PyCF_ALLOW_TOP_LEVEL_AWAIT
            ran = eval(compile(on_live_key(filled(code, keys, base_url), "python"), "clients/python/README.md", "exec",  # noqa: S307
                               flags=flags), scope)
            if ran is not None:
                asyncio.run(ran)
        return {"seen": seen, "session": session, "delivery": (headers, body), "secret": namespace["secret"]}
    finally:
        os.chdir(cwd)
        receiver.close()
        setup.close()
        namespace["live_client"].close()


# The names the Node README leaves to the reader; `app` is an Express application whose routes are kept.
_NODE_PRELUDE = """
const seen = { fulfil: [], sendToAna: [], share: [], ledger: [] };
const routes = [];
const app = { post: (path, ...handlers) => routes.push({ path, handlers }) };
const secret = process.env.README_SECRET;
const liveClient = new ServiceClient(JSON.parse(process.env.README_LIVE_OPTIONS));
const userId = process.env.README_USER_ID;
const from = '2026-03-01', to = new Date();
const fulfil = async (order) => { seen.fulfil.push(order.external_ref); };
const sendToAna = async (url) => { seen.sendToAna.push(url); };
const share = async (url) => { seen.share.push(url); };
const ledger = { add: (...args) => seen.ledger.push(args) };
"""

# Hands the README's /hooks route a real delivery, then a tampered one, as Express would (a raw body).
_NODE_EPILOGUE = """
const delivery = JSON.parse(process.env.README_DELIVERY);
const answers = [];
for (const body of [delivery.body, delivery.body + ' ']) {
  const res = { code: null, status(code) { this.code = code; return this; }, end() { return this; } };
  await routes[0].handlers.at(-1)({ body: Buffer.from(body), headers: delivery.headers }, res);
  answers.push(res.code);
}
console.log(JSON.stringify({ answers, seen, path: routes[0].path, session: session.order_id }));
"""

_EXPRESS_STAND_IN = "export default { raw: () => (req, res, next) => next() };\n"


def run_node(keys: dict, live_keys: dict, base_url: str, workdir: Path, secret: str, user_id: str,
             delivery: tuple[dict, bytes]) -> dict:
    """Every TypeScript block of the Node library's README as one ES module (imports first, types stripped by the
    esbuild the library builds with), importing the built library as `service-client` and a stand-in `express`."""
    code = "\n".join(on_live_key(filled(block, keys, base_url), "ts") for block in blocks(NODE_DIR / "README.md", "ts"))
    imports = [line for line in code.splitlines() if line.startswith("import ")]
    body = "\n".join(line for line in code.splitlines() if not line.startswith("import "))
    module = "\n".join(imports) + _NODE_PRELUDE + body + _NODE_EPILOGUE
    modules = workdir / "node_modules"
    (modules / "express").mkdir(parents=True, exist_ok=True)
    (modules / "express" / "package.json").write_text('{"name": "express", "type": "module", "main": "index.js"}')
    (modules / "express" / "index.js").write_text(_EXPRESS_STAND_IN)
    if not (modules / "service-client").exists():
        (modules / "service-client").symlink_to(NODE_DIR)
    (workdir / "readme.ts").write_text(module)
    transpile = ("const { transformSync } = require('esbuild'); const fs = require('fs');"
                 " fs.writeFileSync(process.argv[2], transformSync(fs.readFileSync(process.argv[1], 'utf8'),"
                 " { loader: 'ts', format: 'esm' }).code);")
    subprocess.run(["node", "-e", transpile, str(workdir / "readme.ts"), str(workdir / "readme.mjs")], cwd=NODE_DIR,
                   check=True, capture_output=True, timeout=60)
    headers, raw = delivery
    live = {"publicKey": live_keys["public_key"], "secretKey": live_keys["secret_key"],
            "merchantId": live_keys["merchant_id"], "baseUrl": base_url}
    env = dict(os.environ, README_SECRET=secret, README_USER_ID=user_id, README_LIVE_OPTIONS=json.dumps(live),
               README_DELIVERY=json.dumps({"headers": headers, "body": raw.decode()}))
    done = subprocess.run(["node", str(workdir / "readme.mjs")], cwd=workdir, env=env, capture_output=True,
                          text=True, timeout=180)
    assert done.returncode == 0, done.stderr[-3000:]
    return json.loads(done.stdout.splitlines()[-1])
