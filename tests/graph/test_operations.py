"""The project's table of the platform's operations cannot drift from svc's helpers.

Four rules: every operation of the platform's description is a row; every row has a
typed helper or a reason that docs/graph.md repeats; every helper of a row sends
exactly that row's method and path (one sample call each, through a recording
transport); every public helper of a scoped client is named by a row.
"""

from __future__ import annotations

import inspect
import json
import re
from collections.abc import Callable
from pathlib import Path
from typing import Any

import httpx
import pytest

import svc.graph as graph
import svc.media
import svc.webhook
from svc.graph import (
    DEFAULT_API_VERSION,
    PLATFORM_OPERATIONS,
    AppClient,
    BusinessClient,
    GraphClient,
    GroupClient,
    PhoneNumberClient,
    PlatformOperation,
    SolutionClient,
    WABAClient,
)
from svc.graph.messages import TextMessage

from ._admin_wire import JWE, MEDIA_URL, answer_any

DOCS = Path(__file__).resolve().parents[2] / "docs" / "graph.md"
SCOPED: dict[str, tuple[type[Any], str]] = {
    "PhoneNumberClient": (PhoneNumberClient, "phone_number_id"),
    "WABAClient": (WABAClient, "waba_id"),
    "GroupClient": (GroupClient, "group_id"),
    "BusinessClient": (BusinessClient, "business_id"),
    "AppClient": (AppClient, "app_id"),
    "SolutionClient": (SolutionClient, "solution_id"),
}
MODULES = {"svc.media": svc.media, "svc.webhook": svc.webhook}
OFFICER = {"name": "A. Officer", "email": "officer@example.in"}

# One sample call per helper: its keyword arguments (a scoped-client method or a module function).
SAMPLES: dict[str, dict[str, Any]] = {
    "PhoneNumberClient.send_marketing_template": {"name": "promo", "language_code": "en_US",
                                                  "to": "15551234567"},
    "PhoneNumberClient.send": {"message": TextMessage(to="15551234567", text="hi")},
    "PhoneNumberClient.send_message": {"payload": {"messaging_product": "whatsapp",
                                                   "to": "15551234567", "type": "text",
                                                   "text": {"body": "hi"}}},
    "PhoneNumberClient.mark_as_read": {"message_id": "wamid.SAMPLE"},
    "PhoneNumberClient.send_encrypted_message": {"encrypted_contents": JWE},
    "PhoneNumberClient.pass_thread_control": {"to": "15551234567", "target_role": "ai_agent"},
    "PhoneNumberClient.take_thread_control": {"to": "15551234567"},
    "PhoneNumberClient.release_thread_control": {"to": "15551234567"},
    "PhoneNumberClient.get_phone_number_info": {},
    "PhoneNumberClient.request_display_name_review": {"new_display_name": "Jasper's Market"},
    "PhoneNumberClient.list_blocked_users": {},
    "PhoneNumberClient.block_users": {"users": ["15551234567"]},
    "PhoneNumberClient.unblock_users": {"users": ["15551234567"]},
    "PhoneNumberClient.deregister_phone_number": {},
    "PhoneNumberClient.list_qr_codes": {},
    "PhoneNumberClient.create_qr_code": {"prefilled_message": "Hi"},
    "PhoneNumberClient.update_qr_code": {"code": "QR1", "prefilled_message": "Hello"},
    "PhoneNumberClient.get_qr_code": {"code": "QR1"},
    "PhoneNumberClient.delete_qr_code": {"code": "QR1"},
    "PhoneNumberClient.get_official_business_account": {},
    "PhoneNumberClient.request_official_business_account": {
        "business_website_url": "https://www.example.com", "primary_country_of_operation": "US"},
    "PhoneNumberClient.register_phone_number": {"pin": "123456"},
    "PhoneNumberClient.request_code": {"code_method": "SMS", "language": "en"},
    "PhoneNumberClient.verify_code": {"code": "123456"},
    "PhoneNumberClient.get_settings": {},
    "PhoneNumberClient.update_settings": {"calling": {"status": "ENABLED"}},
    "PhoneNumberClient.get_username": {},
    "PhoneNumberClient.set_username": {"username": "jaspers_market"},
    "PhoneNumberClient.delete_username": {},
    "PhoneNumberClient.list_username_suggestions": {},
    "PhoneNumberClient.get_business_public_key": {},
    "PhoneNumberClient.set_business_public_key": {
        "business_public_key": "-----BEGIN PUBLIC KEY-----\nMIIB\n-----END PUBLIC KEY-----"},
    "PhoneNumberClient.get_business_profile": {},
    "PhoneNumberClient.update_business_profile": {"about": "Fresh produce"},
    "PhoneNumberClient.get_commerce_settings": {},
    "PhoneNumberClient.update_commerce_settings": {"is_cart_enabled": True},
    "PhoneNumberClient.get_business_profile_node": {"profile_id": "77"},
    "PhoneNumberClient.update_business_profile_node": {"profile_id": "77", "about": "Fresh"},
    "PhoneNumberClient.configure_conversational_automation": {"enable_welcome_message": True},
    "PhoneNumberClient.get_business_bot": {"bot_id": "88"},
    "PhoneNumberClient.list_message_history": {},
    "PhoneNumberClient.list_message_history_events": {"message_history_id": "99"},
    "PhoneNumberClient.list_groups": {},
    "PhoneNumberClient.create_group": {"subject": "Car buyers"},
    "PhoneNumberClient.get_call_permissions": {"user_wa_id": "15551234567"},
    "PhoneNumberClient.connect_call": {"to": "15551234567", "sdp": "v=0"},
    "PhoneNumberClient.pre_accept_call": {"call_id": "wacid.1", "sdp": "v=0"},
    "PhoneNumberClient.accept_call": {"call_id": "wacid.1", "sdp": "v=0"},
    "PhoneNumberClient.reject_call": {"call_id": "wacid.1"},
    "PhoneNumberClient.terminate_call": {"call_id": "wacid.1"},
    "PhoneNumberClient.get_compliance_info": {},
    "PhoneNumberClient.update_compliance_info": {
        "entity_name": "Lucky Shrub", "entity_type": "PARTNERSHIP",
        "grievance_officer_details": OFFICER, "customer_care_details": {"email": "c@example.in"}},
    "GroupClient.get_group": {},
    "GroupClient.update_group": {"subject": "Car buyers 2026"},
    "GroupClient.delete_group": {},
    "GroupClient.get_invite_link": {},
    "GroupClient.reset_invite_link": {},
    "GroupClient.revoke_invite_link": {},
    "GroupClient.list_join_requests": {},
    "GroupClient.approve_join_requests": {"join_request_ids": ["MTIz"]},
    "GroupClient.reject_join_requests": {"join_request_ids": ["MTIz"]},
    "GroupClient.add_participants": {"users": ["15551234567"]},
    "GroupClient.remove_participants": {"wa_ids": ["15551234567"]},
    "WABAClient.get_waba_info": {},
    "WABAClient.update_waba": {"name": "Lucky Shrub"},
    "WABAClient.list_activities": {},
    "WABAClient.list_subscribed_apps": {},
    "WABAClient.subscribe_app": {},
    "WABAClient.unsubscribe_app": {},
    "WABAClient.get_account_number": {"account_number_id": "55"},
    "WABAClient.list_assigned_users": {"business_id": "506914307656634"},
    "WABAClient.add_assigned_user": {"user_id": "1", "tasks": ["MANAGE"]},
    "WABAClient.remove_assigned_user": {"user_id": "1"},
    "WABAClient.list_schedules": {},
    "WABAClient.create_schedule": {"name": "Hours", "schedule_type": "BUSINESS_HOURS",
                                   "start_time": "09:00", "end_time": "17:00"},
    "WABAClient.list_phone_numbers": {},
    "WABAClient.add_phone_number": {"cc": "1", "phone_number": "6505551234",
                                    "verified_name": "Jasper"},
    "WABAClient.list_templates": {},
    "WABAClient.create_template": {"name": "order_update", "language": "en_US",
                                   "category": "UTILITY",
                                   "components": [{"type": "BODY", "text": "Hi"}]},
    "WABAClient.delete_template": {"name": "order_update"},
    "WABAClient.get_template": {"template_id": "594425479261596"},
    "WABAClient.update_template": {"template_id": "594425479261596", "category": "MARKETING"},
    "WABAClient.list_template_groups": {},
    "WABAClient.create_template_group": {"name": "Orders", "template_ids": ["594425479261596"]},
    "WABAClient.get_template_group": {"template_group_id": "12"},
    "WABAClient.update_template_group": {"template_group_id": "12", "description": "Orders"},
    "WABAClient.delete_template_group": {"template_group_id": "12"},
    "WABAClient.get_template_group_analytics": {"template_group_ids": ["12"],
                                                "start": 1735689600, "end": 1736294400},
    "WABAClient.list_flows": {},
    "WABAClient.create_flow": {"name": "Sign up", "categories": ["SIGN_UP"]},
    "WABAClient.get_flow": {"flow_id": "31"},
    "WABAClient.update_flow": {"flow_id": "31", "name": "Sign up 2"},
    "WABAClient.delete_flow": {"flow_id": "31"},
    "WABAClient.list_flow_assets": {"flow_id": "31"},
    "WABAClient.update_flow_json": {
        "flow_id": "31",
        "flow_json": {"version": "7.2", "screens": [{"id": "A", "layout": {
            "type": "SingleColumnLayout", "children": []}}]}},
    "WABAClient.publish_flow": {"flow_id": "31"},
    "WABAClient.deprecate_flow": {"flow_id": "31"},
    "WABAClient.migrate_flows": {"source_waba_id": "104996122399160",
                                 "source_flow_names": ["appointment"]},
    "WABAClient.list_solutions": {},
    "WABAClient.set_solution_migration_intent": {"solution_id": "1"},
    "WABAClient.get_migration_intent": {"migration_intent_id": "66"},
    "BusinessClient.get_business": {},
    "BusinessClient.list_owned_wabas": {},
    "BusinessClient.list_client_wabas": {},
    "BusinessClient.list_credit_lines": {},
    "BusinessClient.list_user_assigned_wabas": {"user_id": "44"},
    "BusinessClient.onboard_to_marketing_messages": {},
    "BusinessClient.list_preverified_numbers": {},
    "BusinessClient.add_preverified_number": {"phone_number": "+15551234567"},
    "BusinessClient.share_preverified_number": {"preverified_id": "1", "partner_business_id": "2"},
    "BusinessClient.unshare_preverified_number": {"preverified_id": "1",
                                                  "partner_business_id": "2"},
    "BusinessClient.get_preverified_number": {"preverified_id": "33"},
    "BusinessClient.delete_preverified_number": {"preverified_id": "33"},
    "BusinessClient.list_preverified_number_partners": {"preverified_id": "33"},
    "BusinessClient.request_preverified_code": {"preverified_id": "33", "code_method": "SMS",
                                                "language": "en_US"},
    "BusinessClient.verify_preverified_code": {"preverified_id": "33", "code": "123456"},
    "AppClient.create_solution": {"solution_name": "Shared", "partner_app_id": "2",
                                  "owner_permissions": ["MESSAGING"]},
    "AppClient.list_solutions": {},
    "AppClient.list_connected_client_businesses": {},
    "SolutionClient.get_solution": {},
    "SolutionClient.get_access_token": {"business_id": "506914307656634"},
    "SolutionClient.accept_invitation": {"partner_app_id": "2"},
    "SolutionClient.reject_request": {"request_type": "PARTNERSHIP_REQUEST"},
    "SolutionClient.send_deactivation_request": {},
    "SolutionClient.accept_deactivation_request": {},
    "SolutionClient.reject_deactivation_request": {},
    "svc.media.upload_media": {"phone_number_id": "106540352242922", "file": b"png",
                               "mime_type": "image/png"},
    "svc.media.download_media": {"media_id": "1037543291543636"},
    "svc.media.delete_media": {"media_id": "1037543291543636"},
    "svc.media.download_media_bytes": {"url": MEDIA_URL},
    "svc.media.create_upload_session": {"app_id": "123456", "file_name": "menu.pdf",
                                        "file_length": 3, "file_type": "application/pdf"},
    "svc.media.upload_file_to_session": {"upload_session_id": "upload:MTph", "file": b"pdf"},
    "svc.media.get_upload_session": {"upload_session_id": "upload:MTph"},
}


def _resolve(helper: str) -> Callable[..., Any]:
    owner, _, name = helper.rpartition(".")
    if owner in MODULES:
        return getattr(MODULES[owner], name)  # type: ignore[no-any-return]
    return getattr(SCOPED[owner][0], name)  # type: ignore[no-any-return]


def _path_pattern(operation: PlatformOperation) -> re.Pattern[str]:
    parts = [r"[^/]+" if p.startswith("{") else re.escape(p) for p in operation.path.split("/")]
    return re.compile(re.escape(f"/{DEFAULT_API_VERSION}") + "/".join(parts))


async def _call(helper: str, requests: list[httpx.Request]) -> None:
    def record(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        return answer_any(request)

    client = GraphClient(access_token="test-token", transport=httpx.MockTransport(record))
    owner, _, name = helper.rpartition(".")
    arguments = SAMPLES[helper]
    if owner in MODULES:
        await getattr(MODULES[owner], name)(client, **arguments)
    else:
        cls, id_field = SCOPED[owner]
        await getattr(cls(client, **{id_field: "1065"}), name)(**arguments)


def _built_helpers() -> list[tuple[PlatformOperation, str]]:
    return [
        (operation, helper)
        for operation in PLATFORM_OPERATIONS
        if operation.status == "built"
        for helper in operation.helpers
        if not helper.endswith("*")
    ]


# --- the table against the platform's description


def test_every_operation_of_the_description_is_a_row_once() -> None:
    keys = [operation.key for operation in PLATFORM_OPERATIONS]
    assert len(keys) == len(set(keys))
    described = [operation for operation in PLATFORM_OPERATIONS if operation.described]
    assert len(described) == 113  # Meta's v23.0 description: 78 paths, 113 operations
    assert len({operation.path for operation in described}) == 78
    assert {operation.method for operation in PLATFORM_OPERATIONS} == {"GET", "POST", "DELETE"}
    for operation in PLATFORM_OPERATIONS:
        assert operation.path.startswith("/") and "{Version}" not in operation.path, operation


def test_every_operation_has_a_typed_helper_or_a_reason_the_docs_give() -> None:
    docs = DOCS.read_text(encoding="utf-8").splitlines()
    for operation in PLATFORM_OPERATIONS:
        if operation.status in ("built", "receiver"):
            assert operation.helpers and not operation.reason, operation.key
            for helper in operation.helpers:
                if helper.endswith("*"):
                    owner, _, prefix = helper[:-1].rpartition(".")
                    assert any(n.startswith(prefix) for n in dir(SCOPED[owner][0])), helper
                else:
                    assert callable(_resolve(helper)), helper
        else:
            assert operation.status in ("retired", "not built"), operation.key
            assert not operation.helpers and operation.reason, operation.key
            lines = [line for line in docs if f"`{operation.key}`" in line]
            assert lines, f"docs/graph.md does not list {operation.key}"
            assert any(operation.reason in line for line in lines), (
                f"docs/graph.md does not say why {operation.key} is {operation.status}"
            )


def test_the_description_leaves_nothing_but_retired_operations_unbuilt() -> None:
    unbuilt = {
        operation.key: operation.status
        for operation in PLATFORM_OPERATIONS
        if operation.described and operation.status not in ("built", "receiver")
    }
    assert set(unbuilt.values()) <= {"retired"}
    assert sorted(unbuilt) == [
        "GET /{OBO-Mobility-Intent-ID}",
        "GET /{WABA-ID}/in_progress_onbehalf_request",
        "POST /{WABA-ID}/obo_mobility_intent",
        "POST /{WABA-ID}/set_obo_mobility_intent",
    ]


def test_the_receiver_is_the_webhook_entry_point() -> None:
    [receiver] = [operation for operation in PLATFORM_OPERATIONS if operation.status == "receiver"]
    assert receiver.key == "POST /whatsapp/webhooks"
    assert _resolve(receiver.helpers[0]) is svc.webhook.receive_delivery


# --- the table against what the helpers send


@pytest.mark.parametrize(
    ("operation", "helper"), _built_helpers(), ids=lambda value: getattr(value, "key", value)
)
async def test_each_helper_sends_its_rows_method_and_path(
    operation: PlatformOperation, helper: str
) -> None:
    assert helper in SAMPLES, f"no sample call for {helper}: add one beside its row"
    requests: list[httpx.Request] = []
    await _call(helper, requests)
    assert requests, helper
    request = requests[-1]  # a helper that reads first (a template check) sends last
    assert request.method == operation.method, helper
    if operation.path == "/{Media-URL}":
        assert str(request.url) == MEDIA_URL
    else:
        assert request.url.host == "graph.facebook.com"
        assert _path_pattern(operation).fullmatch(request.url.path), (helper, request.url.path)


def test_every_sample_belongs_to_a_row() -> None:
    named = {helper for _, helper in _built_helpers()}
    assert set(SAMPLES) == named


def test_every_public_helper_of_a_scoped_client_is_in_the_table() -> None:
    named = {helper for operation in PLATFORM_OPERATIONS for helper in operation.helpers}
    prefixes = [helper[:-1] for helper in named if helper.endswith("*")]
    missing = []
    for owner, (cls, _) in SCOPED.items():
        for name, value in inspect.getmembers(cls):
            if name.startswith("_") or name == "request" or not inspect.iscoroutinefunction(value):
                continue
            full = f"{owner}.{name}"
            if full not in named and not any(full.startswith(p) for p in prefixes):
                missing.append(full)
    assert missing == []


def test_the_table_is_exported_and_frozen() -> None:
    assert graph.PLATFORM_OPERATIONS is PLATFORM_OPERATIONS
    with pytest.raises(AttributeError):
        PLATFORM_OPERATIONS[0].status = "retired"  # type: ignore[misc]
    assert json.dumps([operation.key for operation in PLATFORM_OPERATIONS])
