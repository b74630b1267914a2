-- A recorded answer that held the order's view names the order's version instead (`commands.version`), as the
-- commit records it (actors/outcomes.py, Outcome.recorded): a retry gets the view rebuilt from the order's events
-- up to that version, by today's code. The view an answer holds, of whatever schema, carries the order's version.
UPDATE commands c
SET version = (answer.reply -> 'state' ->> 'version')::int,
    reply = convert_to('{"command_id":' || to_json(c.command_id)::text || ',"ok":true,"state":null,"error":null}',
                       'UTF8')
FROM (SELECT command_id, convert_from(reply, 'UTF8')::jsonb AS reply FROM commands WHERE version IS NULL) AS answer
WHERE answer.command_id = c.command_id AND (answer.reply ->> 'ok')::bool
  AND jsonb_typeof(answer.reply -> 'state') = 'object' AND (answer.reply -> 'state' ->> 'version')::int > 0;
