"""Hypothesis strategies shared by the set-based equivalence tests of both adapters."""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from hypothesis import strategies as st

from svc.store import MessageRecord, UserIdentityRecord, _identity, _ops
from svc.store import _validate as check
from svc.store._kinds import DeliveryWrite
from svc.store._person import person_queue_key

from ._reference import record_update_keys
from .conftest import T0

KEYS = st.sampled_from(["a", "b", "c"])
STATUSES = st.sampled_from(["sent", "delivered", "read", "failed", "pending"])
TIMES = st.integers(min_value=0, max_value=4).map(lambda n: n * 1000)
PHONES = st.sampled_from([None, "1555", "1556"])
USER_IDS = st.sampled_from([None, "US.1", "US.2"])
PARENT_IDS = st.sampled_from([None, "US.ENT.1"])
WHO = st.tuples(PHONES, USER_IDS, PARENT_IDS).filter(lambda who: who != (None, None, None))
"""The user a message names: a phone, a BSUID, a parent BSUID (at least one)."""
MESSAGES = st.builds(
    lambda row, wa, direction, status, at, who: check.message(
        MessageRecord(
            row_id=f"row-{row}",
            wa_message_id=f"wamid.{wa}",
            direction=direction,
            from_phone=who[0] if direction == "inbound" else None,
            to_phone=None if direction == "inbound" else who[0],
            type="text",
            status=status,
            created_at=T0 + timedelta(milliseconds=at),
            updated_at=T0 + timedelta(milliseconds=at),
            user_id=who[1],
            parent_user_id=who[2],
        )
    ),
    KEYS,
    KEYS,
    st.sampled_from(["inbound", "outbound"]),
    STATUSES,
    TIMES,
    WHO,
)
IDENTITIES = st.builds(
    lambda ids, parent, username, at: check.identity(
        UserIdentityRecord(
            user_id=ids[0],
            parent_user_id=parent,
            wa_id=ids[1],
            username=username,
            last_seen_at=T0 + timedelta(milliseconds=at),
        )
    ),
    st.tuples(USER_IDS, PHONES).filter(lambda ids: ids != (None, None)),
    PARENT_IDS,
    st.sampled_from([None, "ann", "bob"]),
    TIMES,
)
"""Identity sightings: a BSUID or a wa_id (or both), maybe a parent BSUID and a username."""
STATUS_EVENTS = st.tuples(
    KEYS.map(lambda k: f"wamid.{k}"),
    STATUSES,
    TIMES,
    st.sampled_from([None, "marketing", "service"]),
)
"""Checked status events: message id, status, ms and the pricing category (or none)."""
CLAIMS = st.tuples(KEYS, st.sampled_from(["h1", "h2"]), TIMES)
COMPLETES = st.tuples(
    KEYS, st.sampled_from(["h1", "h2"]), st.just('{"ok":1}'), TIMES, st.sampled_from([None, 502])
)
UPDATE_KEYS = st.sampled_from(["u1", "u2", "u3", "u4"])
INBOX_ROWS = st.builds(
    lambda key, queue, number, sealed, user, aliases: (
        key,
        f"q-{queue}",
        number,
        "message",
        sealed,
        *user,
        aliases,
    ),
    UPDATE_KEYS,
    KEYS,
    st.sampled_from([None, "106540352242922"]),
    st.sampled_from([b"\x00sealed", b"\xffother"]),
    st.tuples(USER_IDS, PHONES),
    st.sampled_from([(), ("q-a",), ("q-a", "q-b")]),
)
"""Checked inbox rows: update key, own queue key, business number id, kind, sealed bytes,
the user's BSUID and phone (maybe none: a group's or a number's update) and its own keys."""
SINGLE: dict[str, Any] = {
    "message": lambda s, a: _ops.record_message(s, a),
    "status": lambda s, a: _ops.append_message_status(s, *a),
    "claim": lambda s, a: _ops.claim_service_request(s, *a),
    "complete": lambda s, a: _ops.complete_service_request(s, *a),
    "event": lambda s, a: _ops.record_webhook_event(s, *a),
    "identity": lambda s, a: _identity.upsert_identities(s, [a]),
    "update": lambda s, a: record_update_keys(s, "ev-seed", 0, (a,)),
    # A key an older version recorded and never marked handled: a duplicate all the same.
    "unfinished": lambda s, a: s.run(
        "INSERT INTO svc_webhook_updates"
        " (update_key, event_key, received_at, claimed_at, handled_at)"
        " VALUES (?, 'ev-seed', 0, 2000, NULL) ON CONFLICT DO NOTHING",
        (a,),
    ),
    # An inbox row whose update key is not (or no longer) recorded: a pruned key.
    "inbox": lambda s, a: s.run(
        "INSERT INTO svc_inbox (update_key, queue_key, phone_number_id, kind, sealed,"
        " next_attempt_at, created_at, updated_at) VALUES (?, ?, ?, ?, ?, 0, 0, 0)"
        " ON CONFLICT DO NOTHING",
        a[:5],
    ),
}
DUMP = [
    "SELECT * FROM svc_messages ORDER BY row_id",
    "SELECT wa_message_id, status, occurred_at, pricing_category FROM svc_message_status_events"
    " ORDER BY 1, 2, 3",
    "SELECT * FROM svc_service_requests ORDER BY idempotency_key",
    "SELECT * FROM svc_webhook_events ORDER BY event_key",
    "SELECT * FROM svc_webhook_updates ORDER BY update_key",
    "SELECT user_id, parent_user_id, wa_id, username, last_seen_at FROM svc_user_identities"
    " ORDER BY 1, 2, 3, 4, 5",
    # Ordered by id, which is left out: PostgreSQL's identity does not roll back.
    "SELECT update_key, queue_key, phone_number_id, kind, sealed, status, attempts,"
    " next_attempt_at, lease_id, created_at, updated_at FROM svc_inbox ORDER BY id",
]
SEED = st.lists(
    st.one_of(
        st.tuples(st.just("message"), MESSAGES),
        st.tuples(st.just("status"), STATUS_EVENTS),
        st.tuples(st.just("identity"), IDENTITIES),
        st.tuples(st.just("claim"), CLAIMS),
        st.tuples(st.just("complete"), COMPLETES),
        st.tuples(st.just("update"), UPDATE_KEYS),
        st.tuples(st.just("unfinished"), UPDATE_KEYS),
        st.tuples(st.just("inbox"), INBOX_ROWS),
    ),
    max_size=6,
)


def delivery(
    event_key: str,
    event_hash: str,
    at: int,
    messages: tuple[Any, ...] = (),
    statuses: tuple[Any, ...] = (),
    identities: tuple[Any, ...] = (),
    update_keys: tuple[str, ...] = (),
    inbox: tuple[Any, ...] = (),
) -> DeliveryWrite:
    """A checked delivery, its values in the record's order."""
    return DeliveryWrite(
        event_key=event_key,
        event_hash=event_hash,
        received_at=at,
        messages=messages,
        statuses=statuses,
        identities=identities,
        update_keys=update_keys,
        inbox=inbox,
    )


def fresh_row_ids(deliveries: list[DeliveryWrite]) -> list[DeliveryWrite]:
    """Give every message its own row id, as the HTTP layer does (a new_row_id per message)."""
    return [
        d._replace(messages=tuple((f"d{i}-{j}", *m[1:]) for j, m in enumerate(d.messages)))
        for i, d in enumerate(deliveries)
    ]


def deliveries(*, max_updates: int, max_deliveries: int) -> st.SearchStrategy[list[DeliveryWrite]]:
    """Lists of checked deliveries (event key, hash, ms, message values, status events,
    identity sightings, update keys repeated within and across deliveries, and inbox rows:
    keys repeated, some not in the delivery)."""
    return st.lists(
        st.tuples(
            KEYS,
            TIMES,
            st.lists(MESSAGES, max_size=max_updates).map(tuple),
            st.lists(STATUS_EVENTS, max_size=max_updates).map(tuple),
            st.lists(IDENTITIES, max_size=2).map(tuple),
            st.lists(UPDATE_KEYS, max_size=max_updates).map(tuple),
            st.lists(INBOX_ROWS, max_size=4).map(tuple),
        ).map(lambda d: delivery(f"ev-{d[0]}", "h", d[1], d[2], d[3], d[4], d[5], inbox=d[6])),
        min_size=1,
        max_size=max_deliveries,
    )


DELIVERY_ITEMS = deliveries(max_updates=3, max_deliveries=5).map(fresh_row_ids)


def dump(execute: Any) -> list[Any]:
    """The ``DUMP`` tables through ``execute(sql).fetchall()``, each inbox row's person queue
    key named by its identity row's values (PostgreSQL's identity ids do not roll back, so
    the ids, and the keys made of them, differ between two runs)."""
    tables = [list(execute(sql).fetchall()) for sql in DUMP]
    names: dict[str, str] = {}
    for identity_id, user_id, wa_id in execute(
        "SELECT identity_id, user_id, wa_id FROM svc_user_identities"
    ).fetchall():
        for number in (None, "106540352242922"):
            names[person_queue_key(number, int(identity_id))] = f"person:{user_id}:{wa_id}:{number}"
    tables[-1] = [(row[0], names.get(row[1], row[1]), *row[2:]) for row in tables[-1]]
    return tables
