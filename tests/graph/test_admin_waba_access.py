"""WABA helpers beyond templates and Flows: unsubscribe, update, account numbers, assigned
users, activities, schedules, solutions, migration intents and Flow migration; and the two
group helpers (add participants, revoke the invite link). Exact wire requests, typed results."""

from __future__ import annotations

from typing import Any

import pytest

from svc.graph import (
    AssignedUser,
    FlowMigration,
    GraphRequestValidationError,
    GroupMutation,
    MigratedFlow,
    MigrationIntent,
    PhoneMigrationError,
    PhoneNumberInfo,
    Solution,
    Success,
    WabaActivity,
    WabaSchedule,
)

from ._admin_wire import BUSINESS_ID, GROUP_ID, WABA_ID, Upstream, assert_wire

# --- account


async def test_unsubscribe_app_and_update_waba() -> None:
    up = Upstream({"success": True}, {"success": True})
    waba = up.waba()
    gone = await waba.unsubscribe_app()
    await waba.update_waba(name="Lucky Shrub", timezone_id="2", is_enabled_for_insights=True)
    assert_wire(up.requests[0], "DELETE", f"/{WABA_ID}/subscribed_apps")
    assert_wire(
        up.requests[1], "POST", f"/{WABA_ID}",
        body={"name": "Lucky Shrub", "timezone_id": "2", "is_enabled_for_insights": True},
    )
    assert gone == Success(success=True, raw={"success": True})


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({}, None),
        ({"name": ""}, "name"),
        ({"timezone_id": "Europe/Paris"}, "timezone_id"),
        ({"template_auto_archival_enabled": 1}, "template_auto_archival_enabled"),
    ],
)
async def test_update_waba_refusals(arguments: dict[str, Any], field: str) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError) as caught:
        await up.waba().update_waba(**arguments)
    assert caught.value.field == field
    assert up.requests == []


async def test_get_account_number() -> None:
    answer = {
        "id": "1234567890123456",
        "display_phone_number": "+1 631-555-5555",
        "verified_name": "Jasper's Market",
        "status": "CONNECTED",
        "quality_rating": "GREEN",
        "code_verification_status": "VERIFIED",
        "name_status": "APPROVED",
    }
    up = Upstream(answer)
    number = await up.waba().get_account_number(account_number_id="1234567890123456")
    assert_wire(up.only, "GET", "/1234567890123456")
    assert number == PhoneNumberInfo(
        id="1234567890123456", display_phone_number="+1 631-555-5555",
        verified_name="Jasper's Market", quality_rating="GREEN",
        code_verification_status="VERIFIED", name_status="APPROVED", platform_type=None,
        throughput_level=None, raw=answer,
    )


# --- assigned users and activities


async def test_assigned_users_list_add_remove() -> None:
    listing = {
        "data": [
            {"id": "1234567890123456", "name": "John Smith",
             "business": {"id": BUSINESS_ID, "name": "Example Business Inc"},
             "user_type": "BUSINESS_USER"},
        ],
        "summary": {"total_count": 1},
    }
    up = Upstream(listing, {"success": True}, {"success": True})
    waba = up.waba()
    page = await waba.list_assigned_users(business_id=BUSINESS_ID, limit=25)
    await waba.add_assigned_user(user_id="2345678901234567", tasks=["MANAGE", "VIEW_INSIGHTS"])
    await waba.remove_assigned_user(user_id="2345678901234567")
    assert_wire(
        up.requests[0], "GET", f"/{WABA_ID}/assigned_users",
        query={"business": BUSINESS_ID, "limit": "25"},
    )
    assert_wire(
        up.requests[1], "POST", f"/{WABA_ID}/assigned_users",
        body={"user": "2345678901234567", "tasks": ["MANAGE", "VIEW_INSIGHTS"]},
    )
    assert_wire(
        up.requests[2], "DELETE", f"/{WABA_ID}/assigned_users",
        query={"user": "2345678901234567"},
    )
    assert page.items == (
        AssignedUser(id="1234567890123456", name="John Smith", user_type="BUSINESS_USER",
                     business_id=BUSINESS_ID, raw=listing["data"][0]),
    )


@pytest.mark.parametrize(
    ("arguments", "field"),
    [
        ({"user_id": "abc", "tasks": ["MANAGE"]}, "user_id"),
        ({"user_id": "1", "tasks": []}, "tasks"),
        ({"user_id": "1", "tasks": ["ADMIN"]}, "tasks"),
        ({"user_id": "1", "tasks": ["MANAGE", "MANAGE"]}, "tasks"),
    ],
)
async def test_add_assigned_user_refusals(arguments: dict[str, Any], field: str) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError) as caught:
        await up.waba().add_assigned_user(**arguments)
    assert caught.value.field == field
    assert up.requests == []


async def test_list_activities() -> None:
    item = {"id": "1234567890123456", "activity_type": "USER_ADDED",
            "timestamp": "2023-10-15T13:15:00Z", "actor_type": "ADMIN",
            "actor_id": "1111222233334444", "actor_name": "Admin User",
            "description": "New user was added to the account"}
    up = Upstream({"data": [item]})
    page = await up.waba().list_activities(
        since=1697300000, until="2023-10-16", activity_type=["USER_ADDED", "USER_REMOVED"]
    )
    assert_wire(
        up.only, "GET", f"/{WABA_ID}/activities",
        query={"since": "1697300000", "until": "2023-10-16",
               "activity_type": "USER_ADDED,USER_REMOVED"},
    )
    assert page.items == (
        WabaActivity(id="1234567890123456", activity_type="USER_ADDED",
                     timestamp="2023-10-15T13:15:00Z", actor_type="ADMIN",
                     actor_id="1111222233334444", actor_name="Admin User",
                     description="New user was added to the account", raw=item),
    )


@pytest.mark.parametrize(
    ("arguments", "field"),
    [({"since": -1}, "since"), ({"until": "yesterday"}, "until"),
     ({"activity_type": "user added"}, "activity_type"), ({"activity_type": []}, "activity_type")],
)
async def test_list_activities_refusals(arguments: dict[str, Any], field: str) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError) as caught:
        await up.waba().list_activities(**arguments)
    assert caught.value.field == field
    assert up.requests == []


# --- schedules


async def test_schedules_list_and_create() -> None:
    item = {"id": "1234567890123456", "name": "Business Hours Schedule", "status": "ACTIVE",
            "schedule_type": "BUSINESS_HOURS", "start_time": "09:00", "end_time": "17:00",
            "timezone": "America/New_York", "days_of_week": ["MONDAY", "FRIDAY"],
            "is_active": True}
    up = Upstream({"data": [item]}, {"id": "2345678901234567"})
    waba = up.waba()
    page = await waba.list_schedules(
        filtering=[{"field": "status", "operator": "EQUAL", "value": "ACTIVE"}],
        sort="created_time.desc",
    )
    created = await waba.create_schedule(
        name="Business Hours Schedule", schedule_type="BUSINESS_HOURS",
        start_time="09:00", end_time="17:00", timezone="America/New_York",
        days_of_week=["MONDAY", "FRIDAY"], is_active=True,
        recurrence_pattern={"frequency": "WEEKLY", "interval": 1},
    )
    assert_wire(
        up.requests[0], "GET", f"/{WABA_ID}/schedules",
        query={"filtering": '[{"field":"status","operator":"EQUAL","value":"ACTIVE"}]',
               "sort": "created_time.desc"},
    )
    assert_wire(
        up.requests[1], "POST", f"/{WABA_ID}/schedules",
        body={"name": "Business Hours Schedule", "schedule_type": "BUSINESS_HOURS",
              "start_time": "09:00", "end_time": "17:00", "timezone": "America/New_York",
              "days_of_week": ["MONDAY", "FRIDAY"], "is_active": True,
              "recurrence_pattern": {"frequency": "WEEKLY", "interval": 1}},
    )
    assert page.items == (
        WabaSchedule(id="1234567890123456", name="Business Hours Schedule", status="ACTIVE",
                     schedule_type="BUSINESS_HOURS", start_time="09:00", end_time="17:00",
                     timezone="America/New_York", days_of_week=("MONDAY", "FRIDAY"),
                     is_active=True, raw=item),
    )
    assert created.id == "2345678901234567"


@pytest.mark.parametrize(
    ("changes", "field"),
    [
        ({"schedule_type": "HOLIDAYS"}, "schedule_type"),
        ({"start_time": "9am"}, "start_time"),
        ({"end_time": "24:00"}, "end_time"),
        ({"days_of_week": ["MON"]}, "days_of_week"),
        ({"timezone": "New York"}, "timezone"),
        ({"recurrence_pattern": {"frequency": "HOURLY"}}, "recurrence_pattern.frequency"),
        ({"recurrence_pattern": {"frequency": "DAILY", "interval": 0}}, "recurrence_pattern"),
    ],
)
async def test_create_schedule_refusals(changes: dict[str, Any], field: str) -> None:
    arguments = {"name": "Hours", "schedule_type": "CUSTOM", "start_time": "02:00",
                 "end_time": "04:00", **changes}
    up = Upstream()
    with pytest.raises(GraphRequestValidationError) as caught:
        await up.waba().create_schedule(**arguments)
    assert caught.value.field == field
    assert up.requests == []


# --- solutions, migration intents and Flow migration


async def test_waba_solutions_and_migration_intents() -> None:
    solution = {"id": "1234567890123456", "name": "E-commerce Integration Solution",
                "status": "ACTIVE", "status_for_pending_request": "NONE",
                "owner_app": {"id": "9876543210987654", "name": "Partner App"},
                "owner_permissions": ["MANAGE", "VIEW_INSIGHTS"]}
    up = Upstream({"data": [solution]}, {"id": "5678"}, {"id": "6789"},
                  {"id": "5678", "status": "INITIATED"})
    waba = up.waba()
    page = await waba.list_solutions()
    to_solution = await waba.set_solution_migration_intent(solution_id="1234567890123456")
    off_solutions = await waba.set_solution_migration_intent(app_id="670843887433847")
    intent = await waba.get_migration_intent(migration_intent_id="5678", fields="id,status")
    assert_wire(up.requests[0], "GET", f"/{WABA_ID}/solutions")
    assert_wire(up.requests[1], "POST", f"/{WABA_ID}/set_solution_migration_intent",
                body={"solution_id": "1234567890123456"})
    assert_wire(up.requests[2], "POST", f"/{WABA_ID}/set_solution_migration_intent",
                body={"app_id": "670843887433847"})
    assert_wire(up.requests[3], "GET", "/5678", query={"fields": "id,status"})
    assert page.items == (
        Solution(id="1234567890123456", name="E-commerce Integration Solution",
                 status="ACTIVE", status_for_pending_request="NONE",
                 owner_app_id="9876543210987654", owner_permissions=("MANAGE", "VIEW_INSIGHTS"),
                 raw=solution),
    )
    assert (to_solution.id, off_solutions.id) == ("5678", "6789")
    assert intent == MigrationIntent(id="5678", status="INITIATED", raw={"id": "5678",
                                                                        "status": "INITIATED"})


async def test_migration_intent_takes_exactly_one_destination() -> None:
    up = Upstream()
    waba = up.waba()
    for arguments in ({}, {"solution_id": "1", "app_id": "2"}):
        with pytest.raises(GraphRequestValidationError):
            await waba.set_solution_migration_intent(**arguments)
    with pytest.raises(GraphRequestValidationError) as caught:
        await waba.set_solution_migration_intent(solution_id="1/2")
    assert caught.value.field == "solution_id"
    assert up.requests == []


async def test_a_migration_refusal_is_the_registry_class() -> None:
    up = Upstream({"error": {"message": "no", "code": 2388091}}, status=400)
    with pytest.raises(PhoneMigrationError):
        await up.waba().set_solution_migration_intent(solution_id="1234")


async def test_migrate_flows() -> None:
    answer = {
        "migrated_flows": [{"source_name": "appointment", "source_id": "111",
                            "migrated_id": "222"}],
        "failed_flows": [{"source_name": "leadgen", "error_code": "4233041",
                          "error_message": "Flow name not found in source WABA."}],
    }
    up = Upstream(answer)
    result = await up.waba().migrate_flows(
        source_waba_id="104996122399160", source_flow_names=["appointment", "leadgen"]
    )
    assert_wire(
        up.only, "POST", f"/{WABA_ID}/migrate_flows",
        body={"source_waba_id": "104996122399160", "source_flow_names": ["appointment", "leadgen"]},
    )
    assert result == FlowMigration(
        migrated=(MigratedFlow(source_name="appointment", source_id="111", migrated_id="222",
                               error_code=None, error_message=None,
                               raw=answer["migrated_flows"][0]),),
        failed=(MigratedFlow(source_name="leadgen", source_id=None, migrated_id=None,
                             error_code="4233041",
                             error_message="Flow name not found in source WABA.",
                             raw=answer["failed_flows"][0]),),
        raw=answer,
    )


async def test_migrate_flows_needs_names() -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError) as caught:
        await up.waba().migrate_flows(source_waba_id="1049", source_flow_names=[])
    assert caught.value.field == "source_flow_names"
    assert up.requests == []


# --- groups: add participants, revoke the invite link


async def test_add_participants_and_revoke_invite_link() -> None:
    up = Upstream({"request_id": "req-1"}, {"messaging_product": "whatsapp", "success": "true"})
    group = up.group()
    added = await group.add_participants(users=["16505551234", "US.13491208655302741918"])
    revoked = await group.revoke_invite_link()
    assert_wire(
        up.requests[0], "POST", f"/{GROUP_ID}/participants",
        body={"messaging_product": "whatsapp",
              "participants": [{"user": "16505551234"},
                               {"recipient": "US.13491208655302741918"}]},
    )
    assert_wire(up.requests[1], "DELETE", f"/{GROUP_ID}/invite_link",
                body={"messaging_product": "whatsapp"})
    assert added == GroupMutation(request_id="req-1", success=None, raw={"request_id": "req-1"})
    assert revoked.success is True  # the platform answers "true" as a string here


@pytest.mark.parametrize(
    "users", [[], [f"1650555{n:04d}" for n in range(9)], ["not a user"], ["1650", "1650"]]
)
async def test_add_participants_refusals(users: list[str]) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError) as caught:
        await up.group().add_participants(users=users)
    assert caught.value.field == "users"
    assert up.requests == []
