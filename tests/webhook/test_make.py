"""``positional_maker``: a fast constructor whose instances are the dataclass's own."""

from __future__ import annotations

import copy
import dataclasses

import pytest

from svc.webhook import UpdateSource, UserIdentity
from svc.webhook._make import positional_maker
from svc.webhook._read import read_user

_FIELDS = ("wa_id", "user_id", "parent_user_id", "username", "name")


@pytest.mark.parametrize(
    "values",
    [
        ("16505551234", "US.1", "US.ENT.1", "ann", "Ann"),
        (None, "US.1", None, None, None),
        (None, None, None, None, None),
    ],
)
def test_a_made_identity_is_a_frozen_user_identity_equal_to_the_constructed_one(
    values: tuple[str | None, ...],
) -> None:
    made = positional_maker(UserIdentity)(*values)
    built = UserIdentity(**dict(zip(_FIELDS, values, strict=True)))
    assert type(made) is UserIdentity
    assert made == built and hash(made) == hash(built) and repr(made) == repr(built)
    assert dataclasses.astuple(made) == values
    with pytest.raises(dataclasses.FrozenInstanceError):
        made.wa_id = "1"  # type: ignore[misc]


def test_read_user_gives_a_frozen_user_identity() -> None:
    value = {"contacts": [{"wa_id": "1555", "profile": {"name": "Ann", "username": "ann"}}]}
    user = read_user(value, "1555", None, None)
    assert type(user) is UserIdentity
    assert user == UserIdentity(wa_id="1555", username="ann", name="Ann")
    with pytest.raises(dataclasses.FrozenInstanceError):
        user.name = "Bob"  # type: ignore[misc]


def test_a_made_update_source_equals_the_constructed_one() -> None:
    made = positional_maker(UpdateSource)("waba", "pn", "155", "messages", 1, 2, {"a": 1})
    built = UpdateSource(
        waba_id="waba",
        phone_number_id="pn",
        display_phone_number="155",
        field="messages",
        entry_time=1,
        received_at=2,
        value={"a": 1},
    )
    assert type(made) is UpdateSource and made == built and made.value == {"a": 1}


def test_a_made_identity_copies_and_replaces_as_a_user_identity() -> None:
    made = positional_maker(UserIdentity)("16505551234", "US.1", None, "ann", "Ann")
    for other in (copy.copy(made), copy.deepcopy(made)):
        assert type(other) is UserIdentity and other == made
    renamed = dataclasses.replace(made, name="Bob")
    assert type(renamed) is UserIdentity and renamed.name == "Bob" and renamed.wa_id == made.wa_id


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Counted:
    key: str
    count: int = dataclasses.field(default=0, init=False)
    tags: list[str] = dataclasses.field(default_factory=list, init=False)
    note: str | None = None


@dataclasses.dataclass(frozen=True, kw_only=True)
class _Unslotted:
    key: str
    count: int = dataclasses.field(default=0, init=False)


@dataclasses.dataclass(frozen=True, slots=True, kw_only=True)
class _Extended(_Counted):
    extra: int = 1


@pytest.mark.parametrize(
    ("cls", "values", "keywords"),
    [
        (_Counted, ("k", "n"), {"key": "k", "note": "n"}),
        (_Unslotted, ("k",), {"key": "k"}),
        (_Extended, ("k", None, 2), {"key": "k", "note": None, "extra": 2}),
    ],
)
def test_a_made_record_with_init_false_fields_equals_the_constructed_one(
    cls: type[object], values: tuple[object, ...], keywords: dict[str, object]
) -> None:
    made = positional_maker(cls)(*values)
    built = cls(**keywords)
    assert type(made) is cls and made == built and repr(made) == repr(built)
    assert dataclasses.astuple(made) == dataclasses.astuple(built)  # type: ignore[call-overload]
