"""The events stream's entries: each event's public bytes (`e`) and, when a request caused it, its request id."""

from __future__ import annotations

from streams.names import Keys

# ARGV holds pairs: an event's payload and the request id of the command that caused it ('' when none did).
_APPEND_EACH = """
for i = 1, #ARGV, 2 do
  if ARGV[i + 1] == '' then redis.call('XADD', KEYS[1], '*', 'e', ARGV[i])
  else redis.call('XADD', KEYS[1], '*', 'e', ARGV[i], 'request_id', ARGV[i + 1]) end
end
return #ARGV / 2
"""


def publication(keys: Keys, events: list[tuple[bytes, str]]) -> list[tuple]:
    """The events (payload, request id) onto their stream in one call for a pipeline: a reply per event would
    cost more than appending them."""
    return [("EVAL", _APPEND_EACH, 1, keys.events, *[part for event in events for part in event])] if events else []
