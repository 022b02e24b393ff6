"""A marketing template's max price: ``optimization_spec`` on create, update and read."""

from __future__ import annotations

from typing import Any

import pytest

from svc.graph import GraphRequestValidationError, OptimizationSpec, Template

from ._admin_wire import WABA_ID, Upstream, assert_wire

TEMPLATE_ID = "594425479261596"
BODY = [{"type": "BODY", "text": "Winter kettles, 20% off this week."}]
SPEC = {"bid_amount": 87000, "bid_strategy": "LOWEST_COST_WITH_BID_CAP"}


async def test_create_update_and_read_a_max_price() -> None:
    up = Upstream(
        {"id": TEMPLATE_ID, "status": "PENDING", "category": "MARKETING"},
        {"success": True},
        {
            "id": TEMPLATE_ID,
            "name": "winter_sale",
            "optimization_spec": {**SPEC, "bid_amount": "90000"},
        },
    )
    waba = up.waba()
    await waba.create_template(
        name="winter_sale",
        language="en_GB",
        category="MARKETING",
        components=BODY,
        optimization_spec=OptimizationSpec(bid_amount=87000),
    )
    await waba.update_template(
        template_id=TEMPLATE_ID, optimization_spec=OptimizationSpec(bid_amount=90000)
    )
    template = await waba.get_template(
        template_id=TEMPLATE_ID, fields=["name", "optimization_spec"]
    )
    assert_wire(
        up.requests[0],
        "POST",
        f"/{WABA_ID}/message_templates",
        body={
            "name": "winter_sale",
            "language": "en_GB",
            "category": "MARKETING",
            "components": BODY,
            "optimization_spec": SPEC,
        },
    )
    assert_wire(
        up.requests[1],
        "POST",
        f"/{TEMPLATE_ID}",
        body={"optimization_spec": {**SPEC, "bid_amount": 90000}},
    )
    assert template.optimization_spec == OptimizationSpec(bid_amount=90000)


@pytest.mark.parametrize(
    ("call", "kwargs", "field"),
    [
        ("create_template", {"bid_spec": SPEC}, "bid_spec"),
        ("update_template", {"bid_spec": SPEC}, "bid_spec"),
        (
            "create_template",
            {"optimization_spec": OptimizationSpec(bid_amount=0)},
            "optimization_spec.bid_amount",
        ),
        ("create_template", {"optimization_spec": SPEC}, "optimization_spec"),
        (
            "create_template",
            {"optimization_spec": OptimizationSpec(bid_amount=1, bid_strategy="HIGHEST")},
            "optimization_spec.bid_strategy",
        ),
        (
            "create_template",
            {"optimization_spec": OptimizationSpec(bid_amount=1), "category": "UTILITY"},
            "optimization_spec",
        ),
    ],
)
async def test_a_bid_spec_or_a_bad_max_price_is_refused_before_the_transport(
    call: str, kwargs: dict[str, Any], field: str
) -> None:
    up = Upstream()
    arguments: dict[str, Any] = (
        {"name": "winter_sale", "language": "en_GB", "category": "MARKETING", "components": BODY}
        if call == "create_template"
        else {"template_id": TEMPLATE_ID}
    )
    with pytest.raises(GraphRequestValidationError) as caught:
        await getattr(up.waba(), call)(**{**arguments, **kwargs})
    assert caught.value.field == field
    assert up.requests == []
    if field == "bid_spec":
        assert "2026-07-31" in str(caught.value) and "optimization_spec" in str(caught.value)


def test_a_template_without_a_max_price_reads_none() -> None:
    assert Template.from_api({"id": TEMPLATE_ID}).optimization_spec is None
    assert (
        Template.from_api(
            {"id": TEMPLATE_ID, "optimization_spec": {"bid_amount": True}}
        ).optimization_spec
        is None
    )
