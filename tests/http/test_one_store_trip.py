"""A delivery whose updates have no work costs one store call: they are recorded finished.

The facade says which updates need a run (``needs_run``); hooks say which they want.
The store records the others finished in the record's own transaction, and the
service marks handled after dispatch only the updates that ran work. Both adapters.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

from svc.http._update_rules import UpdateHook, keys_without_work
from svc.webhook import DefaultFacade, HandlerContext, Update, normalize, update_key

from .conftest import AppFactory, CountingStore, RecordingFacade, fixture, post_webhook


class _Keeping(DefaultFacade):
    """The default facade, keeping every update it is handed."""

    def __init__(self) -> None:
        super().__init__()
        self.updates: list[Update] = []

    async def dispatch(self, update: Update) -> None:
        self.updates.append(update)
        await super().dispatch(update)

    async def dispatch_with_context(self, context: HandlerContext) -> None:
        self.updates.append(context.update)  # the service dispatches with a context
        await super().dispatch_with_context(context)


def _without_template_changes() -> dict[str, Any]:
    """``batch_mixed.json`` without its template status change (the broadcast pause's work)."""
    payload = fixture("batch_mixed.json")
    for entry in payload["entry"]:
        entry["changes"] = [
            change
            for change in entry["changes"]
            if change["field"] != "message_template_status_update"
        ]
    return payload


async def _unfinished(store: Any, updates: list[Update]) -> tuple[str, ...]:
    """The keys of ``updates`` the store still holds unfinished (a lapsed claim is won)."""
    probe = await store.record_webhook_updates(
        event_key="probe",
        event_hash="h",
        received_at=datetime(2030, 1, 1, tzinfo=UTC),
        update_keys=[update_key(update) for update in updates],
        claim_lease_ms=0,
    )
    return tuple(probe.to_run)


async def test_a_delivery_without_work_makes_exactly_one_store_call(
    make_app: AppFactory, store: Any
) -> None:
    calls = CountingStore(store)
    facade = _Keeping()
    client = make_app(facade=facade, store=calls).test_client()
    response = await post_webhook(client, _without_template_changes())
    assert response.status_code == 200
    body = await response.get_json()
    assert body["dispatched"] == len(facade.updates) > 3  # the facade still gets every update
    assert calls.names == Counter({"record_webhook_updates": 1})
    assert await _unfinished(store, facade.updates) == ()  # recorded finished
    # A copy at another instance over the same store is one call too, and dispatches
    # nothing (at this one it makes none: test_local_copies).
    other = make_app(facade=_Keeping(), store=calls).test_client()
    again = await post_webhook(other, _without_template_changes())
    assert (await again.get_json())["dispatched"] == 0
    assert calls.names == Counter({"record_webhook_updates": 2})  # (the probe is not counted)


async def test_only_the_updates_with_work_are_marked_after_dispatch(
    make_app: AppFactory, store: Any
) -> None:
    calls = CountingStore(store)
    facade = _Keeping()
    ran: list[str] = []
    facade.on("message", lambda update: ran.append(update.message_id))
    client = make_app(facade=facade, store=calls).test_client()
    response = await post_webhook(client, _without_template_changes())
    assert response.status_code == 200
    messages = [update for update in facade.updates if update.kind == "message"]
    assert len(ran) == len(messages) == 2
    assert calls.names == Counter({"record_webhook_updates": 1, "mark_webhook_updates_handled": 1})
    assert calls.marked == [[update_key(update) for update in messages]]
    assert await _unfinished(store, facade.updates) == ()


async def test_a_hook_s_updates_are_work(make_app: AppFactory, store: Any) -> None:
    """The broadcast template pause wants the rejected template: it is marked after its run."""
    calls = CountingStore(store)
    facade = _Keeping()
    client = make_app(facade=facade, store=calls).test_client()
    response = await post_webhook(client, fixture("batch_mixed.json"))
    assert response.status_code == 200
    templates = [update for update in facade.updates if update.kind == "account"]
    assert len(templates) == 1
    assert calls.names["mark_webhook_updates_handled"] == 1
    assert calls.marked == [[update_key(templates[0])]]


async def test_a_facade_that_does_not_say_gets_every_update_marked(
    make_app: AppFactory, store: Any
) -> None:
    calls = CountingStore(store)
    facade = RecordingFacade()
    client = make_app(facade=facade, store=calls).test_client()
    response = await post_webhook(client, _without_template_changes())
    assert response.status_code == 200
    assert calls.names == Counter({"record_webhook_updates": 1, "mark_webhook_updates_handled": 1})
    assert calls.marked == [[update_key(update) for update in facade.updates]]


def test_keys_without_work_ask_the_facade_and_every_hook() -> None:
    payload = fixture("batch_mixed.json")
    delivery = normalize(payload).updates
    keys = [update_key(update) for update in delivery]
    kinds = [update.kind for update in delivery]
    messages_only = DefaultFacade()
    messages_only.on("message", lambda update: None)
    statuses = UpdateHook(wants=lambda update: update.kind == "status", run=_no_run)
    assert keys_without_work(delivery, keys, RecordingFacade(), [statuses]) == []
    assert keys_without_work(delivery, keys, messages_only, []) == [
        key for key, kind in zip(keys, kinds, strict=True) if kind != "message"
    ]
    assert keys_without_work(delivery, keys, messages_only, [statuses]) == [
        key for key, kind in zip(keys, kinds, strict=True) if kind not in ("message", "status")
    ]
    # A key repeated in the delivery has work if any of its updates has.
    first = delivery[0]
    assert first.kind == "message"
    assert keys_without_work((first, first), ["k", "k"], messages_only, []) == []
    assert keys_without_work((first, first), ["k", "k"], DefaultFacade(), []) == ["k", "k"]


async def _no_run(updates: Sequence[Update]) -> Sequence[Update]:
    raise AssertionError("not run")
