"""A status's ``pricing``, as per-message pricing (PMP) sends it, typed on the status update."""

from __future__ import annotations

from typing import Any, get_args

from svc.webhook import (
    PRICING_CATEGORIES,
    PRICING_TYPES,
    PricingCategory,
    PricingInfo,
    StatusUpdate,
    normalize,
)


def _statuses(*pricing: dict[str, Any] | None) -> list[StatusUpdate]:
    items = [
        {"id": f"wamid.P{i}", "status": "sent", "timestamp": "1762600000", "recipient_id": "1"}
        | ({} if p is None else {"pricing": p})
        for i, p in enumerate(pricing)
    ]
    value = {"metadata": {"phone_number_id": "106540352242922"}, "statuses": items}
    updates = normalize({"entry": [{"changes": [{"field": "messages", "value": value}]}]}).updates
    assert all(type(u) is StatusUpdate for u in updates)
    return list(updates)  # type: ignore[arg-type]


def test_each_pmp_category_and_type_is_read_as_sent() -> None:
    sent = [
        {"billable": True, "pricing_model": "PMP", "category": "marketing_lite", "type": "regular"},
        {"pricing_model": "PMP", "category": "authentication_international", "type": "regular"},
        {
            "billable": False,
            "pricing_model": "PMP",
            "category": "service",
            "type": "free_customer_service",
        },
        {
            "billable": False,
            "pricing_model": "PMP",
            "category": "utility",
            "type": "free_entry_point",
        },
        {"billable": False, "pricing_model": "CBP", "category": "utility"},
        {"pricing_model": "PMP", "category": "a_future_category", "type": "a_future_type"},
    ]
    read = [u.pricing for u in _statuses(*sent, None)]
    assert read == [
        PricingInfo(billable=True, pricing_model="PMP", category="marketing_lite", type="regular"),
        PricingInfo(pricing_model="PMP", category="authentication_international", type="regular"),
        PricingInfo(
            billable=False, pricing_model="PMP", category="service", type="free_customer_service"
        ),
        PricingInfo(
            billable=False, pricing_model="PMP", category="utility", type="free_entry_point"
        ),
        PricingInfo(billable=False, pricing_model="CBP", category="utility"),
        PricingInfo(pricing_model="PMP", category="a_future_category", type="a_future_type"),
        None,
    ]
    assert [p.free if p else None for p in read] == [False, False, True, True, True, False, None]


def test_the_documented_words_are_listed_once() -> None:
    assert {"regular", "free_customer_service", "free_entry_point"} == PRICING_TYPES
    assert {"marketing_lite", "authentication_international", "service"} <= PRICING_CATEGORIES
    assert set(get_args(PricingCategory)) == PRICING_CATEGORIES
