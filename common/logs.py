"""Log lines as plain text or one JSON object each, carrying the ids of the work in hand (LOG_FORMAT, LOG_LEVEL)."""

from __future__ import annotations

import logging
import sys
from contextvars import ContextVar, Token
from datetime import UTC, datetime

import msgspec

FORMATS = ("text", "json")
# The ids a line carries wherever they are known: the current context's, then the line's own (`extra=`).
IDS = ("request_id", "command_id", "order_id", "merchant_id")
# One mutable dict per request: bound once when it starts, filled in as its ids become known (the merchant after
# the signature, the command and order once it is sent), so that setting an id costs a dict store, not a copy.
_context: ContextVar[dict[str, str] | None] = ContextVar("log_ids", default=None)
# Attributes every record has; whatever else a record holds came in `extra=` and is written out as a field.
_STANDARD = frozenset(logging.LogRecord("", 0, "", 0, "", None, None).__dict__) | {"message", "asctime", "taskName"}
_encode = msgspec.json.Encoder(enc_hook=str).encode


def bind(**ids: str) -> Token:
    """The ids of a unit of work that starts now (a request); `unbind` with the token when it ends."""
    return _context.set({k: v for k, v in ids.items() if v})


def unbind(token: Token) -> None:
    _context.reset(token)


def note(**ids: str) -> None:
    """Ids learnt in the middle of the bound work; outside any, nothing to attach them to."""
    bound = _context.get()
    if bound is not None:
        bound.update((k, v) for k, v in ids.items() if v)


def fields(record: logging.LogRecord) -> dict[str, object]:
    """The ids of the context, then what the record was given beside its message."""
    found: dict[str, object] = dict(_context.get() or ())
    found.update((k, v) for k, v in record.__dict__.items() if k not in _STANDARD and v is not None and v != "")
    return found


class JsonFormatter(logging.Formatter):
    """One JSON object per line: time, level, logger, message, the ids and fields, and the exception if any."""

    def format(self, record: logging.LogRecord) -> str:
        line: dict[str, object] = {
            "time": datetime.fromtimestamp(record.created, UTC).isoformat(timespec="milliseconds")
            .replace("+00:00", "Z"),
            "level": record.levelname,
            "logger": record.name,
            "message": record.getMessage(),
        }
        for key, value in fields(record).items():
            line.setdefault(key, value)  # a field named like a line's own key never replaces it
        if record.exc_info:
            line["exception"] = self.formatException(record.exc_info)
        elif record.exc_text:
            line["exception"] = record.exc_text
        if record.stack_info:
            line["stack"] = self.formatStack(record.stack_info)
        return _encode(line).decode()


class TextFormatter(logging.Formatter):
    """The plain line as before, with the ids and fields appended as key=value."""

    def __init__(self) -> None:
        super().__init__("%(asctime)s %(name)s %(levelname)s %(message)s")

    def formatMessage(self, record: logging.LogRecord) -> str:
        found = fields(record)
        plain = super().formatMessage(record)
        return plain + "".join(f" {k}={v}" for k, v in found.items()) if found else plain


def configure(level: str = "INFO", fmt: str = "text") -> None:
    """The root handler on stderr. In JSON every line a process writes is JSON: warnings and uncaught exceptions
    go through logging too."""
    if fmt not in FORMATS:
        raise SystemExit(f"LOG_FORMAT must be one of {', '.join(FORMATS)}, not {fmt!r}")
    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(JsonFormatter() if fmt == "json" else TextFormatter())
    logging.basicConfig(level=level.upper(), handlers=[handler], force=True)
    if fmt == "json":
        logging.captureWarnings(True)
        sys.excepthook = _log_uncaught


def _log_uncaught(kind, value, tb) -> None:
    logging.getLogger("service").critical("uncaught exception", exc_info=(kind, value, tb))


def announce(logger: logging.Logger, message: str) -> None:
    """A process's start-up line (what it serves): on stdout whatever LOG_LEVEL, as JSON in JSON mode."""
    root = logging.getLogger().handlers
    if root and isinstance(root[0].formatter, JsonFormatter):
        record = logger.makeRecord(logger.name, logging.INFO, "", 0, message, None, None)
        print(root[0].formatter.format(record), flush=True)
    else:
        print(message, flush=True)
