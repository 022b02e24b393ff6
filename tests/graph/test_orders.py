"""Payments messages and the template parts the published examples need: each rule refuses."""

from __future__ import annotations

from typing import Any

import pytest

from svc.graph import (
    GraphRequestValidationError,
    build_order_details_message,
    build_order_status_message,
    build_template_message,
    build_template_quick_reply_button,
    check_template_send,
    template_date_time_parameter,
)

TO = "447911123456"


def amount(value: int, offset: int = 100, **extra: str) -> dict[str, Any]:
    return {"value": value, "offset": offset, **extra}


def order(**changes: Any) -> dict[str, Any]:
    """Two items (one on sale) adding up to 30.00, tax 3.00, shipping 1.50, discount 2.00."""
    base: dict[str, Any] = {
        "items": [
            {"retailer_id": "a", "name": "A", "amount": amount(1000), "quantity": 2},
            {
                "retailer_id": "b",
                "name": "B",
                "amount": amount(1500),
                "sale_amount": amount(1000),
                "quantity": 1,
            },
        ],
        "subtotal": amount(3000),
        "tax": amount(300, description="VAT"),
        "shipping": amount(150),
        "discount": amount(200, discount_program_name="club"),
    }
    base.update(changes)
    return base


def details(**changes: Any) -> dict[str, Any]:
    arguments: dict[str, Any] = {
        "to": TO,
        "body_text": "Your bill",
        "reference_id": "order_7.a-1",
        "goods_type": "physical-goods",
        "currency": "INR",
        "total_amount": amount(3250),
        "payment_type": "upi",
        "payment_configuration": "shop-upi",
        "order": order(),
    }
    arguments.update(changes)
    return build_order_details_message(**arguments)


def refused(field: str, **changes: Any) -> None:
    with pytest.raises(GraphRequestValidationError) as caught:
        details(**changes)
    assert caught.value.field == field


def test_order_details_adds_up_and_is_sent_as_built() -> None:
    payload = details()
    interactive = payload["interactive"]
    assert interactive["type"] == "order_details"
    assert interactive["action"]["name"] == "review_and_pay"
    parameters = interactive["action"]["parameters"]
    assert parameters["type"] == "physical-goods"
    assert parameters["order"]["status"] == "pending"
    assert parameters["order"]["discount"] == amount(200, discount_program_name="club")
    # An amount in tenths adds up with amounts in hundredths: the platform compares the worth.
    assert details(total_amount=amount(325, offset=10))["interactive"]["action"]["parameters"][
        "total_amount"
    ] == {"value": 325, "offset": 10}
    # Without an order object only the total is sent (the platform's simplified bill).
    simple = details(order=None)["interactive"]["action"]["parameters"]
    assert "order" not in simple and simple["total_amount"] == amount(3250)


def test_a_bill_that_does_not_add_up_is_refused() -> None:
    refused("total_amount", total_amount=amount(3251))
    refused("order.subtotal", order=order(subtotal=amount(3500)))
    refused(
        "order.items[0].sale_amount",
        order=order(
            items=[
                {
                    "retailer_id": "a",
                    "name": "A",
                    "amount": amount(100),
                    "sale_amount": amount(200),
                    "quantity": 1,
                }
            ],
            subtotal=amount(200),
        ),
    )


@pytest.mark.parametrize(
    ("field", "changes"),
    [
        ("reference_id", {"reference_id": "has space"}),
        ("reference_id", {"reference_id": "x" * 36}),
        ("currency", {"currency": "inr"}),
        ("goods_type", {"goods_type": "services"}),
        ("payment_type", {"payment_type": None, "payment_configuration": None}),
        ("total_amount.offset", {"total_amount": amount(3250, offset=7)}),
        ("total_amount.value", {"total_amount": {"value": "32.50", "offset": 100}}),
        ("order.status", {"order": order(status="captured")}),
        ("order.items", {"order": order(items=[])}),
        (
            "order.items[0].quantity",
            {
                "order": order(
                    items=[{"retailer_id": "a", "name": "A", "amount": amount(1), "quantity": 0}]
                )
            },
        ),
        (
            "order.items[0].colour",
            {
                "order": order(
                    items=[
                        {
                            "retailer_id": "a",
                            "name": "A",
                            "amount": amount(1),
                            "quantity": 1,
                            "colour": "red",
                        }
                    ]
                )
            },
        ),
        ("payment_settings[0].type", {"payment_settings": [{"payment_link": {"uri": "x"}}]}),
    ],
)
def test_each_order_details_rule_names_its_field(field: str, changes: dict[str, Any]) -> None:
    refused(field, **changes)


def test_payment_settings_are_passed_as_given() -> None:
    setting = {"type": "payment_gateway", "payment_gateway": {"type": "razorpay"}}
    parameters = details(payment_type=None, payment_configuration=None, payment_settings=[setting])[
        "interactive"
    ]["action"]["parameters"]
    assert parameters["payment_settings"] == [setting]
    assert "payment_type" not in parameters


def test_order_status_takes_a_known_status_and_an_optional_description() -> None:
    payload = build_order_status_message(
        to=TO, body_text="Shipped", reference_id="order_7", status="shipped"
    )
    assert payload["interactive"]["action"] == {
        "name": "review_order",
        "parameters": {"reference_id": "order_7", "order": {"status": "shipped"}},
    }
    with pytest.raises(GraphRequestValidationError) as caught:
        build_order_status_message(to=TO, body_text="x", reference_id="order_7", status="lost")
    assert caught.value.field == "status"


def test_the_date_time_parameter_sends_each_part_given_and_checks_its_range() -> None:
    assert template_date_time_parameter(fallback_value="May 1") == {
        "type": "date_time",
        "date_time": {"fallback_value": "May 1"},
    }
    full = template_date_time_parameter(
        fallback_value="May 1", calendar="SOLAR_HIJRI", month=5, day_of_month=1, minute=0
    )
    assert full["date_time"] == {
        "fallback_value": "May 1",
        "calendar": "SOLAR_HIJRI",
        "month": 5,
        "day_of_month": 1,
        "minute": 0,
    }
    for field, bad in (("hour", 24), ("month", 0), ("day_of_week", 8), ("calendar", "JULIAN")):
        with pytest.raises(GraphRequestValidationError) as caught:
            template_date_time_parameter(fallback_value="x", **{field: bad})
        assert caught.value.field == field


def test_language_policy_is_sent_when_given_and_only_deterministic() -> None:
    template = build_template_message(
        to=TO, name="hello_world", language_code="en_US", language_policy="deterministic"
    )["template"]
    assert template["language"] == {"code": "en_US", "policy": "deterministic"}
    with pytest.raises(GraphRequestValidationError) as caught:
        build_template_message(
            to=TO,
            name="hello_world",
            language_code="en_US",
            language_policy="fallback",  # type: ignore[arg-type]
        )
    assert caught.value.field == "language_policy"


def test_a_quick_reply_takes_a_payload_or_a_text_and_the_check_accepts_both() -> None:
    with pytest.raises(GraphRequestValidationError):
        build_template_quick_reply_button(index=0)
    with pytest.raises(GraphRequestValidationError):
        build_template_quick_reply_button(index=0, payload="p", text="t")
    definition = {
        "name": "sample_issue_resolution",
        "language": "en_US",
        "components": [
            {"type": "BODY", "text": "Hi {{1}}, did we solve it?"},
            {"type": "BUTTONS", "buttons": [{"type": "QUICK_REPLY", "text": "Yes"}]},
        ],
    }
    body = {"type": "body", "parameters": [{"type": "text", "text": "Amara"}]}
    for button in (
        build_template_quick_reply_button(index=0, text="Yes"),
        build_template_quick_reply_button(index=0, payload="yes"),
    ):
        check_template_send(definition, "en_US", [body, button])
