"""OpenAPI document, Groups routes, construction errors and the serving lifespan."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import trio
from openapi_spec_validator import validate

from svc.graph import DEFAULT_API_VERSION as VERSION
from svc.http import CONSTRUCTION_CODES, BodyLimits, Profile, ServiceError, create_app
from svc.store import OutboxWorkerOptions, SqliteStore
from tests._support import FakeGraphTransport

from .conftest import AUTH, SECRET_VALUES, SECRETS, AppFactory

PROTECTED = {"/status", "/metrics", "/debug/diagnostics"}


async def test_openapi_is_valid_3_1_with_bearer_only_on_protected_routes(
    make_app: AppFactory,
) -> None:
    client = make_app(enable_group_routes=True).test_client()
    response = await client.get("/openapi.json")
    assert response.status_code == 200
    assert response.content_type.startswith("application/json")
    document = await response.get_json()
    validate(document)
    assert document["openapi"].startswith("3.1")
    for path, operations in document["paths"].items():
        for method, operation in operations.items():
            secured = operation.get("security") == [{"bearerAuth": []}]
            should = path in PROTECTED or path.startswith("/api/")
            assert secured == should, (method, path)
    assert {
        "/healthz",
        "/readyz",
        "/status",
        "/metrics",
        "/debug/diagnostics",
        "/webhooks/whatsapp",
        "/api/messages/text",
        "/api/messages",
        "/api/groups/{group_id}/join-requests",
    } <= set(document["paths"])
    text = json.dumps(document)
    for secret in SECRET_VALUES:
        assert secret not in text
    assert "SVC_" not in text
    send = document["paths"]["/api/messages"]["post"]
    assert "requestBody" in send
    assert any(p["name"] == "idempotency-key" for p in send["parameters"])


async def test_openapi_without_groups_lists_no_group_route(make_app: AppFactory) -> None:
    document = await (await make_app().test_client().get("/openapi.json")).get_json()
    assert not any("groups" in path for path in document["paths"])


@pytest.mark.parametrize("method", ["POST", "PUT", "DELETE", "PATCH"])
async def test_openapi_other_methods_are_405_allow_get(make_app: AppFactory, method: str) -> None:
    response = await make_app().test_client().open("/openapi.json", method=method)
    assert response.status_code == 405
    assert "GET" in response.headers["Allow"]


# --- groups -----------------------------------------------------------------------------


async def test_group_routes_do_not_exist_when_disabled(make_app: AppFactory) -> None:
    response = await make_app().test_client().get("/api/groups", headers=AUTH)
    assert response.status_code == 404


GROUP_CASES = [
    (
        "GET",
        "/api/groups?limit=5&after=CUR",
        None,
        "GET",
        f"/{VERSION}/106540352242922/groups",
        {"limit": "5", "after": "CUR"},
        None,
    ),
    (
        "POST",
        "/api/groups",
        {"subject": "Team", "description": "d", "joinApprovalMode": "approval_required"},
        "POST",
        f"/{VERSION}/106540352242922/groups",
        {},
        {
            "messaging_product": "whatsapp",
            "subject": "Team",
            "description": "d",
            "join_approval_mode": "approval_required",
        },
    ),
    (
        "GET",
        "/api/groups/G1?fields=subject",
        None,
        "GET",
        f"/{VERSION}/G1",
        {"fields": "subject"},
        None,
    ),
    (
        "POST",
        "/api/groups/G1",
        {"subject": "New"},
        "POST",
        f"/{VERSION}/G1",
        {},
        {"messaging_product": "whatsapp", "subject": "New"},
    ),
    ("DELETE", "/api/groups/G1", None, "DELETE", f"/{VERSION}/G1", {}, None),
    ("GET", "/api/groups/G1/invite-link", None, "GET", f"/{VERSION}/G1/invite_link", {}, None),
    (
        "POST",
        "/api/groups/G1/invite-link",
        None,
        "POST",
        f"/{VERSION}/G1/invite_link",
        {},
        {"messaging_product": "whatsapp"},
    ),
    (
        "DELETE",
        "/api/groups/G1/participants",
        {"waIds": ["15551234567"]},
        "DELETE",
        f"/{VERSION}/G1/participants",
        {},
        {"messaging_product": "whatsapp", "participants": [{"wa_id": "15551234567"}]},
    ),
    ("GET", "/api/groups/G1/join-requests", None, "GET", f"/{VERSION}/G1/join_requests", {}, None),
    (
        "POST",
        "/api/groups/G1/join-requests",
        {"joinRequestIds": ["J1"]},
        "POST",
        f"/{VERSION}/G1/join_requests",
        {},
        {"messaging_product": "whatsapp", "join_requests": ["J1"]},
    ),
    (
        "DELETE",
        "/api/groups/G1/join-requests",
        {"joinRequestIds": ["J1"]},
        "DELETE",
        f"/{VERSION}/G1/join_requests",
        {},
        {"messaging_product": "whatsapp", "join_requests": ["J1"]},
    ),
]


@pytest.mark.parametrize(
    ("method", "path", "body", "up_method", "up_path", "up_query", "up_body"), GROUP_CASES
)
async def test_group_route_wire_mapping(
    make_app: AppFactory,
    graph: FakeGraphTransport,
    method: str,
    path: str,
    body: Any,
    up_method: str,
    up_path: str,
    up_query: dict[str, str],
    up_body: Any,
) -> None:
    upstream_answer = {
        "request_id": "req1",
        "success": True,
        "invite_link": "https://x/y",
        "data": [],
        "approved_join_requests": ["J1"],
        "rejected_join_requests": ["J1"],
        "id": "G1",
    }
    graph.answers.append(httpx.Response(200, json=upstream_answer))
    client = make_app(enable_group_routes=True).test_client()
    response = await client.open(path, method=method, json=body, headers=AUTH)
    assert response.status_code == 200, await response.get_data()
    assert await response.get_json() == upstream_answer
    [request] = graph.requests
    assert request.method == up_method
    assert request.url.path == up_path
    assert dict(request.url.params) == up_query
    assert (json.loads(request.content) if request.content else None) == up_body


@pytest.mark.parametrize(
    ("method", "path", "body"),
    [
        ("POST", "/api/groups", {"subject": "x" * 129}),
        ("POST", "/api/groups", {"description": "no subject"}),
        ("POST", "/api/groups/G1", {"description": "d" * 2049}),
        ("DELETE", "/api/groups/G1/participants", {"waIds": [str(i) * 3 for i in range(9)]}),
        ("DELETE", "/api/groups/G1/participants", {"waIds": []}),
        ("POST", "/api/groups/G1/join-requests", {}),
    ],
)
async def test_group_route_refusals_send_nothing(
    make_app: AppFactory, graph: FakeGraphTransport, method: str, path: str, body: Any
) -> None:
    client = make_app(enable_group_routes=True).test_client()
    response = await client.open(path, method=method, json=body, headers=AUTH)
    assert response.status_code == 400
    assert (await response.get_json())["error"]["code"] == "malformed_body"
    assert graph.requests == []


async def test_group_routes_need_the_bearer(make_app: AppFactory) -> None:
    response = await make_app(enable_group_routes=True).test_client().get("/api/groups")
    assert response.status_code == 401


async def test_reset_invite_link_is_post_not_delete(make_app: AppFactory) -> None:
    client = make_app(enable_group_routes=True).test_client()
    response = await client.delete("/api/groups/G1/invite-link", headers=AUTH)
    assert response.status_code == 405
    assert set(response.headers["Allow"].replace(" ", "").split(",")) >= {"GET", "POST"}


# --- construction -------------------------------------------------------------------------


def _app(**overrides: Any) -> Any:
    options: dict[str, Any] = {"profile": Profile(phone_number_id="1"), "secrets": SECRETS}
    options.update(overrides)
    return create_app(**options)


@pytest.mark.parametrize(
    ("overrides", "code"),
    [
        ({"profile": "nope"}, "invalid_profile"),
        ({"profile": {"phone_number_id": "abc"}}, "invalid_profile"),
        ({"profile": {"phone_number_id": "1", "api_version": "25"}}, "invalid_profile"),
        ({"profile": {"phone_number_id": "1", "unknown": 1}}, "invalid_profile"),
        ({"profile": {"phone_number_id": "1", "base_url": "ftp://x"}}, "invalid_profile"),
        ({"profile": {"phone_number_id": "1", "max_body_bytes": 0}}, "invalid_profile"),
        ({"profile": {"phone_number_id": "1", "max_body_bytes": 10_485_761}}, "invalid_profile"),
        ({"profile": {"phone_number_id": "1", "webhook_path": "no-slash"}}, "invalid_path"),
        ({"profile": {"phone_number_id": "1", "webhook_path": "/a/../b"}}, "invalid_path"),
        ({"profile": {"phone_number_id": "1", "webhook_path": "/healthz"}}, "invalid_path"),
        ({"profile": {"phone_number_id": "1", "webhook_path": "/api/hook"}}, "invalid_path"),
        ({"secrets": "nope"}, "invalid_secrets"),
        ({"secrets": {"access_token": "a"}}, "invalid_secrets"),
        (
            {
                "secrets": {
                    "access_token": "",
                    "webhook_verify_token": "v",
                    "webhook_app_secret": "s",
                    "service_bearer_token": "b",
                }
            },
            "invalid_secret",
        ),
        (
            {
                "secrets": {
                    "access_token": "a b",
                    "webhook_verify_token": "v",
                    "webhook_app_secret": "s",
                    "service_bearer_token": "b",
                }
            },
            "invalid_secret",
        ),
        ({"transport": object()}, "invalid_transport"),
        ({"crypto_provider": object()}, "invalid_crypto_provider"),
        ({"facade": object()}, "invalid_whatsapp"),
        ({"store": object()}, "invalid_persistence"),
        ({"enable_group_routes": "yes"}, "invalid_config"),
        ({"telemetry_sink": object()}, "invalid_config"),
        ({"metrics_registry": object()}, "invalid_config"),
        ({"limits": {"body_read_timeout": 1}}, "invalid_config"),
        ({"limits": BodyLimits(body_read_timeout=0)}, "invalid_config"),
        ({"limits": BodyLimits(max_pending_bodies=True)}, "invalid_config"),
        ({"log": {"access_log": True}}, "invalid_config"),
        ({"outbox": object()}, "invalid_config"),
        ({"flows": object()}, "invalid_config"),
        (
            {"profile": {"phone_number_id": "1", "flows_path": "/flows"}, "flows": object()},
            "invalid_config",
        ),
    ],
)
def test_construction_errors_have_the_spec_codes(overrides: dict[str, Any], code: str) -> None:
    with pytest.raises(ServiceError) as caught:
        _app(**overrides)
    assert caught.value.code == code
    assert code in CONSTRUCTION_CODES
    for secret in SECRET_VALUES:
        assert secret not in str(caught.value) + repr(caught.value)


def test_secrets_repr_is_redacted() -> None:
    assert repr(SECRETS) == "ServiceSecrets([REDACTED])"


async def test_custom_crypto_provider_decides_the_signature() -> None:
    class AcceptAll:
        def hmac_sha256_matches(self, key: bytes, data: bytes, expected: bytes) -> bool:
            return True

    client = _app(crypto_provider=AcceptAll()).test_client()
    body = b'{"object":"whatsapp_business_account","entry":[]}'
    response = await client.post(
        "/webhooks/whatsapp", data=body, headers={"X-Hub-Signature-256": "sha256=" + "0" * 64}
    )
    assert response.status_code == 200


# --- lifespan: the outbox worker lives in the app's nursery ------------------------------


@pytest.mark.slow
async def test_outbox_worker_runs_while_serving_and_stops_after(
    make_app: AppFactory, sqlite_store: SqliteStore, clock: Any
) -> None:
    handled: list[str] = []

    async def handler(item: Any) -> None:
        handled.append(item.id)

    await sqlite_store.enqueue_outbox_item(id="job-1", payload_hash="h", created_at=clock())
    app = make_app(store=sqlite_store, outbox=OutboxWorkerOptions(handler=handler, interval=0.01))
    async with app.test_app():
        with trio.fail_after(5):
            while not handled:
                await trio.sleep(0.01)
    assert handled == ["job-1"]
    await sqlite_store.enqueue_outbox_item(id="job-2", payload_hash="h", created_at=clock())
    await trio.sleep(0.05)
    assert handled == ["job-1"]  # the worker stopped with the app
    text = await (await app.test_client().get("/metrics", headers=AUTH)).get_data(as_text=True)
    assert "outbox_processed_total" in text


def test_outbox_handler_needs_a_store() -> None:
    async def handler(item: Any) -> None:
        return None

    with pytest.raises(ServiceError) as caught:
        _app(outbox=OutboxWorkerOptions(handler=handler))
    assert caught.value.code == "invalid_config"


async def test_openapi_documents_the_error_statuses(make_app: AppFactory) -> None:
    document = await (await make_app().test_client().get("/openapi.json")).get_json()
    send = document["paths"]["/api/messages/text"]["post"]["responses"]
    for status in ("400", "401", "409", "413", "502", "503"):
        schema = send[status]["content"]["application/json"]["schema"]
        assert schema == {"$ref": "#/components/schemas/ErrorBody"} or (
            schema["title"] == "ErrorBody"
        )
    assert "ErrorBody" in document["components"]["schemas"]
