"""Every Prometheus metric of the service, named once; docs/operations.md (Metrics) says what each means.

Each process registers all of them in prometheus_client's default registry and exports those it moves:
an unused metric costs nothing but an empty family in the scrape.
"""

from __future__ import annotations

from prometheus_client import Counter, Gauge, Histogram

# Seconds: from a cache hit (sub-millisecond) to a reply timeout (REPLY_TIMEOUT_S, 10 s by default).
_LATENCY = (0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5, 5.0, 10.0)

# every process

CLOCK_OFFSET = Gauge("clock_offset_seconds", "This process's clock minus Redis's TIME at the last measurement"
                     " (common/clock_offset.py)")
LOCK_HELD = Gauge("lock_held", "1 while this process holds its advisory lock and acts on it (watchers, card refunds)")

# web

HTTP_REQUESTS = Counter("http_requests", "HTTP requests answered, by route pattern, method and status",
                        ["route", "method", "status"])
HTTP_DURATION = Histogram("http_request_duration_seconds", "Time from a request's arrival to its answer",
                          ["route", "method", "status"], buckets=_LATENCY)
COMMAND_ROUND_TRIP = Histogram("command_round_trip_seconds",
                               "From enqueueing a command on its partition to its reply (CommandBus.ask)",
                               ["outcome"], buckets=_LATENCY)

# actors

BATCH_SIZE = Histogram("actor_batch_size", "Stream entries a lane handled in one batch",
                       buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000))
COMMIT_DURATION = Histogram("actor_commit_seconds",
                            "Time of a batch's commit transaction (fence check and statement) in PostgreSQL",
                            buckets=_LATENCY)
COMMIT_COMMANDS = Histogram("actor_commit_commands", "Commands one commit of a worker recorded, its lanes' batches"
                            " together", buckets=(1, 2, 5, 10, 20, 50, 100, 200, 500, 1000))
COMMANDS = Counter("actor_commands", "Commands a worker finished, by outcome", ["outcome"])
BATCHES = Counter("actor_batches", "Batches a worker committed or tried to: `at_once` (every order held or created under a"
                  " number held, nothing read first), `prepared` (read first), `decided_again` (at once, refused by a unique key)",
                  ["how"])
FENCED = Counter("actor_fenced_batches", "Batches PostgreSQL refused because another worker holds a newer lease epoch on"
                 " one of their partitions (the worker's lease had lapsed): rolled back, left pending for the holder")
LEASES_LAPSED = Counter("actor_leases_lapsed", "Times a worker dropped every partition because it could not renew its"
                        " leases within their TTL")
PARTITION_LAG = Gauge("actor_partition_lag", "Entries of a command partition its consumer group has not read",
                      ["partition"])
PARTITION_PENDING = Gauge("actor_partition_pending", "Entries of a command partition read but not acknowledged",
                          ["partition"])
PARTITION_LEASED = Gauge("actor_partition_leased", "1 while some worker holds the partition's lease", ["partition"])
OUTBOX_BACKLOG = Gauge("actor_outbox_rows", "Committed batches whose events are not yet known published")
OUTBOX_OLDEST = Gauge("actor_outbox_oldest_seconds", "Age of the oldest outbox row (0 when empty)")
DEAD_LETTERS = Gauge("dead_letters", "Entries in the dead-letter stream, by the stream they came from", ["stream"])

# webhooks

NOTIFICATIONS = Counter("notifications", "Staff notifications written (the bell), one per user told")
NOTIFICATION_MAILS = Counter("notification_mails",
                             "Notification mails by outcome: sent, retrying (the server refused or was away), failed"
                             " (given up)", ["outcome"])
WEBHOOK_DELIVERIES = Counter("webhook_deliveries",
                             "Delivery attempts recorded, by what they left the delivery (delivered, retrying, failed)",
                             ["outcome"])
WEBHOOK_RETRY_DEPTH = Gauge("webhook_retry_queue_depth", "Deliveries still pending (waiting for a retry or in flight)")
WEBHOOK_OLDEST_DUE = Gauge("webhook_oldest_due_seconds", "How long the most overdue pending delivery has been due")

# chain watchers

WATCHER_HEAD = Gauge("watcher_head", "The network's head block as the watcher last read it", ["network"])
WATCHER_PROCESSED = Gauge("watcher_processed", "The last block the watcher scanned to the required depth",
                          ["network"])
WATCHER_LAG = Gauge("watcher_lag", "Blocks between the head and the last block scanned", ["network"])
WATCHER_TICKS = Counter("watcher_ticks", "Passes over a network, by outcome (ok, failed)", ["network", "outcome"])

_heads: dict[str, int] = {}
_processed: dict[str, int] = {}


def chain_position(network: str, *, head: int | None = None, processed: int | None = None) -> None:
    """A watcher's news about a network; the lag follows from the latest of both."""
    if head is not None:
        _heads[network] = head
        WATCHER_HEAD.labels(network).set(head)
    if processed is not None:
        _processed[network] = processed
        WATCHER_PROCESSED.labels(network).set(processed)
    if network in _heads and network in _processed:
        WATCHER_LAG.labels(network).set(max(0, _heads[network] - _processed[network]))
