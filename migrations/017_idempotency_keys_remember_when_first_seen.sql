-- The ids of what a keyed request creates begin with a time every retry of it shares: when its Idempotency-Key was
-- first seen (common/ids.py). The web records that time here with the first request and reads it on each retry.
-- Kept as long as the commands they name (indefinitely), like the recorded answers.
CREATE TABLE idempotency_key_times (
    merchant_id   text    NOT NULL,
    livemode      boolean NOT NULL,
    key           text    NOT NULL,
    first_seen_ms bigint  NOT NULL,
    PRIMARY KEY (merchant_id, livemode, key)
);
