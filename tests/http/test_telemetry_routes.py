"""/status, /metrics, /debug/diagnostics, /healthz, /readyz, the telemetry sink and labels."""

from __future__ import annotations

import json
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from svc.graph import DEFAULT_API_VERSION
from svc.store import SCHEMA_VERSION, SqliteStore

from .conftest import AUTH, AppFactory, FailingStore, fixture, post_webhook

HIDDEN = ["/status", "/metrics", "/debug/diagnostics"]


@pytest.mark.parametrize("path", HIDDEN)
@pytest.mark.parametrize(
    "headers", [{}, {"Authorization": "Bearer nope"}, {"Authorization": "Basic x"}]
)
async def test_hidden_routes_answer_the_catch_all_404_byte_for_byte(
    make_app: AppFactory, path: str, headers: dict[str, str]
) -> None:
    client = make_app().test_client()
    catch_all = await client.get("/definitely-not-a-route")
    response = await client.get(path, headers=headers)
    assert response.status_code == 404
    assert await response.get_data() == await catch_all.get_data()
    assert response.content_type == catch_all.content_type
    post = await client.post(path, headers=headers)
    assert post.status_code == 404
    assert await post.get_data() == await catch_all.get_data()


async def test_hidden_route_wrong_method_with_bearer_is_405(make_app: AppFactory) -> None:
    response = await make_app().test_client().post("/status", headers=AUTH)
    assert response.status_code == 405
    assert "GET" in response.headers["Allow"]


@pytest.mark.parametrize("path", HIDDEN)
@pytest.mark.parametrize("method", ["TRACE", "PROPFIND", "BREW"])
async def test_hidden_routes_hide_behind_any_method(
    make_app: AppFactory, path: str, method: str
) -> None:
    """A method no route lists is the catch-all 404 without the bearer (as for /nope), not a
    405 whose ``Allow`` would tell the route exists; with the bearer, 405 GET, HEAD."""
    client = make_app().test_client()
    catch_all = await client.open("/definitely-not-a-route", method=method)
    response = await client.open(path, method=method)
    assert response.status_code == 404
    assert "Allow" not in response.headers
    assert await response.get_data() == await catch_all.get_data()
    authorized = await client.open(path, method=method, headers=AUTH)
    assert authorized.status_code == 405
    assert authorized.headers["Allow"] == "GET, HEAD"


async def test_metrics_exposition(make_app: AppFactory) -> None:
    client = make_app().test_client()
    await client.get("/healthz")
    await client.get("/api/messages/wamid.SECRETID", headers=AUTH)
    response = await client.get("/metrics", headers=AUTH)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    text = await response.get_data(as_text=True)
    assert 'http_requests_total{method="GET",route="/healthz",status_class="2xx"} 1.0' in text
    assert 'route="/api/messages/:id"' in text
    assert "wamid.SECRETID" not in text
    for family in (
        "http_request_duration_seconds",
        "graph_operations_total",
        "send_outcomes_total",
        "webhook_normalization_total",
    ):
        assert family in text
    assert "persistence_operations_total" not in text


async def test_metrics_exposition_replaces_what_metrics_serves(make_app: AppFactory) -> None:
    """``metrics_exposition`` (the CLI's multi-worker sum) is served as given, behind the
    bearer like the registry's own text."""
    text = b"# TYPE svc_summed_total counter\nsvc_summed_total 3.0\n"
    client = make_app(metrics_exposition=lambda: text).test_client()
    response = await client.get("/metrics", headers=AUTH)
    assert response.status_code == 200
    assert response.headers["Content-Type"].startswith("text/plain; version=0.0.4")
    assert await response.get_data() == text
    assert (await client.get("/metrics")).status_code == 404


async def test_persistence_family_exists_with_a_store(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    client = make_app(store=sqlite_store).test_client()
    await client.get("/api/messages", headers=AUTH)
    text = await (await client.get("/metrics", headers=AUTH)).get_data(as_text=True)
    assert 'persistence_operations_total{adapter="sqlite",outcome="ok"} 1.0' in text


async def test_unmatched_routes_never_mint_a_label(make_app: AppFactory) -> None:
    client = make_app().test_client()
    await client.get("/wp-admin/16505551234")
    text = await (await client.get("/metrics", headers=AUTH)).get_data(as_text=True)
    assert 'route="unmatched"' in text
    assert "16505551234" not in text


async def test_webhook_kinds_are_counted(make_app: AppFactory) -> None:
    client = make_app().test_client()  # no status handler: the updates are only recorded
    await post_webhook(client, fixture("status_batch.json"))
    text = await (await client.get("/metrics", headers=AUTH)).get_data(as_text=True)
    assert 'webhook_normalization_total{outcome="recorded",update_kind="status"} 4.0' in text
    assert 'route="/webhooks/whatsapp"' in text


async def test_one_registry_per_app(make_app: AppFactory) -> None:
    from svc.http import create_app

    from .conftest import SECRETS

    first = create_app(profile={"phone_number_id": "1"}, secrets=SECRETS)
    second = create_app(profile={"phone_number_id": "1"}, secrets=SECRETS)
    await first.test_client().get("/healthz")
    text = await (await second.test_client().get("/metrics", headers=AUTH)).get_data(as_text=True)
    assert 'route="/healthz"' not in text


class RecordingSink:
    def __init__(self, fail: bool = False) -> None:
        self.counters: list[tuple[str, float, dict[str, str]]] = []
        self.histograms: list[tuple[str, float, dict[str, str]]] = []
        self.fail = fail

    def increment_counter(self, name: str, value: float, attributes: Any) -> None:
        if self.fail:
            raise RuntimeError("sink down")
        self.counters.append((name, value, dict(attributes)))

    def record_histogram(self, name: str, value: float, attributes: Any) -> None:
        if self.fail:
            raise RuntimeError("sink down")
        self.histograms.append((name, value, dict(attributes)))


async def test_sink_receives_counters_and_histograms_with_the_spec_keys(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    sink = RecordingSink()
    client = make_app(telemetry_sink=sink, store=sqlite_store).test_client()
    await client.post("/api/messages/text", json={"to": "1555", "text": "x"}, headers=AUTH)
    await post_webhook(client, fixture("message_text.json"))
    names = {name for name, _, _ in sink.counters}
    assert {
        "http_requests_total",
        "graph_operations_total",
        "send_outcomes_total",
        "webhook_normalization_total",
        "persistence_operations_total",
    } <= names
    keys = {name: set(attrs) for name, _, attrs in sink.counters}
    assert keys["http_requests_total"] == {
        "http.route",
        "http.request.method",
        "http.status_code",
        "http.response.status.class",
    }
    assert keys["graph_operations_total"] == {
        "svc.graph.endpoint_family",
        "http.status_code",
        "http.response.status.class",
        "svc.operation.outcome",
    }
    assert keys["send_outcomes_total"] == {"svc.graph.endpoint_family", "svc.operation.outcome"}
    assert keys["webhook_normalization_total"] == {
        "svc.webhook.update_kind",
        "svc.operation.outcome",
    }
    assert keys["persistence_operations_total"] == {
        "svc.persistence.adapter",
        "svc.operation.outcome",
    }
    [hist_name] = {name for name, _, _ in sink.histograms}
    assert hist_name == "http_request_duration_seconds"


async def test_a_raising_sink_is_isolated(make_app: AppFactory, caplog: Any) -> None:
    client = make_app(telemetry_sink=RecordingSink(fail=True)).test_client()
    response = await client.post(
        "/api/messages/text", json={"to": "1555", "text": "x"}, headers=AUTH
    )
    assert response.status_code == 200
    assert "telemetry sink failed error=RuntimeError" in caplog.text


async def test_status_snapshot(make_app: AppFactory, sqlite_store: SqliteStore) -> None:
    client = make_app(store=sqlite_store, enable_group_routes=True).test_client()
    body = await (await client.get("/status", headers=AUTH)).get_json()
    assert set(body) == {
        "version",
        "uptimeSeconds",
        "graphApiVersion",
        "serviceMode",
        "routes",
        "featureFlags",
        "persistence",
    }
    assert body["serviceMode"] == "webhook+persistence+groups"
    assert body["graphApiVersion"] == f"{DEFAULT_API_VERSION}"
    assert "GET /api/messages/:id" in body["routes"]
    assert "GET /api/groups/:groupId" in body["routes"]
    assert body["featureFlags"] == {"groupRoutes": True, "persistence": True}
    assert body["persistence"] == {
        "ok": True,
        "backend": "sqlite",
        "currentVersion": SCHEMA_VERSION,
        "redactedLocation": "[REDACTED_SQLITE_DATABASE]",
    }
    bare = await (await make_app().test_client().get("/status", headers=AUTH)).get_json()
    assert bare["persistence"] is None
    assert bare["serviceMode"] == "webhook"


async def test_diagnostics_snapshot(make_app: AppFactory, sqlite_store: SqliteStore) -> None:
    client = make_app(store=FailingStore(sqlite_store, {"list_messages"})).test_client()
    for _ in range(3):
        await client.get("/api/messages", headers=AUTH)
    body = await (await client.get("/debug/diagnostics", headers=AUTH)).get_json()
    assert body["service"] == "svc"
    assert body["runtime"] == "python-trio"
    assert body["serviceMode"] == "webhook+persistence"
    assert body["featureFlags"] == {"groupRoutes": False, "persistence": True}
    assert body["recentErrors"] == [{"errorClass": "PersistenceError", "count": 3}]
    assert "http_requests" in body["metricFamilies"] or "http_requests_total" in str(
        body["metricFamilies"]
    )
    assert body["persistence"]["redactedLocation"] == "[REDACTED_SQLITE_DATABASE]"
    shape = json.dumps(body["configShape"])
    assert "SVC_" not in shape

    def leaves(node: object) -> list[object]:
        if isinstance(node, dict):
            return [leaf for value in node.values() for leaf in leaves(value)]
        return [node]

    assert set(leaves(body["configShape"])) == {"[REDACTED]"}
    assert len(leaves(body["configShape"])) >= 20


async def test_recent_errors_cap_at_ten_and_cut_names() -> None:
    from svc.http._service import RecentErrors

    errors = RecentErrors()
    for index in range(12):
        errors.add(f"Error{index}")
    errors.add("E" * 200)
    snapshot = errors.snapshot()
    assert len(snapshot) == 10
    assert snapshot[0]["errorClass"] == "Error3"
    assert snapshot[-1]["errorClass"] == "E" * 80


async def test_readyz(make_app: AppFactory, sqlite_store: SqliteStore) -> None:
    assert (await make_app().test_client().get("/readyz")).status_code == 200
    ok = await make_app(store=sqlite_store).test_client().get("/readyz")
    assert await ok.get_json() == {"ok": True, "service": "svc"}
    await sqlite_store.close()
    down = await make_app(store=sqlite_store).test_client().get("/readyz")
    assert down.status_code == 503
    assert (await down.get_json())["error"]["code"] == "persistence_unavailable"


async def test_a_store_whose_health_check_raises_reads_as_down(
    make_app: AppFactory, sqlite_store: SqliteStore
) -> None:
    """A store breaking the contract (its ``health`` raises) makes /readyz 503 and the
    operator snapshots report it down, never a 500."""
    client = make_app(store=FailingStore(sqlite_store, {"health"})).test_client()
    ready = await client.get("/readyz")
    assert ready.status_code == 503
    assert (await ready.get_json())["error"]["code"] == "persistence_unavailable"
    for path in ("/status", "/debug/diagnostics"):
        response = await client.get(path, headers=AUTH)
        assert response.status_code == 200, path
        assert (await response.get_json())["persistence"] == {
            "ok": False,
            "backend": "unknown",
            "currentVersion": None,
            "redactedLocation": "",
        }


async def test_readyz_refuses_an_unmigrated_store(make_app: AppFactory) -> None:
    store = SqliteStore(":memory:")
    await store.migrate(target_version=5)
    response = await make_app(store=store).test_client().get("/readyz")
    assert response.status_code == 503
    await store.close()


async def test_metrics_registry_can_be_shared(make_app: AppFactory) -> None:
    registry = CollectorRegistry()
    client = make_app(metrics_registry=registry).test_client()
    await client.get("/healthz")
    names = {metric.name for metric in registry.collect()}
    assert "http_requests" in names
