"""Every Redis key and stream name the service uses, in one place."""

from __future__ import annotations

import zlib

ACTORS_GROUP = "actors"  # the actor workers' consumer group on each command partition
WEBHOOKS_GROUP = "webhooks"  # the webhook dispatcher's consumer group on the events stream
NOTIFICATIONS_GROUP = "notifications"  # the staff notifier's consumer group on the events stream
RECEIPTS_GROUP = "receipts"  # the receipt mailer's consumer group on the events stream
ROUTED_CHARS = 24  # an order id ends with its 12 random or derived bytes in hex, after any time part (common/ids.py)


class Keys:
    """Key names under one prefix, so deployments and test runs can share a server."""

    def __init__(self, prefix: str, partitions: int):
        self.prefix = prefix
        self.partitions = partitions

    def partition_of(self, order_id: str) -> int:
        # crc32 is stable across processes and Python versions, unlike hash(). Of the id's random or derived part
        # alone, not its time: retries of a keyed creation, whose ids carry the time each was sent, meet at one
        # partition and its record of the key.
        return zlib.crc32(order_id[-ROUTED_CHARS:].encode()) % self.partitions

    def commands(self, partition: int) -> str:
        # The hash tag keeps each partition's keys in one Redis Cluster slot.
        return f"{self.prefix}cmd:{{{partition}}}"

    def lease(self, partition: int) -> str:
        return f"{self.prefix}lease:{{{partition}}}"

    def lease_epoch(self, partition: int) -> str:
        """The count of the partition's leases: never expires (streams/leases.py)."""
        return f"{self.prefix}lease-epoch:{{{partition}}}"

    def replies(self, consumer: str) -> str:
        return f"{self.prefix}reply:{consumer}"

    @property
    def events(self) -> str:
        return f"{self.prefix}events"

    @property
    def dead_letters(self) -> str:
        """Commands the actors could not apply or decode, set aside with their error for the operators."""
        return f"{self.prefix}dead"

    @property
    def workers(self) -> str:
        return f"{self.prefix}workers"

    def signature_seen(self, signature: str, partition: int | None = None) -> str:
        # Spent together with a command, the key shares its partition's hash tag (one Cluster slot).
        if partition is None:
            return f"{self.prefix}sig:{signature}"
        return f"{self.prefix}sig:{{{partition}}}:{signature}"

    def rate_limit(self, bucket: str) -> str:
        # One key per bucket, so a Redis Cluster keeps each in one slot.
        return f"{self.prefix}rl:{bucket}"

    def signin_attempts_email(self, email: str) -> str:
        return f"{self.prefix}signin:email:{email}"

    def signin_attempts_ip(self, ip: str) -> str:
        return f"{self.prefix}signin:ip:{ip}"
