"""Derived ids are stored (event ids in recorded histories, objects named by an Idempotency-Key's retry): the
derivation may move between modules, never change its output."""

from __future__ import annotations

import re

import pytest

from common.ids import derived_id, random_id


@pytest.mark.parametrize("args, expected", [
    (("evt", "cmd_1", "0"), "evt_4b38ca2d6c63e24122d7c6f8"),  # sha256, as actors/history.py names events
    (("ord", "m_1:False:key-1", "order", 12, b"k" * 32), "ord_58f00384aacf0b199081b83b"),  # HMAC, as the web does
])
def test_a_derived_id_keeps_its_value(args, expected):
    assert derived_id(*args) == expected


def test_a_key_changes_the_id_and_a_random_id_has_the_same_shape():
    assert derived_id("ord", "s", "order") != derived_id("ord", "s", "order", key=b"k")
    assert re.fullmatch(r"re_[0-9a-f]{24}", random_id("re"))
    assert re.fullmatch(r"rl_[0-9a-f]{32}", random_id("rl", 16))
