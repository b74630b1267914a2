async def test_quick_session_roundtrip(merchant):
    status, body = await merchant.post("/b2b/v1/checkout-sessions/quick", {"amount": "10.50", "external_ref": "A-1"})
    assert status == 201, body
    assert body["order"]["status"] == "PENDING"
    status, order = await merchant.get(f"/b2b/v1/orders/{body['order_id']}")
    assert status == 200
    assert order["amount_owed"] == "10.50" and order["external_ref"] == "A-1"
