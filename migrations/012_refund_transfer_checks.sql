-- One writer per table: the order actor writes refund_transactions (the claim, when it accepts a posted
-- transfer, and the verdict); the chain watchers write their progress on each transfer here.

CREATE TABLE refund_transfer_checks (
    network text NOT NULL,
    tx_hash text NOT NULL,
    confirmations integer NOT NULL,
    required integer NOT NULL,
    seen_block text,
    checked_at timestamptz NOT NULL,
    PRIMARY KEY (network, tx_hash)
);

INSERT INTO refund_transfer_checks (network, tx_hash, confirmations, required, seen_block, checked_at)
SELECT network, tx_hash, confirmations, required, seen_block, checked_at FROM refund_transactions
WHERE checked_at IS NOT NULL;

DROP INDEX refund_transactions_due;
ALTER TABLE refund_transactions DROP COLUMN confirmations, DROP COLUMN required, DROP COLUMN seen_block,
    DROP COLUMN checked_at, ALTER COLUMN submitted_at DROP DEFAULT;
CREATE INDEX refund_transactions_verifying ON refund_transactions (network) WHERE status = 'verifying';
