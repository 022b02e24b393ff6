"""One update as bytes and back: what the handler runtime keeps while the update waits.

``update_to_json`` writes a one-change envelope reduced to the update's own
item (the change's other items left out, its ``contacts`` and ``metadata``
kept), with the receipt time; ``update_from_json`` normalizes that envelope
again, so what comes back is checked by the same rules as a delivery and has
the same kind, ``raw``, ``source`` and ``update_key``. The bytes are plain
JSON: the HTTP layer seals them before they reach a store.

orjson writes the document; ``json`` does when orjson's bytes would not be plain ASCII (json
escapes), hold a ``null`` (orjson writes a float that is not finite as null, json refuses it)
or when orjson refuses the document (integers past 64 bits, lone surrogates). orjson reads it
back when its reading writes the same bytes again (what orjson wrote: the reading is exact);
``json`` reads the rest (what json wrote, where orjson would refuse a lone surrogate or read
an integer past 64 bits as a float).
"""

from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any, Final

import orjson

from ._agent_updates import STANDBY_FIELD
from ._normalize import ITEM_LISTS, normalize
from ._updates import Update

__all__ = ["update_from_json", "update_to_json"]

WIRE_VERSION: Final = 1


def _reduced_holder(
    holder: Mapping[str, Any], raw: Mapping[str, Any], item_keys: tuple[str, ...]
) -> dict[str, Any] | None:
    """``holder`` with the item list that holds ``raw`` cut to ``[raw]`` and the field's other
    item lists left out; None when none of them holds ``raw``."""
    found: str | None = None
    for same in (lambda item: item is raw, lambda item: item == raw):
        for key in item_keys:
            listed = holder.get(key)
            if type(listed) is list and any(same(item) for item in listed):
                found = key
                break
        if found is not None:
            break
    if found is None:
        return None
    reduced = {key: value for key, value in holder.items() if key not in item_keys}
    reduced[found] = [raw]
    return reduced


def _reduced_value(update: Update) -> Mapping[str, Any]:
    """The update's change value reduced to its own item (the value itself when the item is
    the whole value: account changes, handovers, unknown fields, a group item in ``value``)."""
    value = update.source.value
    raw = update.raw
    if raw is value:
        return value
    item_keys = tuple(key for key, _, _ in ITEM_LISTS.get(update.field, ()))
    if update.field == STANDBY_FIELD and type(value.get(STANDBY_FIELD)) is dict:
        inner = _reduced_holder(value[STANDBY_FIELD], raw, item_keys)
        if inner is not None:
            return {**value, STANDBY_FIELD: inner}
    reduced = _reduced_holder(value, raw, item_keys)
    return value if reduced is None else reduced


def update_to_json(update: Update) -> bytes:
    """The update as UTF-8 JSON (ASCII only: lone surrogates and any text survive as escapes)."""
    source = update.source
    entry: dict[str, Any] = {
        "id": source.waba_id,
        "changes": [{"field": source.field, "value": _reduced_value(update)}],
    }
    if source.entry_time is not None:
        entry["time"] = source.entry_time
    document = {
        "v": WIRE_VERSION,
        "kind": update.kind,
        "received_at": source.received_at,
        "envelope": {"object": "whatsapp_business_account", "entry": [entry]},
    }
    try:
        data = orjson.dumps(document)
    except TypeError:  # orjson.JSONEncodeError: past 64 bits, a lone surrogate, deep nesting
        data = b"null"
    if data.isascii() and b"null" not in data:
        return data
    return json.dumps(document, separators=(",", ":"), allow_nan=False).encode("ascii")


def _loads(data: bytes) -> Any:
    """``json.loads(data)``, by orjson when orjson writes ``data`` again from its reading."""
    try:
        document = orjson.loads(data)
        if orjson.dumps(document) == data:
            return document
    except (orjson.JSONDecodeError, orjson.JSONEncodeError):
        pass
    return json.loads(data)


def update_from_json(data: bytes) -> Update:
    """The update ``update_to_json`` wrote, normalized again.

    Raises ``ValueError`` when ``data`` is not such a document or does not
    normalize to exactly one update of the kind it names.
    """
    try:
        document = _loads(data)
    except (ValueError, UnicodeDecodeError):
        raise ValueError("not an update document") from None
    if type(document) is not dict or document.get("v") != WIRE_VERSION:
        raise ValueError("not an update document of this version")
    received_at = document.get("received_at")
    if received_at is not None and type(received_at) is not int:
        raise ValueError("an update document's received_at is an integer")
    result = normalize(document.get("envelope"), received_at=received_at)
    if len(result.updates) != 1 or result.updates[0].kind != document.get("kind"):
        raise ValueError("an update document holds exactly one update of its kind")
    return result.updates[0]
