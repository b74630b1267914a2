"""Derived ids are stored (event ids in recorded histories, objects named by an Idempotency-Key's retry): the
derivation may move between modules, never change its output. Ids begin with their time, so they sort as made."""

from __future__ import annotations

import re
from datetime import datetime, timezone

import pytest

from actors.outcomes import event_id
from common.ids import derived_id, is_keyed_command, keyed_command_id, made_at, now_ms, random_id, same_but_time

AT = 1_795_620_000_123  # 2026-11-25, in milliseconds


@pytest.mark.parametrize("args, kwargs, expected", [
    (("evt", "cmd_1", "0"), {}, "evt_4b38ca2d6c63e24122d7c6f8"),  # sha256, as events of older commands are named
    (("ord", "m_1:False:key-1", "order", 12, b"k" * 32), {}, "ord_58f00384aacf0b199081b83b"),  # HMAC, before times
    (("ord", "m_1:False:key-1", "order", 12, b"k" * 32), {"at_ms": AT},
     "ord_01a2134ad17b58f00384aacf0b199081b83b"),  # the same digest, after its time
])
def test_a_derived_id_keeps_its_value(args, kwargs, expected):
    assert derived_id(*args, **kwargs) == expected


def test_a_key_changes_the_id_and_a_random_id_begins_with_its_time():
    assert derived_id("ord", "s", "order") != derived_id("ord", "s", "order", key=b"k")
    before = now_ms()
    made = random_id("re")
    assert re.fullmatch(r"re_[0-9a-f]{36}", made)
    assert before <= made_at(made) <= now_ms()
    assert re.fullmatch(r"rl_01a2134ad17b[0-9a-f]{32}", random_id("rl", 16, AT))
    assert made_at(random_id("cs_test", 24, AT), 24) == AT


def test_ids_sort_as_they_were_made():
    made = [random_id("ord", at_ms=AT + step) for step in (0, 1, 999, 10**6, 10**9)]
    assert sorted(made) == made


@pytest.mark.parametrize("id_, nbytes, expected", [
    ("cmd_01a2134ad17b" + "0" * 24, 12, AT),
    ("cmd_" + "f" * 24, 12, None),  # made before ids had times
    ("cmd_01a2134ad17b" + "0" * 24, 16, None),  # not of this length
    ("cmd_zz" + "0" * 34, 12, None),
    ("cmd", 12, None),
])
def test_made_at_reads_the_time_part(id_, nbytes, expected):
    assert made_at(id_, nbytes) == expected


LATER = datetime.fromtimestamp((AT + 5000) / 1000, timezone.utc)


def test_an_event_id_carries_its_commands_time_and_older_commands_keep_theirs():
    assert event_id("cmd_1", 0, LATER) == "evt_4b38ca2d6c63e24122d7c6f8"
    command = random_id("cmd", at_ms=AT)
    assert made_at(event_id(command, 3, LATER)) == AT
    assert event_id(command, 3, LATER) != event_id(command, 4, LATER)


def test_a_keyed_command_id_has_no_time_and_its_events_take_the_commands():
    command = keyed_command_id("m_1:False:key-1", b"k" * 32)
    assert command == keyed_command_id("m_1:False:key-1", b"k" * 32)
    assert re.fullmatch(r"cmd_[0-9a-f]{32}", command) and made_at(command) is None
    assert is_keyed_command(command) and not is_keyed_command("cmd_" + "f" * 24)
    assert not is_keyed_command(random_id("cmd", at_ms=AT))
    assert made_at(event_id(command, 1, LATER)) == AT + 5000


@pytest.mark.parametrize("a, b, same", [
    ("re_01a2134ad17b58f00384aacf0b199081b83b", "re_01a2134ad17b58f00384aacf0b199081b83b", True),
    ("re_01a2134ad17b58f00384aacf0b199081b83b", "re_01a2134ae00058f00384aacf0b199081b83b", True),  # a later retry
    ("re_01a2134ad17b58f00384aacf0b199081b83b", "re_01a2134ad17b58f00384aacf0b199081b83c", False),
    ("re_01a2134ad17b58f00384aacf0b199081b83b", "rl_01a2134ad17b58f00384aacf0b199081b83b", False),
    ("re_01a2134ad17b58f00384aacf0b199081b83b", "re_58f00384aacf0b199081b83b", False),
    ("re_1", "re_2", False),
])
def test_ids_of_a_request_and_its_later_retry_differ_in_time_alone(a, b, same):
    assert same_but_time(a, b) is same
