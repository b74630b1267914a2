-- A transaction seen in a block that a later check finds nowhere (a reorganisation took its block, and the node asked
-- does not hold it in its mempool either) is not refused at once: it is often mined again. The watchers record when it
-- went missing and refuse it only WATCH_NOT_FOUND_AFTER_S after that; a check that finds it again clears it. NULL
-- otherwise. Adding nullable columns without a default rewrites nothing.
ALTER TABLE payment_attempts ADD COLUMN missing_since timestamptz;
ALTER TABLE refund_transfer_checks ADD COLUMN missing_since timestamptz;
