"""HTTP fixtures: an app with a recording fake Graph (``httpx.MockTransport``) and fixed secrets.

The four secret values are distinctive strings so that leak scans can look
for them in every response, header, log line and metric.
"""

from __future__ import annotations

import functools
import inspect
import io
import json
import logging
from collections import Counter
from collections.abc import AsyncIterator, Callable, Iterable
from datetime import UTC, datetime
from typing import Any

import pytest
from prometheus_client import CollectorRegistry

from svc.crypto import InboxKeyring
from svc.http import LogOptions, Profile, ServiceSecrets, create_app
from svc.store import PersistenceError, PostgresStore, SqliteStore
from tests._support import FakeGraphTransport, drop_run_schemas, new_run_prefix, sign

ACCESS_TOKEN = "EAAGaccessTOKENvalue1234"
VERIFY_TOKEN = "verifyTOKENvalue5678"
APP_SECRET = "appSECRETvalue9012"
BEARER = "serviceBEARERvalue3456"
SECRET_VALUES = (ACCESS_TOKEN, VERIFY_TOKEN, APP_SECRET, BEARER)
PHONE_ID = "106540352242922"
WABA_ID = "102290129340398"
T0 = datetime(2026, 11, 21, 10, 15, 30, tzinfo=UTC)
AUTH = {"Authorization": f"Bearer {BEARER}"}

INBOX_KEY = bytes(range(32))
"""The inbox key of the test apps with a store and handlers (``inbox_keyring()``)."""


def inbox_keyring(*keys: bytes) -> InboxKeyring:
    """A keyring of ``keys`` (default: ``INBOX_KEY``), the first one writing."""
    return InboxKeyring(list(keys) or [INBOX_KEY])


SECRETS = ServiceSecrets(
    access_token=ACCESS_TOKEN,
    webhook_verify_token=VERIFY_TOKEN,
    webhook_app_secret=APP_SECRET,
    service_bearer_token=BEARER,
)


class Clock:
    """An injected clock the test moves by hand."""

    def __init__(self, start: datetime = T0) -> None:
        self.value = start

    def __call__(self) -> datetime:
        return self.value


@pytest.fixture
def graph() -> FakeGraphTransport:
    return FakeGraphTransport()


@pytest.fixture
def clock() -> Clock:
    return Clock()


@pytest.fixture
def log_stream() -> io.StringIO:
    return io.StringIO()


@pytest.fixture
def profile() -> Profile:
    return Profile(phone_number_id=PHONE_ID, waba_id=WABA_ID)


AppFactory = Callable[..., Any]


@pytest.fixture
def make_app(
    graph: FakeGraphTransport, clock: Clock, log_stream: io.StringIO, profile: Profile
) -> AppFactory:
    """Build an app with the fake Graph, the fixed secrets and the test clock."""

    def build(**overrides: Any) -> Any:
        options: dict[str, Any] = {
            "profile": profile,
            "secrets": SECRETS,
            "transport": graph.transport(),
            "now": clock,
            "log": LogOptions(log_stream=log_stream, logger=logging.getLogger("svc.http.test")),
            "metrics_registry": CollectorRegistry(),
        }
        options.update(overrides)
        if options.get("store") is not None and "inbox_keyring" not in options:
            options["inbox_keyring"] = inbox_keyring()
        return create_app(**options)

    return build


@pytest.fixture
async def client(make_app: AppFactory) -> AsyncIterator[Any]:
    """A Quart test client of a stateless app (lifespan run through ``test_app``)."""
    app = make_app()
    async with app.test_app() as test_app:
        yield test_app.test_client()


WEBHOOK = "/webhooks/whatsapp"
FIXTURES = __import__("pathlib").Path(__file__).parent.parent / "webhook" / "fixtures"


def fixture(name: str) -> dict[str, Any]:
    data: dict[str, Any] = json.loads((FIXTURES / name).read_text(encoding="utf-8"))
    return data


class RecordingFacade:
    """A facade that handles every update and keeps each one it runs; ``fail_kinds`` makes
    its run raise for those kinds."""

    def __init__(self, fail_kinds: frozenset[str] = frozenset()) -> None:
        self.updates: list[Any] = []
        self.fail_kinds = fail_kinds

    def coalesce_for(self, update: Any) -> None:
        return None

    def handles(self, update: Any) -> bool:
        return True

    async def run(self, context: Any) -> None:
        update = context.update
        self.updates.append(update)
        if update.kind in self.fail_kinds:
            raise RuntimeError("handler blew up with PII 16505551234")


async def settle(client_or_app: Any) -> None:
    """Wait until the app's handler runtime has nothing due and no run in flight: the
    served app's runtime (``test_app``), or, for a bare test client, the runtime run here
    until then."""
    app = getattr(client_or_app, "app", client_or_app)
    runtime = app.extensions.get("svc.handlers")
    if runtime is None:
        return
    if runtime.running:
        await runtime.wait_idle()
    else:
        await runtime.run_until_idle()


async def post_webhook(
    client: Any, payload: dict[str, Any] | bytes, *, signature: str | None = "auto"
) -> Any:
    body = payload if isinstance(payload, bytes) else json.dumps(payload).encode()
    headers = {"Content-Type": "application/json"}
    if signature == "auto":
        headers["X-Hub-Signature-256"] = sign(body=body, secret=APP_SECRET)
    elif signature is not None:
        headers["X-Hub-Signature-256"] = signature
    response = await client.post(WEBHOOK, data=body, headers=headers)
    await settle(client)  # the handlers run after the answer: the test looks after them
    return response


class CountingStore:
    """A store's proxy counting every public store call by name; a call named in
    ``failing`` (a set the test may change) is counted, then raises ``PersistenceError``
    (a store outage)."""

    def __init__(self, store: Any, *, failing: Iterable[str] = ()) -> None:
        self._store = store
        self.failing = set(failing)
        self.names: Counter[str] = Counter()

    def __getattr__(self, name: str) -> Any:
        method = getattr(self._store, name)
        if name.startswith("_") or not inspect.iscoroutinefunction(method):
            return method

        @functools.wraps(method)
        async def call(*args: Any, **kwargs: Any) -> Any:
            self.names[name] += 1
            if name in self.failing:
                raise PersistenceError("query_failed", "simulated outage")
            return await method(*args, **kwargs)

        return call


class FailingStore:
    """A store seam: wraps a real store and raises ``PersistenceError`` from chosen methods."""

    def __init__(self, inner: Any, failing: set[str]) -> None:
        self._inner = inner
        self.failing = failing

    @property
    def backend(self) -> str:
        return str(self._inner.backend)

    def __getattr__(self, name: str) -> Any:
        attr = getattr(self._inner, name)
        if not callable(attr):
            return attr

        async def call(*args: Any, **kwargs: Any) -> Any:
            if name in self.failing:
                from svc.store import PersistenceError

                raise PersistenceError("query_failed", "simulated outage")
            return await attr(*args, **kwargs)

        return call


@pytest.fixture
async def sqlite_store() -> AsyncIterator[Any]:
    from svc.store import SqliteStore

    store = SqliteStore(":memory:")
    await store.migrate()
    yield store
    await store.close()


@pytest.fixture(params=["sqlite", "postgres"])
def store_url(request: pytest.FixtureRequest) -> str | None:
    """None for SQLite, else the PostgreSQL URL (skipped here, with its reason, when unset)."""
    return None if request.param == "sqlite" else str(request.getfixturevalue("postgres_url"))


@pytest.fixture
async def store(store_url: str | None) -> AsyncIterator[Any]:
    """A migrated store of each adapter; the PostgreSQL schema is dropped after."""
    if store_url is None:
        sqlite = SqliteStore(":memory:")
        await sqlite.migrate()
        yield sqlite
        await sqlite.close()
        return
    schema = new_run_prefix("http")
    postgres = PostgresStore(store_url, schema=schema, min_size=1, max_size=4)
    try:
        await postgres.migrate()
        yield postgres
    finally:
        await postgres.close()
        drop_run_schemas(store_url, schema)
