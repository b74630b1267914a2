"""Command entries as a lane reads them: decoded into envelopes, or kept undecodable with whatever names their
command and caller; and the account of a command that cannot be applied."""

from __future__ import annotations

import msgspec

from actors import messages as m
from streams.consumer import Entry

_decode_envelope = msgspec.json.Decoder(m.Envelope).decode
_decode_addressed = msgspec.json.Decoder(m.Addressed).decode


class Message(msgspec.Struct):
    stream: str
    entry_id: bytes
    envelope: m.Envelope | None
    fields: dict
    deliveries: int = 1  # how often Redis has handed this entry out, this time included
    undecodable: str = ""  # why there is no envelope
    addressed: m.Addressed = m.Addressed()  # of an undecodable entry, whatever names its command and caller


class Failure(msgspec.Struct, frozen=True):
    """A command that cannot be applied, set aside with this account: one the core raised on (not a refusal) is
    retried first; one refused at intake or for breaking an invariant never could be."""

    error: str
    trace: str = ""
    retry: bool = False


def message(entry: Entry) -> Message:
    stream, entry_id, fields, deliveries = entry
    try:
        return Message(stream, entry_id, _decode_envelope(fields[b"m"]), fields, deliveries)
    except KeyError:
        why = "no field `m`"
    except msgspec.DecodeError as exc:  # garbage, an unknown command kind, a field of the wrong type
        why = str(exc)
    try:
        addressed = _decode_addressed(fields[b"m"])
    except (KeyError, msgspec.DecodeError):
        addressed = m.Addressed()
    return Message(stream, entry_id, None, fields, deliveries, f"undecodable: {why}", addressed)


def log_ids(env: m.Envelope) -> dict[str, str]:
    """The ids a log line about this command carries."""
    cmd = env.command
    return {"request_id": env.request_id, "command_id": env.command_id, "order_id": cmd.order_id,
            "merchant_id": cmd.merchant_id}
