-- Read tables of refunds and refund-request tokens; their truth is the order's state and events.

CREATE TABLE refunds (
    refund_id text PRIMARY KEY,
    order_id text NOT NULL,
    merchant_id text NOT NULL,
    livemode boolean NOT NULL,
    status text NOT NULL,
    amount bigint NOT NULL,
    link_token text NOT NULL UNIQUE,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL
);
CREATE INDEX refunds_review ON refunds (merchant_id, livemode, status, created_at DESC);
CREATE INDEX refunds_order ON refunds (order_id, created_at);

CREATE TABLE refund_tokens (
    token text PRIMARY KEY,
    order_id text NOT NULL,
    merchant_id text NOT NULL,
    livemode boolean NOT NULL,
    status text NOT NULL,
    expires_at timestamptz NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX refund_tokens_due ON refund_tokens (expires_at) WHERE status = 'ACTIVE';
CREATE INDEX refund_tokens_review ON refund_tokens (merchant_id, livemode, status, created_at DESC);
