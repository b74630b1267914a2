-- Every outbox row names its events (`event_ids`), as the commit writes it (actors/store.py), and no row holds
-- their public bytes any more: a row that holds them gives them to those of its events that have none, and names
-- its events by the ids the bytes carry, in the same order. Every outbox row comes from the commit that wrote its
-- events, so each id names a row of `events`.
UPDATE events e SET public = held.payload
FROM (SELECT payload FROM outbox, unnest(payloads) AS payload WHERE event_ids IS NULL) AS held
WHERE e.event_id = convert_from(held.payload, 'UTF8')::jsonb ->> 'id' AND e.public IS NULL;
UPDATE outbox SET event_ids = ARRAY(
    SELECT convert_from(held.payload, 'UTF8')::jsonb ->> 'id' FROM unnest(payloads) WITH ORDINALITY AS held(payload, n)
    ORDER BY held.n)
WHERE event_ids IS NULL;
ALTER TABLE outbox DROP CONSTRAINT outbox_names_or_holds_its_events, DROP COLUMN payloads,
    ALTER COLUMN event_ids SET NOT NULL;
