-- Throughput: one outbox row per committed batch instead of one per event, and order numbers
-- allocated by the actors in PostgreSQL instead of by the web layer in Redis.

-- A batch's events, in commit order, published together; the row goes once they are on the stream.
ALTER TABLE outbox RENAME COLUMN event_id TO batch_id;
ALTER TABLE outbox ALTER COLUMN payload TYPE bytea[] USING ARRAY[payload];
ALTER TABLE outbox RENAME COLUMN payload TO payloads;

-- The last order number handed out per merchant and mode; seeded from the numbers already used.
CREATE TABLE order_numbers (
    merchant_id text NOT NULL,
    livemode boolean NOT NULL,
    last bigint NOT NULL,
    PRIMARY KEY (merchant_id, livemode)
);
INSERT INTO order_numbers (merchant_id, livemode, last)
SELECT merchant_id, livemode, max(order_number) FROM orders GROUP BY merchant_id, livemode;
