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

-- The rail a refund is paid on, written by the order actor with the refund: the card refund sender finds the
-- APPROVED card refunds it has to carry out here. Refunds from before it are all on chain.
-- Named as the refund's field, not `network`, which the watchers' joins of refunds with transfers share by USING.
ALTER TABLE refunds ADD COLUMN refund_network text;
CREATE INDEX refunds_card_approved ON refunds (order_id) WHERE refund_network = 'card' AND status = 'APPROVED';
