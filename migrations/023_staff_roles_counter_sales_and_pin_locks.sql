-- Staff roles (issue 25): what a user's sessions may do. Users made before roles existed ran the whole
-- dashboard, so they stay owners; a new user is given a role when created (`service users create --role`).
ALTER TABLE staff_users ADD COLUMN role text NOT NULL DEFAULT 'owner'
    CHECK (role IN ('owner', 'manager', 'cashier'));
ALTER TABLE staff_users ALTER COLUMN role DROP DEFAULT;

-- Sales rung up in the merchant app, by who sold them: a cashier sees only their own. The order itself is
-- created by the actor like any other; this row is written once its creation is answered.
CREATE TABLE counter_sales (
    order_id text PRIMARY KEY REFERENCES orders,
    user_id text NOT NULL REFERENCES staff_users ON DELETE CASCADE,
    merchant_id text NOT NULL,
    livemode boolean NOT NULL,
    created_at timestamptz NOT NULL
);
CREATE INDEX counter_sales_user_day ON counter_sales (user_id, livemode, created_at DESC);

-- A quick lock for a device left at the counter: a PIN of 4 to 8 digits per user (argon2id, like the password),
-- a session that is locked until it is typed, and the wrong tries that sign the session out at the fifth.
ALTER TABLE staff_users ADD COLUMN pin_hash text;
ALTER TABLE dashboard_sessions ADD COLUMN locked boolean NOT NULL DEFAULT false,
    ADD COLUMN pin_failures integer NOT NULL DEFAULT 0;
