"""Derived ids are stored (event ids in recorded histories, objects named by an Idempotency-Key's retry): the
derivation may move between modules, never change its output. Ids begin with their time, so they sort as made."""

from __future__ import annotations

import re

import pytest

from actors.history import event_id
from common.ids import derived_id, made_at, now_ms, random_id

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


def test_an_event_id_carries_its_commands_time_and_older_commands_keep_theirs():
    assert event_id("cmd_1", 0) == "evt_4b38ca2d6c63e24122d7c6f8"
    command = random_id("cmd", at_ms=AT)
    assert made_at(event_id(command, 3)) == AT
    assert event_id(command, 3) != event_id(command, 4)
