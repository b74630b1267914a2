-- Webhook endpoints, deliveries with their retry schedule, the attempt log, events that belong to a
-- merchant rather than an order, and recorded answers of Idempotency-Key requests.

CREATE TABLE webhook_endpoints (
    endpoint_id text PRIMARY KEY,
    merchant_id text NOT NULL REFERENCES merchants,
    livemode boolean NOT NULL,
    url text NOT NULL,
    description text,
    enabled_events text[] NOT NULL,          -- '{*}' for every event type
    status text NOT NULL,                    -- enabled | disabled
    disabled_reason text,                    -- merchant | failing
    secret_enc text NOT NULL,                -- sealed under the master key, like API secret keys
    previous_secret_enc text,                -- still signed with until previous_secret_expires_at
    previous_secret_expires_at timestamptz,
    failing_since timestamptz,               -- first failed attempt since the last success
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    deleted_at timestamptz
);
CREATE INDEX webhook_endpoints_merchant ON webhook_endpoints (merchant_id, livemode) WHERE deleted_at IS NULL;

-- One row per (event, endpoint): the body is fixed at creation so every attempt sends the same bytes.
CREATE TABLE webhook_deliveries (
    delivery_id text PRIMARY KEY,
    event_id text NOT NULL,
    endpoint_id text NOT NULL REFERENCES webhook_endpoints,
    merchant_id text NOT NULL,
    livemode boolean NOT NULL,
    event_type text NOT NULL,
    payload bytea NOT NULL,
    status text NOT NULL,                    -- pending | succeeded | failed
    attempts integer NOT NULL DEFAULT 0,     -- every attempt ever made (numbers the log)
    round_attempts integer NOT NULL DEFAULT 0,  -- attempts since creation or the last redelivery
    round_started_at timestamptz,            -- first attempt of the round: the retry window starts here
    -- When the next attempt is due; while an attempt is in flight, the end of its lease, so a
    -- dispatcher that dies mid-delivery leaves the row due again instead of lost.
    next_attempt_at timestamptz,
    last_attempt_at timestamptz,
    last_status_code integer,
    last_error text,
    created_at timestamptz NOT NULL,
    UNIQUE (event_id, endpoint_id)
);
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (next_attempt_at) WHERE status = 'pending';
-- A lane with room takes its own endpoint's due deliveries without scanning everyone else's.
CREATE INDEX webhook_deliveries_endpoint_due ON webhook_deliveries (endpoint_id, next_attempt_at)
    WHERE status = 'pending';
CREATE INDEX webhook_deliveries_endpoint ON webhook_deliveries (endpoint_id, created_at DESC, delivery_id DESC);
CREATE INDEX webhook_deliveries_merchant ON webhook_deliveries (merchant_id, livemode, created_at DESC, delivery_id DESC);

CREATE TABLE webhook_attempts (
    attempt_id bigserial PRIMARY KEY,
    delivery_id text NOT NULL REFERENCES webhook_deliveries,
    number integer NOT NULL,
    url text NOT NULL,
    request_headers jsonb NOT NULL,
    status_code integer,
    error text,
    latency_ms integer NOT NULL,
    response_body text,                      -- the first KiB of what the endpoint answered
    succeeded boolean NOT NULL,
    attempted_at timestamptz NOT NULL
);
CREATE INDEX webhook_attempts_delivery ON webhook_attempts (delivery_id, number);

-- Events about the merchant's account rather than an order (webhook_endpoint.disabled). The order
-- event log keeps its NOT NULL order_id and gapless seq untouched; the events API reads both tables.
CREATE TABLE merchant_events (
    event_id text PRIMARY KEY,
    merchant_id text NOT NULL,
    livemode boolean NOT NULL,
    type text NOT NULL,
    data jsonb NOT NULL,                     -- the public data, as delivered
    created_at timestamptz NOT NULL
);
CREATE INDEX merchant_events_list ON merchant_events (merchant_id, livemode, created_at, event_id);

-- Answers of keyed POST/PATCH requests that do not go through the order actors (their commands
-- table plays this role for them): the same key and request answer the recorded response.
CREATE TABLE idempotency_keys (
    merchant_id text NOT NULL,
    livemode boolean NOT NULL,
    key text NOT NULL,
    request_hash text NOT NULL,
    status integer NOT NULL,
    body bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (merchant_id, livemode, key)
);
