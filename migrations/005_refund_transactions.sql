-- Refund transfers posted by merchants, one row per (network, tx_hash): the key is what makes one
-- transaction unable to execute two refunds, across orders and merchants. The chain watchers
-- follow the rows in 'verifying' and write their progress (confirmations) here.

CREATE TABLE refund_transactions (
    network text NOT NULL,
    tx_hash text NOT NULL,
    refund_id text NOT NULL,
    order_id text NOT NULL,
    merchant_id text NOT NULL,
    livemode boolean NOT NULL,
    token_address text NOT NULL,
    to_address text NOT NULL,
    amount bigint NOT NULL,
    status text NOT NULL DEFAULT 'verifying',
    reason text,
    confirmations integer NOT NULL DEFAULT 0,
    required integer NOT NULL,
    seen_block text,
    submitted_at timestamptz NOT NULL DEFAULT now(),
    checked_at timestamptz,
    PRIMARY KEY (network, tx_hash)
);
CREATE INDEX refund_transactions_due ON refund_transactions (network, checked_at NULLS FIRST) WHERE status = 'verifying';
CREATE INDEX refund_transactions_refund ON refund_transactions (refund_id);
