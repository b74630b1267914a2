"""The Python library's export downloads without a server: a file read as chunks, lines, typed rows or saved, in
both formats and both clients; a CSV cell spanning lines and a character cut between chunks read back whole; errors
before the file raised and retried like any call; a file cut off on the way raised, never returned short."""

from __future__ import annotations

import asyncio
import hashlib
import hmac
import json
from datetime import datetime, timezone
from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from service_client import (
    AsyncClient,
    Client,
    ConnectionFailed,
    DecodeError,
    InvalidRequestError,
    OrderExportRow,
    RefundExportRow,
    ServiceError,
)
from service_client.rows import LineSplitter

CSV_HEADER = ('"order_id","order_number","livemode","status","currency","amount_owed","amount_paid",'
              '"amount_refunded","external_ref","metadata","created_at","paid_at","updated_at"\r\n')
CSV_ROWS = ('"ord_1","1001","false","PAID","USD","10.00","10.00","0","A-1","{""n"":""1""}","2026-03-01T00:00:00Z",'
            '"2026-03-01T00:05:00Z","2026-03-01T00:05:00Z"\r\n'
            '"ord_2","1002","false","PENDING","USD","2.50","0","0","","{""note"":""line one\r\nline two, é""}",'
            '"2026-03-02T00:00:00Z","","2026-03-02T00:00:00Z"\r\n')
CSV_FILE = (CSV_HEADER + CSV_ROWS).encode()
JSONL_FILE = (
    b'{"refund_id":"rf_1","order_id":"ord_1","order_number":"1001","livemode":false,"rail":"chain",'
    b'"status":"EXECUTED","amount":"1.00","currency":"USD","reason":"x","note":"=HYPERLINK(\\"a\\")\xe2\x80\xa8b",'
    b'"destination":"0xabc","network":"ethereum","token_address":null,"transaction":"0x1","source":"customer",'
    b'"approved_by":"review","created_at":"2026-03-01T00:00:00Z","updated_at":"2026-03-01T00:00:00Z"}\n')
FILE_HEADERS = {"Content-Type": "text/csv; charset=utf-8",
                "Content-Disposition": 'attachment; filename="orders-test-start-now.csv"'}


class Chunks(httpx.SyncByteStream, httpx.AsyncByteStream):
    """A body in the chunks given, then (optionally) a dropped connection."""

    def __init__(self, chunks: list[bytes], fail: bool = False):
        self.chunks, self.fail = chunks, fail

    def __iter__(self):
        yield from self.chunks
        if self.fail:
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")

    async def __aiter__(self):
        for chunk in self.chunks:
            yield chunk
        if self.fail:
            raise httpx.RemoteProtocolError("peer closed connection without sending complete message body")


def cut(body: bytes, size: int) -> list[bytes]:
    return [body[i:i + size] for i in range(0, len(body), size)]


def file_answer(body: bytes, headers: dict = FILE_HEADERS, size: int = 7, fail: bool = False) -> httpx.Response:
    return httpx.Response(200, headers=headers, stream=Chunks(cut(body, size), fail))


def client(handler) -> Client:
    return Client("pk_test_x", "sk_test_x", base_url="http://service.test", merchant_id="mer_1",
                  http_client=httpx.Client(transport=httpx.MockTransport(handler)))


def async_client(handler) -> AsyncClient:
    return AsyncClient("pk_test_x", "sk_test_x", base_url="http://service.test", merchant_id="mer_1",
                       http_client=httpx.AsyncClient(transport=httpx.MockTransport(handler)))


def test_a_csv_export_reads_as_typed_rows_with_a_cell_spanning_lines_and_a_character_cut_between_chunks():
    seen = []

    def handler(request):
        seen.append(request)
        return file_answer(CSV_FILE)
    download = client(handler).exports.orders(from_=datetime(2026, 3, 1, tzinfo=timezone.utc), to="2026-04-01",
                                              format="csv")
    assert (download.format, download.filename, download.response.status) == ("csv", "orders-test-start-now.csv",
                                                                              200)
    rows = list(download.rows())
    assert [type(r) for r in rows] == [OrderExportRow, OrderExportRow]
    first, second = rows
    assert (first.order_id, first.livemode, first.amount_owed, first.metadata) == ("ord_1", False, "10.00",
                                                                                   '{"n":"1"}')
    assert (second.external_ref, second.paid_at) == (None, None)
    assert second.metadata == '{"note":"line one\r\nline two, é"}'
    url = urlsplit(str(seen[0].url))
    assert parse_qs(url.query) == {"from": ["2026-03-01T00:00:00+00:00"], "to": ["2026-04-01"], "format": ["csv"]}
    message = f"GET\n{url.path}?{url.query}\n{seen[0].headers['X-Timestamp']}\n".encode()
    assert seen[0].headers["X-Signature"] == hmac.new(b"sk_test_x", message, hashlib.sha256).hexdigest()
    assert "Idempotency-Key" not in seen[0].headers


def test_lines_and_bytes_are_the_file_as_sent():
    lines = list(client(lambda r: file_answer(CSV_FILE)).exports.orders().iter_lines())
    assert lines[0] == CSV_HEADER.removesuffix("\r\n") and len(lines) == 4  # header, row, a row over two lines
    assert b"".join(client(lambda r: file_answer(CSV_FILE, size=3)).exports.orders().iter_bytes()) == CSV_FILE


def test_json_lines_keep_values_as_stored_and_split_only_on_line_feeds():
    headers = {"Content-Type": "application/x-ndjson"}
    download = client(lambda r: file_answer(JSONL_FILE + JSONL_FILE, headers, size=5)).exports.refunds(
        format="jsonl")
    rows = list(download.rows())
    assert len(rows) == 2 and all(isinstance(r, RefundExportRow) for r in rows)
    assert rows[0].note == '=HYPERLINK("a")\u2028b' and rows[0].token_address is None
    assert download.filename is None


def test_save_writes_the_whole_file_and_a_cut_off_one_leaves_nothing(tmp_path):
    target = tmp_path / "orders.csv"
    assert client(lambda r: file_answer(CSV_FILE)).exports.orders().save(target) == len(CSV_FILE)
    assert target.read_bytes() == CSV_FILE
    broken = tmp_path / "broken.csv"
    with pytest.raises(ConnectionFailed, match="cut off after 14 bytes"):
        client(lambda r: file_answer(CSV_FILE[:14], fail=True)).exports.orders().save(broken)
    assert sorted(p.name for p in tmp_path.iterdir()) == ["orders.csv"]


def test_a_cut_off_file_raises_instead_of_ending_short():
    download = client(lambda r: file_answer(CSV_FILE[:300], fail=True)).exports.orders()
    with pytest.raises(ConnectionFailed):
        list(download.rows())
    with pytest.raises(ServiceError, match="read once"):
        list(download.iter_bytes())


def test_errors_come_before_the_file_and_are_retried_like_any_call(monkeypatch):
    monkeypatch.setattr("time.sleep", lambda s: None)
    answers = [httpx.Response(503, json={"error": {"type": "api_error", "code": "service_unavailable",
                                                   "message": "down"}}),
               file_answer(CSV_FILE)]
    download = client(lambda r: answers.pop(0)).exports.orders()
    assert download.response.attempts == 2 and len(list(download.rows())) == 2
    refusal = httpx.Response(422, json={"error": {"type": "invalid_request_error", "code": "invalid_format",
                                                  "message": "`format` must be csv or jsonl.", "param": "format"}})
    with pytest.raises(InvalidRequestError) as raised:
        client(lambda r: refusal).exports.orders(format="xlsx")
    assert (raised.value.code, raised.value.param) == ("invalid_format", "format")


@pytest.mark.parametrize("answer", [
    httpx.Response(200, html="<html>sign in</html>"),
    httpx.Response(200, json={"data": []}),
])
def test_an_answer_that_is_not_an_export_file_is_a_decode_error(answer):
    with pytest.raises(DecodeError, match="exports.payments"):
        client(lambda r: answer).exports.payments()


def test_a_csv_cut_inside_a_quoted_cell_is_a_decode_error():
    with pytest.raises(DecodeError, match="inside a quoted CSV cell"):
        list(client(lambda r: file_answer(CSV_FILE[: CSV_FILE.index(b"line two")])).exports.orders().rows())


def test_the_asyncio_client_streams_the_same_rows_lines_and_file(tmp_path):
    async def main():
        async with async_client(lambda r: file_answer(CSV_FILE)) as c:
            rows = [row async for row in (await c.exports.orders()).rows()]
            lines = [line async for line in (await c.exports.orders()).iter_lines()]
            size = await (await c.exports.orders()).save(tmp_path / "o.csv")
            with pytest.raises(ConnectionFailed):
                async with await async_client(lambda r: file_answer(CSV_FILE, fail=True)).exports.orders() as d:
                    [chunk async for chunk in d.iter_bytes()]
        return rows, lines, size
    rows, lines, size = asyncio.run(main())
    assert [r.order_id for r in rows] == ["ord_1", "ord_2"] and rows[1].external_ref is None
    assert len(lines) == 4 and size == len(CSV_FILE) and (tmp_path / "o.csv").read_bytes() == CSV_FILE


def test_a_utf8_character_cut_between_chunks_is_decoded_whole():
    splitter = LineSplitter()
    text = "é€\n😀".encode()
    lines = [line for i in range(len(text)) for line in splitter.feed(text[i:i + 1])] + splitter.end()
    assert lines == ["é€", "😀"]


def test_the_team_and_audit_methods_send_their_paths_and_decode_their_answers():
    seen = []
    member = {"object": "staff_member", "user_id": "usr_1", "email": "a@example.com", "role": "manager",
              "created_at": "2026-03-01T00:00:00Z", "last_signed_in_at": None, "pin_set": False}
    event = {"object": "audit_event", "audit_event_id": "aud_1", "id": "aud_1", "action": "staff.invited",
             "actor": {"type": "api_key", "actor_id": "pk_test_x", "id": "pk_test_x", "email": None}, "object_id": "inv_1", "order_id": None,
             "livemode": None, "details": {"email": "a@example.com", "role": "manager"}, "client_ip": None,
             "user_agent": None, "request_id": "req_1", "created_at": "2026-03-01T00:00:00Z"}

    def handler(request):
        seen.append((request.method, request.url.path, request.url.query.decode(), request.content))
        if request.url.path.endswith("/audit-events"):
            more = "cursor" not in request.url.query.decode()
            return httpx.Response(200, json={"object": "list", "data": [event], "has_more": more,
                                             "next_cursor": "c2" if more else None})
        return httpx.Response(200, json=member)
    c = client(handler)
    assert c.staff.update("usr_1", role="manager").role == "manager"
    events = list(c.audit_events.list(action="staff.invited", limit=1))
    assert [e.actor.type for e in events] == ["api_key", "api_key"] and events[0].livemode is None
    assert seen == [("PATCH", "/b2b/v1/merchants/mer_1/staff/usr_1", "", json.dumps({"role": "manager"},
                                                                                     separators=(",", ":")).encode()),
                    ("GET", "/b2b/v1/merchants/mer_1/audit-events", "action=staff.invited&limit=1", b""),
                    ("GET", "/b2b/v1/merchants/mer_1/audit-events", "action=staff.invited&limit=1&cursor=c2", b"")]
