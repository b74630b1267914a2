-- Finding orders by the time they were paid (the orders list's paid_gte/paid_lt and the exports), and the staff
-- notifications: what each user was told, whether it was mailed, and which kinds each user chose.

-- When the order first reached PAID (payment.settled, or order.resolved for an accepted underpayment); written by
-- the order actor's commit, kept once set. Orders paid before this migration take it from their events.
ALTER TABLE orders ADD COLUMN paid_at timestamptz;
UPDATE orders o SET paid_at = e.at
FROM (SELECT order_id, min(created_at) AS at FROM events WHERE type IN ('payment.settled', 'order.resolved')
      GROUP BY order_id) e
WHERE e.order_id = o.order_id;
CREATE INDEX orders_paid ON orders (merchant_id, livemode, paid_at, order_id) WHERE paid_at IS NOT NULL;

-- One row per user told of one thing. `source_id` names that thing (an event id, or an endpoint's failing
-- episode): the events stream delivers at least once, and the unique key makes a second delivery a no-op.
CREATE TABLE notifications (
    notification_id text PRIMARY KEY,
    user_id text NOT NULL REFERENCES staff_users ON DELETE CASCADE,
    merchant_id text NOT NULL,
    livemode boolean NOT NULL,
    kind text NOT NULL,
    source_id text NOT NULL,
    title text NOT NULL,
    body text NOT NULL,  -- plain text: whatever a buyer wrote is in here, and is only ever shown as text
    link text NOT NULL,  -- a dashboard path (under its prefix) where the thing is acted on
    created_at timestamptz NOT NULL,
    read_at timestamptz,
    -- none: not to be mailed (mail not configured, or no address); pending: due at mail_due_at; sent; failed:
    -- given up after the last retry (counted and logged).
    mail_status text NOT NULL DEFAULT 'none' CHECK (mail_status IN ('none', 'pending', 'sent', 'failed')),
    mail_attempts integer NOT NULL DEFAULT 0,
    mail_due_at timestamptz,
    mail_error text,
    UNIQUE (user_id, kind, source_id)
);
CREATE INDEX notifications_user ON notifications (user_id, created_at DESC, notification_id DESC);
CREATE INDEX notifications_unread ON notifications (user_id) WHERE read_at IS NULL;
CREATE INDEX notifications_mail_due ON notifications (mail_due_at) WHERE mail_status = 'pending';

-- A user's own choice for one kind; a kind without a row follows the defaults of the user's role
-- (notify/kinds.py).
CREATE TABLE notification_choices (
    user_id text NOT NULL REFERENCES staff_users ON DELETE CASCADE,
    kind text NOT NULL,
    enabled boolean NOT NULL,
    PRIMARY KEY (user_id, kind)
);

-- Webhook endpoints failing for over an hour are found by the notifier's sweep on failing_since.
CREATE INDEX webhook_endpoints_failing ON webhook_endpoints (failing_since) WHERE failing_since IS NOT NULL;
