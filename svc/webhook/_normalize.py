"""Envelope -> typed updates: every entry, every change, every item, in payload order.

``normalize`` never raises on any parsed JSON value: a part it cannot read is
recorded as a ``Skip`` with a reason and the rest of the batch goes on. Every
entry, change and item is looked at, once: the work is linear in the envelope,
which the body cap bounds (reading 10,000 statuses takes milliseconds, see
``docs/webhooks.md``). An identifying id over ``MAX_ID_LENGTH`` characters
skips its item (``id_too_long``), as does an id with a control, format or
separator character or one that is all whitespace (``unsafe_id``).

A message item is delivered whenever it has a usable id and names its user
by any id (``from``, ``from_user_id``, ``from_parent_user_id``, or the
change's only ``contacts[]`` entry), whatever its content (an unreadable
content reads as ``UnsupportedContent``) and whatever its ``timestamp`` (a
missing or unreadable one reads as ``received_at``, flagged
``timestamp_missing``); the same message id twice in one envelope is
delivered once (``duplicate_item``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Final

from ._agent_updates import (
    HANDOVER_FIELD,
    STANDBY_FIELD,
    MessagingHandoverUpdate,
    StandbyUpdate,
    standby_container,
    standby_item,
)
from ._make import positional_maker as _maker
from ._read import (
    CONTACT_KEYS,
    MAX_ID_LENGTH,
    MAX_TYPE_LENGTH,
    SENDER_KEYS,
    TO_KEYS,
    read_timestamp,
)
from ._updates import (
    ECHO_FIELD,
    AccountUpdate,
    CallConnectUpdate,
    CallStatusUpdate,
    CallTerminateUpdate,
    ChatOpenedUpdate,
    GroupLifecycleUpdate,
    GroupParticipantsUpdate,
    GroupSettingsUpdate,
    GroupStatusUpdate,
    HistoryUpdate,
    MessageUpdate,
    NormalizationResult,
    Skip,
    SmbAppStateSyncUpdate,
    StatusUpdate,
    SystemUpdate,
    UnknownUpdate,
    Update,
    UpdateKind,
    UpdateSource,
    UserIdUpdate,
    UserPreferencesUpdate,
)

__all__ = [
    "ACCOUNT_FIELDS",
    "GROUP_FIELDS",
    "MAX_ID_LENGTH",
    "SKIP_REASONS",
    "normalize",
]

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
        "malformed_user_id_update",
        "malformed_history",
        "malformed_state_sync",
        "unsupported_field",
        "unsupported_event",
        "id_too_long",
        "unsafe_id",
        "duplicate_item",
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

_Builder = Callable[[Any, UpdateSource, set[str]], "Update | str"]
# A list builder appends each item's update to ``updates``, or (index, reason) to ``bad``.
_ListBuilder = Callable[[list[Any], UpdateSource, set[str], list[Any], list[tuple[int, str]]], None]
# A fast path appends the update of each leading item it takes (see ``_each``).
_Accept = Callable[[list[Any], UpdateSource, set[str], Callable[[Any], None]], None]


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
_user_id_update = _maker(UserIdUpdate)
_history = _maker(HistoryUpdate)
_state_sync = _maker(SmbAppStateSyncUpdate)
_standby = _maker(StandbyUpdate)
_handover = _maker(MessagingHandoverUpdate)
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


def _id_problem(value: Any, missing: str) -> str | None:
    """``None`` for a safe id, else the skip reason: ``missing``, ``id_too_long`` or ``unsafe_id``.

    ``missing`` is for a value that is not a non-empty string. The same rule
    as ``_read.is_safe_id``, spelled out so the skip says why.
    """
    if type(value) is not str or not value:
        return missing
    if len(value) > MAX_ID_LENGTH:
        return "id_too_long"
    if not value.isprintable() or value.isspace():
        return "unsafe_id"
    return None


def _optional_id_problem(value: Any) -> str | None:
    """Like ``_id_problem`` for an id that may be left out: only a string present is checked."""
    if type(value) is not str:
        return None
    return _id_problem(value, "unsafe_id")


def _change_source(
    change: Any, waba_id: str | None, entry_time: int | None, received_at: int | None
) -> UpdateSource | str:
    """The shared source of a change's updates, or the reason the change is skipped."""
    if type(change) is not dict:
        return "malformed_change"
    field = change.get("field")
    value = change.get("value")
    if type(field) is not str or not 0 < len(field) <= MAX_ID_LENGTH or type(value) is not dict:
        return "malformed_change"
    metadata = value.get("metadata")
    if metadata is None and field == HANDOVER_FIELD:
        metadata = value.get("recipient")  # a handover names the business number there
    phone_number_id = display = None
    if type(metadata) is dict:
        phone_number_id = metadata.get("phone_number_id")
        display = metadata.get("display_phone_number")
        # Decimal digits (the usual form) are a safe id as they are.
        if type(phone_number_id) is not str:
            phone_number_id = None
        elif not (len(phone_number_id) <= MAX_ID_LENGTH and phone_number_id.isdecimal()) and (
            problem := _id_problem(phone_number_id, "unsafe_id")
        ):
            return problem
        if type(display) is not str:
            display = None
        elif not (len(display) <= MAX_ID_LENGTH and display.isdecimal()) and (
            problem := _id_problem(display, "unsafe_id")
        ):
            return problem
    # UpdateSource: waba_id, phone_number_id, display_phone_number, field, entry_time,
    # received_at, value.
    return _source(waba_id, phone_number_id, display, field, entry_time, received_at, value)


# --- item builders: an update, or the reason the item is skipped ----------------------------
# Makers take the init fields in declaration order: (source, raw). ``seen`` holds the message
# ids already delivered from this envelope.


def _user_problem(m: dict[str, Any], keys: tuple[str, ...], value: Any) -> str | None:
    """``None`` when the item names its user by at least one safe id, else the skip reason.

    Every id present is checked (an unsafe one skips the item); an item that
    names nobody may lean on its change's only ``contacts[]`` entry.
    """
    named = False
    for key in keys:
        ident = m.get(key)
        if ident is None:
            continue
        problem = _id_problem(ident, "malformed_message")
        if problem is not None:
            return problem
        named = True
    if named:
        return None
    contacts = value.get("contacts")
    if type(contacts) is list and len(contacts) == 1 and type(contacts[0]) is dict:
        return _user_problem(contacts[0], CONTACT_KEYS, {})
    return "malformed_message"


def _build_message(m: Any, source: UpdateSource, seen: set[str]) -> Update | str:
    """A ``messages[]`` item, unless it has no usable id or names no user (or came before).

    Neither its content nor its timestamp matters: a missing or unknown
    content is delivered as ``UnsupportedContent``, a missing or unreadable
    timestamp reads as the receipt time. A message is never skipped for
    lacking a phone number when a business-scoped user id names its user.
    """
    if type(m) is not dict:
        return "malformed_message"
    message_id = m.get("id")
    problem = _id_problem(message_id, "malformed_message")
    if problem is not None:
        return problem
    keys = SENDER_KEYS + TO_KEYS if source.field == ECHO_FIELD else SENDER_KEYS
    problem = _user_problem(m, keys, source.value)
    if problem is not None:
        return problem
    assert type(message_id) is str  # checked by _id_problem
    if message_id in seen:
        return "duplicate_item"
    seen.add(message_id)
    mtype = m.get("type")
    if mtype == "system":
        return _system(source, m)
    if mtype == "request_welcome":
        return _chat_opened(source, m)
    return _message(source, m)


def _build_echo(m: Any, source: UpdateSource, seen: set[str]) -> Update | str:
    """An item of ``message_echoes[]``: checked like a message, always a ``message`` update."""
    update = _build_message(m, source, seen)
    if type(update) is str or type(update) is MessageUpdate:
        return update
    return _message(source, m)  # an echoed system or request_welcome item stays a message


def _build_status(s: Any, source: UpdateSource, _seen: set[str]) -> Update | str:
    if type(s) is not dict:
        return "malformed_status"
    message_id = s.get("id")
    status = s.get("status")
    if type(message_id) is not str or not message_id or type(status) is not str or not status:
        return "malformed_status"
    if len(message_id) > MAX_ID_LENGTH:
        return "id_too_long"
    if not message_id.isprintable() or message_id.isspace():
        return "unsafe_id"
    if len(status) > MAX_TYPE_LENGTH or not status.isprintable() or status.isspace():
        return "malformed_status"
    return _status(source, s)


def _build_call(c: Any, source: UpdateSource, _seen: set[str]) -> Update | str:
    if type(c) is not dict:
        return "malformed_call"
    event = c.get("event")
    if type(event) is not str:
        return "malformed_call"
    problem = _id_problem(c.get("id"), "malformed_call") or _optional_id_problem(c.get("from"))
    if problem is not None:
        return problem
    if event == "connect":
        return _call_connect(source, c)
    if event == "terminate":
        return _call_terminate(source, c)
    return "unsupported_event"


def _build_call_status(s: Any, source: UpdateSource, _seen: set[str]) -> Update | str:
    if type(s) is not dict:
        return "malformed_call"
    return _id_problem(s.get("id"), "malformed_call") or _call_status(source, s)


def _build_group(g: Any, source: UpdateSource, _seen: set[str]) -> Update | str:
    if type(g) is not dict:
        return "malformed_group"
    return _optional_id_problem(g.get("group_id")) or _GROUP_MAKERS[source.field](source, g)


def _build_preference(p: Any, source: UpdateSource, _seen: set[str]) -> Update | str:
    if type(p) is not dict:
        return "malformed_preference"
    return _optional_id_problem(p.get("wa_id")) or _preferences(source, p)


def _build_user_id_update(u: Any, source: UpdateSource, _seen: set[str]) -> Update | str:
    if type(u) is not dict:
        return "malformed_user_id_update"
    return _optional_id_problem(u.get("wa_id")) or _user_id_update(source, u)


def _build_history(h: Any, source: UpdateSource, _seen: set[str]) -> Update | str:
    """A ``history[]`` chunk: any object (a declined share is one holding ``errors``)."""
    return _history(source, h) if type(h) is dict else "malformed_history"


def _build_state_sync(s: Any, source: UpdateSource, _seen: set[str]) -> Update | str:
    """A ``state_sync[]`` item: any object (an unknown ``type`` or ``action`` is delivered)."""
    return _state_sync(source, s) if type(s) is dict else "malformed_state_sync"


def _build_standby_message(m: Any, source: UpdateSource, seen: set[str]) -> Update | str:
    """A user's message in a ``standby`` thread: checked like a message (its own duplicates)."""
    if type(m) is not dict or standby_item(m) != "message":
        return "malformed_message"
    message_id = m.get("id")
    problem = _id_problem(message_id, "malformed_message") or _user_problem(
        m, SENDER_KEYS, standby_container(source.value)
    )
    if problem is not None:
        return problem
    key = f"{STANDBY_FIELD}\x00{message_id}"
    if key in seen:
        return "duplicate_item"
    seen.add(key)
    return _standby(source, m)


def _build_standby_echo(m: Any, source: UpdateSource, _seen: set[str]) -> Update | str:
    """A message the holder of a ``standby`` thread sent: an id and its ``message`` (or ``to``)."""
    if type(m) is not dict or standby_item(m) != "echo":
        return "malformed_message"
    problem = _id_problem(m.get("id"), "malformed_message")
    return problem if problem is not None else _standby(source, m)


def _build_standby_status(s: Any, source: UpdateSource, seen: set[str]) -> Update | str:
    """A status of a message the holder sent: checked like any status."""
    update = _build_status(s, source, seen)
    return update if type(update) is str else _standby(source, s)


# --- list builders: the hot lists get an inline fast path --------------------------------------


def _each(build: _Builder, accept: _Accept | None = None) -> _ListBuilder:
    """A list builder that runs ``build`` on every item, after ``accept`` (the hot lists' fast
    path) has taken the leading items it can take inline.

    ``accept`` only ever takes what ``build`` accepts, with the same update, and stops at
    the first item it does not take (a missing key raises ``KeyError``; every skip lands
    there too): that item and all the later ones take ``build``'s complete checks, so
    skips keep their indexes and duplicates are judged in payload order. An accepted
    item appends exactly one update, so the count appended is the index to resume from.
    """

    def build_list(
        listed: list[Any],
        source: UpdateSource,
        seen: set[str],
        updates: list[Any],
        bad: list[tuple[int, str]],
    ) -> None:
        append = updates.append
        start = 0
        if accept is not None:
            first = len(updates)
            # A missing key: that item takes the complete checks (try, not ``suppress``: no
            # context manager's calls on every list of the hot path).
            try:  # noqa: SIM105
                accept(listed, source, seen, append)
            except KeyError:
                pass
            start = len(updates) - first
        for k in range(start, len(listed)):
            update = build(listed[k], source, seen)
            if type(update) is str:
                bad.append((k, update))
            else:
                append(update)

    return build_list


def _accept_messages(
    listed: list[Any], source: UpdateSource, seen: set[str], append: Callable[[Any], None]
) -> None:
    """``messages[]``: take the common well-formed items inline, as ``_build_message`` would.

    The inline condition implies every one of ``_build_message``'s checks.
    Shortcuts that keep it cheap: a sender of decimal digits (a phone number)
    is a safe id without further checks (and is not empty), a printable id
    whose first character is not a space is not all whitespace (the space is
    the only printable whitespace character), dict subscripts instead of
    ``get`` calls, and no ``enumerate`` (see ``_each``).
    """
    for m in listed:
        if type(m) is not dict:
            return
        message_id = m["id"]
        sender = m["from"]
        stamp = m["timestamp"]
        if not (
            type(message_id) is str
            and type(sender) is str
            and type(stamp) is str
            and 0 < len(message_id) <= MAX_ID_LENGTH
            and len(sender) <= MAX_ID_LENGTH
            and len(stamp) <= 11
            and stamp.isascii()
            and stamp.isdigit()
            and sender.isdecimal()
            and message_id.isprintable()
            and message_id[0] != " "
            and message_id not in seen
            # A BSUID beside the phone takes _user_problem's check of every id present.
            and m.get("from_user_id") is None
            and m.get("from_parent_user_id") is None
        ):
            return
        seen.add(message_id)
        mtype = m.get("type")
        if mtype != "system" and mtype != "request_welcome":
            append(_message(source, m))
        else:
            append(_system(source, m) if mtype == "system" else _chat_opened(source, m))


def _accept_statuses(
    listed: list[Any], source: UpdateSource, _seen: set[str], append: Callable[[Any], None]
) -> None:
    """``statuses[]`` of ``messages``: the same kind of fast accept as ``_accept_messages``.

    A status word the platform documents is known to be safe as is.
    """
    for s in listed:
        if type(s) is not dict:
            return
        message_id = s["id"]
        status = s["status"]
        if not (
            type(message_id) is str
            and type(status) is str
            and 0 < len(message_id) <= MAX_ID_LENGTH
            and status in _STATUS_WORDS
            and message_id.isprintable()
            and message_id[0] != " "
        ):
            return
        append(_status(source, s))


_message_list = _each(_build_message, _accept_messages)
_status_list = _each(_build_status, _accept_statuses)

_STATUS_WORDS: Final = frozenset({"sent", "delivered", "read", "failed", "deleted", "played"})

# field -> the item lists of its value: (key, kind of a skipped item, list builder)
ITEM_LISTS: dict[str, tuple[tuple[str, UpdateKind | None, _ListBuilder], ...]] = {
    "messages": (("messages", "message", _message_list), ("statuses", "status", _status_list)),
    ECHO_FIELD: (("message_echoes", "message", _each(_build_echo)),),
    "calls": (
        ("calls", None, _each(_build_call)),
        ("statuses", "callStatus", _each(_build_call_status)),
    ),
    **{field: (("groups", kind, _each(_build_group)),) for field, kind in GROUP_FIELDS.items()},
    "user_preferences": (("user_preferences", "userPreferences", _each(_build_preference)),),
    "user_id_update": (("user_id_update", "userIdUpdate", _each(_build_user_id_update)),),
    "history": (("history", "history", _each(_build_history)),),
    "smb_app_state_sync": (("state_sync", "smbAppStateSync", _each(_build_state_sync)),),
    # In ``value.standby`` (``standby_container``): the items of threads another responder holds.
    STANDBY_FIELD: (
        ("messages", "standby", _each(_build_standby_message)),
        ("message_echoes", "standby", _each(_build_standby_echo)),
        ("statuses", "standby", _each(_build_standby_status)),
    ),
}


def normalize(envelope: Any, *, received_at: int | None = None) -> NormalizationResult:
    """Turn a parsed envelope into one typed update per item, and a ``Skip`` per unreadable part.

    ``received_at`` (Unix seconds, from the caller's clock) is the time a
    message without a readable ``timestamp`` reads.

    One flat walk with local counters and the common checks inline: this loop
    is the hot path of webhook ingestion (see ``bench/webhook_normalize.py``).
    """
    if type(envelope) is not dict or type(entries := envelope.get("entry")) is not list:
        return NormalizationResult(skipped=(Skip(reason="malformed_envelope", location="$"),))
    updates: list[Update] = []
    skipped: list[Skip] = []
    seen: set[str] = set()
    bad: list[tuple[int, str]] = []
    append = updates.append
    for i, entry in enumerate(entries):
        if type(entry) is not dict or type(changes := entry.get("changes")) is not list:
            skipped.append(Skip(reason="malformed_entry", location=_location(i)))
            continue
        waba_id = entry.get("id")
        # Decimal digits (the usual form) are a safe id as they are; anything else is checked.
        if (
            waba_id is not None
            and not (type(waba_id) is str and len(waba_id) <= MAX_ID_LENGTH and waba_id.isdecimal())
            and (
                reason := _id_problem(
                    waba_id, "unsafe_id" if type(waba_id) is str else "malformed_entry"
                )
            )
        ):
            skipped.append(Skip(reason=reason, location=_location(i)))
            continue
        entry_time = entry.get("time")
        if entry_time is not None:
            entry_time = read_timestamp(entry_time)
        for j, change in enumerate(changes):
            source = _change_source(change, waba_id, entry_time, received_at)
            if isinstance(source, str):
                skipped.append(Skip(reason=source, location=_location(i, j)))
                continue
            field = source.field
            value: Any = change["value"]
            lists = ITEM_LISTS.get(field)
            if lists is None:
                if field in ACCOUNT_FIELDS:
                    append(_account(source, value))
                else:
                    append((_handover if field == HANDOVER_FIELD else _unknown)(source, value))
                continue
            found = False
            holder, at = value, ""
            if field == STANDBY_FIELD and type(value.get(STANDBY_FIELD)) is dict:
                holder, at = value[STANDBY_FIELD], f"{STANDBY_FIELD}."
            for key, kind, build in lists:
                listed = holder.get(key)
                if listed is None:
                    continue
                found = True
                if type(listed) is not list:
                    location = _location(i, j, at + key)
                    skipped.append(Skip(reason="malformed_change", location=location, kind=kind))
                    continue
                build(listed, source, seen, updates, bad)
                if bad:
                    for k, reason in bad:
                        location = _location(i, j, at + key, k)
                        skipped.append(Skip(reason=reason, location=location, kind=kind))
                    bad.clear()
            if not found:
                if field in GROUP_FIELDS and ("group_id" in value or "type" in value):
                    # A group change whose item sits directly in ``value``: one group item.
                    update = _build_group(value, source, seen)
                    if type(update) is str:
                        location = _location(i, j) + ".value"
                        skipped.append(Skip(reason=update, location=location, kind=lists[0][1]))
                    else:
                        append(update)  # type: ignore[arg-type]
                    continue
                skipped.append(
                    Skip(reason="unsupported_field", location=_location(i, j), kind=lists[0][1])
                )
    return _result(tuple(updates), tuple(skipped))
