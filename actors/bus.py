"""The bus of order commands: envelopes go to their order's partition, replies come back as `Reply`."""

from __future__ import annotations

import logging

import msgspec

from actors import messages as m
from common import faults
from common.metrics import COMMAND_ROUND_TRIP
from streams import producer

# Looked up once: ask() runs for nearly every API request.
log = logging.getLogger(producer.__name__)
_ROUND_TRIP = {outcome: COMMAND_ROUND_TRIP.labels(outcome) for outcome in ("answered", "timeout", "failed")}


class CommandBus(producer.CommandBus):
    decode_replies = staticmethod(msgspec.json.Decoder(list[m.Reply]).decode)

    @staticmethod
    def partition_key(envelope: m.Envelope) -> str:
        return envelope.command.order_id

    def round_trip(self, outcome: str, seconds: float) -> None:
        _ROUND_TRIP[outcome].observe(seconds)

    def read_failed(self, exc: Exception) -> None:
        faults.report(log, f"reading replies on {self.reply_stream}", exc, "retrying")
