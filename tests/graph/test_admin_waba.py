"""WABA, template and template group helpers: exact wire requests and typed results."""

from __future__ import annotations

from typing import Any

import pytest

from svc.graph import (
    CreatedObject,
    GraphRequestValidationError,
    Template,
    TemplateCreated,
    WabaInfo,
)

from ._admin_wire import PHONE_ID, WABA_ID, Upstream, assert_wire

TEMPLATE_ID = "594425479261596"
GROUP_ID = "1292467362174291"


async def test_get_waba_info() -> None:
    answer = {
        "id": WABA_ID,
        "name": "Jasper's Market",
        "currency": "USD",
        "timezone_id": "1",
        "message_template_namespace": "c8ae5f90_307a_ca4c_b8f6_d1e2a2573574",
        "account_review_status": "APPROVED",
    }
    up = Upstream(answer)
    info = await up.waba().get_waba_info(fields=["name", "currency"])
    assert_wire(up.only, "GET", f"/{WABA_ID}", query={"fields": "name,currency"})
    assert info == WabaInfo(
        id=WABA_ID,
        name="Jasper's Market",
        currency="USD",
        timezone_id="1",
        message_template_namespace="c8ae5f90_307a_ca4c_b8f6_d1e2a2573574",
        account_review_status="APPROVED",
        raw=answer,
    )


async def test_subscribed_apps_list_and_subscribe() -> None:
    listing = {
        "data": [
            {
                "whatsapp_business_api_data": {
                    "link": "https://www.example.com/",
                    "name": "Jasper Bot",
                    "id": "67084167857",
                }
            }
        ]
    }
    up = Upstream(listing, {"success": True}, {"success": True})
    waba = up.waba()
    apps = await waba.list_subscribed_apps()
    await waba.subscribe_app()
    await waba.subscribe_app(
        override_callback_uri="https://hooks.example.com/wa", verify_token="vt-123"
    )
    assert_wire(up.requests[0], "GET", f"/{WABA_ID}/subscribed_apps")
    assert_wire(up.requests[1], "POST", f"/{WABA_ID}/subscribed_apps", body={})
    assert_wire(
        up.requests[2],
        "POST",
        f"/{WABA_ID}/subscribed_apps",
        body={"override_callback_uri": "https://hooks.example.com/wa", "verify_token": "vt-123"},
    )
    assert (apps.items[0].id, apps.items[0].name) == ("67084167857", "Jasper Bot")


async def test_phone_numbers_list_and_add() -> None:
    listing = {
        "data": [
            {
                "verified_name": "Jasper's Market",
                "display_phone_number": "+1 650-555-1234",
                "id": PHONE_ID,
                "quality_rating": "GREEN",
            }
        ],
        "paging": {"cursors": {"before": "QVFIUk", "after": "QVFIUl"}},
    }
    up = Upstream(listing, {"id": "110200345501442"})
    waba = up.waba()
    page = await waba.list_phone_numbers(fields="id,verified_name", limit=25)
    created = await waba.add_phone_number(
        cc="1", phone_number="6505551234", verified_name="Jasper's Market"
    )
    assert_wire(
        up.requests[0],
        "GET",
        f"/{WABA_ID}/phone_numbers",
        query={"fields": "id,verified_name", "limit": "25"},
    )
    assert_wire(
        up.requests[1],
        "POST",
        f"/{WABA_ID}/phone_numbers",
        body={"cc": "1", "phone_number": "6505551234", "verified_name": "Jasper's Market"},
    )
    assert page.items[0].id == PHONE_ID
    assert page.next_cursor is None
    assert created == CreatedObject(id="110200345501442", success=None,
                                    raw={"id": "110200345501442"})


TEMPLATE = {
    "name": "order_confirmation",
    "components": [
        {"type": "BODY", "text": "Thank you, {{1}}! Your order {{2}} is confirmed."},
    ],
    "language": "en_US",
    "status": "APPROVED",
    "category": "UTILITY",
    "id": TEMPLATE_ID,
}


async def test_templates_list_create_get_update_delete() -> None:
    up = Upstream(
        {"data": [TEMPLATE], "paging": {"cursors": {"before": "MAZDZD", "after": "MjQZD"}}},
        {"id": TEMPLATE_ID, "status": "PENDING", "category": "UTILITY"},
        {**TEMPLATE, "quality_score": {"score": "GREEN"}},
        {"success": True},
        {"success": True},
        {"success": True},
    )
    waba = up.waba()
    page = await waba.list_templates(status="APPROVED", category="UTILITY", limit=10)
    created = await waba.create_template(
        name="order_confirmation",
        language="en_US",
        category="UTILITY",
        components=TEMPLATE["components"],  # type: ignore[arg-type]
        allow_category_change=True,
    )
    template = await waba.get_template(template_id=TEMPLATE_ID)
    await waba.update_template(template_id=TEMPLATE_ID, category="MARKETING")
    await waba.delete_template(name="order_confirmation")
    await waba.delete_template(name="order_confirmation", hsm_id=TEMPLATE_ID)
    assert_wire(
        up.requests[0],
        "GET",
        f"/{WABA_ID}/message_templates",
        query={"status": "APPROVED", "category": "UTILITY", "limit": "10"},
    )
    assert_wire(
        up.requests[1],
        "POST",
        f"/{WABA_ID}/message_templates",
        body={
            "name": "order_confirmation",
            "language": "en_US",
            "category": "UTILITY",
            "components": TEMPLATE["components"],
            "allow_category_change": True,
        },
    )
    assert_wire(up.requests[2], "GET", f"/{TEMPLATE_ID}")
    assert_wire(up.requests[3], "POST", f"/{TEMPLATE_ID}", body={"category": "MARKETING"})
    assert_wire(
        up.requests[4], "DELETE", f"/{WABA_ID}/message_templates",
        query={"name": "order_confirmation"},
    )
    assert_wire(
        up.requests[5],
        "DELETE",
        f"/{WABA_ID}/message_templates",
        query={"name": "order_confirmation", "hsm_id": TEMPLATE_ID},
    )
    assert isinstance(page.items[0], Template)
    assert page.items[0].language == "en_US"
    assert created == TemplateCreated(
        id=TEMPLATE_ID,
        status="PENDING",
        category="UTILITY",
        raw={"id": TEMPLATE_ID, "status": "PENDING", "category": "UTILITY"},
    )
    assert template.quality_score == "GREEN"
    assert template.components[0]["type"] == "BODY"


async def test_template_groups_crud_and_analytics() -> None:
    group = {
        "id": GROUP_ID,
        "name": "Order updates",
        "description": "Everything about orders",
        "whatsapp_business_templates": {"data": [{"id": TEMPLATE_ID}, {"id": "594425479261597"}]},
    }
    analytics = {
        "data": [
            {
                "granularity": "DAILY",
                "data_points": [{"start": 1735689600, "end": 1735776000, "sent": 120}],
            }
        ]
    }
    up = Upstream(
        {"data": [group]},
        {"id": GROUP_ID},
        group,
        {"success": True},
        {"success": True},
        analytics,
    )
    waba = up.waba()
    page = await waba.list_template_groups(limit=5)
    created = await waba.create_template_group(
        name="Order updates",
        description="Everything about orders",
        template_ids=[TEMPLATE_ID, "594425479261597"],
    )
    got = await waba.get_template_group(template_group_id=GROUP_ID, fields="name")
    await waba.update_template_group(template_group_id=GROUP_ID, template_ids=[TEMPLATE_ID])
    await waba.delete_template_group(template_group_id=GROUP_ID)
    stats = await waba.get_template_group_analytics(
        template_group_ids=[GROUP_ID],
        start=1735689600,
        end=1736294400,
        granularity="DAILY",
        metric_types=["SENT", "DELIVERED"],
    )
    assert_wire(up.requests[0], "GET", f"/{WABA_ID}/template_groups", query={"limit": "5"})
    assert_wire(
        up.requests[1],
        "POST",
        f"/{WABA_ID}/template_groups",
        body={
            "name": "Order updates",
            "template_ids": [TEMPLATE_ID, "594425479261597"],
            "description": "Everything about orders",
        },
    )
    assert_wire(up.requests[2], "GET", f"/{GROUP_ID}", query={"fields": "name"})
    assert_wire(up.requests[3], "POST", f"/{GROUP_ID}", body={"template_ids": [TEMPLATE_ID]})
    assert_wire(up.requests[4], "DELETE", f"/{GROUP_ID}")
    assert_wire(
        up.requests[5],
        "GET",
        f"/{WABA_ID}/template_group_analytics",
        query={
            "template_group_ids": f'["{GROUP_ID}"]',
            "start": "1735689600",
            "end": "1736294400",
            "granularity": "DAILY",
            "metric_types": '["SENT","DELIVERED"]',
        },
    )
    assert page.items[0].template_ids == (TEMPLATE_ID, "594425479261597")
    assert created.id == GROUP_ID
    assert got.name == "Order updates"
    assert stats.data[0]["granularity"] == "DAILY"


@pytest.mark.parametrize(
    ("call", "kwargs"),
    [
        ("get_waba_info", {"fields": 5}),
        ("subscribe_app", {"override_callback_uri": "https://x.example/h"}),
        ("subscribe_app", {"override_callback_uri": "http://x.example/h", "verify_token": "v"}),
        ("add_phone_number", {"cc": "+1", "phone_number": "6505551234", "verified_name": "J"}),
        ("add_phone_number", {"cc": "1", "phone_number": "650-555", "verified_name": "J"}),
        ("list_templates", {"status": "approved"}),
        ("list_templates", {"language": "english"}),
        ("create_template", {"name": "Bad Name", "language": "en_US", "category": "UTILITY",
                             "components": [{"type": "BODY", "text": "x"}]}),
        ("create_template", {"name": "ok", "language": "en_US", "category": "PROMO",
                             "components": [{"type": "BODY", "text": "x"}]}),
        ("create_template", {"name": "ok", "language": "en_US", "category": "UTILITY",
                             "components": []}),
        ("create_template", {"name": "ok", "language": "en_US", "category": "UTILITY",
                             "components": [{"text": "no type"}]}),
        ("create_template", {"name": "otp", "language": "en_US", "category": "AUTHENTICATION",
                             "components": [{"type": "BUTTONS", "buttons": [
                                 {"type": "OTP", "otp_type": "ONE_TAP",
                                  "package_name": "com.example", "signature_hash": "K8a"}]}]}),
        ("get_template", {"template_id": "../me"}),
        ("update_template", {"template_id": TEMPLATE_ID}),
        ("update_template", {"template_id": TEMPLATE_ID, "message_send_ttl_seconds": True}),
        ("delete_template", {"name": ""}),
        ("delete_template", {"name": "ok", "hsm_id": "a b"}),
        ("create_template_group", {"name": "g", "template_ids": []}),
        ("update_template_group", {"template_group_id": GROUP_ID}),
        ("delete_template_group", {"template_group_id": "a/b"}),
        ("get_template_group_analytics", {"template_group_ids": [GROUP_ID], "start": 10,
                                          "end": 5}),
        ("get_template_group_analytics", {"template_group_ids": [GROUP_ID], "start": 1,
                                          "end": 5, "metric_types": ["VIEWS"]}),
    ],
)
async def test_rejections_send_nothing(call: str, kwargs: dict[str, Any]) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError):
        await getattr(up.waba(), call)(**kwargs)
    assert up.requests == []
