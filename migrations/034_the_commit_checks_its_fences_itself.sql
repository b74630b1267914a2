-- The fence check in the batch's own statement (actors/store.py _COMMIT): its head updates the rows of the
-- partitions it commits for, under the epochs it was read under, and this guard, given the partitions those rows
-- confirmed and the partitions given, fails the whole statement with SQLSTATE FENCE, the stale ones in DETAIL
-- (comma-separated), unless every one was confirmed. STABLE: a guard of no column is evaluated once, before the
-- statement writes its first row, even when the batch has no command to write.
CREATE FUNCTION fences_hold(confirmed int[], given int[]) RETURNS boolean
LANGUAGE plpgsql STABLE AS $$
DECLARE
    stale int[] := ARRAY(SELECT p FROM unnest(given) AS p WHERE p <> ALL (confirmed) ORDER BY p);
BEGIN
    IF cardinality(stale) > 0 THEN
        RAISE EXCEPTION 'partitions % are fenced by a newer lease epoch', stale
            USING ERRCODE = 'FENCE', DETAIL = array_to_string(stale, ',');
    END IF;
    RETURN true;
END
$$;
