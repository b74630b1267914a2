-- A merchant's own card provider account, one per mode: a test key pays test orders, a live key live ones.
-- Its secrets are sealed under the master key like API keys (common/secrets.py re-seals them on rotation).
CREATE TABLE card_accounts (
    account_id text PRIMARY KEY,
    merchant_id text NOT NULL REFERENCES merchants (merchant_id),
    livemode boolean NOT NULL,
    provider text NOT NULL,
    publishable_key text NOT NULL,
    secret_key_enc text NOT NULL,
    webhook_secret_enc text NOT NULL,
    connected_at timestamptz NOT NULL DEFAULT now(),
    UNIQUE (merchant_id, livemode)
);

-- Whether an APPROVED card refund waits on the card provider (an attempt due, or one the provider still calls
-- pending), written by the order actor with the refund: the card refund sender's work list. A refund the provider
-- refused leaves it until the merchant retries, so refusals never crowd out the refunds that are due.
ALTER TABLE refunds ADD COLUMN awaits_provider boolean NOT NULL DEFAULT false;
CREATE INDEX refunds_awaiting_provider ON refunds (updated_at) WHERE awaits_provider;
