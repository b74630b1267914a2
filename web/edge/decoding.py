"""Request bodies from bytes or forms to typed structs: any fault is a 400 or a 422 naming the field, never a 5xx."""

from __future__ import annotations

import re
from typing import Any, Mapping, TypeVar

import msgspec

from web.edge.errors import ApiError, from_validation

T = TypeVar("T")

# Free text (a reason, a note, metadata values) may hold tabs and line breaks; nothing else may hold any control
# character: PostgreSQL refuses NUL in text, and the others only ever arrive to break a log line or a page.
FREE_TEXT = frozenset({"reason", "note", "customer_note", "description"})
_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")
_CONTROL_IN_TEXT = re.compile(r"[\x00-\x08\x0b\x0c\x0e-\x1f\x7f-\x9f]")
# JSON carries a control character only escaped (a backslash), as DEL (0x7f), or as a C1 character (0xc2 0x80-0x9f).
_MAY_HOLD_CONTROL = (b"\\", b"\x7f", b"\xc2")


def decode(raw: bytes, kind: type[T]) -> T:
    raw = raw.strip() or b"{}"
    if not raw.startswith(b"{"):
        raise ApiError(400, "invalid_json", "The request body must be a JSON object.")
    try:
        value = msgspec.json.decode(raw, type=kind)
    except msgspec.ValidationError as exc:
        raise from_validation(exc) from None
    except (msgspec.DecodeError, UnicodeDecodeError, RecursionError):
        raise ApiError(400, "invalid_json", "The request body is not valid UTF-8 JSON.") from None
    if any(mark in raw for mark in _MAY_HOLD_CONTROL):
        refuse_control_characters(value)
    return value


def convert(fields: Mapping[str, Any], kind: type[T]) -> T:
    """A form's fields (already text) as the struct."""
    try:
        value = msgspec.convert(fields, kind)
    except msgspec.ValidationError as exc:
        raise from_validation(exc) from None
    refuse_control_characters(value)
    return value


def refuse_control_characters(value: Any, path: str = "", free_text: bool = False) -> None:
    if isinstance(value, str):
        if (_CONTROL_IN_TEXT if free_text else _CONTROL).search(value):
            raise ApiError(422, "control_character", f"`{path or 'body'}` holds a control character.", path or None)
    elif isinstance(value, msgspec.Struct):
        for name in value.__struct_fields__:
            refuse_control_characters(getattr(value, name), f"{path}.{name}".lstrip("."), name in FREE_TEXT)
    elif isinstance(value, (list, tuple)):
        for i, item in enumerate(value):
            refuse_control_characters(item, f"{path}[{i}]", free_text)
    elif isinstance(value, dict):
        for key, item in value.items():
            refuse_control_characters(key, path)
            # Metadata values are the merchant's own text, like a note.
            refuse_control_characters(item, f"{path}.{key}", True)
