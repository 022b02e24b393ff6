"""Payments: the ``order_details`` (the bill) and ``order_status`` interactive messages.

An ``order_details`` message asks the user to review and pay an order
(``action.name = review_and_pay``); an ``order_status`` message tells them
what became of it (``review_order``). Both carry the business's
``reference_id``, which names the order throughout. Amounts are the
platform's ``{"value": int, "offset": int}`` (``value / offset`` in the
currency: ``{"value": 1100, "offset": 100}`` is 11.00); the builder checks
that the items add up to the subtotal, and the subtotal, tax, shipping and
discount to the total, as the platform does, so a bill that does not add up
is refused before it is sent.
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from fractions import Fraction
from typing import Any, Final, Literal

from ._envelope import Payload, address, interactive_message
from ._errors import GraphRequestValidationError
from ._message import Message, builder
from ._validate import (
    CURRENCY_CODE,
    check_choice,
    check_id,
    check_int,
    check_label,
    check_mapping,
    check_match,
    check_sequence,
    check_text,
    checked_objects,
)

__all__ = [
    "GOODS_TYPES",
    "ORDER_STATUSES",
    "OrderDetailsMessage",
    "OrderStatusMessage",
    "build_order_details_message",
    "build_order_status_message",
]

GoodsType = Literal["digital-goods", "physical-goods"]

GOODS_TYPES: Final = frozenset({"digital-goods", "physical-goods"})
ORDER_STATUSES: Final = frozenset(
    {
        "pending",
        "processing",
        "partially_shipped",
        "partially-shipped",
        "shipped",
        "completed",
        "canceled",
    }
)
"""The statuses an ``order_status`` message may report (both spellings the platform
documents for a partial shipment)."""
MAX_REFERENCE_ID: Final = 35
MAX_ITEM_NAME: Final = 60
MAX_ORDER_ITEMS: Final = 999
MAX_DESCRIPTION: Final = 120
MAX_PAYMENT_SETTINGS: Final = 10
MAX_AMOUNT: Final = 10**12

_REFERENCE_ID = re.compile(rf"[A-Za-z0-9_.-]{{1,{MAX_REFERENCE_ID}}}")
_OFFSETS: Final = frozenset({1, 10, 100, 1000})
_AMOUNT_KEYS: Final = ("value", "offset")
_ITEM_KEYS: Final = (
    "retailer_id",
    "name",
    "amount",
    "quantity",
    "sale_amount",
    "country_of_origin",
    "importer_name",
    "importer_address",
)
_ORDER_KEYS: Final = (
    "status",
    "catalog_id",
    "expiration",
    "items",
    "subtotal",
    "tax",
    "shipping",
    "discount",
)


def _reference_id(value: object) -> str:
    """The business's name of the order: 1..35 letters, digits, ``_``, ``-`` or ``.``."""
    return check_match(
        value, _REFERENCE_ID,
        "reference_id", "reference_id must be 1..35 letters, digits, '_', '-' or '.'",
    )


def _amount(value: object, field: str, *, extra: Sequence[str] = ()) -> tuple[Payload, Fraction]:
    """An amount object (with its ``extra`` text keys) and what it is worth."""
    checked = check_mapping(value, field, allowed=(*_AMOUNT_KEYS, *extra), required=_AMOUNT_KEYS)
    number = check_int(checked["value"], f"{field}.value", minimum=0, maximum=MAX_AMOUNT)
    offset = checked["offset"]
    if isinstance(offset, bool) or not isinstance(offset, int) or offset not in _OFFSETS:
        raise GraphRequestValidationError(
            f"{field}.offset must be 1, 10, 100 or 1000", field=f"{field}.offset"
        )
    out: Payload = {"value": number, "offset": offset}
    for key in extra:
        if checked.get(key) is not None:
            out[key] = check_label(checked[key], f"{field}.{key}", max_length=MAX_DESCRIPTION)
    return out, Fraction(number, offset)


def _items(value: object) -> tuple[list[Payload], Fraction]:
    """The order's items and what they add up to (sale price when given, times quantity)."""
    items = check_sequence(value, "order.items", minimum=1, maximum=MAX_ORDER_ITEMS)
    out: list[Payload] = []
    total = Fraction(0)
    for field, checked in checked_objects(
        items,
        "order.items",
        allowed=_ITEM_KEYS,
        required=("retailer_id", "name", "amount", "quantity"),
    ):
        amount, worth = _amount(checked["amount"], f"{field}.amount")
        line: Payload = {
            "retailer_id": check_id(checked["retailer_id"], f"{field}.retailer_id"),
            "name": check_label(checked["name"], f"{field}.name", max_length=MAX_ITEM_NAME),
            "amount": amount,
            "quantity": check_int(
                checked["quantity"], f"{field}.quantity", minimum=1, maximum=MAX_AMOUNT
            ),
        }
        if checked.get("sale_amount") is not None:
            line["sale_amount"], sale = _amount(checked["sale_amount"], f"{field}.sale_amount")
            if sale > worth:
                raise GraphRequestValidationError(
                    f"{field}.sale_amount must not exceed the amount", field=f"{field}.sale_amount"
                )
            worth = sale
        for key in ("country_of_origin", "importer_name"):
            if checked.get(key) is not None:
                line[key] = check_label(checked[key], f"{field}.{key}", max_length=MAX_DESCRIPTION)
        if checked.get("importer_address") is not None:
            line["importer_address"] = _object(
                checked["importer_address"], f"{field}.importer_address"
            )
        out.append(line)
        total += worth * line["quantity"]
    return out, total


def _object(value: object, field: str) -> Payload:
    """A platform object passed through as given: string keys, JSON values."""
    if not isinstance(value, Mapping) or not value or not all(isinstance(k, str) for k in value):
        raise GraphRequestValidationError(f"{field} must be a non-empty object", field=field)
    return dict(value)


def _order(value: object) -> tuple[Payload, Fraction]:
    """The ``order`` object of an ``order_details`` message and the total it comes to."""
    order = check_mapping(value, "order", allowed=_ORDER_KEYS, required=("items", "subtotal"))
    status = order.get("status", "pending")
    if status != "pending":
        raise GraphRequestValidationError(
            "order.status of an order_details message is always pending", field="order.status"
        )
    out: Payload = {"status": "pending"}
    if order.get("catalog_id") is not None:
        out["catalog_id"] = check_id(order["catalog_id"], "order.catalog_id")
    if order.get("expiration") is not None:
        expiration = check_mapping(
            order["expiration"],
            "order.expiration",
            allowed=("timestamp", "description"),
            required=("timestamp",),
        )
        stamp = expiration["timestamp"]
        if not isinstance(stamp, str) or not stamp.isascii() or not stamp.isdigit():
            raise GraphRequestValidationError(
                "order.expiration.timestamp must be Unix seconds as a string",
                field="order.expiration.timestamp",
            )
        out["expiration"] = {"timestamp": stamp}
        if expiration.get("description") is not None:
            out["expiration"]["description"] = check_label(
                expiration["description"],
                "order.expiration.description",
                max_length=MAX_DESCRIPTION,
            )
    out["items"], items_total = _items(order["items"])
    out["subtotal"], subtotal = _amount(order["subtotal"], "order.subtotal")
    if subtotal != items_total:
        raise GraphRequestValidationError(
            "order.subtotal must equal the items' (sale) amounts times their quantities",
            field="order.subtotal",
        )
    total = subtotal
    for key, extra, sign in (
        ("tax", ("description",), 1),
        ("shipping", ("description",), 1),
        ("discount", ("description", "discount_program_name"), -1),
    ):
        if order.get(key) is not None:
            out[key], worth = _amount(order[key], f"order.{key}", extra=extra)
            total += sign * worth
    return out, total


def _payment(
    payment_type: object, payment_configuration: object, payment_settings: object
) -> Payload:
    if payment_type is None and payment_settings is None:
        raise GraphRequestValidationError(
            "an order_details message needs payment_type or payment_settings",
            field="payment_type",
        )
    out: Payload = {}
    if payment_type is not None:
        out["payment_type"] = check_label(payment_type, "payment_type", max_length=64)
    if payment_configuration is not None:
        out["payment_configuration"] = check_label(
            payment_configuration, "payment_configuration", max_length=256
        )
    if payment_settings is not None:
        settings = check_sequence(
            payment_settings, "payment_settings", minimum=1, maximum=MAX_PAYMENT_SETTINGS
        )
        checked: list[Payload] = []
        for index, setting in enumerate(settings):
            field = f"payment_settings[{index}]"
            item = _object(setting, field)
            if not isinstance(item.get("type"), str) or not item["type"]:
                raise GraphRequestValidationError(
                    f"{field}.type is required", field=f"{field}.type"
                )
            checked.append(item)
        out["payment_settings"] = checked
    return out


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderDetailsMessage(Message):
    """A bill to review and pay (``interactive.type = order_details``).

    ``reference_id`` is 1..35 letters, digits, ``_``, ``-`` or ``.``;
    ``goods_type`` is ``digital-goods`` or ``physical-goods`` (the wire's
    ``type``); ``currency`` an ISO 4217 code; ``total_amount`` an amount
    object. ``order`` (``items``, ``subtotal``, optional ``tax``,
    ``shipping``, ``discount``, ``catalog_id``, ``expiration``) is checked
    to add up to ``total_amount``. ``payment_type`` with
    ``payment_configuration`` (UPI), or ``payment_settings`` (the payment
    gateway, link, Pix or Boleto objects of each market, passed as given),
    say how the user pays. ``header`` is a media header
    (``{"type": "image", "link": ...}``).
    """

    to: str
    body_text: str
    reference_id: str
    goods_type: GoodsType
    currency: str
    total_amount: Mapping[str, int]
    order: Mapping[str, Any] | None = None
    payment_type: str | None = None
    payment_configuration: str | None = None
    payment_settings: Sequence[Mapping[str, Any]] | None = None
    header: Mapping[str, Any] | None = None
    footer_text: str | None = None
    reply_to_message_id: str | None = None

    def render(self) -> Payload:
        addressee = address(self.to)
        reference_id = _reference_id(self.reference_id)
        if not isinstance(self.currency, str) or not CURRENCY_CODE.fullmatch(self.currency):
            raise GraphRequestValidationError(
                "currency must be an ISO 4217 code such as INR", field="currency"
            )
        parameters: Payload = {
            "reference_id": reference_id,
            "type": check_choice(self.goods_type, "goods_type", GOODS_TYPES),
            **_payment(self.payment_type, self.payment_configuration, self.payment_settings),
            "currency": self.currency,
        }
        parameters["total_amount"], total = _amount(self.total_amount, "total_amount")
        if self.order is not None:
            parameters["order"], order_total = _order(self.order)
            if order_total != total:
                raise GraphRequestValidationError(
                    "total_amount must equal subtotal + tax + shipping - discount",
                    field="total_amount",
                )
        return interactive_message(
            addressee,
            "order_details",
            action={"name": "review_and_pay", "parameters": parameters},
            body_text=self.body_text,
            footer_text=self.footer_text,
            header=self.header,
            reply_to_message_id=self.reply_to_message_id,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderStatusMessage(Message):
    """What became of an order (``interactive.type = order_status``, ``review_order``).

    ``reference_id`` names the order of an earlier ``order_details`` message;
    ``status`` is one of ``ORDER_STATUSES``; ``description`` (at most 120
    characters) says why, for a cancellation for instance.
    """

    to: str
    body_text: str
    reference_id: str
    status: str
    description: str | None = None
    footer_text: str | None = None
    reply_to_message_id: str | None = None

    def render(self) -> Payload:
        addressee = address(self.to)
        reference_id = _reference_id(self.reference_id)
        order: Payload = {"status": check_choice(self.status, "status", ORDER_STATUSES)}
        if self.description is not None:
            order["description"] = check_text(
                self.description, "description", max_length=MAX_DESCRIPTION
            )
        return interactive_message(
            addressee,
            "order_status",
            action={
                "name": "review_order",
                "parameters": {"reference_id": reference_id, "order": order},
            },
            body_text=self.body_text,
            footer_text=self.footer_text,
            reply_to_message_id=self.reply_to_message_id,
        )


build_order_details_message = builder(OrderDetailsMessage)
build_order_status_message = builder(OrderStatusMessage)
