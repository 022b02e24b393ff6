"""Hypothesis strategies shared by the set-based equivalence tests of both adapters."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from hypothesis import strategies as st

from svc.store import MessageRecord, _ops
from svc.store import _validate as check

from .conftest import T0

KEYS = st.sampled_from(["a", "b", "c"])
STATUSES = st.sampled_from(["sent", "delivered", "read", "failed", "pending"])
TIMES = st.integers(min_value=0, max_value=4).map(lambda n: n * 1000)
MESSAGES = st.builds(
    lambda row, wa, direction, status, at: check.message(
        MessageRecord(
            row_id=f"row-{row}",
            wa_message_id=f"wamid.{wa}",
            direction=direction,
            from_phone="1555" if direction == "inbound" else None,
            to_phone=None if direction == "inbound" else "1555",
            type="text",
            status=status,
            created_at=T0 + timedelta(milliseconds=at),
            updated_at=T0 + timedelta(milliseconds=at),
        )
    ),
    KEYS,
    KEYS,
    st.sampled_from(["inbound", "outbound"]),
    STATUSES,
    TIMES,
)
STATUS_EVENTS = st.tuples(KEYS.map(lambda k: f"wamid.{k}"), STATUSES, TIMES)
CLAIMS = st.tuples(KEYS, st.sampled_from(["h1", "h2"]), TIMES)
COMPLETES = st.tuples(KEYS, st.sampled_from(["h1", "h2"]), st.just('{"ok":1}'), TIMES)
EVENTS = st.tuples(KEYS, st.just("h"), TIMES)

SINGLE: dict[str, Any] = {
    "message": lambda s, a: _ops.record_message(s, a),
    "status": lambda s, a: _ops.append_message_status(s, *a),
    "claim": lambda s, a: _ops.claim_service_request(s, *a),
    "complete": lambda s, a: _ops.complete_service_request(s, *a),
    "event": lambda s, a: _ops.record_webhook_event(s, *a),
}
DUMP = [
    "SELECT * FROM svc_messages ORDER BY row_id",
    "SELECT wa_message_id, status, occurred_at FROM svc_message_status_events ORDER BY 1, 2, 3",
    "SELECT * FROM svc_service_requests ORDER BY idempotency_key",
    "SELECT * FROM svc_webhook_events ORDER BY event_key",
]
SEED = st.lists(
    st.one_of(
        st.tuples(st.just("message"), MESSAGES),
        st.tuples(st.just("status"), STATUS_EVENTS),
        st.tuples(st.just("claim"), CLAIMS),
        st.tuples(st.just("complete"), COMPLETES),
    ),
    max_size=6,
)


def _fresh_row_ids(deliveries: list[Any]) -> list[Any]:
    """Give every message its own row id, as the HTTP layer does (a uuid4 per message)."""
    return [
        (*d[:3], tuple((f"d{i}-{j}", *m[1:]) for j, m in enumerate(d[3])), d[4])
        for i, d in enumerate(deliveries)
    ]


def deliveries(*, max_updates: int, max_deliveries: int) -> st.SearchStrategy[list[Any]]:
    """Lists of checked deliveries (event key, hash, ms, message values, status events)."""
    return st.lists(
        st.tuples(
            KEYS,
            TIMES,
            st.lists(MESSAGES, max_size=max_updates).map(tuple),
            st.lists(STATUS_EVENTS, max_size=max_updates).map(tuple),
        ).map(lambda d: (f"ev-{d[0]}", "h", d[1], d[2], d[3])),
        min_size=1,
        max_size=max_deliveries,
    )


DELIVERY_ITEMS = deliveries(max_updates=3, max_deliveries=5).map(_fresh_row_ids)
