-- A delivery names the order its event concerns and the request id of the command that caused it, so each attempt,
-- a retry days later included, is logged with them. NULL for merchant events, for events a crash left in the outbox
-- and for deliveries made before this. Adding nullable columns without a default rewrites nothing.
ALTER TABLE webhook_deliveries ADD COLUMN order_id text, ADD COLUMN request_id text;
