-- A recorded command says what it was (its kind) and when it was sent, so `service replay ORDER_ID` shows an
-- order's timeline command by command; rows recorded before this stay NULL there. The index finds an order's
-- commands (the timeline, the dry-run replay) without scanning the dedupe table. On a large table, create the
-- index CONCURRENTLY by hand before deploying (docs/operations.md); this statement then does nothing.
ALTER TABLE commands ADD COLUMN kind text, ADD COLUMN at timestamptz;
CREATE INDEX IF NOT EXISTS commands_order ON commands (order_id, created_at);
