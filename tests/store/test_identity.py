"""Users without phone numbers: identity columns, the identity map, the window by user."""

from __future__ import annotations

import sqlite3
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import trio
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svc.store import (
    SCHEMA_VERSION,
    MessageRecord,
    PersistenceError,
    PersistenceValidationError,
    StatusEvent,
    UserIdentityRecord,
    WebhookEventResult,
    _identity,
)
from svc.store._identity import merge_identity
from svc.store.sqlite._store import SqliteSession

from ._strategies import IDENTITIES
from .conftest import T0, AnyStore, Backend, migrated_sqlite_file
from .test_contract import _event_is_new, _install_status_fault

PHONE = "15550001111"
NEW_PHONE = "15550002222"
BSUID = "US.13491208655302741918"
NEW_BSUID = "US.99991208655302741918"
PARENT = "US.ENT.11815799212886844830"


def ms(n: int) -> timedelta:
    return timedelta(milliseconds=n)


def inbound(
    row_id: str,
    *,
    offset: int = 0,
    phone: str | None = None,
    user_id: str | None = None,
    parent: str | None = None,
) -> MessageRecord:
    return MessageRecord(
        row_id=row_id,
        wa_message_id=f"wamid.{row_id}",
        direction="inbound",
        from_phone=phone,
        user_id=user_id,
        parent_user_id=parent,
        type="text",
        status="received",
        created_at=T0 + ms(offset),
        updated_at=T0 + ms(offset),
    )


def outbound(
    row_id: str, *, offset: int = 0, phone: str | None = None, user_id: str | None = None
) -> MessageRecord:
    return MessageRecord(
        row_id=row_id,
        wa_message_id=f"wamid.{row_id}",
        direction="outbound",
        to_phone=phone,
        user_id=user_id,
        type="text",
        status="sent",
        created_at=T0 + ms(offset),
        updated_at=T0 + ms(offset),
    )


def seen(
    *,
    user_id: str | None = None,
    parent: str | None = None,
    wa_id: str | None = None,
    username: str | None = None,
    offset: int = 0,
) -> UserIdentityRecord:
    return UserIdentityRecord(
        user_id=user_id,
        parent_user_id=parent,
        wa_id=wa_id,
        username=username,
        last_seen_at=T0 + ms(offset),
    )


async def _rows(store: AnyStore, **kwargs: object) -> list[str]:
    page = await store.list_messages(limit=100, **kwargs)  # type: ignore[arg-type]
    return [m.row_id for m in page.items]


# --- identity columns on the projection


async def test_identity_columns_round_trip(store: AnyStore) -> None:
    record = inbound("r1", user_id=BSUID, parent=PARENT)
    assert await store.record_message(record) == record
    assert await store.get_message(wa_message_id="wamid.r1") == record
    both = outbound("r2", offset=5, phone=PHONE, user_id=BSUID)
    await store.record_message(both)
    page = await store.list_messages(limit=10)
    assert page.items == (both, record)
    assert (page.items[1].from_phone, page.items[1].user_id) == (None, BSUID)


async def test_identity_columns_round_trip_through_a_delivery(store: AnyStore) -> None:
    rows = [inbound(f"d{i}", offset=i, user_id=BSUID, parent=PARENT) for i in range(6)]
    await store.record_webhook_delivery(
        event_key="e", event_hash="h", received_at=T0, messages=rows
    )
    assert (await store.list_messages(limit=10)).items == tuple(reversed(rows))


@pytest.mark.parametrize(
    "record",
    [
        inbound("r"),
        outbound("r"),
        MessageRecord(
            row_id="r",
            wa_message_id="w",
            direction="inbound",
            to_phone=PHONE,
            type="text",
            status="received",
            created_at=T0,
            updated_at=T0,
        ),
    ],
    ids=["inbound-nobody", "outbound-nobody", "inbound-only-to-phone"],
)
async def test_a_message_must_name_its_user(store: AnyStore, record: MessageRecord) -> None:
    with pytest.raises(PersistenceValidationError) as info:
        await store.record_message(record)
    assert info.value.code == "invalid_record"
    assert "user_id or parent_user_id" in info.value.message
    assert (await store.list_messages()).items == ()


async def test_rows_written_before_007_read_back_with_nulls(persistent_backend: Backend) -> None:
    store = persistent_backend.open()
    assert await store.migrate(target_version=6) == 6
    persistent_backend.raw_sql(
        "INSERT INTO svc_messages (row_id, wa_message_id, direction, from_phone, to_phone,"
        " type, status, graph_message_id, created_at, updated_at)"
        " VALUES ('old', 'wamid.old', 'inbound', ?, NULL, 'text', 'received', NULL, ?, ?)",
        (PHONE, 1_763_720_130_000, 1_763_720_130_000),
    )
    assert await store.migrate() == SCHEMA_VERSION
    old = await store.get_message(wa_message_id="wamid.old")
    assert old is not None and old.from_phone == PHONE
    assert (old.user_id, old.parent_user_id) == (None, None)
    assert await store.get_latest_inbound_message_at(phone=PHONE) == old.created_at
    # Linked afterwards, the old phone-only row counts for the user's BSUID too.
    await store.record_user_identities([seen(user_id=BSUID, wa_id=PHONE)])
    assert await store.get_latest_inbound_message_at(user=BSUID) == old.created_at
    assert await _rows(store, user=BSUID) == ["old"]


# --- the identity map


async def test_a_sighting_merges_by_user_id_and_never_erases(store: AnyStore) -> None:
    await store.record_user_identities(
        [seen(user_id=BSUID, parent=PARENT, wa_id=PHONE, username="ann", offset=10)]
    )
    # Newer, knowing less: username changes, nothing known is erased.
    await store.record_user_identities([seen(user_id=BSUID, username="ann.b", offset=20)])
    assert await store.find_user_identity(user=BSUID) == seen(
        user_id=BSUID, parent=PARENT, wa_id=PHONE, username="ann.b", offset=20
    )
    # Older: it neither moves last_seen back nor replaces a newer value.
    await store.record_user_identities([seen(user_id=BSUID, username="old-name", offset=5)])
    found = await store.find_user_identity(user=PHONE)
    assert found is not None and (found.username, found.last_seen_at) == ("ann.b", T0 + ms(20))


async def test_an_older_sighting_fills_gaps_only(store: AnyStore) -> None:
    await store.record_user_identities([seen(user_id=BSUID, offset=50)])
    await store.record_user_identities(
        [seen(user_id=BSUID, wa_id=PHONE, username="ann", parent=PARENT, offset=1)]
    )
    assert await store.find_user_identity(user=BSUID) == seen(
        user_id=BSUID, parent=PARENT, wa_id=PHONE, username="ann", offset=50
    )


async def test_a_phone_only_sighting_merges_by_wa_id_and_is_adopted_by_a_bsuid(
    store: AnyStore,
) -> None:
    await store.record_user_identities([seen(wa_id=PHONE, username="ann", offset=1)])
    await store.record_user_identities([seen(wa_id=PHONE, offset=2)])
    assert await store.find_user_identity(user=PHONE) == seen(wa_id=PHONE, username="ann", offset=2)
    # The first sighting with a BSUID adopts the phone-only row (one row, not two).
    await store.record_user_identities([seen(user_id=BSUID, wa_id=PHONE, offset=3)])
    expected = seen(user_id=BSUID, wa_id=PHONE, username="ann", offset=3)
    assert await store.find_user_identity(user=PHONE) == expected
    assert await store.find_user_identity(user=BSUID) == expected
    # A later phone-only sighting merges into it by wa_id.
    await store.record_user_identities([seen(wa_id=PHONE, username="ann2", offset=4)])
    assert await store.find_user_identity(user=BSUID) == seen(
        user_id=BSUID, wa_id=PHONE, username="ann2", offset=4
    )


async def test_find_prefers_a_bsuid_then_a_parent_then_the_newest_phone(store: AnyStore) -> None:
    assert await store.find_user_identity(user=BSUID) is None
    # A reassigned phone number: two users have had it; the newest sighting wins.
    await store.record_user_identities(
        [
            seen(user_id=BSUID, wa_id=PHONE, parent=PARENT, offset=1),
            seen(user_id=NEW_BSUID, wa_id=PHONE, offset=9),
        ]
    )
    by_phone = await store.find_user_identity(user=PHONE)
    assert by_phone is not None and by_phone.user_id == NEW_BSUID
    by_parent = await store.find_user_identity(user=PARENT)
    assert by_parent is not None and by_parent.user_id == BSUID
    by_old = await store.find_user_identity(user=BSUID)
    assert by_old is not None and by_old.user_id == BSUID


async def test_a_username_only_user_is_found_by_its_bsuid(store: AnyStore) -> None:
    await store.record_user_identities([seen(user_id=BSUID, username="ann")])
    found = await store.find_user_identity(user=BSUID)
    assert found is not None and found.wa_id is None and found.username == "ann"
    assert await store.find_user_identity(user="ann") is None  # a username is no address


async def test_identity_changes(store: AnyStore) -> None:
    await store.record_user_identities(
        [seen(user_id=BSUID, parent=PARENT, wa_id=PHONE, username="ann", offset=1)]
    )
    # user_changed_user_id: the BSUID changes, the phone stays.
    changed = await store.record_identity_change(user=BSUID, new_user_id=NEW_BSUID, at=T0 + ms(5))
    assert changed == seen(user_id=NEW_BSUID, parent=PARENT, wa_id=PHONE, username="ann", offset=5)
    assert await store.find_user_identity(user=BSUID) is None
    assert await store.find_user_identity(user=PHONE) == changed
    # user_changed_number: a new phone and a new BSUID; the old phone stops resolving.
    third = "US.33331208655302741918"
    moved = await store.record_identity_change(
        user=PHONE, new_wa_id=NEW_PHONE, new_user_id=third, at=T0 + ms(9)
    )
    assert moved == seen(user_id=third, parent=PARENT, wa_id=NEW_PHONE, username="ann", offset=9)
    assert await store.find_user_identity(user=PHONE) is None
    assert await store.find_user_identity(user=NEW_PHONE) == moved


async def test_a_change_merges_into_a_bsuid_seen_first(store: AnyStore) -> None:
    await store.record_user_identities(
        [
            seen(user_id=BSUID, wa_id=PHONE, username="ann", parent=PARENT, offset=1),
            seen(user_id=NEW_BSUID, offset=3),
        ]
    )
    merged = await store.record_identity_change(
        user=BSUID, new_user_id=NEW_BSUID, new_wa_id=NEW_PHONE, at=T0 + ms(2)
    )
    assert merged == seen(
        user_id=NEW_BSUID, parent=PARENT, wa_id=NEW_PHONE, username="ann", offset=3
    )
    assert await store.find_user_identity(user=BSUID) is None
    assert await store.find_user_identity(user=PHONE) is None
    assert await store.find_user_identity(user=NEW_PHONE) == merged


async def test_a_change_of_an_unknown_user_records_the_new_identity(store: AnyStore) -> None:
    made = await store.record_identity_change(user=PHONE, new_wa_id=NEW_PHONE, at=T0)
    assert made == seen(wa_id=NEW_PHONE)
    assert await store.find_user_identity(user=NEW_PHONE) == made
    with pytest.raises(PersistenceValidationError) as info:
        await store.record_identity_change(user=PHONE, at=T0)
    assert info.value.code == "invalid_record"


# --- the conversation window keyed by the user


async def test_an_inbound_from_a_bsuid_only_user_opens_its_window(store: AnyStore) -> None:
    assert await store.get_latest_inbound_message_at(user=BSUID) is None
    await store.record_message(inbound("r1", offset=3, user_id=BSUID))
    await store.record_message(outbound("r2", offset=50, user_id=BSUID))
    assert await store.get_latest_inbound_message_at(user=BSUID) == T0 + ms(3)
    assert await store.get_latest_inbound_message_at(user=NEW_BSUID) is None
    # A parent-only inbound opens the window for the parent BSUID.
    await store.record_message(inbound("r3", offset=7, parent=PARENT))
    assert await store.get_latest_inbound_message_at(user=PARENT) == T0 + ms(7)


async def test_the_window_is_one_per_user_once_a_delivery_links_phone_and_bsuid(
    store: AnyStore,
) -> None:
    await store.record_message(inbound("by-phone", offset=10, phone=PHONE))
    await store.record_message(inbound("by-bsuid", offset=20, user_id=BSUID))
    # Not linked yet: each identifier sees only its own rows.
    assert await store.get_latest_inbound_message_at(phone=PHONE) == T0 + ms(10)
    assert await store.get_latest_inbound_message_at(user=BSUID) == T0 + ms(20)
    await store.record_webhook_delivery(
        event_key="e",
        event_hash="h",
        received_at=T0,
        messages=[inbound("both", offset=15, phone=PHONE, user_id=BSUID, parent=PARENT)],
        identities=[seen(user_id=BSUID, parent=PARENT, wa_id=PHONE, offset=15)],
    )
    for user in (PHONE, BSUID, PARENT):
        assert await store.get_latest_inbound_message_at(user=user) == T0 + ms(20), user
    assert await store.get_latest_inbound_message_at(user=NEW_PHONE) is None


async def test_the_phone_keyword_is_an_alias_and_one_is_required(store: AnyStore) -> None:
    await store.record_message(inbound("r", offset=1, phone=PHONE))
    assert await store.get_latest_inbound_message_at(phone=PHONE) == T0 + ms(1)
    assert await store.get_latest_inbound_message_at(user=PHONE) == T0 + ms(1)
    for kwargs in ({}, {"user": PHONE, "phone": PHONE}):
        with pytest.raises(PersistenceValidationError) as info:
            await store.get_latest_inbound_message_at(**kwargs)
        assert info.value.code == "invalid_options"


# --- list_messages by user


async def test_list_messages_by_user_follows_the_identity_map(store: AnyStore) -> None:
    await store.record_message(inbound("a", offset=1, phone=PHONE))
    await store.record_message(outbound("b", offset=2, phone=PHONE))
    await store.record_message(inbound("c", offset=3, user_id=BSUID))
    await store.record_message(outbound("d", offset=4, user_id=BSUID))
    await store.record_message(inbound("e", offset=5, parent=PARENT))
    await store.record_message(inbound("other", offset=6, phone=NEW_PHONE))
    # An outbound row never matches on from_phone (it is the business's side).
    await store.record_message(
        MessageRecord(
            row_id="echo",
            wa_message_id="wamid.echo",
            direction="outbound",
            from_phone=PHONE,
            to_phone=NEW_PHONE,
            type="text",
            status="sent",
            created_at=T0 + ms(7),
            updated_at=T0 + ms(7),
        )
    )
    assert await _rows(store, user=PHONE) == ["b", "a"]
    assert await _rows(store, user=BSUID) == ["d", "c"]
    await store.record_user_identities([seen(user_id=BSUID, parent=PARENT, wa_id=PHONE)])
    for user in (PHONE, BSUID, PARENT):
        assert await _rows(store, user=user) == ["e", "d", "c", "b", "a"], user
    assert await _rows(store, user="US.0") == []
    # Same cursor rules as the unfiltered list.
    first = await store.list_messages(limit=2, user=PHONE)
    assert [m.row_id for m in first.items] == ["e", "d"] and first.next_cursor == "d"
    second = await store.list_messages(limit=2, user=PHONE, before_row_id=first.next_cursor)
    assert [m.row_id for m in second.items] == ["c", "b"] and second.next_cursor == "b"
    last = await store.list_messages(limit=2, user=PHONE, before_row_id="b")
    assert [m.row_id for m in last.items] == ["a"] and last.next_cursor is None
    unknown = await store.list_messages(limit=2, user=PHONE, before_row_id="nope")
    assert unknown.items == () and unknown.next_cursor is None


# --- one atomic delivery call


async def test_a_failing_delivery_leaves_no_identity_row(store: AnyStore) -> None:
    await _install_status_fault(store)
    outcomes: dict[str, object] = {}

    async def deliver(name: str, user_id: str, status: str) -> None:
        try:
            outcomes[name] = await store.record_webhook_delivery(
                event_key=name,
                event_hash="h",
                received_at=T0,
                messages=[inbound(name, user_id=user_id)],
                statuses=[StatusEvent(wa_message_id=f"wamid.{name}", status=status, timestamp=T0)],
                identities=[seen(user_id=user_id, wa_id=f"1555{name}", username=name)],
            )
        except PersistenceError as exc:
            outcomes[name] = exc

    # Together, so a group-committing store puts both in one batch: the bad one fails alone.
    async with trio.open_nursery() as nursery:
        nursery.start_soon(deliver, "bad", BSUID, "explode")
        nursery.start_soon(deliver, "good", NEW_BSUID, "read")
    assert isinstance(outcomes["bad"], PersistenceError)
    assert outcomes["good"] is WebhookEventResult.RECORDED
    assert await store.find_user_identity(user=BSUID) is None
    assert await store.find_user_identity(user="1555bad") is None
    assert await store.get_message(wa_message_id="wamid.bad") is None
    assert await _event_is_new(store, "bad")
    good = await store.find_user_identity(user=NEW_BSUID)
    assert good is not None and good.username == "good"


@pytest.mark.slow
async def test_concurrent_deliveries_of_one_new_user_keep_one_identity_row(
    backend: Backend,
) -> None:
    stores = [backend.open() for _ in range(2 if backend.kind != "sqlite-memory" else 1)]
    await stores[0].migrate()

    async def deliver(i: int) -> None:
        await stores[i % len(stores)].record_webhook_delivery(
            event_key=f"e{i}",
            event_hash="h",
            received_at=T0,
            messages=[inbound(f"r{i}", offset=i, user_id=BSUID)],
            identities=[seen(user_id=BSUID, wa_id=PHONE if i % 2 else None, offset=i)],
        )

    async with trio.open_nursery() as nursery:
        for i in range(12):
            nursery.start_soon(deliver, i)
    found = await stores[0].find_user_identity(user=PHONE)
    assert found == seen(user_id=BSUID, wa_id=PHONE, offset=11)
    assert await stores[0].get_latest_inbound_message_at(user=PHONE) == T0 + ms(11)


# --- validation at the boundary


NAIVE = datetime(2026, 1, 1)
SECRET = "US.ENT.\n9999"


@pytest.mark.parametrize(
    ("call", "code"),
    [
        (lambda s: s.get_latest_inbound_message_at(user=""), "invalid_record"),
        (lambda s: s.get_latest_inbound_message_at(user=SECRET), "invalid_record"),
        (lambda s: s.get_latest_inbound_message_at(user="U" * 161), "invalid_record"),
        (lambda s: s.list_messages(user=SECRET), "invalid_record"),
        (lambda s: s.find_user_identity(user=SECRET), "invalid_record"),
        (lambda s: s.record_user_identities([seen()]), "invalid_record"),
        (lambda s: s.record_user_identities([seen(user_id=SECRET)]), "invalid_record"),
        (lambda s: s.record_user_identities([seen(wa_id="1" * 65)]), "invalid_record"),
        (
            lambda s: s.record_user_identities([seen(wa_id=PHONE, username="x" * 129)]),
            "invalid_record",
        ),
        (lambda s: s.record_user_identities([(BSUID, None, None, None, T0)]), "invalid_record"),
        (lambda s: s.record_user_identities(BSUID), "invalid_record"),
        (
            lambda s: s.record_user_identities(
                [UserIdentityRecord(user_id=BSUID, last_seen_at=NAIVE)]
            ),
            "invalid_record",
        ),
        (lambda s: s.record_message(inbound("r", user_id=SECRET)), "invalid_record"),
        (lambda s: s.record_message(inbound("r", parent="P" * 161)), "invalid_record"),
        (
            lambda s: s.record_identity_change(user=BSUID, new_user_id=SECRET, at=T0),
            "invalid_record",
        ),
        (
            lambda s: s.record_webhook_delivery(
                event_key="e", event_hash="h", received_at=T0, identities=[seen(wa_id=SECRET)]
            ),
            "invalid_record",
        ),
    ],
)
async def test_identifiers_are_checked_at_the_boundary_and_never_echoed(
    store: AnyStore, call: object, code: str
) -> None:
    with pytest.raises(PersistenceValidationError) as info:
        await call(store)  # type: ignore[operator]
    assert info.value.code == code
    for text in (str(info.value), repr(info.value), info.value.message):
        assert "9999" not in text and "UUUU" not in text and "PPPP" not in text
    assert await store.find_user_identity(user=BSUID) is None
    assert await _event_is_new(store, "e")


# --- sans-IO: the merge rule


def test_merge_identity_rule() -> None:
    stored = ("US.1", None, "1555", "ann", 100)
    assert merge_identity(stored, (None, "US.ENT.1", None, "bob", 200)) == (
        "US.1",
        "US.ENT.1",
        "1555",
        "bob",
        200,
    )
    assert merge_identity(stored, ("US.1", "US.ENT.1", "1666", "old", 50)) == (
        "US.1",
        "US.ENT.1",
        "1555",
        "ann",
        100,
    )
    assert merge_identity(stored, (None, None, None, None, 100)) == stored


# --- sightings merged together (the SQLite group commit's form) ----------------------------

_IDENTITY_DUMP = (
    "SELECT identity_id, user_id, parent_user_id, wa_id, username, last_seen_at"
    " FROM svc_user_identities ORDER BY identity_id"
)


@pytest.fixture(scope="module")
def identity_database(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return migrated_sqlite_file(tmp_path_factory.mktemp("identities") / "svc.sqlite3")


def _identity_table(path: Path, seed: list[Any], items: list[Any], form: Any) -> list[Any]:
    conn = sqlite3.connect(path, isolation_level=None)
    try:
        session = SqliteSession(conn)
        conn.execute("BEGIN")
        try:
            for args in seed:
                _identity.upsert_identities(session, [args])
            form(session, items)
            return conn.execute(_IDENTITY_DUMP).fetchall()
        finally:
            conn.execute("ROLLBACK")
    finally:
        conn.close()


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(seed=st.lists(IDENTITIES, max_size=6), items=st.lists(IDENTITIES, max_size=10))
def test_sightings_merged_together_equal_them_one_by_one(
    identity_database: Path, seed: list[Any], items: list[Any]
) -> None:
    """Same rows, values and identity ids (the insert order) as one sighting at a time."""
    together = _identity_table(identity_database, seed, items, _identity.upsert_identities_together)
    one_by_one = _identity_table(identity_database, seed, items, _identity.upsert_identities)
    assert together == one_by_one


def test_a_row_inserted_in_the_batch_is_the_newest_of_its_phone(identity_database: Path) -> None:
    """A phone-only sighting merges into the newest row of its wa_id; at equal times the
    highest id wins, and a row inserted earlier in the same batch has the highest."""
    at = 1_763_720_130_000
    seed = [("US.2", None, "1555", None, at)]
    items = [("US.1", None, "1555", None, at), (None, None, "1555", "ann", at)]
    together = _identity_table(identity_database, seed, items, _identity.upsert_identities_together)
    one_by_one = _identity_table(identity_database, seed, items, _identity.upsert_identities)
    assert together == one_by_one
    assert [row[1:5] for row in together] == [
        ("US.2", None, "1555", None),
        ("US.1", None, "1555", "ann"),
    ]
