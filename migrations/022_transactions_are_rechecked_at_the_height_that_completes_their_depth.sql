-- A transaction seen in a block is checked again when the head reaches the height that completes its depth
-- (its block + confirmations - 1), not on a clock: chain_watchers/verify.py due_height. NULL where the family
-- counts no heights in the transaction's block reference (TON) or the transaction is in no block yet; those
-- are checked on every pass and on the watcher's recheck time.
ALTER TABLE payment_attempts ADD COLUMN due_height bigint;
ALTER TABLE refund_transfer_checks ADD COLUMN due_height bigint;
