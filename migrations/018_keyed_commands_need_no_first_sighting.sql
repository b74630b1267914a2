-- A keyed request's command id is derived from its Idempotency-Key alone, with no time (common/ids.py): every retry
-- names the same command and the order actor's record of it answers, so the web no longer records when each key
-- was first seen.
DROP TABLE idempotency_key_times;
