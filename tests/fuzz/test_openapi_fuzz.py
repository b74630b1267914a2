"""schemathesis over /b2b/v1/openapi.json against a live service (web and actors as their own processes).

Every request is signed as a merchant's backend would sign it. No answer is a 5xx, every answer matches the
document, and afterwards the database holds nothing half-written. FUZZ_EXAMPLES sets examples per operation
(a short, seeded run here; `python bench/fuzz.py` runs it longer).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
from collections import Counter

import asyncpg
import pytest
import requests
import schemathesis
from hypothesis import HealthCheck
from hypothesis import settings as hypothesis_settings
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import content_type_conformance, response_schema_conformance

from web.edge.signing import sign

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
EXAMPLES = int(os.environ.get("FUZZ_EXAMPLES", "8"))
ANSWERED: Counter[int] = Counter()  # statuses seen, so the run proves it got past the signature check


class SignedAuth(requests.auth.AuthBase):
    """Signs the prepared request: the exact path with its query and the exact body bytes that go out. A write
    repeated within a second is signed with a later second, as the service asks (docs/api.md, Replays)."""

    def __init__(self, public_key: str, secret_key: str):
        self.public_key, self.secret_key = public_key, secret_key
        self._last: dict[tuple[str, str, bytes], int] = {}

    def __call__(self, request: requests.PreparedRequest) -> requests.PreparedRequest:
        body = request.body or b""
        body = body.encode() if isinstance(body, str) else body
        signed = (request.method, request.path_url, body)
        self._last[signed] = max(int(time.time()), self._last.get(signed, 0) + 1)
        timestamp = str(self._last[signed])
        request.headers.update({"X-Client-ID": self.public_key, "X-Timestamp": timestamp,
                                "X-Signature": sign(self.secret_key, request.method, request.path_url, timestamp, body)})
        return request


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def _cli(env: dict, *args: str) -> dict:
    run = subprocess.run([sys.executable, "-m", "service", *args, "--json"], env=env, cwd=ROOT, capture_output=True,
                         text=True, check=True)
    return json.loads(run.stdout)


@pytest.fixture(scope="session")
def live(settings):
    port = _free_port()
    env = dict(os.environ, DATABASE_URL=settings.database_url, REDIS_URL=settings.redis_url,
               REDIS_PREFIX=f"{settings.redis_prefix}fuzz:", PARTITIONS="4", SERVICE_MASTER_KEY=settings.master_key,
               SERVICE_DATA_DIR=os.path.join(settings.data_dir, "fuzz"), LOG_LEVEL="WARNING", PYTHONPATH=ROOT)
    procs = [subprocess.Popen([sys.executable, "-m", "service", name, *extra], env=env, cwd=ROOT)
             for name, extra in (("web", ["--port", str(port)]), ("actors", []))]
    base_url = f"http://127.0.0.1:{port}"
    try:
        for _ in range(200):
            try:
                urllib.request.urlopen(base_url + "/b2b/v1/openapi.json", timeout=1).read()
                break
            except OSError:
                time.sleep(0.05)
        merchant = _cli(env, "merchants", "create", "--name", "Fuzz")
        _cli(env, "merchants", "limits", merchant["merchant_id"], "--rps", "100000", "--burst", "100000")
        session = requests.Session()
        session.auth = SignedAuth(merchant["public_key"], merchant["secret_key"])
        yield base_url, merchant["merchant_id"], session
    finally:
        for proc in procs:
            proc.terminate()
        for proc in procs:
            proc.wait(15)


@pytest.fixture(scope="session")
def api_schema(live):
    return schemathesis.openapi.from_url(live[0] + "/b2b/v1/openapi.json")


schema = schemathesis.pytest.from_fixture("api_schema")


@schema.parametrize()
@hypothesis_settings(max_examples=EXAMPLES, derandomize=True, deadline=None, suppress_health_check=list(HealthCheck))
def test_no_server_error_and_every_answer_matches_the_document(case, live):
    base_url, merchant_id, session = live
    if case.path_parameters and "merchant_id" in case.path_parameters:
        case.path_parameters["merchant_id"] = merchant_id  # the caller's own merchant: reach the handlers
    response = case.call_and_validate(base_url=base_url, session=session,
                                      checks=[not_a_server_error, response_schema_conformance, content_type_conformance])
    ANSWERED[response.status_code] += 1


async def test_nothing_half_written(settings, live):
    """Whatever the fuzzing made: every order's events number its version, and every session and refund has its
    order (run after the fuzzing above, in file order)."""
    print("answers by status:", dict(sorted(ANSWERED.items())))
    assert sum(n for status, n in ANSWERED.items() if status < 300) > 0
    assert 401 not in ANSWERED  # every request was signed and accepted
    conn = await asyncpg.connect(settings.database_url)
    try:
        broken = await conn.fetch(
            "SELECT o.order_id, o.version, count(e.event_id) AS events, max(e.seq) AS last FROM orders o"
            " LEFT JOIN events e USING (order_id) GROUP BY o.order_id, o.version"
            " HAVING count(e.event_id) <> o.version OR max(e.seq) <> o.version")
        assert broken == []
        for table in ("checkout_sessions", "refunds", "refund_tokens", "events"):
            orphans = await conn.fetchval(
                f"SELECT count(*) FROM {table} t WHERE NOT EXISTS (SELECT 1 FROM orders o WHERE o.order_id = t.order_id)")
            assert orphans == 0, table
    finally:
        await conn.close()
