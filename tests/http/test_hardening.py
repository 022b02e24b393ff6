"""Issue 22 (hardening for the open internet): hostile numbers, query digits, paths, passthrough."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import trio
import trio.testing

from svc.http import BodyLimits
from svc.store import SqliteStore
from tests._support import FakeGraphTransport

from .conftest import AUTH, WEBHOOK, AppFactory, RecordingFacade, post_webhook

NON_FINITE = [b"1e999", b"-1e999", b"NaN", b"Infinity", b"-Infinity"]


async def _error_code(response: Any) -> str:
    return str((await response.get_json())["error"]["code"])


@pytest.mark.parametrize("number", NON_FINITE)
async def test_keyed_send_with_a_non_finite_number_in_components_is_400(
    make_app: AppFactory, graph: FakeGraphTransport, sqlite_store: SqliteStore, number: bytes
) -> None:
    client = make_app(store=sqlite_store).test_client()
    body = (
        b'{"type":"template","to":"15551234567","name":"hello_world","languageCode":"en_US",'
        b'"components":[{"type":"body","parameters":[{"type":"text","text":"x","n":'
        + number
        + b"}]}]}"
    )
    headers = {**AUTH, "Content-Type": "application/json", "Idempotency-Key": "key-inf"}
    response = await client.post("/api/messages", data=body, headers=headers)
    assert response.status_code == 400
    assert await _error_code(response) == "malformed_json"
    assert graph.requests == []


@pytest.mark.parametrize("number", NON_FINITE)
async def test_signed_delivery_with_a_non_finite_number_is_400_invalid_json(
    make_app: AppFactory, number: bytes
) -> None:
    facade = RecordingFacade()
    client = make_app(facade=facade).test_client()
    body = b'{"object":"whatsapp_business_account","entry":[{"id":"1","x":' + number + b"}]}"
    response = await post_webhook(client, body)
    assert response.status_code == 400
    assert await _error_code(response) == "invalid_json"
    assert facade.updates == []


@pytest.mark.parametrize("limit", ["\u00b2", "\u0661\u0660", "\uff11\uff10", "+5", " 5", "-1"])
async def test_query_integers_are_ascii_digits_only(
    make_app: AppFactory, sqlite_store: SqliteStore, limit: str
) -> None:
    client = make_app(store=sqlite_store).test_client()
    response = await client.get("/api/messages", query_string={"limit": limit}, headers=AUTH)
    assert response.status_code == 400
    assert await _error_code(response) == "malformed_query"


async def test_group_paging_limit_is_ascii_digits_only(
    make_app: AppFactory, graph: FakeGraphTransport
) -> None:
    client = make_app(enable_group_routes=True).test_client()
    response = await client.get("/api/groups", query_string={"limit": "²"}, headers=AUTH)
    assert response.status_code == 400
    assert await _error_code(response) == "malformed_query"
    assert graph.requests == []


@pytest.mark.parametrize(
    "path", ["/api//messages", "/api/messages//wamid.X1", "/api//groups", "/healthz//"]
)
async def test_a_double_slash_is_never_a_redirect_built_from_host(
    make_app: AppFactory, sqlite_store: SqliteStore, path: str
) -> None:
    client = make_app(store=sqlite_store).test_client()
    response = await client.get(path, headers={**AUTH, "Host": "evil.example"})
    assert response.status_code == 404
    assert "Location" not in response.headers
    assert await _error_code(response) == "not_found"


async def test_diagnostics_config_shape_redacts_every_leaf(make_app: AppFactory) -> None:
    client = make_app().test_client()  # no store: "persistence" is unset
    body = await (await client.get("/debug/diagnostics", headers=AUTH)).get_json()

    def leaves(value: object) -> list[object]:
        if isinstance(value, dict):
            return [leaf for item in value.values() for leaf in leaves(item)]
        return [value]

    shape = body["configShape"]
    assert "persistence" in shape
    assert set(leaves(shape)) == {"[REDACTED]"}


@pytest.mark.parametrize(
    "path",
    [
        "/api/conversations/1555%0A1/window",
        "/api/conversations/1555%0D1/window",
        "/api/messages/wamid%0AX1",
        "/api/messages/wamid.X1%2Fextra",
        "/api/messages/a%2fb",
    ],
)
async def test_a_percent_encoded_control_or_slash_in_a_path_id_is_malformed_path(
    make_app: AppFactory, sqlite_store: SqliteStore, path: str
) -> None:
    client = make_app(store=sqlite_store).test_client()
    # The undecoded path as a server hands it over (the test client would re-encode it).
    raw = {"raw_path": path.encode("ascii")}
    response = await client.get(path, headers=AUTH, scope_base=raw)
    assert response.status_code == 400
    assert await _error_code(response) == "malformed_path"


@pytest.mark.parametrize("path", ["/api/messages/wamid.X1/extra", "/api/messages/a/b/c"])
async def test_an_extra_segment_after_a_message_id_is_an_unknown_route(
    make_app: AppFactory, sqlite_store: SqliteStore, path: str
) -> None:
    client = make_app(store=sqlite_store).test_client()
    response = await client.get(path, headers=AUTH)
    assert response.status_code == 404
    assert await _error_code(response) == "not_found"


GROUP_READS = [
    ("/api/groups/G1", {"subject": "Team", "brand_new_field": {"nested": [1, 2]}}),
    ("/api/groups/G1", {}),
    ("/api/groups/G1/invite-link", {"messaging_product": "whatsapp"}),
    ("/api/groups", {"data": [{"subject": "no id here"}], "paging": {}}),
    ("/api/groups/G1/join-requests", {"data": [{"wa_id": "1555"}], "new": True}),
]


@pytest.mark.parametrize(("path", "upstream"), GROUP_READS)
async def test_group_reads_pass_the_platform_json_through(
    make_app: AppFactory, graph: FakeGraphTransport, path: str, upstream: dict[str, Any]
) -> None:
    graph.answers.append(httpx.Response(200, json=upstream))
    client = make_app(enable_group_routes=True).test_client()
    response = await client.get(path, headers=AUTH)
    assert response.status_code == 200
    assert json.loads(await response.get_data()) == upstream
    assert len(graph.requests) == 1


async def test_group_create_without_request_id_passes_the_answer_through(
    make_app: AppFactory, graph: FakeGraphTransport
) -> None:
    graph.answers.append(httpx.Response(200, json={"success": True}))
    client = make_app(enable_group_routes=True).test_client()
    response = await client.post("/api/groups", json={"subject": "Team"}, headers=AUTH)
    assert response.status_code == 200
    assert await response.get_json() == {"success": True}


@pytest.mark.parametrize(
    "options",
    [{"body_read_timeout": 0}, {"body_read_timeout": float("inf")}, {"max_pending_bodies": 0}],
)
def test_body_limits_are_checked_at_construction(make_app: AppFactory, options: Any) -> None:
    from svc.http import ServiceError

    with pytest.raises(ServiceError) as caught:
        make_app(limits=BodyLimits(**options))
    assert caught.value.code == "invalid_config"


async def test_a_body_beyond_the_pending_cap_is_503_with_retry_after_before_reading(
    make_app: AppFactory, graph: FakeGraphTransport
) -> None:
    app = make_app(limits=BodyLimits(max_pending_bodies=1, body_read_timeout=7))
    app.extensions["svc.body_gate"].pending = 1  # one body is being read already
    client = app.test_client()
    body = {"to": "15551234567", "text": "x"}
    response = await client.post("/api/messages/text", json=body, headers=AUTH)
    assert response.status_code == 503
    assert response.headers["Retry-After"] == "7"
    assert await _error_code(response) == "server_busy"
    assert graph.requests == []


@pytest.mark.parametrize("path", [WEBHOOK, "/api/messages/text"])
async def test_a_body_past_its_read_deadline_is_408_and_closes_the_connection(
    make_app: AppFactory,
    graph: FakeGraphTransport,
    autojump_clock: trio.testing.MockClock,
    path: str,
) -> None:
    """The lean webhook path and a Quart route alike: a body still unfinished after
    ``body_read_timeout`` seconds is answered 408 ``request_timeout`` then, not later."""
    client = make_app(limits=BodyLimits(body_read_timeout=7)).test_client()
    headers = {**AUTH, "Content-Type": "application/json", "Content-Length": "100"}
    with trio.fail_after(60):  # a reader without its deadline fails here, never hangs
        async with client.request(path, method="POST", headers=headers) as connection:
            await connection.send(b"{")  # 1 byte of 100, and nothing more
            started = trio.current_time()
            answer = await connection.receive()
            waited = trio.current_time() - started
    assert connection.status_code == 408
    assert json.loads(answer)["error"]["code"] == "request_timeout"
    assert connection.headers["Connection"] == "close"
    assert waited == pytest.approx(7, abs=0.1)
    assert graph.requests == []


@pytest.mark.parametrize("host", ["xn--zz", "xn--.example", "xn--abc.example"])
async def test_a_media_link_on_an_idna_host_is_sent_as_written_never_a_500(
    make_app: AppFactory, graph: FakeGraphTransport, host: str
) -> None:
    """A malformed ``xn--`` label is the platform's to refuse (decoding it raised idna's error)."""
    link = f"https://{host}/cat.jpg"
    client = make_app().test_client()
    body = {"type": "image", "to": "15551234567", "link": link}
    response = await client.post("/api/messages", json=body, headers=AUTH)
    assert response.status_code == 200
    [sent] = graph.bodies()
    assert sent["image"] == {"link": link}
