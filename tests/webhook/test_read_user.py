"""``read_user``: the identity a webhook names is a frozen ``UserIdentity``."""

from __future__ import annotations

import dataclasses

import pytest

from svc.webhook import UserIdentity
from svc.webhook._read import read_user


def test_read_user_gives_a_frozen_user_identity() -> None:
    value = {"contacts": [{"wa_id": "1555", "profile": {"name": "Ann", "username": "ann"}}]}
    user = read_user(value, "1555", None, None)
    assert type(user) is UserIdentity
    assert user == UserIdentity(wa_id="1555", username="ann", name="Ann")
    with pytest.raises(dataclasses.FrozenInstanceError):
        user.name = "Bob"  # type: ignore[misc]
