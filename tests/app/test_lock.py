"""The quick lock over HTTP: a PIN of 4 to 8 digits set with the password and stored hashed; a locked session is
refused everything but unlocking and signing out; the fifth wrong PIN signs it out."""

from __future__ import annotations

import pytest

from tests.app.test_sales import get_json, post_json, signed_in
from tests.dashboard.support import PASSWORD

PIN = "482916"


async def row_of(stack, email: str):
    return await stack.pool.fetchrow("SELECT pin_hash FROM staff_users WHERE email = $1", email)


@pytest.mark.parametrize(("body", "status", "param"), [
    ({"password": PASSWORD, "pin": "123"}, 422, "pin"),
    ({"password": PASSWORD, "pin": "123456789"}, 422, "pin"),
    ({"password": PASSWORD, "pin": "12a4"}, 422, "pin"),
    ({"password": PASSWORD, "pin": "١٢٣٤"}, 422, "pin"),  # digits, but not the keypad's
    ({"password": "not the password", "pin": "1234"}, 403, "password"),
    ({"pin": "1234"}, 422, "password"),
])
async def test_a_pin_is_refused_with_the_field_it_names_and_nothing_is_set(stack, staff, body, status, param):
    http, csrf = await signed_in(stack, staff, "owner")
    try:
        answer_status, answer = await post_json(http, "/app/pin", body, csrf)
        assert (answer_status, answer["error"]["param"]) == (status, param), answer
        assert (await row_of(stack, staff.email))["pin_hash"] is None
    finally:
        await http.close()


async def test_a_locked_session_does_nothing_until_its_pin_is_typed(stack, staff):
    http, csrf = await signed_in(stack, staff, "owner")
    try:
        status, answer = await post_json(http, "/app/lock", {}, csrf)
        assert (status, answer["error"]["code"]) == (409, "pin_not_set")
        assert (await post_json(http, "/app/pin", {"password": PASSWORD, "pin": PIN}, csrf))[0] == 200
        stored = (await row_of(stack, staff.email))["pin_hash"]
        assert stored.startswith("$argon2id$") and PIN not in stored
        assert (await post_json(http, "/app/lock", {}, csrf))[0] == 200

        assert (await get_json(http, "/app/me"))[1]["locked"] is True
        status, answer = await post_json(http, "/test/app/sales", {"amount": "1.00"}, csrf)
        assert (status, answer["error"]["code"]) == (423, "session_locked")
        status, text = await http.get("/test/orders")
        assert status == 423 and "This device is locked" in text
        assert await stack.pool.fetchval("SELECT count(*) FROM orders WHERE merchant_id = $1", staff.merchant_id) == 0

        status, answer = await post_json(http, "/app/unlock", {"pin": "000000"}, csrf)
        assert (status, answer["error"]["code"], answer["error"]["tries_left"]) == (403, "pin_wrong", 4)
        assert (await post_json(http, "/app/unlock", {"pin": PIN}, csrf))[0] == 200
        assert (await http.get("/test/orders"))[0] == 200
        # The count starts again after a right PIN: four more wrong tries still leave one.
        assert (await post_json(http, "/app/lock", {}, csrf))[0] == 200
        lefts = [(await post_json(http, "/app/unlock", {"pin": "0000"}, csrf))[1]["error"]["tries_left"]
                 for _ in range(4)]
        assert lefts == [4, 3, 2, 1]
    finally:
        await http.close()


async def locked(stack, staff, role: str):
    """A session of the role with its PIN set and locked."""
    http, csrf = await signed_in(stack, staff, role)
    assert (await post_json(http, "/app/pin", {"password": PASSWORD, "pin": PIN}, csrf))[0] == 200
    assert (await post_json(http, "/app/lock", {}, csrf))[0] == 200
    return http, csrf


async def test_the_fifth_wrong_pin_signs_the_session_out(stack, staff):
    http, csrf = await locked(stack, staff, "cashier")
    try:
        for _ in range(4):
            assert (await post_json(http, "/app/unlock", {"pin": "1111"}, csrf))[0] == 403
        status, answer = await post_json(http, "/app/unlock", {"pin": PIN[::-1]}, csrf)
        assert (status, answer["error"]["code"]) == (401, "signed_out")
        assert (await post_json(http, "/app/unlock", {"pin": PIN}, csrf))[0] == 401  # the right PIN is too late
        assert (await get_json(http, "/app/me"))[0] == 401
        assert await stack.pool.fetchval(
            "SELECT count(*) FROM dashboard_sessions s JOIN staff_users u USING (user_id)"
            " WHERE u.email LIKE 'cashier+%' AND u.merchant_id = $1", staff.merchant_id) == 0
    finally:
        await http.close()


async def test_a_locked_session_may_still_sign_out(stack, staff):
    http, csrf = await locked(stack, staff, "owner")
    try:
        status, _, location = await http.post("/signout", {"csrf": csrf})
        assert (status, location) == (303, "/dashboard/signin")
        assert (await get_json(http, "/app/me"))[0] == 401
    finally:
        await http.close()
