-- What the chain watchers keep between polls (docs/watchers.md): scan cursors, the unique amounts quoted on
-- EVM and TRON, and the block a payment attempt was seen in (a later disappearance is a reorganisation).

-- How far a watcher has read a chain for payments that came without a hash. `scope` is '' for a network's
-- block cursor (EVM, TRON: every block at or below `position` is read and final) or an account (TON: the
-- logical time of the newest transaction read on that receive wallet).
CREATE TABLE chain_cursors (
    network text NOT NULL,
    scope text NOT NULL DEFAULT '',
    position bigint NOT NULL,
    updated_at timestamptz NOT NULL DEFAULT now(),
    PRIMARY KEY (network, scope)
);

-- The amount a session quotes on an EVM or TRON network: what it owes plus the smallest offset (0 first, at
-- most 9999 micro-USD) that no other session reserving the same receive address quotes. A transfer of exactly
-- that amount to that address is this session's payment, found without a hash. A reservation lasts past the
-- session's expiry (`reserved_until`) so a late payment still finds its order.
CREATE TABLE unique_amounts (
    session_id text NOT NULL,
    network text NOT NULL,
    address text NOT NULL,  -- the merchant's receive address, normal form
    due bigint NOT NULL,  -- micro-USD the session owed when the amount was picked
    amount bigint NOT NULL,  -- micro-USD quoted: due + offset
    order_id text NOT NULL,
    merchant_id text NOT NULL,
    livemode boolean NOT NULL,
    reserved_until timestamptz NOT NULL,
    PRIMARY KEY (session_id, network)
);
CREATE INDEX unique_amounts_live ON unique_amounts (network, address, reserved_until);

-- The watchers write it beside status and confirmations, as refund_transactions.seen_block.
ALTER TABLE payment_attempts ADD COLUMN seen_block text;

-- Sessions a watcher looks for payments to: open ones and those ended within the grace period.
CREATE INDEX checkout_sessions_expiry ON checkout_sessions (expires_at);
