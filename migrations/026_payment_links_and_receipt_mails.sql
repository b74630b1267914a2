-- Payment links (issue 39): a lasting object a merchant shares; each buyer who chooses to pay gets an order of
-- their own. `uses` counts the orders made from the link, taken under the row's lock with the check against
-- `max_uses`, so concurrent buyers never pass the limit.
CREATE TABLE payment_links (
    payment_link_id text PRIMARY KEY,
    merchant_id text NOT NULL REFERENCES merchants,
    livemode boolean NOT NULL,
    name text NOT NULL,
    description text,
    amount bigint CHECK (amount > 0),  -- micro-USD; NULL: the buyer enters the amount
    min_amount bigint CHECK (min_amount > 0),
    max_amount bigint CHECK (max_amount > 0),
    max_uses integer CHECK (max_uses > 0),  -- NULL: no limit
    uses integer NOT NULL DEFAULT 0 CHECK (uses >= 0),
    expires_at timestamptz,
    status text NOT NULL DEFAULT 'active' CHECK (status IN ('active', 'archived')),
    created_at timestamptz NOT NULL,
    updated_at timestamptz NOT NULL,
    CHECK (amount IS NULL OR (min_amount IS NULL AND max_amount IS NULL)),
    CHECK (min_amount IS NULL OR max_amount IS NULL OR min_amount <= max_amount),
    CHECK (max_uses IS NULL OR uses <= max_uses)
);
CREATE INDEX payment_links_by_merchant ON payment_links (merchant_id, livemode, created_at DESC, payment_link_id DESC);

-- The orders made from each link, written with the use it took (before the order's command is sent, and
-- removed with the use if that command fails): the dashboard's orders, paid total and conversion per link.
CREATE TABLE payment_link_orders (
    order_id text PRIMARY KEY,
    payment_link_id text NOT NULL REFERENCES payment_links,
    created_at timestamptz NOT NULL
);
CREATE INDEX payment_link_orders_by_link ON payment_link_orders (payment_link_id);

-- Receipts by mail: the address a buyer gave on the checkout page (the API's `customer_email` lives on the order
-- itself), and each receipt mail, one per event that sends one (payment.settled, payment.refund.executed, or a
-- buyer giving an address after paying), kept until sent and retried with a backoff.
CREATE TABLE receipt_emails (
    order_id text PRIMARY KEY,
    email text NOT NULL,
    given_at timestamptz NOT NULL
);
CREATE TABLE receipt_mails (
    mail_id text PRIMARY KEY,  -- the event's id, or `given:{order_id}` for an address given after paying
    order_id text NOT NULL,
    kind text NOT NULL CHECK (kind IN ('payment', 'refund')),
    created_at timestamptz NOT NULL,
    attempts integer NOT NULL DEFAULT 0,
    due_at timestamptz,  -- NULL once sent, or given up
    sent_at timestamptz,
    last_error text
);
CREATE INDEX receipt_mails_due ON receipt_mails (due_at) WHERE due_at IS NOT NULL;
