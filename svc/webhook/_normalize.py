"""Envelope -> typed updates: every entry, every change, every item, in payload order.

``normalize`` never raises on any parsed JSON value: a part it cannot read is
recorded as a ``Skip`` with a reason and the rest of the batch goes on. Work
is bounded whatever the input: at most ``MAX_ITEMS`` items and
``MAX_CONTAINERS`` entries plus changes are looked at (the rest becomes one
``too_many_items`` skip), and an identifying id over ``MAX_ID_LENGTH``
characters skips its item (``id_too_long``).
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any, Final, TypeVar

from ._read import CONTENT_READERS, MAX_ID_LENGTH, read_timestamp
from ._updates import (
    AccountUpdate,
    CallConnectUpdate,
    CallStatusUpdate,
    CallTerminateUpdate,
    ChatOpenedUpdate,
    GroupLifecycleUpdate,
    GroupParticipantsUpdate,
    GroupSettingsUpdate,
    GroupStatusUpdate,
    MessageUpdate,
    NormalizationResult,
    Skip,
    StatusUpdate,
    SystemUpdate,
    UnknownUpdate,
    Update,
    UpdateKind,
    UpdateSource,
    UserPreferencesUpdate,
)

__all__ = [
    "ACCOUNT_FIELDS",
    "GROUP_FIELDS",
    "MAX_CONTAINERS",
    "MAX_ID_LENGTH",
    "MAX_ITEMS",
    "SKIP_REASONS",
    "normalize",
]

MAX_ITEMS: Final = 1000
MAX_CONTAINERS: Final = 1000

SKIP_REASONS: Final = frozenset(
    {
        "malformed_envelope",
        "malformed_entry",
        "malformed_change",
        "malformed_message",
        "malformed_status",
        "malformed_call",
        "malformed_group",
        "malformed_preference",
        "unsupported_field",
        "unsupported_event",
        "too_many_items",
        "id_too_long",
    }
)

ACCOUNT_FIELDS: Final = frozenset(
    {
        "account_alerts",
        "account_review_update",
        "account_settings_update",
        "account_update",
        "business_capability_update",
        "business_status_update",
        "message_template_components_update",
        "message_template_quality_update",
        "message_template_status_update",
        "partner_solutions",
        "payment_configuration_update",
        "phone_number_name_update",
        "phone_number_quality_update",
        "security",
        "template_category_update",
        "template_correct_category_detection",
    }
)

GROUP_FIELDS: Final[dict[str, UpdateKind]] = {
    "group_lifecycle_update": "groupLifecycle",
    "group_participants_update": "groupParticipants",
    "group_settings_update": "groupSettings",
    "group_status_update": "groupStatus",
}

_T = TypeVar("_T")
_Builder = Callable[[Any, UpdateSource], "Update | str"]


def _maker(cls: type[_T]) -> Callable[..., _T]:
    """A positional constructor for a frozen slotted dataclass that skips ``object.__setattr__``.

    The frozen ``__init__`` pays a keyword call and a named
    ``object.__setattr__`` per field; this one takes the init fields
    positionally, in declaration order, and calls each slot's descriptor
    directly (about 3x faster), which keeps normalization cheap next to the
    JSON parse. Instances equal ``cls(...)`` with the same values (tested for
    every kind).
    """
    namespace: dict[str, Any] = {"_new": object.__new__, "_cls": cls}
    params: list[str] = []
    lines: list[str] = []
    for spec in dataclasses.fields(cls):  # type: ignore[arg-type]
        name = spec.name
        if spec.default_factory is not dataclasses.MISSING:
            raise TypeError(f"{cls.__name__}.{name}: default_factory is not supported")
        namespace[f"_set_{name}"] = getattr(cls, name).__set__
        if spec.init:
            params.append(name)
            lines.append(f"    _set_{name}(o, {name})")
        else:
            namespace[f"_d_{name}"] = spec.default
            lines.append(f"    _set_{name}(o, _d_{name})")
    source = f"def make({', '.join(params)}, /):\n    o = _new(_cls)\n"
    source += "\n".join(lines) + "\n    return o\n"
    exec(source, namespace)  # noqa: S102 - built only from the dataclass's own field names
    return namespace["make"]  # type: ignore[no-any-return]


_source = _maker(UpdateSource)
_result = _maker(NormalizationResult)
_message = _maker(MessageUpdate)
_system = _maker(SystemUpdate)
_chat_opened = _maker(ChatOpenedUpdate)
_status = _maker(StatusUpdate)
_account = _maker(AccountUpdate)
_unknown = _maker(UnknownUpdate)
_call_connect = _maker(CallConnectUpdate)
_call_terminate = _maker(CallTerminateUpdate)
_call_status = _maker(CallStatusUpdate)
_preferences = _maker(UserPreferencesUpdate)
_GROUP_MAKERS: dict[str, Callable[..., Update]] = {
    "group_lifecycle_update": _maker(GroupLifecycleUpdate),
    "group_participants_update": _maker(GroupParticipantsUpdate),
    "group_settings_update": _maker(GroupSettingsUpdate),
    "group_status_update": _maker(GroupStatusUpdate),
}


def _location(i: int, j: int | None = None, key: str | None = None, k: int | None = None) -> str:
    """A structural path such as ``entry[0].changes[1].value.messages[2]`` (built only to skip)."""
    loc = f"entry[{i}]"
    if j is not None:
        loc += f".changes[{j}]"
    if key is not None:
        loc += f".value.{key}"
    if k is not None:
        loc += f"[{k}]"
    return loc


def _change_source(change: Any, waba_id: str | None, entry_time: int | None) -> UpdateSource | str:
    """The shared source of a change's updates, or the reason the change is skipped."""
    if type(change) is not dict:
        return "malformed_change"
    field = change.get("field")
    value = change.get("value")
    if type(field) is not str or not 0 < len(field) <= MAX_ID_LENGTH or type(value) is not dict:
        return "malformed_change"
    metadata = value.get("metadata")
    phone_number_id = display = None
    if type(metadata) is dict:
        phone_number_id = metadata.get("phone_number_id")
        display = metadata.get("display_phone_number")
        if type(phone_number_id) is not str:
            phone_number_id = None
        elif len(phone_number_id) > MAX_ID_LENGTH:
            return "id_too_long"
        if type(display) is not str:
            display = None
        elif len(display) > MAX_ID_LENGTH:
            return "id_too_long"
    # UpdateSource: waba_id, phone_number_id, display_phone_number, field, entry_time, value.
    return _source(waba_id, phone_number_id, display, field, entry_time, value)


# --- item builders: an update, or the reason the item is skipped ----------------------------
# Makers take the init fields in declaration order: (source, raw).


def _build_message(m: Any, source: UpdateSource) -> Update | str:
    if type(m) is not dict:
        return "malformed_message"
    message_id = m.get("id")
    mtype = m.get("type")
    if type(message_id) is not str or not message_id or type(mtype) is not str or not mtype:
        return "malformed_message"
    sender = m.get("from")
    if len(message_id) > MAX_ID_LENGTH or (type(sender) is str and len(sender) > MAX_ID_LENGTH):
        return "id_too_long"
    reader = CONTENT_READERS.get(mtype)
    if reader is not None:
        if type(m.get(mtype)) is not reader[0]:
            return "malformed_message"
        if mtype == "text" and type(m["text"].get("body")) is not str:
            return "malformed_message"
        return _message(source, m)
    if mtype == "system":
        if type(m.get("system")) is not dict:
            return "malformed_message"
        return _system(source, m)
    if mtype == "request_welcome":
        return _chat_opened(source, m)
    return _message(source, m)


def _build_status(s: Any, source: UpdateSource) -> Update | str:
    if type(s) is not dict:
        return "malformed_status"
    message_id = s.get("id")
    status = s.get("status")
    if type(message_id) is not str or not message_id or type(status) is not str or not status:
        return "malformed_status"
    if len(message_id) > MAX_ID_LENGTH:
        return "id_too_long"
    return _status(source, s)


def _build_call(c: Any, source: UpdateSource) -> Update | str:
    if type(c) is not dict:
        return "malformed_call"
    call_id = c.get("id")
    event = c.get("event")
    if type(call_id) is not str or not call_id or type(event) is not str:
        return "malformed_call"
    sender = c.get("from")
    if len(call_id) > MAX_ID_LENGTH or (type(sender) is str and len(sender) > MAX_ID_LENGTH):
        return "id_too_long"
    if event == "connect":
        return _call_connect(source, c)
    if event == "terminate":
        return _call_terminate(source, c)
    return "unsupported_event"


def _build_call_status(s: Any, source: UpdateSource) -> Update | str:
    if type(s) is not dict:
        return "malformed_call"
    call_id = s.get("id")
    if type(call_id) is not str or not call_id:
        return "malformed_call"
    if len(call_id) > MAX_ID_LENGTH:
        return "id_too_long"
    return _call_status(source, s)


def _build_group(g: Any, source: UpdateSource) -> Update | str:
    if type(g) is not dict:
        return "malformed_group"
    group_id = g.get("group_id")
    if type(group_id) is str and len(group_id) > MAX_ID_LENGTH:
        return "id_too_long"
    return _GROUP_MAKERS[source.field](source, g)


def _build_preference(p: Any, source: UpdateSource) -> Update | str:
    if type(p) is not dict:
        return "malformed_preference"
    wa_id = p.get("wa_id")
    if type(wa_id) is str and len(wa_id) > MAX_ID_LENGTH:
        return "id_too_long"
    return _preferences(source, p)


# field -> the item lists of its value: (key, kind of a skipped item, builder)
_ITEM_LISTS: dict[str, tuple[tuple[str, UpdateKind | None, _Builder], ...]] = {
    "messages": (("messages", "message", _build_message), ("statuses", "status", _build_status)),
    "calls": (("calls", None, _build_call), ("statuses", "callStatus", _build_call_status)),
    **{field: (("groups", kind, _build_group),) for field, kind in GROUP_FIELDS.items()},
    "user_preferences": (("user_preferences", "userPreferences", _build_preference),),
}


def _too_many(location: str, remaining: int) -> Skip:
    return Skip(reason="too_many_items", location=location, count=remaining)


def normalize(envelope: Any) -> NormalizationResult:
    """Turn a parsed envelope into one typed update per item, and a ``Skip`` per unreadable part.

    One flat walk with local counters: this loop is the hot path of webhook
    ingestion (see ``bench/webhook_normalize.py``).
    """
    if type(envelope) is not dict or type(entries := envelope.get("entry")) is not list:
        return NormalizationResult(skipped=(Skip(reason="malformed_envelope", location="$"),))
    updates: list[Update] = []
    skipped: list[Skip] = []
    append = updates.append
    items = containers = 0
    for i, entry in enumerate(entries):
        if containers >= MAX_CONTAINERS or items >= MAX_ITEMS:
            skipped.append(_too_many(_location(i), len(entries) - i))
            break
        containers += 1
        if type(entry) is not dict or type(changes := entry.get("changes")) is not list:
            skipped.append(Skip(reason="malformed_entry", location=_location(i)))
            continue
        waba_id = entry.get("id")
        if waba_id is not None and (type(waba_id) is not str or len(waba_id) > MAX_ID_LENGTH):
            reason = "malformed_entry" if type(waba_id) is not str else "id_too_long"
            skipped.append(Skip(reason=reason, location=_location(i)))
            continue
        entry_time = read_timestamp(entry.get("time"))
        for j, change in enumerate(changes):
            if containers >= MAX_CONTAINERS or items >= MAX_ITEMS:
                skipped.append(_too_many(_location(i, j), len(changes) - j))
                break
            containers += 1
            source = _change_source(change, waba_id, entry_time)
            if isinstance(source, str):
                skipped.append(Skip(reason=source, location=_location(i, j)))
                continue
            value: Any = source.value
            lists = _ITEM_LISTS.get(source.field)
            if lists is None:
                items += 1
                append((_account if source.field in ACCOUNT_FIELDS else _unknown)(source, value))
                continue
            found = False
            for key, kind, build in lists:
                listed = value.get(key)
                if listed is None:
                    continue
                found = True
                if type(listed) is not list:
                    skipped.append(
                        Skip(reason="malformed_change", location=_location(i, j, key), kind=kind)
                    )
                    continue
                for k, item in enumerate(listed):
                    if items >= MAX_ITEMS:
                        skipped.append(_too_many(_location(i, j, key, k), len(listed) - k))
                        break
                    items += 1
                    update = build(item, source)
                    if type(update) is str:
                        skipped.append(
                            Skip(reason=update, location=_location(i, j, key, k), kind=kind)
                        )
                    else:
                        append(update)  # type: ignore[arg-type]
            if not found:
                skipped.append(
                    Skip(reason="unsupported_field", location=_location(i, j), kind=lists[0][1])
                )
        else:
            continue
        break  # the budget ran out inside this entry
    return _result(tuple(updates), tuple(skipped))
