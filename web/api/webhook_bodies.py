"""Request bodies of the webhook calls as msgspec structs; unknown fields are refused."""

from __future__ import annotations

from datetime import datetime
from typing import Annotated, Literal

import msgspec
from msgspec import Meta

from web.api.bodies import Url, _Body

# Any well-formed type, so endpoints can subscribe to types that arrive later; "*" is every type.
EventType = Annotated[str, Meta(pattern=r"^(\*|[a-z][a-z_]*(\.[a-z][a-z_]*)+)$", max_length=100)]
EventTypes = Annotated[list[EventType], Meta(min_length=1, max_length=100)]
Description = Annotated[str, Meta(max_length=500)]
OVERLAP_MAX_S = 7 * 86400


class EndpointIn(_Body):
    url: Url
    enabled_events: EventTypes = msgspec.field(default_factory=lambda: ["*"])
    description: Description | None = None


class EndpointPatchIn(_Body):
    url: Url | None = None
    enabled_events: EventTypes | None = None
    description: Description | None = None
    status: Literal["enabled", "disabled"] | None = None


class RollSecretIn(_Body):
    # How long the old secret keeps signing beside the new one; 0 ends it at once.
    overlap_seconds: Annotated[int, Meta(ge=0, le=OVERLAP_MAX_S)] = 86400


class RedeliverIn(_Body):
    """One event (`event_id`), or every failed delivery of the endpoint created since `failed_since`."""

    event_id: Annotated[str, Meta(min_length=1, max_length=100)] | None = None
    failed_since: Annotated[datetime, Meta(tz=True)] | None = None
