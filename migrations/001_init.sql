-- Merchants, keys, the order event store, its read tables, command dedupe and the outbox.

CREATE TABLE merchants (
    merchant_id text PRIMARY KEY,
    name text NOT NULL,
    settings jsonb NOT NULL DEFAULT '{}',
    created_at timestamptz NOT NULL DEFAULT now()
);

CREATE TABLE api_keys (
    public_key text PRIMARY KEY,
    merchant_id text NOT NULL REFERENCES merchants,
    livemode boolean NOT NULL,
    secret_enc text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now(),
    rolled_at timestamptz
);
CREATE INDEX api_keys_merchant ON api_keys (merchant_id);

-- The append-only log each order's state is rebuilt from.
CREATE TABLE events (
    event_id text PRIMARY KEY,
    order_id text NOT NULL,
    seq integer NOT NULL,
    type text NOT NULL,
    merchant_id text NOT NULL,
    livemode boolean NOT NULL,
    data jsonb NOT NULL,
    created_at timestamptz NOT NULL,
    UNIQUE (order_id, seq)
);
CREATE INDEX events_merchant ON events (merchant_id, livemode, created_at, event_id);

-- Read table and snapshot: `state` is the actor's state after `version` events.
CREATE TABLE orders (
    order_id text PRIMARY KEY,
    merchant_id text NOT NULL,
    livemode boolean NOT NULL,
    order_number bigint NOT NULL,
    status text NOT NULL,
    external_ref text,
    state jsonb NOT NULL,
    version integer NOT NULL,
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    UNIQUE (merchant_id, livemode, order_number)
);
CREATE INDEX orders_list ON orders (merchant_id, livemode, created_at DESC, order_id DESC);
CREATE INDEX orders_status ON orders (merchant_id, livemode, status, created_at DESC, order_id DESC);

CREATE TABLE checkout_sessions (
    session_id text PRIMARY KEY,
    session_key text NOT NULL UNIQUE,
    order_id text NOT NULL,
    merchant_id text NOT NULL,
    livemode boolean NOT NULL,
    status text NOT NULL,
    expires_at timestamptz NOT NULL
);
CREATE INDEX checkout_sessions_due ON checkout_sessions (expires_at) WHERE status = 'OPEN';

-- One row per applied command: a redelivered command is answered from here, never applied twice.
CREATE TABLE commands (
    command_id text PRIMARY KEY,
    order_id text NOT NULL,
    request_hash text NOT NULL,
    reply bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Events committed but not yet on the events stream.
CREATE TABLE outbox (
    event_id text PRIMARY KEY,
    payload bytea NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
CREATE INDEX outbox_age ON outbox (created_at);
