-- Each event keeps the public form it was published with (the bytes the events stream carried, from which
-- webhooks are sent), so the events API serves what was delivered, not a rendering by today's code.
-- Events recorded before this migration have none and are rendered by replay, as before.
ALTER TABLE events ADD COLUMN public bytea;
