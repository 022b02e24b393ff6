"""``CheckedRows``: the store's trusted form is made only by a builder that checks as it builds.

The builder applies the store's own rules (a field the store refuses raises, a
user-naming field it cannot hold is left out) and the store takes the sealed
rows without checking them again; any other form is refused.
"""

from __future__ import annotations

import uuid
from collections.abc import Callable
from datetime import timedelta
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc.store import (
    CheckedRows,
    CheckedRowsBuilder,
    MessageRecord,
    PersistenceValidationError,
    StatusEvent,
    UserIdentityRecord,
    from_ms,
    to_ms,
)
from svc.store import _validate as check
from svc.store._base import delivery_write

from .conftest import T0, AnyStore

AT = to_ms(T0)
_FIELD = st.one_of(
    st.none(),
    st.sampled_from(
        ["16505551234", "US.1", "é1", "", " ", "\t", "a\x00b", "x\x7f", "a\u2028b", "\u00a0"]
    ),
    st.sampled_from([64, 65, 160, 161, 256, 257]).map(lambda n: "1" * n),
    st.text(max_size=6),
)
"""Values a field may be given: fitting, blank, control-laden, over each limit, or missing."""
_REQUIRED = st.one_of(_FIELD.filter(lambda v: v is not None), st.just("wamid.A"))


def _message(**fields: Any) -> dict[str, Any]:
    values: dict[str, Any] = {
        "row_id": "row-1",
        "wa_message_id": "wamid.A",
        "direction": "inbound",
        "from_phone": "16505551234",
        "to_phone": "15550783881",
        "type": "text",
        "status": "received",
        "graph_message_id": None,
        "at_ms": AT,
        "user_id": "US.1",
        "parent_user_id": None,
        "business_phone_number_id": "106540352242922",
    }
    values.update(fields)
    return values


def _built(add: Callable[[CheckedRowsBuilder], bool]) -> tuple[bool, CheckedRows]:
    builder = CheckedRowsBuilder()
    added = add(builder)
    return added, builder.seal()


def test_checked_rows_are_made_by_the_builder_only() -> None:
    with pytest.raises(TypeError):
        CheckedRows(object(), (), (), ())
    rows = CheckedRowsBuilder().seal()
    with pytest.raises(AttributeError):
        rows._messages = (("forged",),)  # type: ignore[misc]
    with pytest.raises(AttributeError):
        rows.messages = ()  # type: ignore[misc]
    assert rows.messages == () and rows.statuses == () and rows.identities == ()


@pytest.mark.parametrize(
    ("field", "value"),
    [
        ("row_id", "r\x00w"),
        ("row_id", "r" * 257),
        ("wa_message_id", " "),
        ("wa_message_id", 7),
        ("direction", "sideways"),
        ("type", "t" * 65),
        ("status", "re\nceived"),
        ("graph_message_id", ""),
        ("business_phone_number_id", "1" * 65),
        ("at_ms", T0),
        ("at_ms", True),
        ("at_ms", "1779321024000"),
        ("at_ms", 2**70),  # no 64-bit column holds it
        ("at_ms", 253_402_300_800_000),  # the year 10000: past the store's times
        ("at_ms", -62_135_596_800_001),  # before the year 1
    ],
)
def test_a_field_the_store_refuses_is_refused_while_building(field: str, value: object) -> None:
    builder = CheckedRowsBuilder()
    with pytest.raises(PersistenceValidationError) as caught:
        builder.message(**_message(**{field: value}))
    assert caught.value.code == "invalid_record"
    assert builder.seal().messages == ()


def test_user_fields_the_store_cannot_hold_are_left_out_and_a_row_naming_nobody_is_not_added() -> (
    None
):
    added, rows = _built(
        lambda b: b.message(
            **_message(from_phone="1" * 65, user_id="US.\x01", parent_user_id="US.ENT.1")
        )
    )
    assert added
    (row,) = rows.messages
    assert (row[3], row[10], row[11]) == (None, None, "US.ENT.1")
    added, rows = _built(
        lambda b: b.message(**_message(from_phone=" ", user_id="U" * 161, parent_user_id=None))
    )
    assert not added and rows.messages == ()
    added, rows = _built(lambda b: b.status(wa_message_id="wamid.A", status="s" * 65, at_ms=AT))
    assert not added and rows.statuses == ()
    with pytest.raises(PersistenceValidationError):
        CheckedRowsBuilder().status(wa_message_id="\x00", status="read", at_ms=AT)


@pytest.mark.parametrize("at_ms", [2**70, 253_402_300_800_000, -62_135_596_800_001])
def test_a_time_past_the_stores_range_is_refused_in_every_row(at_ms: int) -> None:
    builder = CheckedRowsBuilder()
    for add in (
        lambda: builder.status(wa_message_id="wamid.A", status="read", at_ms=at_ms),
        lambda: builder.identity(
            user_id="US.1", parent_user_id=None, wa_id=None, username=None, at_ms=at_ms
        ),
    ):
        with pytest.raises(PersistenceValidationError) as caught:
            add()
        assert caught.value.code == "invalid_record"
    rows = builder.seal()
    assert rows.statuses == () and rows.identities == ()


def test_sightings_are_kept_once_and_need_a_bsuid_or_a_phone() -> None:
    builder = CheckedRowsBuilder()
    sighting = {"user_id": "US.1", "parent_user_id": None, "wa_id": "1555", "username": "u\x00"}
    assert builder.identity(**sighting, at_ms=AT)
    assert builder.identity(**sighting, at_ms=AT)
    assert builder.identity(**{**sighting, "user_id": "U" * 161}, at_ms=AT)
    assert not builder.identity(user_id="\x7f", parent_user_id="US.ENT.1", wa_id=None,
                                username="ann", at_ms=AT)  # fmt: skip
    assert builder.seal().identities == (
        ("US.1", None, "1555", None, AT),
        (None, None, "1555", None, AT),
    )


@settings(max_examples=300, deadline=None)
@given(
    direction=st.sampled_from(["inbound", "outbound"]),
    fields=st.fixed_dictionaries(
        {
            "row_id": _REQUIRED,
            "wa_message_id": _REQUIRED,
            "from_phone": _FIELD,
            "to_phone": _FIELD,
            "type": _REQUIRED,
            "status": _REQUIRED,
            "graph_message_id": _FIELD,
            "user_id": _FIELD,
            "parent_user_id": _FIELD,
            "business_phone_number_id": _FIELD,
        }
    ),
    ms=st.integers(-(10**12), 10**13),
)
def test_the_builder_applies_the_stores_own_message_check(
    direction: str, fields: dict[str, Any], ms: int
) -> None:
    """A row built equals ``check.message`` of the record with the unfit user fields left out;
    the builder refuses exactly what that check refuses."""
    dropped = {
        name: check.fit(fields[name], check.PHONE_MAX if "phone" in name else check.USER_ID_MAX)
        for name in ("from_phone", "to_phone", "user_id", "parent_user_id")
    }
    record = MessageRecord(
        **{**fields, **dropped}, direction=direction, created_at=from_ms(ms), updated_at=from_ms(ms)
    )
    try:
        expected: tuple[object, ...] | None = check.message(record)
    except PersistenceValidationError:
        expected = None
    builder = CheckedRowsBuilder()
    try:
        added = builder.message(**fields, direction=direction, at_ms=ms)
    except PersistenceValidationError:
        assert expected is None
        return
    if added:
        assert builder.seal().messages == (expected,)
    else:
        assert expected is None and builder.seal().messages == ()


def _outcome(builder: CheckedRowsBuilder, fields: dict[str, Any]) -> tuple[object, ...]:
    """What one ``message`` call does: its answer and row, or the refusal's message."""
    before = len(builder.seal().messages)
    try:
        added = builder.message(**fields)
    except PersistenceValidationError as exc:
        return ("refused", str(exc))
    return (added, builder.seal().messages[before:])


_VARIANTS = {
    "row_id": st.sampled_from(["row-2", "r\x00w"]),
    "wa_message_id": st.sampled_from(["wamid.B", " "]),
    "direction": st.sampled_from(["outbound", "sideways"]),
    "type": st.sampled_from(["image", "t" * 65]),
    "status": st.sampled_from(["sent", "re\nceived"]),
    "graph_message_id": st.sampled_from(["wamid.A", ""]),
    "at_ms": st.sampled_from([AT + 1, True]),
    **{
        name: st.sampled_from([None, "15550000000", "US.2", " ", "a\x00b", "1" * 65])
        for name in (
            "from_phone",
            "to_phone",
            "user_id",
            "parent_user_id",
            "business_phone_number_id",
        )
    },
}
"""Each field's other values: fitting, refused or left out; a row changes a few of them."""


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.lists(st.sampled_from(sorted(_VARIANTS)), max_size=3, unique=True).flatmap(
            lambda names: st.fixed_dictionaries({name: _VARIANTS[name] for name in names})
        ),
        max_size=8,
    )
)
def test_rows_sharing_fields_in_one_builder_are_checked_as_each_alone(
    calls: list[dict[str, Any]],
) -> None:
    """A builder checks each set of shared fields once: every later row with the same set
    gets the answer, the row and the refusal (the same first one) a fresh builder gives."""
    shared = CheckedRowsBuilder()
    for changed in calls:
        fields = _message(**changed)
        assert _outcome(shared, fields) == _outcome(CheckedRowsBuilder(), fields)


def test_rows_given_no_id_get_fresh_ones_drawn_by_the_builder() -> None:
    builder = CheckedRowsBuilder(row_ids=2)
    no_id = {k: v for k, v in _message().items() if k != "row_id"}
    assert builder.message(**no_id)
    assert builder.message(**_message(row_id="row-given", wa_message_id="wamid.B"))
    assert builder.message(**{**no_id, "wa_message_id": "wamid.C"})
    with pytest.raises(PersistenceValidationError):
        builder.message(**{**no_id, "wa_message_id": "a\x00b"})
    assert builder.message(**{**no_id, "wa_message_id": "wamid.D"})  # past the two drawn
    rows = builder.seal().messages
    assert [row[1] for row in rows] == ["wamid.A", "wamid.B", "wamid.C", "wamid.D"]
    ids = [row[0] for row in rows]
    assert ids[1] == "row-given"
    drawn = [ids[0], ids[2], ids[3]]
    for row_id in drawn:
        parsed = uuid.UUID(row_id)
        assert parsed.version == 7 and parsed.variant == uuid.RFC_4122 and str(parsed) == row_id
    assert len(set(drawn)) == 3
    assert builder.seal().messages == rows  # sealing again changes nothing


def test_an_unhashable_field_is_refused_as_the_store_refuses_it() -> None:
    builder = CheckedRowsBuilder()
    with pytest.raises(PersistenceValidationError) as caught:
        builder.message(**_message(type=["text"]))
    assert "type" in str(caught.value)
    assert not builder.message(**_message(from_phone=["1"], user_id=None))
    assert builder.seal().messages == ()


@settings(max_examples=300, deadline=None)
@given(
    user_id=_FIELD, parent=_FIELD, wa_id=_FIELD, username=_FIELD, status=_FIELD, message_id=_FIELD
)
def test_the_builder_applies_the_stores_own_identity_and_status_checks(
    user_id: Any, parent: Any, wa_id: Any, username: Any, status: Any, message_id: Any
) -> None:
    builder = CheckedRowsBuilder()
    builder.identity(
        user_id=user_id, parent_user_id=parent, wa_id=wa_id, username=username, at_ms=AT
    )
    record = UserIdentityRecord(
        user_id=check.fit(user_id, check.USER_ID_MAX),
        parent_user_id=check.fit(parent, check.USER_ID_MAX),
        wa_id=check.fit(wa_id, check.PHONE_MAX),
        username=check.fit(username, check.USERNAME_MAX),
        last_seen_at=T0,
    )
    try:
        assert builder.seal().identities == (check.identity(record),)
    except PersistenceValidationError:
        assert builder.seal().identities == ()
    event = StatusEvent(wa_message_id=message_id, status=status, timestamp=T0)
    try:
        expected: tuple[object, ...] | None = check.status_event(event)
    except PersistenceValidationError:
        expected = None
    try:
        added = builder.status(wa_message_id=message_id, status=status, at_ms=AT)
    except PersistenceValidationError:
        assert expected is None
        return
    assert builder.seal().statuses == ((expected,) if added else ())
    assert added or check.fit(status, 64) is None


def _rows() -> CheckedRows:
    builder = CheckedRowsBuilder()
    assert builder.message(**_message())
    assert builder.status(wa_message_id="wamid.A", status="read", at_ms=AT + 1000)
    assert builder.identity(
        user_id="US.1", parent_user_id=None, wa_id="16505551234", username="ann", at_ms=AT
    )
    return builder.seal()


def test_the_store_hands_checked_rows_on_as_they_are() -> None:
    """``record_webhook_updates`` takes sealed rows without checking them again: its record
    (``delivery_write``) holds the builder's own column tuples, not checked copies."""
    rows = _rows()
    delivery = delivery_write(
        event_key="ev-1",
        event_hash="h",
        received_at=T0,
        update_keys=("u1",),
        messages=(),
        statuses=(),
        identities=(),
        rows=rows,
    )
    assert delivery.messages is rows.messages
    assert delivery.statuses is rows.statuses
    assert delivery.identities is rows.identities


async def test_the_store_takes_checked_rows_without_checking_them_again(store: AnyStore) -> None:
    rows = _rows()
    recorded = await store.record_webhook_updates(
        event_key="ev-1", event_hash="h", received_at=T0, update_keys=("u1",), rows=rows
    )
    assert recorded.new == ("u1",)
    stored = await store.get_message(wa_message_id="wamid.A", direction="inbound")
    assert stored is not None and stored.status == "read" and stored.user_id == "US.1"
    identity = await store.find_user_identity(user="US.1")
    assert identity is not None and identity.username == "ann"


async def test_the_store_refuses_any_other_form_of_rows(store: AnyStore) -> None:
    record = MessageRecord(
        row_id="row-2",
        wa_message_id="wamid.B",
        direction="inbound",
        from_phone="1555",
        type="text",
        status="received",
        created_at=T0,
        updated_at=T0 + timedelta(seconds=1),
    )
    forged: list[object] = [
        (("row-3", "wamid.C", "inbound", "1\x00", None, "text", "received", None, 0, 0),),
        {"messages": ()},
        object(),
    ]
    for rows in forged:
        with pytest.raises(PersistenceValidationError):
            await store.record_webhook_updates(
                event_key="ev-2",
                event_hash="h",
                received_at=T0,
                rows=rows,  # type: ignore[arg-type]
            )
    with pytest.raises(PersistenceValidationError):
        await store.record_webhook_updates(
            event_key="ev-2", event_hash="h", received_at=T0, messages=[record], rows=_rows()
        )
    with pytest.raises(PersistenceValidationError):
        await store.record_webhook_delivery(
            event_key="ev-2",
            event_hash="h",
            received_at=T0,
            statuses=[],
            rows=object(),  # type: ignore[arg-type]
        )
    assert await store.get_message(wa_message_id="wamid.B") is None
    assert await store.get_message(wa_message_id="wamid.C") is None
    assert await store.get_message(wa_message_id="wamid.A") is None
