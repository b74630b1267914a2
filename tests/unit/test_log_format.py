"""The log formats: one JSON object per line with the ids of the work in hand, or the plain line with them appended."""

from __future__ import annotations

import asyncio
import io
import json
import logging
from datetime import UTC, datetime

import msgspec
import pytest

from actors import messages as m
from common import logs


@pytest.fixture
def lines():
    """The lines a logger of the test's own writes through each formatter, as written."""
    out = {"json": io.StringIO(), "text": io.StringIO()}
    logger = logging.getLogger(f"test_logs.{id(out)}")
    logger.propagate = False
    logger.setLevel(logging.DEBUG)
    for fmt, formatter in (("json", logs.JsonFormatter()), ("text", logs.TextFormatter())):
        handler = logging.StreamHandler(out[fmt])
        handler.setFormatter(formatter)
        logger.addHandler(handler)
    yield logger, lambda fmt: out[fmt].getvalue().splitlines()
    logger.handlers.clear()


def test_a_json_line_holds_time_level_logger_message_and_the_ids(lines):
    logger, written = lines
    token = logs.bind(request_id="req_1", command_id="")
    try:
        logs.note(merchant_id="mer_1", order_id=None)
        logger.warning("sent %d", 3, extra={"order_id": "ord_1", "status": 201})
    finally:
        logs.unbind(token)
    [line] = written("json")
    parsed = json.loads(line)
    assert parsed.pop("time").endswith("Z")
    assert parsed == {"level": "WARNING", "logger": logger.name, "message": "sent 3", "request_id": "req_1",
                      "merchant_id": "mer_1", "order_id": "ord_1", "status": 201}
    assert written("text")[0].endswith(" sent 3 request_id=req_1 merchant_id=mer_1 order_id=ord_1 status=201")


def test_an_exception_is_one_field_of_one_line(lines):
    logger, written = lines
    try:
        raise ValueError("multi\nline")
    except ValueError:
        logger.exception("failed")
    [line] = written("json")
    parsed = json.loads(line)
    assert parsed["message"] == "failed" and parsed["level"] == "ERROR"
    assert parsed["exception"].startswith("Traceback") and parsed["exception"].endswith("ValueError: multi\nline")


def test_ids_belong_to_their_request_and_end_with_it(lines):
    logger, written = lines

    async def request(request_id: str, merchant_id: str) -> None:
        token = logs.bind(request_id=request_id)
        try:
            await asyncio.sleep(0)
            logs.note(merchant_id=merchant_id)
            await asyncio.sleep(0)  # the other request runs meanwhile
            logger.info("answered")
        finally:
            logs.unbind(token)

    async def both() -> None:
        await asyncio.gather(request("req_a", "mer_a"), request("req_b", "mer_b"))

    asyncio.run(both())
    logs.note(merchant_id="nobody's")  # outside any request: nothing to attach it to
    logger.info("idle")
    parsed = [json.loads(line) for line in written("json")]
    assert sorted((p["request_id"], p["merchant_id"]) for p in parsed[:2]) == [("req_a", "mer_a"), ("req_b", "mer_b")]
    assert "request_id" not in parsed[2] and "merchant_id" not in parsed[2]


def test_a_field_never_replaces_the_line_s_own_keys(lines):
    logger, written = lines
    logger.info("real", extra={"level": "forged", "time": "forged", "logger": "forged"})
    parsed = json.loads(written("json")[0])
    assert parsed["level"] == "INFO" and parsed["logger"] == logger.name and parsed["time"] != "forged"


def test_an_unknown_format_stops_the_process():
    with pytest.raises(SystemExit, match="LOG_FORMAT"):
        logs.configure("INFO", "yaml")


def test_a_command_written_before_request_ids_decodes_without_one():
    sent = m.Envelope(command_id="cmd_1", request_id="req_1",
                      command=m.CancelOrder(order_id="ord_1", merchant_id="mer_1", livemode=False,
                                            at=datetime(2026, 1, 1, tzinfo=UTC)))
    old = msgspec.json.decode(msgspec.json.encode(sent))
    del old["request_id"]
    decoded = msgspec.json.decode(msgspec.json.encode(old), type=m.Envelope)
    assert decoded == msgspec.structs.replace(sent, request_id="")
