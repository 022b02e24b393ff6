"""A delivery's projection is checked once, while it is built, never again in the store.

The service hands the store the projection as ``CheckedRows`` (checked by the store's
rules while it was built), which the store takes as it is; the rows are stored.
"""

from __future__ import annotations

from typing import Any

from svc.store import CheckedRows

from .conftest import AppFactory, CountingStore, RecordingFacade, fixture, post_webhook


class _KeepsArguments(CountingStore):
    """A store's proxy that keeps the keywords of each ``record_webhook_updates`` call."""

    def __init__(self, store: Any) -> None:
        super().__init__(store)
        self.calls: list[dict[str, Any]] = []

    def __getattr__(self, name: str) -> Any:
        method = super().__getattr__(name)
        if name != "record_webhook_updates":
            return method

        async def call(**kwargs: Any) -> Any:
            self.calls.append(kwargs)
            return await method(**kwargs)

        return call


async def test_the_webhook_path_hands_the_store_its_checked_rows(
    make_app: AppFactory, store: Any
) -> None:
    """The service records a delivery with its projection as ``CheckedRows`` only (no
    records for the store to check: ``test_checked_rows`` shows it takes the rows as they
    are), and the rows are stored."""
    calls = _KeepsArguments(store)
    client = make_app(facade=RecordingFacade(), store=calls).test_client()
    payload = fixture("batch_mixed.json")
    response = await post_webhook(client, payload)
    assert response.status_code == 200
    (given,) = calls.calls
    assert isinstance(given["rows"], CheckedRows)
    assert not {"messages", "statuses", "identities"} & given.keys()
    value = payload["entry"][0]["changes"][0]["value"]
    message = value["messages"][0]
    row = await store.get_message(wa_message_id=message["id"], direction="inbound")
    assert row is not None and row.from_phone == message["from"]
    sender = await store.find_user_identity(user=message["from"])
    assert sender is not None
