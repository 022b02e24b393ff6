"""The one-pass delivery projection equals the reference form it replaced, row ids apart.

Hypothesis builds envelopes with messages, echoes, statuses, system messages
and user-id updates whose ids, phones, usernames and timestamps are valid,
blank, too long, control-laden, of the wrong type or missing, over contacts
that do or do not match; the projection of the new form and of the copy in
``_projection_reference`` must be field for field the same.
"""

from __future__ import annotations

import re
from dataclasses import astuple, replace
from datetime import datetime
from typing import Any

from hypothesis import given, settings
from hypothesis import strategies as st

from svc.http._projection import delivery_projection
from svc.webhook import normalize
from svc.webhook._read import read_user

from . import _projection_reference as reference
from .conftest import T0

IDS = ["16505551234", "US.13491208655302741918", "US.ENT.11815799212886844830", "447700900123"]
_GOOD_ID = st.sampled_from([*IDS, "1" * 64, "1" * 65, "U" * 160, "U" * 161, "é1"])
_BAD_ID = st.one_of(
    st.sampled_from(["", " ", "\t", "a\x00b", "x\x7f", "a\u2028b", "1" * 257]),
    st.text(max_size=8),
    st.integers(-2, 2),
)
_ID = st.one_of(_GOOD_ID, _GOOD_ID, st.none(), _GOOD_ID, _BAD_ID)
_SENDER = st.one_of(_GOOD_ID, st.none())
"""A message's own ids: the normalizer skips an item with an unsafe one before projection."""
_STAMP = st.one_of(
    st.sampled_from(["1779321024", "1779321040", "0", "-5", "99999999999", "soon", ""]),
    st.integers(-1, 40_000_000_000),
    st.none(),
)


def _drop_none(item: dict[str, Any]) -> dict[str, Any]:
    return {k: v for k, v in item.items() if v is not None}


_CONTACT = st.builds(
    lambda wa, user, parent, username, name: _drop_none(
        {
            "wa_id": wa,
            "user_id": user,
            "parent_user_id": parent,
            "profile": _drop_none({"username": username, "name": name}),
        }
    ),
    _ID,
    _ID,
    _ID,
    st.one_of(st.none(), st.sampled_from(["@sheena", " ", "n\x01", "u" * 128, "u" * 129])),
    st.one_of(st.none(), st.just("Sheena")),
)
_MESSAGE = st.builds(
    lambda wa, user, parent, stamp, mtype, n: _drop_none(
        {
            "from": wa,
            "from_user_id": user,
            "parent_user_id": None,
            "from_parent_user_id": parent,
            "id": f"wamid.M{n}",
            "timestamp": stamp,
            "type": mtype,
            "text": {"body": "hi"},
        }
    ),
    _SENDER,
    _SENDER,
    _SENDER,
    _STAMP,
    st.one_of(st.sampled_from(["text", "image", "x" * 70]), st.none()),
    st.integers(0, 40),
)
_ECHO = st.builds(
    lambda wa, to, user, stamp, n: _drop_none(
        {
            "from": wa,
            "to": to,
            "to_user_id": user,
            "id": f"wamid.E{n}",
            "timestamp": stamp,
            "type": "text",
        }
    ),
    _SENDER,
    _SENDER,
    _SENDER,
    _STAMP,
    st.integers(0, 40),
)
_SYSTEM = st.builds(
    lambda wa, user, stamp, stype, new_wa, new_user, new_parent, n: _drop_none(
        {
            "from": wa,
            "from_user_id": user,
            "id": f"wamid.S{n}",
            "timestamp": stamp,
            "type": "system",
            "system": _drop_none(
                {
                    "type": stype,
                    "wa_id": new_wa,
                    "user_id": new_user,
                    "parent_user_id": new_parent,
                }
            ),
        }
    ),
    _SENDER,
    _SENDER,
    _STAMP,
    st.sampled_from(["user_changed_number", "user_changed_user_id", "customer_changed_number"]),
    _ID,
    _ID,
    _ID,
    st.integers(0, 40),
)
_STATUS = st.builds(
    lambda rid, ruser, status, stamp, group, n: _drop_none(
        {
            "id": f"wamid.T{n}",
            "status": status,
            "timestamp": stamp,
            "recipient_id": rid,
            "recipient_user_id": ruser,
            "recipient_type": "group" if group else None,
        }
    ),
    _ID,
    _ID,
    st.sampled_from(["sent", "delivered", "read", "failed", "s" * 65]),
    _STAMP,
    st.booleans(),
    st.integers(0, 40),
)
_USER_ID_UPDATE = st.builds(
    lambda wa, prev, cur, pprev, pcur, stamp: _drop_none(
        {
            "wa_id": wa,
            "user_id": _drop_none({"previous": prev, "current": cur}),
            "parent_user_id": _drop_none({"previous": pprev, "current": pcur}),
            "timestamp": stamp,
        }
    ),
    _ID,
    _ID,
    _ID,
    _ID,
    _ID,
    _STAMP,
)
_METADATA = {"display_phone_number": "15550783881", "phone_number_id": "106540352242922"}


@st.composite
def envelopes(draw: st.DrawFn) -> dict[str, Any]:
    contacts = draw(st.lists(_CONTACT, max_size=4))
    messages = draw(st.lists(st.one_of(_MESSAGE, _SYSTEM), max_size=4))
    changes: list[dict[str, Any]] = [
        {
            "field": "messages",
            "value": {
                "messaging_product": "whatsapp",
                "metadata": _METADATA,
                "contacts": contacts,
                "messages": messages,
                "statuses": draw(st.lists(_STATUS, max_size=3)),
            },
        },
        {
            "field": "smb_message_echoes",
            "value": {"metadata": _METADATA, "message_echoes": draw(st.lists(_ECHO, max_size=2))},
        },
        {
            "field": "user_id_update",
            "value": {
                "metadata": _METADATA,
                "user_id_update": draw(st.lists(_USER_ID_UPDATE, max_size=2)),
            },
        },
    ]
    entry: dict[str, Any] = {"id": "102290129340398", "changes": changes}
    time = draw(st.one_of(st.none(), st.integers(0, 1_800_000_000)))
    if time is not None:
        entry["time"] = time
    return {"object": "whatsapp_business_account", "entry": [entry]}


def _now() -> datetime:
    return T0


_UUID = re.compile(r"^[0-9a-f]{8}-[0-9a-f]{4}-7[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$")


@settings(max_examples=400, deadline=None)
@given(envelopes(), st.one_of(st.none(), st.integers(0, 40_000_000_000)))
def test_the_one_pass_projection_equals_the_reference(
    envelope: dict[str, Any], received_at: int | None
) -> None:
    updates = normalize(envelope, received_at=received_at).updates
    new = delivery_projection(updates, _now)
    old = reference.delivery_projection(updates, _now)
    ids = [row.row_id for row in new.messages]
    assert len(set(ids)) == len(ids)
    assert all(_UUID.match(row_id) for row_id in ids)
    assert [replace(row, row_id="") for row in new.messages] == [
        replace(row, row_id="") for row in old.messages
    ]
    assert new.statuses == old.statuses
    assert new.identities == old.identities
    assert [astuple(c) for c in new.changes] == [astuple(c) for c in old.changes]
    assert new.unprojected == old.unprojected


@settings(max_examples=300, deadline=None)
@given(st.lists(_CONTACT, max_size=4), _ID, _ID, _ID, st.one_of(st.none(), st.just("@u")))
def test_read_user_equals_the_reference(
    contacts: list[dict[str, Any]], wa: Any, user: Any, parent: Any, username: Any
) -> None:
    value = {"contacts": contacts}
    assert read_user(value, wa, user, parent, username) == reference.read_user(
        value, wa, user, parent, username
    )
