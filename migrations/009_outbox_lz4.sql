-- A batch's payloads exceed the TOAST threshold and were compressed with pglz, which showed as 4% of
-- an actor's PostgreSQL backend under load; lz4 compresses them several times faster. A server built
-- without lz4 keeps pglz.
DO $$
BEGIN
    ALTER TABLE outbox ALTER COLUMN payloads SET COMPRESSION lz4;
EXCEPTION WHEN feature_not_supported THEN
    RAISE NOTICE 'lz4 is not available: the outbox keeps pglz';
END $$;
