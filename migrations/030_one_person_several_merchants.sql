-- One person, several merchants (issue 45): a bookkeeper or an agency serves several shops with one address and one
-- password. An account is the person (address, password); a staff_users row is one membership of one merchant, with
-- its own role, PIN, sessions and notifications, and removal ends that membership only. staff_users keeps its
-- address (the account's, which never changes) so that the lists and mails that name a member read one row.
CREATE TABLE staff_accounts (
    account_id text PRIMARY KEY,
    email text NOT NULL UNIQUE CHECK (email = lower(email)),
    password_hash text NOT NULL,  -- argon2id, PHC string (argon2-cffi)
    created_at timestamptz NOT NULL DEFAULT now()
);

-- Existing users carried over: one account per address, with the password of its current member (or, for an
-- address removed everywhere, of its newest row, so that an invitation back asks for the password it knew).
INSERT INTO staff_accounts (account_id, email, password_hash, created_at)
SELECT DISTINCT ON (email) 'acc_' || replace(gen_random_uuid()::text, '-', ''), email, password_hash, created_at
FROM staff_users
ORDER BY email, removed_at IS NULL DESC, created_at DESC;

ALTER TABLE staff_users ADD COLUMN account_id text REFERENCES staff_accounts;
UPDATE staff_users u SET account_id = a.account_id FROM staff_accounts a WHERE a.email = u.email;
ALTER TABLE staff_users ALTER COLUMN account_id SET NOT NULL;
ALTER TABLE staff_users DROP COLUMN password_hash;

-- One current membership per person and merchant; the same address on several teams is the point.
DROP INDEX staff_users_email;
CREATE UNIQUE INDEX staff_users_membership ON staff_users (account_id, merchant_id) WHERE removed_at IS NULL;
CREATE INDEX staff_users_email ON staff_users (email) WHERE removed_at IS NULL;
