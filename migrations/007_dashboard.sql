-- The merchant dashboard: staff users, their server-side sessions, and the index its order search needs.

-- One row per person who signs in; a user belongs to one merchant and sees that merchant's data only.
CREATE TABLE staff_users (
    user_id text PRIMARY KEY,
    merchant_id text NOT NULL REFERENCES merchants,
    email text NOT NULL UNIQUE CHECK (email = lower(email)),  -- stored lower-cased: one account per address
    password_hash text NOT NULL,  -- argon2id, PHC string (argon2-cffi)
    created_at timestamptz NOT NULL DEFAULT now(),
    signed_in_at timestamptz
);
CREATE INDEX staff_users_merchant ON staff_users (merchant_id);

-- The cookie carries a random id; only its SHA-256 is stored, so a copy of this table opens no session.
CREATE TABLE dashboard_sessions (
    session_hash text PRIMARY KEY,
    user_id text NOT NULL REFERENCES staff_users ON DELETE CASCADE,
    csrf_token text NOT NULL,  -- every form of the session carries it
    flash text,  -- one message for the next page, shown once
    created_at timestamptz NOT NULL DEFAULT now(),
    expires_at timestamptz NOT NULL
);
CREATE INDEX dashboard_sessions_user ON dashboard_sessions (user_id);
CREATE INDEX dashboard_sessions_expiry ON dashboard_sessions (expires_at);

-- The orders list searches by external_ref within a merchant and mode.
CREATE INDEX orders_external_ref ON orders (merchant_id, livemode, external_ref) WHERE external_ref IS NOT NULL;
