"""A copy of a delivery this process recorded costs no store call.

The platform retries a delivery byte for byte. Once this process has recorded one with its
projection (its updates handed to the handler runtime with the record), every update of a
copy is a duplicate: the copy is answered as such (200, nothing dispatched) from
``Service.local_copies``, without projecting or recording it again. Any doubt (a projection
refused, an identity change, a hook that failed, a copy that is not byte for byte the same)
sends the copy to the store as before. Both adapters.
"""

from __future__ import annotations

import functools
import json
from typing import Any

from svc.http._local_copies import LocalCopies
from svc.store import PersistenceValidationError
from tests._support import sign

from .conftest import (
    APP_SECRET,
    AUTH,
    WEBHOOK,
    AppFactory,
    CountingStore,
    RecordingFacade,
    fixture,
    post_webhook,
)


def _body(name: str) -> bytes:
    return json.dumps(fixture(name)).encode()


async def _duplicates(client: Any) -> float:
    """The updates counted ``duplicate`` so far, over every kind."""
    text = await (await client.get("/metrics", headers=AUTH)).get_data(as_text=True)
    return sum(
        float(line.rsplit(" ", 1)[1])
        for line in text.splitlines()
        if 'outcome="duplicate"' in line and 'update_kind="' in line and "_total{" in line
    )


async def test_a_copy_of_a_delivery_run_to_the_end_makes_no_store_call(
    make_app: AppFactory, store: Any
) -> None:
    calls = CountingStore(store)
    facade = RecordingFacade()
    client = make_app(facade=facade, store=calls).test_client()
    body = _body("status_batch.json")
    first = await post_webhook(client, body)
    assert first.status_code == 200
    received = (await first.get_json())["received"]
    assert received == len(facade.updates) > 1
    before = dict(calls.names)
    duplicates_before = await _duplicates(client)

    # Posted without running the handler runtime after it: no store call of any kind.
    headers = {"X-Hub-Signature-256": sign(body=body, secret=APP_SECRET)}
    again = await client.post(WEBHOOK, data=body, headers=headers)

    assert again.status_code == 200
    assert await again.get_json() == {
        "status": "ok",
        "received": received,
        "dispatched": 0,
        "skipped": received,
        "queued": 0,
    }
    assert dict(calls.names) == before  # no store call at all
    assert len(facade.updates) == received  # nothing dispatched again
    assert await _duplicates(client) == duplicates_before + received


async def test_the_answer_from_memory_is_the_store_s_answer_to_a_copy(
    make_app: AppFactory, store: Any
) -> None:
    """The same copy at a second instance over the same store goes to the store: the two
    answers are equal."""
    body = _body("batch_mixed.json")
    here = make_app(facade=RecordingFacade(), store=store).test_client()
    assert (await post_webhook(here, body)).status_code == 200
    calls = CountingStore(store)
    elsewhere = make_app(facade=RecordingFacade(), store=calls).test_client()
    from_store = await post_webhook(elsewhere, body)
    assert calls.names["record_webhook_updates"] == 1
    from_memory = await post_webhook(here, body)
    assert from_store.status_code == from_memory.status_code == 200
    assert await from_store.get_json() == await from_memory.get_json()


async def test_a_copy_that_is_not_byte_for_byte_the_same_goes_to_the_store(
    make_app: AppFactory, store: Any
) -> None:
    calls = CountingStore(store)
    client = make_app(facade=RecordingFacade(), store=calls).test_client()
    payload = fixture("status_batch.json")
    assert (await post_webhook(client, json.dumps(payload).encode())).status_code == 200
    reordered = json.dumps(payload, indent=1).encode()  # the same envelope, other bytes
    again = await post_webhook(client, reordered)
    assert (await again.get_json())["dispatched"] == 0  # deduplicated by the store
    assert calls.names["record_webhook_updates"] == 2


async def test_a_delivery_whose_projection_was_refused_is_not_kept(
    make_app: AppFactory, store: Any
) -> None:
    class RefusesRows(CountingStore):
        """Refuses every projection (the checked ``rows``), as a store refuses a record."""

        def __getattr__(self, name: str) -> Any:
            method = super().__getattr__(name)
            if name != "record_webhook_updates":
                return method

            @functools.wraps(method)  # keeps the signature: the service sends ``rows``
            async def call(*args: Any, **kwargs: Any) -> Any:
                if kwargs.get("rows") is not None:
                    self.names[name] += 1
                    raise PersistenceValidationError("invalid_record", "simulated refusal")
                return await method(*args, **kwargs)

            return call

    calls = RefusesRows(store)
    client = make_app(facade=RecordingFacade(), store=calls).test_client()
    body = _body("message_text.json")
    assert (await post_webhook(client, body)).status_code == 200
    assert calls.names["record_webhook_updates"] == 2  # refused, then recorded without rows
    again = await post_webhook(client, body)
    assert (await again.get_json())["dispatched"] == 0
    assert calls.names["record_webhook_updates"] == 4  # the copy asked the store again


async def test_a_delivery_with_identity_changes_is_not_kept(
    make_app: AppFactory, store: Any
) -> None:
    calls = CountingStore(store)
    client = make_app(facade=RecordingFacade(), store=calls).test_client()
    body = _body("bsuid_identity_changes.json")
    assert (await post_webhook(client, body)).status_code == 200
    assert calls.names["record_identity_change"] >= 1
    recorded = calls.names["record_webhook_updates"]
    again = await post_webhook(client, body)
    assert (await again.get_json())["dispatched"] == 0
    assert calls.names["record_webhook_updates"] == recorded + 1  # re-applied by the store path


async def test_a_delivery_a_hook_failed_on_is_not_kept(make_app: AppFactory, store: Any) -> None:
    """The broadcast template pause fails (its store call fails): 503, and the copy goes to
    the store (a duplicate there) and runs the hook again."""

    calls = CountingStore(store, failing=frozenset({"pause_broadcasts_for_template"}))
    client = make_app(facade=RecordingFacade(), store=calls).test_client()
    body = _body("batch_mixed.json")
    assert (await post_webhook(client, body)).status_code == 503
    again = await post_webhook(client, body)
    assert again.status_code == 503  # the hook runs (and fails) again: the copy was not kept
    assert calls.names["pause_broadcasts_for_template"] == 2
    assert calls.names["record_webhook_updates"] == 2  # the hook runs beside the record


async def test_no_copy_is_answered_from_memory_without_a_store(make_app: AppFactory) -> None:
    facade = RecordingFacade()
    client = make_app(facade=facade).test_client()
    body = _body("message_text.json")
    assert (await post_webhook(client, body)).status_code == 200
    assert (await post_webhook(client, body)).status_code == 200
    # No store call, no local copy: the runtime's window of seen keys makes the copy a duplicate.
    assert len(facade.updates) == 1


def test_local_copies_keep_at_least_their_limit_and_at_most_twice_it() -> None:
    """The latest ``limit`` hashes are always kept; older ones are forgotten a generation at
    a time, so at most twice the limit are held."""
    copies = LocalCopies(limit=2)
    copies.add(["a"])
    assert "a" in copies
    copies.add(["b"])  # the first generation is full: it becomes the older one
    copies.add(["c"])
    assert all(key in copies for key in "abc")
    copies.add(["d"])  # the second fills: the first ("a", "b") is forgotten whole
    assert "a" not in copies and "b" not in copies
    assert "c" in copies and "d" in copies
    for i in range(50):
        copies.add([f"k{i}"])
        assert f"k{i}" in copies and (i == 0 or f"k{i - 1}" in copies)
        held = sum(f"k{j}" in copies for j in range(i + 1))
        assert held <= 4
