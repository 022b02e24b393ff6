"""Durable-dedupe keys: an envelope's event key, a raw body's hash, an update's key."""

from __future__ import annotations

import json
from typing import Any, Final

import orjson

from svc.crypto import sha256_hex

from ._base import UpdateBase
from ._values import UserIdentity

__all__ = [
    "body_hash",
    "canonical_json",
    "event_key",
    "queue_key",
    "queue_place",
    "queue_user",
    "update_key",
    "user_queue_keys",
]


def canonical_json(envelope: Any) -> bytes:
    """The canonical UTF-8 JSON of a parsed envelope: sorted keys, compact separators."""
    text = json.dumps(
        envelope, sort_keys=True, separators=(",", ":"), ensure_ascii=False, allow_nan=False
    )
    # "surrogatepass" keeps lone surrogates (valid JSON escapes) hashable.
    return text.encode("utf-8", "surrogatepass")


_FAST_OPTIONS: Final = (
    orjson.OPT_SORT_KEYS
    | orjson.OPT_PASSTHROUGH_DATACLASS
    | orjson.OPT_PASSTHROUGH_DATETIME
    | orjson.OPT_PASSTHROUGH_SUBCLASS
)


def _refuse(value: Any) -> Any:
    raise TypeError(f"not a plain JSON value: {type(value).__name__}")


def float_free_canonical_json(value: Any) -> bytes:
    """``canonical_json(value)`` for a parsed JSON value holding no float, mostly through orjson.

    Without floats orjson writes what ``json.dumps`` writes (keys sorted by code
    point, the same escapes, ``ensure_ascii=False``); what it refuses (lone
    surrogates, integers past 64 bits, non-str keys, subclasses) goes through
    ``canonical_json`` itself. Floats are where the two differ (``1e-07``).
    """
    try:
        return orjson.dumps(value, default=_refuse, option=_FAST_OPTIONS)
    except TypeError:  # orjson.JSONEncodeError is a TypeError
        return canonical_json(value)


def _canonical(value: Any, may_hold_floats: bool) -> bytes:
    """``canonical_json(value)``, through the faster equal form when no float can be in it."""
    return canonical_json(value) if may_hold_floats else float_free_canonical_json(value)


def event_key(envelope: Any, *, may_hold_floats: bool = True) -> str:
    """SHA-256 hex of ``canonical_json(envelope)``: stable across key order and whitespace.

    ``may_hold_floats=False`` (the parse saw no float) takes the faster, equal form.
    """
    return sha256_hex(_canonical(envelope, may_hold_floats))


def body_hash(body: bytes) -> str:
    """SHA-256 hex of the raw body bytes, exactly as received."""
    return sha256_hex(body)


_CALL_KINDS: Final = frozenset({"callConnect", "callTerminate", "callStatus"})


def update_key(update: UpdateBase, *, may_hold_floats: bool = True) -> str:
    """A stable key of one update, equal however the platform regroups or repeats it.

    SHA-256 hex over the business number, the kind and the update's platform
    ids, joined by NUL: message id (echoes apart), status id + status, call id
    + event + status, a standby item's kind + id + status; for kinds without
    ids (account, group events, preferences, user-id changes, handovers,
    unknown) the canonical JSON of the item and its change field. Keys are
    stored: a golden test pins their values.
    ``may_hold_floats=False`` (the delivery's parse saw no float) writes that JSON
    through the faster, byte-identical ``float_free_canonical_json``.
    """
    kind = update.kind
    raw = update.raw
    source = update.source
    scope = f"{source.phone_number_id or ''}\x00{source.waba_id or ''}\x00{kind}\x00"
    if kind == "message":
        echo = "echo" if update.is_echo else "item"  # type: ignore[attr-defined]
        text = f"{scope}{echo}\x00{raw.get('id')}"
    elif kind == "status":
        text = f"{scope}{raw.get('id')}\x00{raw.get('status')}"
    elif kind == "system" or kind == "chatOpened":
        text = f"{scope}item\x00{raw.get('id')}"
    elif kind == "standby":
        item = update.item  # type: ignore[attr-defined]
        text = f"{scope}{item}\x00{raw.get('id')}\x00{raw.get('status', '')}"
    elif kind in _CALL_KINDS:
        text = f"{scope}{raw.get('id')}\x00{raw.get('event', '')}\x00{raw.get('status', '')}"
    else:
        json_text = _canonical(raw, may_hold_floats).decode("utf-8", "surrogatepass")
        text = f"{scope}{source.field}\x00{json_text}"
    # "surrogatepass" keeps lone surrogates (valid JSON escapes) hashable.
    return sha256_hex(text.encode("utf-8", "surrogatepass"))


def queue_user(update: UpdateBase) -> UserIdentity | None:
    """The user whose queue an update waits in (a ``UserIdentity``), or None: a group's
    updates wait in the group's queue and updates that name no user in the number's."""
    group = getattr(update, "group_id", None)
    if isinstance(group, str) and group:
        return None
    user = getattr(update, "user", None)  # the kinds that name a user have ``user``
    return user if isinstance(user, UserIdentity) and user.key else None


def _hashed(number: str, kind: str, value: str) -> str:
    text = f"{number}\x00{kind}\x00{value}"
    return sha256_hex(text.encode("utf-8", "surrogatepass"))


def _user_keys(number: str, user: UserIdentity | None) -> dict[str, str]:
    """Each identifier ``user`` has (BSUID, parent BSUID, phone) -> its own queue's key."""
    if user is None:
        return {}
    found = (user.user_id, user.parent_user_id, user.wa_id)
    return {value: _hashed(number, "user", value) for value in found if value}


def _queue_key(
    update: UpdateBase, number: str, user: UserIdentity | None, own: dict[str, str] | None
) -> str:
    """``queue_key`` of ``update`` whose ``queue_user`` is ``user`` (``own``: its
    ``_user_keys``, when they were hashed already)."""
    group = getattr(update, "group_id", None)
    if isinstance(group, str) and group:
        return _hashed(number, "group", group)
    key = user.key if user is not None else None
    if key:
        return own[key] if own is not None else _hashed(number, "user", key)
    return _hashed(number, "number", number or (update.source.waba_id or ""))


def queue_place(update: UpdateBase) -> tuple[str, UserIdentity | None, tuple[str, ...]]:
    """``queue_key``, ``queue_user`` and ``user_queue_keys`` of one update, its user read once
    (what an update queued for the handlers is recorded with)."""
    number = update.source.phone_number_id or ""
    user = queue_user(update)
    own = _user_keys(number, user)
    return _queue_key(update, number, user, own), user, tuple(sorted(own.values()))


def queue_key(update: UpdateBase) -> str:
    """The key of the queue an update waits in on its own: its updates run one at a time,
    in order.

    The group for a group's updates (group messages and group events), else the
    user's identity key (``update.user.key``: BSUID, else parent BSUID, else
    phone), else the business number; scoped to the business number and kept
    hashed (SHA-256 hex of ``phone_number_id NUL kind-of-key NUL value``), so no
    raw identifier is stored. With a store, a user's update waits in its person's
    queue instead, which the store derives from its identity map
    (``InboxRow.user_id``/``wa_id``); this key is the fallback.
    """
    return _queue_key(update, update.source.phone_number_id or "", queue_user(update), None)


def user_queue_keys(update: UpdateBase) -> tuple[str, ...]:
    """The keys the queue of an update's user has on its own, one per identifier the update
    names (BSUID, parent BSUID, phone), sorted; empty when it waits in no user's queue.

    Whichever identifier a delivery led with, its updates waited under one of these: the
    store folds them into the person's queue."""
    own = _user_keys(update.source.phone_number_id or "", queue_user(update))
    return tuple(sorted(own.values()))
