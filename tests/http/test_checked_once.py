"""A delivery's projection is checked once, while it is built, never again in the store.

The service hands the store the projection as ``CheckedRows``: the store's
record checks (``check.message``, ``check.status_event``, ``check.identity``)
never run on the webhook path, and the rows they would have checked are stored.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

import pytest

from svc.http._store_calls import takes_checked_rows
from svc.store import _validate as check

from .conftest import AppFactory, RecordingFacade, fixture, post_webhook


async def test_the_webhook_path_never_checks_its_own_records_again(
    make_app: AppFactory, store: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    assert takes_checked_rows(store)
    calls: Counter[str] = Counter()

    def counting(name: str) -> Callable[..., Any]:
        real = getattr(check, name)

        def wrapper(*args: Any, **kwargs: Any) -> Any:
            calls[name] += 1
            return real(*args, **kwargs)

        return wrapper

    for name in ("message", "status_event", "identity"):
        monkeypatch.setattr(check, name, counting(name))
    client = make_app(facade=RecordingFacade(), store=store).test_client()
    payload = fixture("batch_mixed.json")
    response = await post_webhook(client, payload)
    assert response.status_code == 200
    assert calls == Counter()
    value = payload["entry"][0]["changes"][0]["value"]
    message = value["messages"][0]
    row = await store.get_message(wa_message_id=message["id"], direction="inbound")
    assert row is not None and row.from_phone == message["from"]
    sender = await store.find_user_identity(user=message["from"])
    assert sender is not None


def test_a_store_without_the_checked_form_gets_records() -> None:
    class RecordsOnly:
        async def record_webhook_updates(self, **kwargs: Any) -> Any:
            raise AssertionError("not called")

    class Positional:
        async def record_webhook_updates(self, rows: Any = None) -> Any:
            raise AssertionError("not called")

    assert not takes_checked_rows(None)
    assert not takes_checked_rows(RecordsOnly())  # type: ignore[arg-type]
    assert not takes_checked_rows(Positional())  # type: ignore[arg-type]
