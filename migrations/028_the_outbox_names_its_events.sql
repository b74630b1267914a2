-- A batch's outbox row names its events instead of copying their public bytes, which the same commit writes to
-- `events` (the sweep reads them there): the copy was 3 % of the WAL of a keyed quick session in large batches
-- (compressed in TOAST) and 13 % in small ones (README, Benchmarks). Rows written before keep their payloads, and
-- the sweep still publishes those as they are.
ALTER TABLE outbox ADD COLUMN event_ids text[];
ALTER TABLE outbox ALTER COLUMN payloads DROP NOT NULL;
ALTER TABLE outbox ADD CONSTRAINT outbox_names_or_holds_its_events CHECK (event_ids IS NOT NULL OR payloads IS NOT NULL);
