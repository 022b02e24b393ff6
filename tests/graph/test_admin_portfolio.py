"""Business portfolio, pre-verified numbers, apps and Multi-Partner Solutions: exact wire
requests and typed results."""

from __future__ import annotations

from typing import Any

import pytest

from svc.graph import (
    AppClient,
    BusinessClient,
    BusinessPortfolioInfo,
    BusinessSummary,
    CodeVerification,
    CreatedObject,
    CreditLine,
    GraphClient,
    GraphRequestValidationError,
    OnboardingRequest,
    PreverifiedNumber,
    Solution,
    SolutionAccessToken,
    SolutionClient,
    WabaInfo,
)

from ._admin_wire import APP_ID, BUSINESS_ID, SOLUTION_ID, Upstream, assert_wire

# --- the business portfolio


async def test_business_info_wabas_and_credit_lines() -> None:
    wabas = {"data": [{"id": "104996122399160", "name": "Lucky Shrub", "timezone_id": "1",
                       "message_template_namespace": "58e6d318_b627_4112_b9c7_2961197553ea"}],
             "paging": {"cursors": {"after": "QVFIUjBr"}, "next": "https://graph/x"}}
    up = Upstream(
        {"id": BUSINESS_ID, "name": "Lucky Shrub", "timezone_id": 0},
        wabas, {"data": []},
        {"data": [{"id": "1972385232742146", "legal_entity_name": "Lucky Shrub"}]},
    )
    business = up.business()
    info = await business.get_business(fields=["id", "name", "timezone_id"])
    owned = await business.list_owned_wabas(limit=10)
    clients = await business.list_client_wabas(after="QVFIUjBr")
    credit = await business.list_credit_lines()
    assert_wire(up.requests[0], "GET", f"/{BUSINESS_ID}", query={"fields": "id,name,timezone_id"})
    assert_wire(up.requests[1], "GET", f"/{BUSINESS_ID}/owned_whatsapp_business_accounts",
                query={"limit": "10"})
    assert_wire(up.requests[2], "GET", f"/{BUSINESS_ID}/client_whatsapp_business_accounts",
                query={"after": "QVFIUjBr"})
    assert_wire(up.requests[3], "GET", f"/{BUSINESS_ID}/extendedcredits")
    assert info == BusinessPortfolioInfo(
        id=BUSINESS_ID, name="Lucky Shrub", timezone_id="0",
        raw={"id": BUSINESS_ID, "name": "Lucky Shrub", "timezone_id": 0},
    )
    assert owned.items == (WabaInfo.from_api(wabas["data"][0]),)
    assert owned.items[0].message_template_namespace == "58e6d318_b627_4112_b9c7_2961197553ea"
    assert (owned.next_cursor, clients.items) == ("QVFIUjBr", ())
    assert credit.items == (
        CreditLine(id="1972385232742146", legal_entity_name="Lucky Shrub",
                   raw={"id": "1972385232742146", "legal_entity_name": "Lucky Shrub"}),
    )


async def test_user_assigned_wabas_and_marketing_messages_onboarding() -> None:
    up = Upstream({"data": [{"id": "1234567890123456", "name": "Primary Business Account"}]},
                  {"request_id": "893436979557695"}, {"request_id": "893436979557696"})
    business = up.business()
    page = await business.list_user_assigned_wabas(user_id="2345678901234567")
    first = await business.onboard_to_marketing_messages()
    second = await business.onboard_to_marketing_messages(solution_id="1234567890123456")
    assert_wire(up.requests[0], "GET", "/2345678901234567/assigned_whatsapp_business_accounts")
    assert_wire(up.requests[1], "POST", f"/{BUSINESS_ID}/onboard_partners_to_mm_lite")
    assert_wire(up.requests[2], "POST", f"/{BUSINESS_ID}/onboard_partners_to_mm_lite",
                query={"solution_id": "1234567890123456"})
    assert page.items[0].name == "Primary Business Account"
    assert first == OnboardingRequest(request_id="893436979557695",
                                      raw={"request_id": "893436979557695"})
    assert second.request_id == "893436979557696"


async def test_portfolio_refusals() -> None:
    up = Upstream()
    business = up.business()
    with pytest.raises(GraphRequestValidationError) as caught:
        await business.onboard_to_marketing_messages(solution_id="MPS-1")
    assert caught.value.field == "solution_id"
    with pytest.raises(GraphRequestValidationError) as caught:
        await business.list_user_assigned_wabas(user_id="..")
    assert caught.value.field == "user_id"
    with pytest.raises(GraphRequestValidationError) as caught:
        BusinessClient(GraphClient(access_token="t"), business_id="a/b")
    assert caught.value.field == "business_id"
    assert up.requests == []


# --- pre-verified numbers


async def test_preverified_pool() -> None:
    number = {"id": "1234567890123456", "phone_number": "+15551234567",
              "code_verification_status": "VERIFIED",
              "verification_expiry_time": "2026-12-01T00:00:00+0000"}
    up = Upstream({"data": [number]}, {"id": "1234567890123456"}, {"success": True},
                  {"success": True})
    business = up.business()
    page = await business.list_preverified_numbers(code_verification_status="VERIFIED")
    added = await business.add_preverified_number(phone_number="+15551234567")
    await business.share_preverified_number(
        preverified_id="1234567890123456", partner_business_id="9876543210987654"
    )
    await business.unshare_preverified_number(
        preverified_id="1234567890123456", partner_business_id="9876543210987654"
    )
    assert_wire(up.requests[0], "GET", f"/{BUSINESS_ID}/preverified_numbers",
                query={"code_verification_status": "VERIFIED"})
    assert_wire(up.requests[1], "POST", f"/{BUSINESS_ID}/add_phone_numbers",
                body={"phone_number": "+15551234567"})
    sharing = {"preverified_id": "1234567890123456", "partner_business_id": "9876543210987654"}
    assert_wire(up.requests[2], "POST", f"/{BUSINESS_ID}/share_preverified_numbers", body=sharing)
    assert_wire(up.requests[3], "DELETE", f"/{BUSINESS_ID}/share_preverified_numbers",
                query=sharing)
    assert page.items == (
        PreverifiedNumber(id="1234567890123456", phone_number="+15551234567",
                          code_verification_status="VERIFIED",
                          verification_expiry_time="2026-12-01T00:00:00+0000",
                          is_input_id_valid=None, raw=number),
    )
    assert added == CreatedObject(id="1234567890123456", success=None,
                                  raw={"id": "1234567890123456"})


async def test_a_preverified_number_node() -> None:
    partner = {"id": "1234567890123456", "name": "Partner Business Solutions Inc",
               "verification_status": "verified"}
    up = Upstream(
        {"id": "1111", "display_phone_number": "+1 (555) 123-4567", "is_input_id_valid": True},
        {"success": True}, {"data": [partner]}, {"success": True}, {"success": True},
    )
    business = up.business()
    node = await business.get_preverified_number(preverified_id="1111")
    await business.delete_preverified_number(preverified_id="1111")
    partners = await business.list_preverified_number_partners(preverified_id="1111")
    await business.request_preverified_code(
        preverified_id="1111", code_method="VOICE", language="es_ES"
    )
    verified = await business.verify_preverified_code(preverified_id="1111", code="654321")
    assert_wire(up.requests[0], "GET", "/1111")
    assert_wire(up.requests[1], "DELETE", "/1111")
    assert_wire(up.requests[2], "GET", "/1111/partners")
    assert_wire(up.requests[3], "POST", "/1111/request_code",
                body={"code_method": "VOICE", "language": "es_ES"})
    assert_wire(up.requests[4], "POST", "/1111/verify_code", body={"code": "654321"})
    assert (node.phone_number, node.is_input_id_valid) == ("+1 (555) 123-4567", True)
    assert partners.items == (
        BusinessSummary(id="1234567890123456", name="Partner Business Solutions Inc",
                        verification_status="verified", raw=partner),
    )
    assert verified == CodeVerification(success=True, id=None, raw={"success": True})


@pytest.mark.parametrize(
    ("call", "arguments", "field"),
    [
        ("add_preverified_number", {"phone_number": "555-1234"}, "phone_number"),
        ("list_preverified_numbers", {"code_verification_status": "PENDING"},
         "code_verification_status"),
        ("share_preverified_number", {"preverified_id": "1", "partner_business_id": "x"},
         "partner_business_id"),
        ("verify_preverified_code", {"preverified_id": "1", "code": "12"}, "code"),
        ("request_preverified_code",
         {"preverified_id": "1", "code_method": "FAX", "language": "en"}, "code_method"),
        ("get_preverified_number", {"preverified_id": "%2e%2e"}, "preverified_id"),
    ],
)
async def test_preverified_refusals(call: str, arguments: dict[str, Any], field: str) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError) as caught:
        await getattr(up.business(), call)(**arguments)
    assert caught.value.field == field
    assert up.requests == []


# --- apps and Multi-Partner Solutions


async def test_app_solutions_and_connected_clients() -> None:
    up = Upstream(
        {"solution_id": SOLUTION_ID},
        {"data": [{"id": SOLUTION_ID, "name": "Support", "status": "DRAFT",
                   "status_for_pending_request": "PENDING_ACTIVATION"}]},
        {"data": [{"id": "1234", "name": "Client A", "verification_status": "VERIFIED",
                   "business_status": "ACTIVE"}]},
    )
    app = up.app()
    created = await app.create_solution(
        solution_name="Owner-Managed Messaging Solution", partner_app_id="9876543210987654",
        owner_permissions=["MESSAGING"],
    )
    solutions = await app.list_solutions(role="OWNER", limit=25)
    clients = await app.list_connected_client_businesses()
    assert_wire(
        up.requests[0], "POST", f"/{APP_ID}/whatsapp_business_solution",
        body={"solution_name": "Owner-Managed Messaging Solution",
              "partner_app_id": "9876543210987654", "owner_permissions": ["MESSAGING"],
              "partner_permissions": []},
    )
    assert_wire(up.requests[1], "GET", f"/{APP_ID}/whatsapp_business_solutions",
                query={"role": "OWNER", "limit": "25"})
    assert_wire(up.requests[2], "GET", f"/{APP_ID}/connected_client_businesses")
    assert created == CreatedObject(id=SOLUTION_ID, success=None,
                                    raw={"solution_id": SOLUTION_ID})
    assert solutions.items[0].status_for_pending_request == "PENDING_ACTIVATION"
    assert clients.items[0].verification_status == "VERIFIED"


@pytest.mark.parametrize(
    ("owner", "partner"),
    [(None, None), (["MESSAGING"], ["MESSAGING"]), (["MANAGE"], None), (["MESSAGING"] * 2, None)],
)
async def test_create_solution_needs_messaging_on_exactly_one_side(
    owner: list[str] | None, partner: list[str] | None
) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError):
        await up.app().create_solution(
            solution_name="Shared", partner_app_id="1", owner_permissions=owner,
            partner_permissions=partner,
        )
    assert up.requests == []


async def test_solution_lifecycle() -> None:
    solution = {"id": SOLUTION_ID, "name": "E-commerce", "status": "ACTIVE",
                "status_for_pending_request": "NONE"}
    up = Upstream(
        solution,
        {"solution_id": SOLUTION_ID, "partner_status": "ACCEPTED", "success": True},
        {"success": True, "solution_id": SOLUTION_ID,
         "rejected_request_type": "PARTNERSHIP_REQUEST"},
        {"success": True},
        {**solution, "status": "DEACTIVATED"},
        solution,
    )
    mps = up.solution()
    got = await mps.get_solution()
    accepted = await mps.accept_invitation(partner_app_id="9876543210987654")
    rejected = await mps.reject_request(
        request_type="PARTNERSHIP_REQUEST", rejection_reason="Terms do not align",
        partner_app_id="9876543210987654",
    )
    await mps.send_deactivation_request(reason="No longer needed")
    deactivated = await mps.accept_deactivation_request(fields="id,status")
    kept = await mps.reject_deactivation_request()
    assert_wire(up.requests[0], "GET", f"/{SOLUTION_ID}")
    assert_wire(up.requests[1], "POST", f"/{SOLUTION_ID}/accept",
                body={"partner_app_id": "9876543210987654"})
    assert_wire(up.requests[2], "POST", f"/{SOLUTION_ID}/reject",
                body={"request_type": "PARTNERSHIP_REQUEST",
                      "rejection_reason": "Terms do not align",
                      "partner_app_id": "9876543210987654"})
    assert_wire(up.requests[3], "POST", f"/{SOLUTION_ID}/send_deactivation_request",
                body={"reason": "No longer needed"})
    assert_wire(up.requests[4], "POST", f"/{SOLUTION_ID}/accept_deactivation_request",
                query={"fields": "id,status"}, body={})
    assert_wire(up.requests[5], "POST", f"/{SOLUTION_ID}/reject_deactivation_request",
                body={"reject_deactivation_request": True})
    assert got == Solution.from_api(solution)
    assert (accepted.success, rejected.success) == (True, True)
    assert (deactivated.status, kept.status) == ("DEACTIVATED", "ACTIVE")


async def test_solution_access_token_stays_out_of_repr() -> None:
    answer = {"access_token": "EAAGsecret-token-value", "expires_at": 1735689600}
    up = Upstream(answer)
    token = await up.solution().get_access_token(business_id="506914307656634")
    assert_wire(up.only, "GET", f"/{SOLUTION_ID}/access_token",
                query={"business_id": "506914307656634"})
    assert token == SolutionAccessToken(
        access_token="EAAGsecret-token-value", expires_at=1735689600, raw=answer
    )
    assert "EAAGsecret" not in repr(token) and "EAAGsecret" not in str(token)
    assert "expires_at=1735689600" in repr(token)


async def test_solution_refusals() -> None:
    up = Upstream()
    mps = up.solution()
    with pytest.raises(GraphRequestValidationError) as caught:
        await mps.reject_request(request_type="CANCEL")
    assert caught.value.field == "request_type"
    with pytest.raises(GraphRequestValidationError) as caught:
        await mps.send_deactivation_request(reason="x" * 501)
    assert caught.value.field == "reason"
    with pytest.raises(GraphRequestValidationError) as caught:
        await mps.get_access_token(business_id="")
    assert caught.value.field == "business_id"
    with pytest.raises(GraphRequestValidationError) as caught:
        await up.app().list_solutions(role="ADMIN")
    assert caught.value.field == "role"
    for make in (
        lambda: AppClient(GraphClient(access_token="t"), app_id="1?x=2"),
        lambda: SolutionClient(GraphClient(access_token="t"), solution_id=""),
    ):
        with pytest.raises(GraphRequestValidationError):
            make()
    assert up.requests == []
