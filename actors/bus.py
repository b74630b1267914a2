"""The bus of order commands: envelopes go to their order's partition, replies come back as `Reply`."""

from __future__ import annotations

import msgspec

from actors import messages as m
from streams import producer


class CommandBus(producer.CommandBus):
    decode_replies = staticmethod(msgspec.json.Decoder(list[m.Reply]).decode)

    @staticmethod
    def partition_key(envelope: m.Envelope) -> str:
        return envelope.command.order_id
