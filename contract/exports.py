"""The rows of the accounting exports, one struct per kind: a CSV file's header is the struct's fields in order and
a JSON Lines file has one struct per line. Columns are stable once shipped (docs/api.md, Exports): new ones only at
the end. Amounts are decimal strings beside their currency; every time is ISO 8601 in UTC."""

from __future__ import annotations

from typing import Literal

import msgspec

from contract.api import Amount, OrderStatus, RefundStatus, Timestamp

Rail = Literal["chain", "card"]


class OrderExportRow(msgspec.Struct, kw_only=True):
    order_id: str
    order_number: str
    livemode: bool
    status: OrderStatus
    currency: Literal["USD"]
    amount_owed: Amount
    amount_paid: Amount
    amount_refunded: Amount
    external_ref: str | None
    metadata: str  # the order's metadata as one JSON object
    created_at: Timestamp
    paid_at: Timestamp | None  # when it first became PAID
    updated_at: Timestamp


class PaymentExportRow(msgspec.Struct, kw_only=True):
    payment_id: str
    order_id: str
    order_number: str
    livemode: bool
    rail: Rail
    network: str  # the network's slug, or "card"
    provider: str | None  # the card provider on the card rail
    transaction: str  # the transaction hash, or the provider's payment id
    amount: Amount
    currency: Literal["USD"]
    asset: str  # the stablecoin's symbol (its token address where the registry does not know it), or USD by card
    token_address: str | None
    late: bool  # money that reached an order already canceled
    confirmed_at: Timestamp


class RefundExportRow(msgspec.Struct, kw_only=True):
    refund_id: str
    order_id: str
    order_number: str
    livemode: bool
    rail: Rail
    status: RefundStatus
    amount: Amount
    currency: Literal["USD"]
    reason: str
    note: str | None  # the buyer's note from the hosted form
    destination: str | None  # the address paid back on a chain; the card provider routes card refunds
    network: str
    token_address: str | None
    transaction: str | None  # the executed transaction hash, or the provider's refund id
    source: Literal["merchant", "customer"]
    approved_by: Literal["merchant", "review"] | None  # issued approved by the merchant, or a buyer's request approved
    created_at: Timestamp
    updated_at: Timestamp


ROWS: dict[str, type] = {"orders": OrderExportRow, "payments": PaymentExportRow, "refunds": RefundExportRow}
