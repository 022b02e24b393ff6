"""Keyed sends: atomic claim, replay byte for byte, conflict, pending, degraded completion,
and the rule per upstream outcome (stored refusal, released key, pending for good)."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import trio

from svc.http import ServiceError
from svc.store import ServiceRequestState, SqliteStore
from tests._support import FakeGraphTransport

from .conftest import AUTH, AppFactory, FailingStore

TEXT = {"to": "15551234567", "text": "hello"}


async def _send(client: Any, body: Any, key: str | None) -> Any:
    headers = dict(AUTH)
    if key is not None:
        headers["Idempotency-Key"] = key
    return await client.post("/api/messages/text", json=body, headers=headers)


async def test_replay_returns_the_stored_body_byte_for_byte(
    make_app: AppFactory, graph: FakeGraphTransport, sqlite_store: SqliteStore
) -> None:
    client = make_app(store=sqlite_store).test_client()
    first = await _send(client, TEXT, "key-1")
    second = await _send(client, TEXT, "key-1")
    assert first.status_code == second.status_code == 200
    assert await first.get_data() == await second.get_data()
    assert "Idempotent-Replayed" not in first.headers
    assert second.headers["Idempotent-Replayed"] == "true"
    assert len(graph.requests) == 1


async def test_changed_payload_conflicts(
    make_app: AppFactory, graph: FakeGraphTransport, sqlite_store: SqliteStore
) -> None:
    client = make_app(store=sqlite_store).test_client()
    await _send(client, TEXT, "key-2")
    response = await _send(client, {**TEXT, "text": "changed"}, "key-2")
    assert response.status_code == 409
    assert (await response.get_json())["error"]["code"] == "idempotency_conflict"
    assert len(graph.requests) == 1


PENDING_MESSAGE = (
    "A request with this Idempotency-Key is in flight, or its outcome is unknown (the"
    " connection was lost after sending, or the platform answered 5xx: it may have sent"
    " the message). The key stays pending and is never resent; check the message's"
    " status, then use a new key."
)


@pytest.mark.parametrize(
    "answer",
    [
        httpx.Response(500, json={"error": {"code": 1, "message": "x"}}),
        httpx.Response(503, json={"error": {"code": 131016, "message": "unavailable"}}),
        httpx.Response(500, json={"error": {"code": 130429, "message": "rate at 5xx"}}),
        httpx.Response(502, text="bad gateway"),
        httpx.ReadTimeout("sent, never answered"),
        httpx.RemoteProtocolError("peer closed after the request"),
        httpx.WriteError("broken pipe while sending"),
    ],
    ids=["500", "503-131016", "500-130429", "502-no-json", "read-timeout", "closed", "write"],
)
async def test_an_unknown_outcome_stays_pending_and_is_never_resent(
    make_app: AppFactory,
    graph: FakeGraphTransport,
    sqlite_store: SqliteStore,
    answer: httpx.Response | Exception,
) -> None:
    """The platform may have sent it (a 5xx, a connection lost after sending): 409 for good."""
    graph.answers.append(answer)
    client = make_app(store=sqlite_store).test_client()
    failed = await _send(client, TEXT, "key-unknown")
    assert failed.status_code in (502, 503)
    for _ in range(2):
        retry = await _send(client, TEXT, "key-unknown")
        assert retry.status_code == 409
        error = (await retry.get_json())["error"]
        assert (error["code"], error["message"]) == ("idempotency_pending", PENDING_MESSAGE)
    assert len(graph.requests) == 1  # never resent
    stored = await sqlite_store.get_service_request(
        idempotency_key=next(iter(await _keys(sqlite_store)))
    )
    assert stored is not None and stored.state is ServiceRequestState.PENDING


@pytest.mark.parametrize(
    "answer",
    [
        httpx.Response(400, json={"error": {"code": 131026, "message": "undeliverable"}}),
        httpx.Response(400, json={"error": {"code": 131009, "message": "bad parameter"}}),
        httpx.Response(400, json={"error": {"code": 132001, "message": "no template"}}),
        httpx.Response(400, json={"unexpected": True}),
        httpx.Response(404, text="not found"),
    ],
    ids=["131026", "131009", "132001", "400-no-code", "404"],
)
async def test_a_refusal_retrying_cannot_change_is_stored_and_replayed(
    make_app: AppFactory,
    graph: FakeGraphTransport,
    sqlite_store: SqliteStore,
    answer: httpx.Response,
) -> None:
    """``fix_request`` and ``do_not_retry``: the key's answer, replayed byte for byte."""
    graph.answers.append(answer)
    client = make_app(store=sqlite_store).test_client()
    refused = await _send(client, TEXT, "key-refused")
    assert refused.status_code == 502
    retry = await _send(client, TEXT, "key-refused")
    assert retry.status_code == 502
    assert await retry.get_data() == await refused.get_data()
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert "Idempotent-Replayed" not in refused.headers
    assert len(graph.requests) == 1
    stored = await sqlite_store.get_service_request(
        idempotency_key=next(iter(await _keys(sqlite_store)))
    )
    assert stored is not None and stored.response_status == 502
    assert stored.state is ServiceRequestState.COMPLETED


async def test_a_validation_refusal_claims_no_key_an_unsendable_body_completes_it(
    make_app: AppFactory, graph: FakeGraphTransport, sqlite_store: SqliteStore
) -> None:
    """A body refused by validation never reaches the key (fixed, it goes through with it);
    one the client cannot encode (a lone surrogate) is refused unsent and replayed."""
    client = make_app(store=sqlite_store).test_client()
    too_long = await _send(client, {**TEXT, "text": "x" * 4097}, "key-v")
    assert too_long.status_code == 400
    assert await _keys(sqlite_store) == set()
    assert (await _send(client, TEXT, "key-v")).status_code == 200
    unsendable = {**TEXT, "text": "\ud800"}
    refused = await _send(client, unsendable, "key-u")
    assert refused.status_code == 400
    retry = await _send(client, unsendable, "key-u")
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert await retry.get_data() == await refused.get_data()
    assert len(graph.requests) == 1  # the fixed text alone


@pytest.mark.parametrize(
    ("answer", "status", "retry_after"),
    [
        (httpx.Response(429, json={"error": {"code": 130429}}), 503, "1"),
        (httpx.Response(429, headers={"Retry-After": "7"}, json={}), 503, "7"),
        (httpx.Response(400, json={"error": {"code": 130429, "message": "mps"}}), 503, "1"),
        (httpx.Response(400, json={"error": {"code": 131056, "message": "pair"}}), 503, "6"),
        (httpx.Response(400, json={"error": {"code": 131057, "message": "upgrade"}}), 502, "60"),
        (httpx.Response(401, json={"error": {"code": 190, "message": "token"}}), 502, None),
        (httpx.Response(403, json={"error": {"code": 10, "message": "permission"}}), 502, None),
        (httpx.ConnectError("connection refused"), 502, None),
        (httpx.ConnectTimeout("no connection"), 502, None),
    ],
    ids=["429", "429-retry-after", "130429", "131056", "131057", "190", "10", "refused", "connect"],
)
async def test_a_transient_refusal_releases_the_key_and_the_retry_goes_through(
    make_app: AppFactory,
    graph: FakeGraphTransport,
    sqlite_store: SqliteStore,
    answer: httpx.Response | Exception,
    status: int,
    retry_after: str | None,
) -> None:
    """``retry_later`` and ``refresh_credentials``: nothing was carried out, so nothing is kept."""
    graph.answers.append(answer)
    client = make_app(store=sqlite_store).test_client()
    refused = await _send(client, TEXT, "key-transient")
    assert refused.status_code == status
    assert refused.headers.get("Retry-After") == retry_after
    assert await _keys(sqlite_store) == set()
    retry = await _send(client, TEXT, "key-transient")
    assert retry.status_code == 200
    assert "Idempotent-Replayed" not in retry.headers
    again = await _send(client, TEXT, "key-transient")
    assert again.headers["Idempotent-Replayed"] == "true"
    assert await again.get_data() == await retry.get_data()
    assert len(graph.requests) == 2  # the refused attempt and the one that went through


async def test_a_release_the_store_fails_leaves_the_key_pending(
    make_app: AppFactory, graph: FakeGraphTransport, sqlite_store: SqliteStore
) -> None:
    """The safe side of a store fault: the retry is 409, never a second send."""
    graph.answers.append(httpx.Response(429, json={"error": {"code": 130429}}))
    store = FailingStore(sqlite_store, {"release_service_request"})
    client = make_app(store=store).test_client()
    assert (await _send(client, TEXT, "key-stuck")).status_code == 503
    retry = await _send(client, TEXT, "key-stuck")
    assert retry.status_code == 409
    assert (await retry.get_json())["error"]["code"] == "idempotency_pending"
    assert len(graph.requests) == 1


async def test_a_released_key_is_free_for_another_payload(
    make_app: AppFactory, graph: FakeGraphTransport, sqlite_store: SqliteStore
) -> None:
    """Nothing is kept of a request that never started (Stripe's rule): not even its hash."""
    graph.answers.append(httpx.Response(401, json={"error": {"code": 190}}))
    client = make_app(store=sqlite_store).test_client()
    assert (await _send(client, TEXT, "key-free")).status_code == 502
    other = await _send(client, {**TEXT, "text": "changed"}, "key-free")
    assert other.status_code == 200
    assert [json.loads(r.content)["text"]["body"] for r in graph.requests] == ["hello", "changed"]


async def _keys(store: SqliteStore) -> set[str]:
    rows = await store._call(
        "query_failed",
        lambda s: s.fetchall("SELECT idempotency_key FROM svc_service_requests"),
        write=False,
    )
    return {str(row[0]) for row in rows}


async def test_keys_are_scoped_to_the_phone_number(
    make_app: AppFactory, graph: FakeGraphTransport, sqlite_store: SqliteStore, profile: Any
) -> None:
    from dataclasses import replace

    one = make_app(store=sqlite_store).test_client()
    other = make_app(
        store=sqlite_store, profile=replace(profile, phone_number_id="999999999")
    ).test_client()
    assert (await _send(one, TEXT, "shared")).status_code == 200
    assert (await _send(other, TEXT, "shared")).status_code == 200
    assert len(graph.requests) == 2


@pytest.mark.parametrize("key", ["", "   ", "a" * 257, "bad\x01key", "tab\tkey", "del\x7f"])
async def test_invalid_keys_are_400_with_or_without_a_store(
    make_app: AppFactory, graph: FakeGraphTransport, sqlite_store: SqliteStore, key: str
) -> None:
    for client in (make_app().test_client(), make_app(store=sqlite_store).test_client()):
        response = await _send(client, TEXT, key)
        assert response.status_code == 400
        assert (await response.get_json())["error"]["code"] == "invalid_idempotency_key"
    assert graph.requests == []


async def test_without_a_store_the_key_gives_no_dedupe(
    make_app: AppFactory, graph: FakeGraphTransport
) -> None:
    client = make_app().test_client()
    assert (await _send(client, TEXT, "k")).status_code == 200
    assert (await _send(client, TEXT, "k")).status_code == 200
    assert len(graph.requests) == 2


async def test_a_store_without_claim_methods_is_refused_when_the_app_is_built(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    """The service calls every method of the contract: a store without the atomic claim
    methods is refused at construction, naming them, so no keyed send ever meets one (the
    spec's 503 ``persistence_not_atomic`` of such a store is never answered)."""

    class LegacyStore(FailingStore):
        def __getattr__(self, name: str) -> Any:
            if name in ("claim_service_request", "complete_service_request"):
                raise AttributeError(name)
            return super().__getattr__(name)

    with pytest.raises(ServiceError) as caught:
        make_app(store=LegacyStore(sqlite_store, set()))
    assert caught.value.code == "invalid_persistence"
    assert "claim_service_request, complete_service_request" in str(caught.value)


async def test_failed_completion_returns_the_real_200_marked_degraded(
    make_app: AppFactory, graph: FakeGraphTransport, sqlite_store: SqliteStore
) -> None:
    store = FailingStore(sqlite_store, {"complete_service_request"})
    client = make_app(store=store).test_client()
    response = await _send(client, TEXT, "k")
    assert response.status_code == 200
    assert response.headers["x-svc-persistence"] == "degraded"
    assert (await response.get_json())["messages"][0]["id"] == "wamid.TEST1"


async def test_an_answer_utf8_cannot_carry_is_relayed_and_its_row_is_degraded(
    make_app: AppFactory, graph: FakeGraphTransport, store: Any
) -> None:
    """A 200 whose message id holds a lone surrogate (JSON's ``\\ud800``): the send is
    answered with the platform's JSON (escaped, not a 500), keyed, and the row the store
    cannot take marks it degraded, as any projection failure does."""
    raw = b'{"messaging_product":"whatsapp","messages":[{"id":"wamid.\\ud800"}]}'
    graph.answers.append(httpx.Response(200, content=raw))
    client = make_app(store=store).test_client()
    response = await _send(client, TEXT, "key-odd")
    assert response.status_code == 200
    assert json.loads(await response.get_data()) == json.loads(raw)
    assert response.headers["x-svc-persistence"] == "degraded"
    retry = await _send(client, TEXT, "key-odd")
    assert retry.headers["Idempotent-Replayed"] == "true"
    assert await retry.get_data() == await response.get_data()
    assert len(graph.requests) == 1
    page = await store.list_messages(limit=10)
    assert not page.items


async def test_a_completion_the_store_does_not_take_is_marked_degraded(
    make_app: AppFactory, graph: FakeGraphTransport, sqlite_store: SqliteStore
) -> None:
    """``complete_service_request`` answering False (the key is no longer pending) is degraded."""

    class Refusing(FailingStore):
        def __getattr__(self, name: str) -> Any:
            if name == "complete_service_request":

                async def refuse(**_: Any) -> bool:
                    return False

                return refuse
            return super().__getattr__(name)

    response = await _send(make_app(store=Refusing(sqlite_store, set())).test_client(), TEXT, "k")
    assert response.status_code == 200
    assert response.headers["x-svc-persistence"] == "degraded"
    # The projection still ran.
    assert await sqlite_store.get_message(wa_message_id="wamid.TEST1") is not None


async def test_the_completion_and_the_projection_are_written_together(
    make_app: AppFactory, graph: FakeGraphTransport, sqlite_store: SqliteStore
) -> None:
    """The three writes after the upstream answer start before any ends (one group commit)."""
    events: list[tuple[str, str]] = []

    class Recording(FailingStore):
        def __getattr__(self, name: str) -> Any:
            inner = super().__getattr__(name)
            if name not in ("complete_service_request", "record_message", "append_message_status"):
                return inner

            async def call(*args: Any, **kwargs: Any) -> Any:
                events.append(("start", name))
                await trio.sleep(0.01)
                try:
                    return await inner(*args, **kwargs)
                finally:
                    events.append(("end", name))

            return call

    client = make_app(store=Recording(sqlite_store, set())).test_client()
    response = await _send(client, TEXT, "k")
    assert response.status_code == 200
    assert "x-svc-persistence" not in response.headers
    starts = [name for kind, name in events[:3] if kind == "start"]
    assert sorted(starts) == ["append_message_status", "complete_service_request", "record_message"]
    record = await sqlite_store.get_message(wa_message_id="wamid.TEST1")
    assert record is not None and record.status == "sent"
    # The completion was stored: the same key replays the first answer byte for byte.
    again = await _send(client, TEXT, "k")
    assert again.headers["Idempotent-Replayed"] == "true"
    assert await again.get_data() == await response.get_data()
    assert len(graph.requests) == 1


async def test_claim_failure_is_503_and_sends_nothing(
    make_app: AppFactory, graph: FakeGraphTransport, sqlite_store: SqliteStore
) -> None:
    store = FailingStore(sqlite_store, {"claim_service_request"})
    response = await _send(make_app(store=store).test_client(), TEXT, "k")
    assert response.status_code == 503
    assert (await response.get_json())["error"]["code"] == "persistence_unavailable"
    assert graph.requests == []


async def test_success_projects_the_outbound_row_and_a_sent_event(
    make_app: AppFactory, sqlite_store: SqliteStore, clock: Any
) -> None:
    response = await _send(make_app(store=sqlite_store).test_client(), TEXT, None)
    assert response.status_code == 200
    record = await sqlite_store.get_message(wa_message_id="wamid.TEST1")
    assert record is not None
    assert (record.direction, record.status, record.type) == ("outbound", "sent", "text")
    assert record.to_phone == "15551234567"
    assert record.graph_message_id == "wamid.TEST1"
    assert record.created_at == clock()


async def test_projection_failure_never_fails_the_send(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    store = FailingStore(sqlite_store, {"record_message", "append_message_status"})
    response = await _send(make_app(store=store).test_client(), TEXT, None)
    assert response.status_code == 200
    assert response.headers["x-svc-persistence"] == "degraded"


@pytest.mark.slow
async def test_fifty_concurrent_keyed_sends_make_one_upstream_call(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    calls = 0

    async def slow_graph(request: httpx.Request) -> httpx.Response:
        nonlocal calls
        calls += 1
        await trio.sleep(0.05)
        return httpx.Response(200, json={"messages": [{"id": "wamid.ONE"}]})

    client = make_app(store=sqlite_store, transport=httpx.MockTransport(slow_graph)).test_client()
    results: list[tuple[int, bytes, str | None]] = []

    async def one() -> None:
        response = await _send(client, TEXT, "same-key")
        body = await response.get_data()
        results.append((response.status_code, body, response.headers.get("Idempotent-Replayed")))

    async with trio.open_nursery() as nursery:
        for _ in range(50):
            nursery.start_soon(one)
    assert calls == 1
    statuses = sorted({status for status, _, _ in results})
    assert set(statuses) <= {200, 409}
    assert sum(1 for status, _, replay in results if status == 200 and replay is None) == 1
    for status, body, _ in results:
        if status == 409:
            assert json.loads(body)["error"]["code"] == "idempotency_pending"
    replay = await _send(client, TEXT, "same-key")
    assert replay.headers["Idempotent-Replayed"] == "true"
    assert calls == 1
