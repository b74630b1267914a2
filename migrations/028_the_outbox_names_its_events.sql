-- A batch's outbox row names its events instead of copying their public bytes, which the same commit writes to
-- `events` (the sweep reads them there): the copy was an eighth of the WAL a keyed quick session wrote. Rows written
-- before keep their payloads, and the sweep still publishes those as they are.
ALTER TABLE outbox ADD COLUMN event_ids text[];
ALTER TABLE outbox ALTER COLUMN payloads DROP NOT NULL;
ALTER TABLE outbox ADD CONSTRAINT outbox_names_or_holds_its_events CHECK (event_ids IS NOT NULL OR payloads IS NOT NULL);
