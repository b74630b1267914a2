-- A merchant's own API rate limit (`service merchants limits`); NULL takes the RATE_LIMIT_RPS / RATE_LIMIT_BURST
-- defaults.
ALTER TABLE merchants
    ADD COLUMN rate_limit_rps integer CHECK (rate_limit_rps > 0),
    ADD COLUMN rate_limit_burst integer CHECK (rate_limit_burst > 0);

-- Service-wide secrets, sealed under the master key like API secret keys. `derivation` is the root from which
-- every non-encryption key is derived with HKDF (ids, CSRF, sign-in): rotating the master key re-seals it and
-- leaves it unchanged, so nothing derived from it changes.
CREATE TABLE service_secrets (
    name text PRIMARY KEY,
    secret_enc text NOT NULL,
    created_at timestamptz NOT NULL DEFAULT now()
);
