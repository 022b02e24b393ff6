"""The projection's checked rows store exactly what the checked-record path stores.

Hypothesis builds webhook envelopes (the projection equivalence test's
strategy: valid, blank, too long, control-laden and missing ids, phones,
usernames and timestamps). Each batch of deliveries goes to two fresh stores of one adapter:
one gets the reference projection's records through the store's checks
(``messages=``, ``statuses=``, ``identities=``), the other the one-pass
projection's ``CheckedRows`` (``rows=``), taken as built. The stores see the
same deliveries in the same order, so their tables must stay equal (row ids
apart: each projection draws its own), and each must refuse exactly what the
other refuses.
"""

from __future__ import annotations

from datetime import datetime
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svc.http._projection import delivery_projection
from svc.store import PersistenceValidationError
from svc.webhook import Update, normalize
from tests.http import _projection_reference as reference
from tests.http.test_projection_equivalence import envelopes

from .conftest import PERSISTENT_ADAPTERS, POSTGRES_KINDS, T0, AnyStore, _backend, _closing_opened

TABLES = [
    "SELECT wa_message_id, direction, from_phone, to_phone, type, status, graph_message_id,"
    " created_at, updated_at, user_id, parent_user_id, business_phone_number_id"
    " FROM svc_messages ORDER BY wa_message_id, direction",
    "SELECT wa_message_id, status, occurred_at, pricing_category FROM svc_message_status_events"
    " ORDER BY 1, 2, 3",
    "SELECT user_id, parent_user_id, wa_id, username, last_seen_at FROM svc_user_identities"
    " ORDER BY 1, 2, 3, 4, 5",
    "SELECT event_key, event_hash, received_at FROM svc_webhook_events ORDER BY 1",
]


def _now() -> datetime:
    return T0


async def _record(
    checked: AnyStore, records: AnyStore, key: str, updates: tuple[Update, ...]
) -> None:
    """One delivery to both stores; each refuses exactly what the other refuses."""
    projection = delivery_projection(updates, _now)
    old = reference.delivery_projection(updates, _now)
    assert projection.unprojected == old.unprojected
    try:
        await records.record_webhook_updates(
            event_key=key,
            event_hash="h",
            received_at=T0,
            update_keys=(key,),
            messages=old.messages,
            statuses=old.statuses,
            identities=old.identities,
        )
    except PersistenceValidationError:
        assert projection.refusal is not None
        return
    assert projection.refusal is None
    await checked.record_webhook_updates(
        event_key=key, event_hash="h", received_at=T0, update_keys=(key,), rows=projection.rows
    )


@pytest.mark.parametrize("kind", PERSISTENT_ADAPTERS)
def test_checked_rows_store_what_the_checked_records_store(
    kind: str, request: pytest.FixtureRequest, tmp_path_factory: pytest.TempPathFactory
) -> None:
    @settings(
        max_examples=25 if kind in POSTGRES_KINDS else 50,
        deadline=None,
        suppress_health_check=[HealthCheck.too_slow],
    )
    @given(batch=st.lists(envelopes(), min_size=1, max_size=4))
    def check(batch: list[dict[str, Any]]) -> None:
        first = _backend(kind, request, tmp_path_factory.mktemp("checked"))
        second = _backend(kind, request, tmp_path_factory.mktemp("records"))

        async def run() -> None:
            async with _closing_opened(first), _closing_opened(second):
                checked, records = first.open(), second.open()
                await checked.migrate()
                await records.migrate()
                for n, envelope in enumerate(batch):
                    updates = normalize(envelope, received_at=1_779_321_024).updates
                    await _record(checked, records, f"ev-{n}", updates)

        trio.run(run)
        for sql in TABLES:
            assert first.raw_sql(sql) == second.raw_sql(sql), sql

    check()
