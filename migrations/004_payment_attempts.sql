-- Payment attempts reported by the hosted checkout page: a buyer's wallet sent a transaction and the
-- page posted its hash (POST /c/{session_key}/payment-attempts, no credentials).
--
-- UNVERIFIED. A row is a claim by whoever holds the checkout link, never money received. The chain
-- watchers will verify each attempt on its network (the transaction exists, succeeded, and moves the
-- quoted stablecoin to the merchant's receive address), keep `status` and `confirmations` up to date
-- while it deepens, and report a verified payment through the order actor's ConfirmPayment command.
-- Only that command moves the order; this table only lets the page say "confirming n of m".
CREATE TABLE payment_attempts (
    attempt_id text PRIMARY KEY,
    session_id text NOT NULL,
    order_id text NOT NULL,
    merchant_id text NOT NULL,
    livemode boolean NOT NULL,
    network text NOT NULL,
    tx_hash text NOT NULL,  -- in the network's normal form (lowercase hex on EVM and TRON)
    -- reported: not looked at yet; confirming: found on chain, not final; verified: paid, sent as
    -- ConfirmPayment; rejected: not found in time, failed, or not a payment to this merchant (see reason).
    status text NOT NULL DEFAULT 'reported'
        CHECK (status IN ('reported', 'confirming', 'verified', 'rejected')),
    confirmations integer,
    reason text,
    created_at timestamptz NOT NULL DEFAULT now(),
    updated_at timestamptz NOT NULL DEFAULT now(),
    -- One transaction pays one session: the same hash reported again is the same attempt.
    UNIQUE (network, tx_hash)
);
CREATE INDEX payment_attempts_session ON payment_attempts (session_id, created_at);
-- What the watchers poll: attempts still waiting for a verdict.
CREATE INDEX payment_attempts_open ON payment_attempts (network, created_at) WHERE status IN ('reported', 'confirming');
