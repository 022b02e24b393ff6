"""Groups helpers: exact wire requests, typed results, and rejection before the transport."""

from __future__ import annotations

import unicodedata
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc.graph import (
    DEFAULT_API_VERSION,
    GraphRequestValidationError,
    Group,
    GroupClient,
    GroupInviteLink,
    GroupJoinRequestsResult,
    GroupMutation,
)

from ._admin_wire import GROUP_ID, PHONE_ID, Upstream, assert_wire

PRODUCT = {"messaging_product": "whatsapp"}


async def test_create_group_posts_subject_description_and_mode() -> None:
    up = Upstream({"request_id": "c2f1e6f0-8ad1-4d42-9ab1-2bd9d1e0f0aa"})
    result = await up.phone().create_group(
        subject="New Purchase Inquiry",
        description="Jim would like to learn about new car options.\nBring questions.",
        join_approval_mode="approval_required",
    )
    assert_wire(
        up.only,
        "POST",
        f"/{PHONE_ID}/groups",
        body={
            **PRODUCT,
            "subject": "New Purchase Inquiry",
            "description": "Jim would like to learn about new car options.\nBring questions.",
            "join_approval_mode": "approval_required",
        },
    )
    assert result == GroupMutation(
        request_id="c2f1e6f0-8ad1-4d42-9ab1-2bd9d1e0f0aa",
        success=None,
        raw={"request_id": "c2f1e6f0-8ad1-4d42-9ab1-2bd9d1e0f0aa"},
    )


async def test_create_group_minimal_body_and_missing_request_id() -> None:
    up = Upstream({"request_id": "r1"}, {"success": True})
    await up.phone().create_group(subject="Support")
    body = {**PRODUCT, "subject": "Support"}
    assert_wire(up.requests[0], "POST", f"/{PHONE_ID}/groups", body=body)
    # A 2xx answer is never an error because a field is absent (issue 22, item 12).
    missing = await up.phone().create_group(subject="Support")
    assert (missing.request_id, missing.raw) == (None, {"success": True})


async def test_group_records_keep_absent_and_new_fields_without_error() -> None:
    up = Upstream(
        {"subject": "Team", "brand_new": [1]},
        {"messaging_product": "whatsapp"},
        {"data": [{"wa_id": "1555"}]},
    )
    group = up.group()
    record = await group.get_group()
    link = await group.get_invite_link()
    page = await group.list_join_requests()
    assert (record.id, record.subject, record.raw["brand_new"]) == (None, "Team", [1])
    assert link.invite_link is None
    assert page.items[0].join_request_id is None


async def test_list_groups_query_and_page() -> None:
    answer = {
        "data": {
            "groups": [
                {"id": "Y2FwaV9ncm91cDox", "subject": "Car buyers", "created_at": 1735689600},
                {"id": "Y2FwaV9ncm91cDoy", "subject": "Support", "created_at": "1735689700"},
            ]
        },
        "paging": {
            "cursors": {"before": "QVFIUmxB", "after": "QVFIUkZA"},
            "next": f"https://graph.facebook.com/{DEFAULT_API_VERSION}/106540352242922/groups?after=QVFIUkZA",
        },
    }
    up = Upstream(answer)
    page = await up.phone().list_groups(limit=2, after="QVFIUmxB")
    assert_wire(up.only, "GET", f"/{PHONE_ID}/groups", query={"limit": "2", "after": "QVFIUmxB"})
    assert [g.id for g in page.items] == ["Y2FwaV9ncm91cDox", "Y2FwaV9ncm91cDoy"]
    assert page.items[1].created_at == 1735689700
    assert page.items[0].subject == "Car buyers"
    assert (page.before, page.after, page.next_cursor) == ("QVFIUmxB", "QVFIUkZA", "QVFIUkZA")


async def test_list_groups_before_cursor_and_flat_data() -> None:
    up = Upstream({"data": [{"id": "g1", "subject": "A"}], "paging": {"cursors": {}}})
    page = await up.phone().list_groups(before="QVFI")
    assert_wire(up.only, "GET", f"/{PHONE_ID}/groups", query={"before": "QVFI"})
    assert page.items[0].id == "g1"
    assert page.next_cursor is None


async def test_get_group_fields() -> None:
    answer = {
        "id": GROUP_ID,
        "messaging_product": "whatsapp",
        "subject": "Car buyers",
        "description": "New models",
        "join_approval_mode": "auto_approve",
        "suspended": False,
        "creation_timestamp": 1735689600,
        "participants": [{"wa_id": "16505551234"}, {"wa_id": "16505550000"}],
        "total_participant_count": 2,
    }
    up = Upstream(answer)
    group = await up.group().get_group(fields=["subject", "participants", "suspended"])
    assert_wire(up.only, "GET", f"/{GROUP_ID}", query={"fields": "subject,participants,suspended"})
    assert isinstance(group, Group)
    assert group.subject == "Car buyers"
    assert [p.wa_id for p in group.participants] == ["16505551234", "16505550000"]
    assert group.total_participant_count == 2
    assert group.suspended is False
    assert group.raw == answer


async def test_update_group() -> None:
    up = Upstream({"success": True, "request_id": "upd-1"})
    result = await up.group().update_group(subject="Renamed", join_approval_mode="auto_approve")
    assert_wire(
        up.only,
        "POST",
        f"/{GROUP_ID}",
        body={**PRODUCT, "subject": "Renamed", "join_approval_mode": "auto_approve"},
    )
    assert (result.request_id, result.success) == ("upd-1", True)


async def test_delete_group() -> None:
    up = Upstream({"request_id": "del-1"})
    result = await up.group().delete_group()
    assert_wire(up.only, "DELETE", f"/{GROUP_ID}")
    assert result.request_id == "del-1"


async def test_invite_link_get_and_reset_with_post() -> None:
    up = Upstream(
        {"messaging_product": "whatsapp", "invite_link": "https://chat.whatsapp.com/AbC123"},
        {"messaging_product": "whatsapp", "invite_link": "https://chat.whatsapp.com/XyZ789"},
    )
    group = up.group()
    link = await group.get_invite_link()
    reset = await group.reset_invite_link()
    assert_wire(up.requests[0], "GET", f"/{GROUP_ID}/invite_link")
    assert_wire(up.requests[1], "POST", f"/{GROUP_ID}/invite_link", body=PRODUCT)
    assert link.invite_link == "https://chat.whatsapp.com/AbC123"
    assert isinstance(reset, GroupInviteLink)
    assert reset.invite_link == "https://chat.whatsapp.com/XyZ789"


async def test_remove_participants_maps_wa_ids() -> None:
    up = Upstream({"success": True, "request_id": "rm-1"})
    result = await up.group().remove_participants(wa_ids=["16505551234", "+4915112345678"])
    assert_wire(
        up.only,
        "DELETE",
        f"/{GROUP_ID}/participants",
        body={**PRODUCT, "participants": [{"wa_id": "16505551234"}, {"wa_id": "+4915112345678"}]},
    )
    assert result.request_id == "rm-1"


async def test_join_requests_list_approve_reject() -> None:
    listing = {
        "data": [
            {
                "join_request_id": "MTIzNDU2",
                "wa_id": "16505551234",
                "creation_timestamp": 1735689600,
            }
        ],
        "paging": {"cursors": {"before": "b1", "after": "a1"}},
    }
    approved = {
        "messaging_product": "whatsapp",
        "approved_join_requests": ["MTIzNDU2"],
        "failed_join_requests": [
            {"join_request_id": "Nzg5", "errors": [{"code": 131203, "message": "expired"}]}
        ],
    }
    rejected = {"messaging_product": "whatsapp", "rejected_join_requests": ["Nzg5"]}
    up = Upstream(listing, approved, rejected)
    group = up.group()
    page = await group.list_join_requests(limit=10)
    ok = await group.approve_join_requests(join_request_ids=["MTIzNDU2", "Nzg5"])
    no = await group.reject_join_requests(join_request_ids=["Nzg5"])
    assert_wire(up.requests[0], "GET", f"/{GROUP_ID}/join_requests", query={"limit": "10"})
    assert_wire(
        up.requests[1],
        "POST",
        f"/{GROUP_ID}/join_requests",
        body={**PRODUCT, "join_requests": ["MTIzNDU2", "Nzg5"]},
    )
    reject_body = {**PRODUCT, "join_requests": ["Nzg5"]}
    assert_wire(up.requests[2], "DELETE", f"/{GROUP_ID}/join_requests", body=reject_body)
    assert page.items[0].join_request_id == "MTIzNDU2"
    assert page.items[0].wa_id == "16505551234"
    assert page.next_cursor is None  # cursors but no paging.next: the last page
    assert ok == GroupJoinRequestsResult(
        request_id=None, succeeded=("MTIzNDU2",), failed=("Nzg5",), raw=approved
    )
    assert no.succeeded == ("Nzg5",)


@pytest.mark.parametrize(
    ("call", "kwargs"),
    [
        ("create_group", {"subject": "x" * 129}),
        ("create_group", {"subject": "   "}),
        ("create_group", {"subject": "ok", "description": "d" * 2049}),
        ("create_group", {"subject": "ok", "join_approval_mode": "manual"}),
        ("create_group", {"subject": "bad\x00subject"}),
        ("list_groups", {"limit": 0}),
        ("list_groups", {"limit": True}),
        ("list_groups", {"after": "has space"}),
    ],
)
async def test_phone_group_rejections_send_nothing(call: str, kwargs: dict[str, Any]) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError):
        await getattr(up.phone(), call)(**kwargs)
    assert up.requests == []


@pytest.mark.parametrize(
    ("call", "kwargs"),
    [
        ("update_group", {}),
        ("update_group", {"subject": "s" * 129}),
        ("get_group", {"fields": "subject, participants"}),
        ("remove_participants", {"wa_ids": []}),
        ("remove_participants", {"wa_ids": [str(16505550000 + i) for i in range(9)]}),
        ("remove_participants", {"wa_ids": ["16505551234", "16505551234"]}),
        ("remove_participants", {"wa_ids": ["not-a-number"]}),
        ("remove_participants", {"wa_ids": "16505551234"}),
        ("approve_join_requests", {"join_request_ids": []}),
        ("reject_join_requests", {"join_request_ids": ["a/b"]}),
    ],
)
async def test_group_rejections_send_nothing(call: str, kwargs: dict[str, Any]) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError):
        await getattr(up.group(), call)(**kwargs)
    assert up.requests == []


async def test_unknown_keyword_is_rejected_before_transport() -> None:
    up = Upstream()
    with pytest.raises(TypeError):
        await up.phone().create_group(subject="ok", subjct="typo")  # type: ignore[call-arg]
    assert up.requests == []


async def test_eight_participants_is_the_maximum() -> None:
    up = Upstream({"request_id": "r"})
    ids = [str(16505550000 + i) for i in range(8)]
    await up.group().remove_participants(wa_ids=ids)
    assert len(up.only.read()) > 0


@pytest.mark.parametrize("group_id", ["", " ", ".", "..", "a/b", "a?b", "a#b", "a\\b", "%2e%2e"])
def test_unsafe_group_ids_are_rejected(group_id: str) -> None:
    with pytest.raises(GraphRequestValidationError):
        GroupClient(Upstream().client(), group_id=group_id)


@pytest.mark.parametrize("control", ["\x00", "\x1f", "\x7f", "\x85", "\x9f"])
async def test_subject_and_description_reject_every_control_character(control: str) -> None:
    """Admin text follows the layer's one rule: Unicode Cc, C1 included (as message text)."""
    up = Upstream({"request_id": "r"})
    with pytest.raises(GraphRequestValidationError):
        await up.phone().create_group(subject=f"Team{control}chat")
    with pytest.raises(GraphRequestValidationError):
        await up.phone().create_group(subject="Team", description=f"Line one{control}")
    assert up.requests == []


@given(subject=st.text(min_size=1, max_size=200))
async def test_property_subject_rule(subject: str) -> None:
    up = Upstream({"request_id": "r"})
    valid = (
        subject.strip() != ""
        and len(subject) <= 128
        and not any(unicodedata.category(c) == "Cc" for c in subject)
    )
    if valid:
        await up.phone().create_group(subject=subject)
        assert len(up.requests) == 1
    else:
        with pytest.raises(GraphRequestValidationError):
            await up.phone().create_group(subject=subject)
        assert up.requests == []


@given(wa_ids=st.lists(st.from_regex(r"\+?[0-9]{1,15}", fullmatch=True), max_size=10))
async def test_property_wa_ids_rule(wa_ids: list[str]) -> None:
    up = Upstream({"request_id": "r"})
    if 1 <= len(wa_ids) <= 8 and len(set(wa_ids)) == len(wa_ids):
        await up.group().remove_participants(wa_ids=wa_ids)
        assert len(up.requests) == 1
    else:
        with pytest.raises(GraphRequestValidationError):
            await up.group().remove_participants(wa_ids=wa_ids)
        assert up.requests == []
