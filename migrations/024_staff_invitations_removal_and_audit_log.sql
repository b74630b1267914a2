-- The merchant's team (issue 37): owners invite staff by a one-time link, change roles and remove users; every
-- staff and API action that matters is written once to an audit log that nothing may change afterwards.

-- A removed user keeps their row (their sales and audit entries still name them) but opens no session; their
-- address may be invited again, so only users still on the team need unique addresses.
ALTER TABLE staff_users ADD COLUMN removed_at timestamptz;
ALTER TABLE staff_users DROP CONSTRAINT staff_users_email_key;
CREATE UNIQUE INDEX staff_users_email ON staff_users (email) WHERE removed_at IS NULL;

-- The link carries a random token; only its SHA-256 is stored. A pending invitation is one neither accepted,
-- revoked nor past expires_at.
CREATE TABLE staff_invitations (
    invitation_id text PRIMARY KEY,
    merchant_id text NOT NULL REFERENCES merchants,
    email text NOT NULL CHECK (email = lower(email)),
    role text NOT NULL CHECK (role IN ('owner', 'manager', 'cashier')),
    token_hash text NOT NULL UNIQUE,
    invited_by text NOT NULL,  -- a staff user id or an API key's public key
    created_at timestamptz NOT NULL,
    expires_at timestamptz NOT NULL,
    accepted_at timestamptz,
    user_id text REFERENCES staff_users,  -- the user the acceptance created
    revoked_at timestamptz
);
CREATE INDEX staff_invitations_merchant ON staff_invitations (merchant_id, created_at DESC);

-- One row per action. The actor is a staff user (actor_id their user id, with the address they had then) or an
-- API key (its public key); no foreign key, so removing a user or rolling a key never touches the record.
CREATE TABLE audit_events (
    event_id text PRIMARY KEY,
    merchant_id text NOT NULL REFERENCES merchants,
    livemode boolean,  -- the mode the action was taken in; NULL for the team's own actions, which have none
    actor_type text NOT NULL CHECK (actor_type IN ('staff', 'api_key')),
    actor_id text NOT NULL,
    actor_email text,
    action text NOT NULL CHECK (action IN (
        'staff.signed_in', 'staff.sign_in_failed', 'staff.invited', 'staff.role_changed', 'staff.removed',
        'refund.issued', 'refund.approved', 'refund.rejected', 'refund.canceled', 'refund_link.created',
        'settings.changed', 'api_key.rolled', 'card_account.changed', 'pin.locked_out', 'sale.created')),
    object_id text,
    order_id text,  -- for refund actions: the order page lists who did what on it
    details jsonb NOT NULL DEFAULT '{}',
    client_ip text,
    user_agent text,
    request_id text,
    created_at timestamptz NOT NULL
);
CREATE INDEX audit_events_newest ON audit_events (merchant_id, created_at DESC, event_id DESC);
CREATE INDEX audit_events_order ON audit_events (order_id) WHERE order_id IS NOT NULL;
-- An action that happens once to its object is recorded once, however often a retried request answers it.
CREATE UNIQUE INDEX audit_events_once ON audit_events (merchant_id, action, object_id)
    WHERE action IN ('refund.issued', 'refund.approved', 'refund.rejected', 'refund.canceled',
                     'refund_link.created', 'sale.created', 'staff.invited');

-- Append-only whatever the client: the service's own role cannot change or delete a row, nor empty the table.
CREATE FUNCTION audit_events_refuse_change() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
    RAISE EXCEPTION 'audit_events is append-only: % refused', TG_OP USING ERRCODE = 'insufficient_privilege';
END
$$;
CREATE TRIGGER audit_events_append_only BEFORE UPDATE OR DELETE ON audit_events
    FOR EACH ROW EXECUTE FUNCTION audit_events_refuse_change();
CREATE TRIGGER audit_events_no_truncate BEFORE TRUNCATE ON audit_events
    FOR EACH STATEMENT EXECUTE FUNCTION audit_events_refuse_change();
