-- A card account the provider refused (a revoked or wrong secret key, a restricted account): the provider's words
-- and when the episode began, kept while it lasts and cleared when a call works again or the account is connected
-- again. The staff notifier tells each episode once (its source id: the account and `last_error_at`).
ALTER TABLE card_accounts ADD COLUMN last_error text;
ALTER TABLE card_accounts ADD COLUMN last_error_at timestamptz;
CREATE INDEX card_accounts_in_error ON card_accounts (last_error_at) WHERE last_error_at IS NOT NULL;
