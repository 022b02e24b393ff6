"""Total readers over parsed JSON: every function accepts any value and never raises.

A value of the wrong type reads as ``None`` (or an empty tuple); nested lists
are read up to ``MAX_NESTED`` entries, and an id that is not a safe id (see
``is_safe_id``) reads as ``None``, so reading is bounded whatever the payload
and no id with a line break or control character reaches a log, store or URL.
"""

from __future__ import annotations

import math
import time
from collections.abc import Mapping
from typing import Any, Final, TypeAlias

from svc._json import loads_strict
from svc._text import decimal_int

from ._make import positional_maker
from ._values import (
    ButtonContent,
    CallSession,
    ContactAddress,
    ContactEmail,
    ContactOrg,
    ContactPhone,
    ContactsContent,
    ContactUrl,
    ConversationInfo,
    EditContent,
    GroupParticipant,
    GroupSettingChange,
    IdentityInfo,
    InteractiveContent,
    LocationContent,
    MediaContent,
    MessageContent,
    MessageContext,
    OrderContent,
    OrderItem,
    PlatformError,
    PricingInfo,
    ReactionContent,
    Referral,
    RevokeContent,
    SharedContact,
    TextContent,
    UnsupportedContent,
    UnsupportedReason,
    UserIdentity,
)

MAX_NESTED: Final = 256
MAX_ID_LENGTH: Final = 256
MAX_TYPE_LENGTH: Final = 64
MAX_TIMESTAMP: Final = 253402300799  # 9999-12-31T23:59:59Z

_ISO_CACHE: dict[int, str] = {}
_ISO_CACHE_SIZE = 4096
_EMPTY: Mapping[str, Any] = {}
_identity = positional_maker(UserIdentity)
"""``UserIdentity(wa_id=, user_id=, parent_user_id=, username=, name=)``, positionally."""


def read_str(value: Any) -> str | None:
    return value if type(value) is str else None


def read_bool(value: Any) -> bool | None:
    return value if type(value) is bool else None


def is_safe_id(value: str) -> bool:
    """Whether a string can serve as an id: 1-256 printable characters, not all whitespace.

    ``str.isprintable`` is false for control characters (NUL, tab, CR, LF,
    DEL, C1), format characters (bidi overrides, zero-width), line and
    paragraph separators (U+2028, U+2029) and unassigned code points, which
    must not reach logs, stores or URL paths.
    """
    return 0 < len(value) <= MAX_ID_LENGTH and value.isprintable() and not value.isspace()


def read_id(value: Any) -> str | None:
    """A safe string id (``is_safe_id``), else ``None``."""
    if type(value) is not str or not is_safe_id(value):
        return None
    return value


def read_graph_id(value: Any) -> str | None:
    """A Graph object id sent as a number (``1234567890``) or a safe string id, as a string."""
    if type(value) is int:
        return str(value) if 0 <= value < 10**30 else None
    return read_id(value)


def read_type(value: Any) -> str | None:
    """A platform type word: 1-64 printable characters, not all whitespace, else ``None``."""
    if (
        type(value) is not str
        or not 0 < len(value) <= MAX_TYPE_LENGTH
        or not value.isprintable()
        or value.isspace()
    ):
        return None
    return value


def message_type(message: Mapping[str, Any]) -> str:
    """A message item's ``type`` (``read_type``); ``unsupported`` when missing or unreadable."""
    return read_type(message.get("type")) or "unsupported"


def text_body(message: Mapping[str, Any]) -> str | None:
    """The body of a ``text`` message item, else ``None``."""
    if message.get("type") != "text":
        return None
    return read_str(read_dict(message.get("text")).get("body"))


def read_int(value: Any) -> int | None:
    """An integer, or a string/float holding one (``"1749416383"``)."""
    kind = type(value)
    if kind is int:
        return value  # type: ignore[no-any-return]
    if kind is str:
        return decimal_int(value, max_digits=15)
    if kind is float and math.isfinite(value) and value.is_integer() and abs(value) < 1e15:
        return int(value)
    return None


def read_timestamp(value: Any) -> int | None:
    """A platform timestamp: Unix seconds within the years 1970..9999."""
    seconds = read_int(value)
    if seconds is None or not 0 <= seconds <= MAX_TIMESTAMP:
        return None
    return seconds


def read_timestamp_or(value: Any, fallback: int | None) -> int | None:
    """``read_timestamp(value)``, else ``fallback`` (the entry time, or the receipt time)."""
    seconds = read_timestamp(value)
    return seconds if seconds is not None else fallback


def read_float(value: Any) -> float | None:
    kind = type(value)
    if kind is float:
        return value if math.isfinite(value) else None
    if kind is int:
        return float(value) if abs(value) < 1e300 else None
    if kind is str and len(value) <= 32:
        try:
            number = float(value)
        except ValueError:
            return None
        return number if math.isfinite(number) else None
    return None


def read_strs(value: Mapping[str, Any], *keys: str) -> dict[str, str | None]:
    """``read_str`` of each key of ``value``, by key: the keyword arguments of a record whose
    fields are named as the payload's keys (``Referral(**read_strs(value, "body", ...))``)."""
    return {key: read_str(value.get(key)) for key in keys}


def read_dict(value: Any) -> Mapping[str, Any]:
    return value if type(value) is dict else _EMPTY


def read_list(value: Any) -> list[Any]:
    """The first ``MAX_NESTED`` entries of a list, or ``[]``."""
    if type(value) is not list:
        return []
    return value[:MAX_NESTED] if len(value) > MAX_NESTED else value


def read_objects(value: Any) -> list[Mapping[str, Any]]:
    """The objects among a list's first ``MAX_NESTED`` entries (other entries left out)."""
    return [item for item in read_list(value) if type(item) is dict]


def format_event_time(seconds: int | None) -> str | None:
    """Unix seconds as ISO 8601 UTC with milliseconds: ``2026-11-21T10:15:30.000Z``."""
    if seconds is None:
        return None
    text = _ISO_CACHE.get(seconds)
    if text is None:
        if type(seconds) is not int or not 0 <= seconds <= MAX_TIMESTAMP:
            return None
        t = time.gmtime(seconds)
        text = (
            f"{t.tm_year:04d}-{t.tm_mon:02d}-{t.tm_mday:02d}"
            f"T{t.tm_hour:02d}:{t.tm_min:02d}:{t.tm_sec:02d}.000Z"
        )
        if len(_ISO_CACHE) >= _ISO_CACHE_SIZE:
            _ISO_CACHE.clear()
        _ISO_CACHE[seconds] = text
    return text


def read_errors(value: Any) -> tuple[PlatformError, ...]:
    """A platform ``errors`` array."""
    out = []
    for item in read_list(value):
        if type(item) is not dict:
            continue
        data = read_dict(item.get("error_data"))
        out.append(
            PlatformError(
                code=read_int(item.get("code")),
                details=read_str(data.get("details")),
                **read_strs(item, "title", "message", "href"),
            )
        )
    return tuple(out)


def item_errors(item: Mapping[str, Any], value: Mapping[str, Any]) -> tuple[PlatformError, ...]:
    """The item's ``errors``, else (when it sends none) its change value's."""
    errors = item.get("errors")
    return read_errors(errors if errors is not None else value.get("errors"))


def profile_name(value: Mapping[str, Any], user: UserIdentity | None) -> str | None:
    """The profile name of an item's ``user``: the name ``read_user`` took from the
    ``contacts[]`` entry sharing one of its ids, else the change's only named contact's."""
    if user is None:
        return None
    if user.name is not None:
        return user.name
    single: str | None = None
    named = 0
    for contact in read_list(value.get("contacts")):
        if type(contact) is not dict:
            continue
        name = read_dict(contact.get("profile")).get("name")
        if type(name) is str:
            named += 1
            single = name
    return single if named == 1 else None


# --- user identities ---------------------------------------------------------------


UserMemo: TypeAlias = dict[tuple[Any, ...], "UserIdentity | None"]
"""Identities already read, by their change's ``value`` (its ``id``) and the raw ids given."""

UserKeys: TypeAlias = tuple[str, str, str]
"""The keys an item names a user by: its phone (``wa_id``), BSUID and parent BSUID."""
SENDER_KEYS: Final[UserKeys] = ("from", "from_user_id", "from_parent_user_id")
TO_KEYS: Final[UserKeys] = ("to", "to_user_id", "to_parent_user_id")
RECIPIENT_KEYS: Final[UserKeys] = ("recipient_id", "recipient_user_id", "recipient_parent_user_id")
CONTACT_KEYS: Final[UserKeys] = ("wa_id", "user_id", "parent_user_id")


def read_user(
    value: Mapping[str, Any],
    wa_id: Any,
    user_id: Any,
    parent_user_id: Any,
    username: Any = None,
    memo: UserMemo | None = None,
) -> UserIdentity | None:
    """The identity an item names, completed from its change's matching ``contacts[]`` entry.

    The item's own fields win; a ``contacts[]`` entry that shares one of its
    ids (``wa_id``, ``user_id``, ``parent_user_id``) fills the fields the
    item lacks (and gives ``profile.username``/``profile.name``). ``None``
    when no id is present at all. With a ``memo`` (kept while every ``value``
    it names is alive) the same ids in the same change are read once.
    """
    if memo is not None:
        # Raw values equal as keys read alike: equal strings, or non-strings (all read as None).
        try:
            key = (id(value), wa_id, user_id, parent_user_id, username)
            return memo[key]
        except KeyError:
            memo[key] = found = read_user(value, wa_id, user_id, parent_user_id, username)
            return found
        except TypeError:  # an unhashable raw value: read it without the memo
            pass
    # read_id inlined (once per item and per update's ``user``, the projection's hot path).
    wa = wa_id if type(wa_id) is str and is_safe_id(wa_id) else None
    user = user_id if type(user_id) is str and is_safe_id(user_id) else None
    parent = parent_user_id if type(parent_user_id) is str and is_safe_id(parent_user_id) else None
    if wa is None and user is None and parent is None:
        return None
    handle = username if type(username) is str else None
    name: str | None = None
    for contact in read_list(value.get("contacts")):
        if type(contact) is not dict:
            continue
        # An item id is a safe id: a contact's raw value equal to it is that same safe id,
        # so the match is decided before the contact's ids are read.
        raw_wa, raw_user = contact.get("wa_id"), contact.get("user_id")
        raw_parent = contact.get("parent_user_id")
        if not (
            (wa is not None and type(raw_wa) is str and raw_wa == wa)
            or (user is not None and type(raw_user) is str and raw_user == user)
            or (parent is not None and type(raw_parent) is str and raw_parent == parent)
        ):
            continue
        # The item's own ids win: a contact's id is read only where the item has none.
        if wa is None:
            wa = read_id(raw_wa)
        if user is None:
            user = read_id(raw_user)
        if parent is None:
            parent = read_id(raw_parent)
        profile = read_dict(contact.get("profile"))
        handle = handle or read_str(profile.get("username"))
        name = read_str(profile.get("name"))
        break
    return _identity(wa, user, parent, handle, name)


def read_user_at(
    value: Mapping[str, Any],
    item: Mapping[str, Any],
    keys: UserKeys,
    memo: UserMemo | None = None,
) -> UserIdentity | None:
    """``read_user`` of the ids ``item`` holds under ``keys`` (``SENDER_KEYS``, ...)."""
    wa_id, user_id, parent = keys
    return read_user(value, item.get(wa_id), item.get(user_id), item.get(parent), None, memo)


def contact_user(value: Mapping[str, Any], memo: UserMemo | None = None) -> UserIdentity | None:
    """The identity of the change's only ``contacts[]`` entry (``None`` unless exactly one)."""
    contacts = read_objects(value.get("contacts"))
    if len(contacts) != 1:
        return None
    return read_user_at(value, contacts[0], CONTACT_KEYS, memo)


# --- message contents ----------------------------------------------------------------


def _text(payload: Mapping[str, Any]) -> MessageContent | None:
    body = payload.get("body")
    return TextContent(body=body) if type(body) is str else None


def _media(payload: Mapping[str, Any], mtype: str) -> MessageContent:
    return MediaContent(
        type=mtype,
        media_id=read_id(payload.get("id")),
        voice=read_bool(payload.get("voice")),
        animated=read_bool(payload.get("animated")),
        **read_strs(payload, "mime_type", "sha256", "caption", "filename", "url"),
    )


def _location(payload: Mapping[str, Any]) -> MessageContent:
    return LocationContent(
        latitude=read_float(payload.get("latitude")),
        longitude=read_float(payload.get("longitude")),
        **read_strs(payload, "name", "address", "url"),
    )


def _contact_card(card: Mapping[str, Any]) -> SharedContact:
    name = read_dict(card.get("name"))
    org = card.get("org")
    emails = read_objects(card.get("emails"))
    return SharedContact(
        **read_strs(name, "formatted_name", "first_name", "last_name", "middle_name"),
        phones=tuple(
            ContactPhone(
                wa_id=read_id(p.get("wa_id")),
                user_id=read_id(p.get("user_id")),
                **read_strs(p, "phone", "type"),
            )
            for p in read_objects(card.get("phones"))
        ),
        emails=tuple(e["email"] for e in emails if type(e.get("email")) is str),
        organization=read_str(read_dict(org).get("company")),
        name_prefix=read_str(name.get("prefix")),
        name_suffix=read_str(name.get("suffix")),
        birthday=read_str(card.get("birthday")),
        addresses=tuple(
            ContactAddress(
                **read_strs(a, "street", "city", "state", "zip", "country", "country_code", "type")
            )
            for a in read_objects(card.get("addresses"))
        ),
        email_entries=tuple(ContactEmail(**read_strs(e, "email", "type")) for e in emails),
        urls=tuple(
            ContactUrl(**read_strs(u, "url", "type")) for u in read_objects(card.get("urls"))
        ),
        org=(
            ContactOrg(**read_strs(org, "company", "department", "title"))
            if type(org) is dict
            else None
        ),
    )


def _contacts(cards: Any) -> MessageContent:
    return ContactsContent(contacts=tuple(_contact_card(card) for card in read_objects(cards)))


def _interactive(payload: Mapping[str, Any]) -> MessageContent:
    reply_type = read_str(payload.get("type")) or ""
    reply = read_dict(payload.get(reply_type))
    flow = read_json_object(reply.get("response_json")) if reply_type == "nfm_reply" else None
    return InteractiveContent(
        reply_type=reply_type,
        reply_id=read_str(reply.get("id")),
        flow_name=read_str(reply.get("name")),
        flow_body=read_str(reply.get("body")),
        expiration_timestamp=read_timestamp(reply.get("expiration_timestamp")),
        is_permanent=read_bool(reply.get("is_permanent")),
        **read_strs(
            reply, "title", "description", "response_json", "response", "response_source"
        ),
        flow_token=read_str(flow.get("flow_token")) if flow is not None else None,
        flow_response=flow,
    )


def read_json_object(value: Any) -> Mapping[str, Any] | None:
    """A JSON text holding an object, parsed; ``None`` for anything else.

    Parsed as strictly as the envelope (``loads_strict``: no ``NaN`` or
    infinities, no nesting past ``MAX_JSON_DEPTH``); the text is part of a body
    already bounded in size.
    """
    if type(value) is not str:
        return None
    try:
        parsed = loads_strict(value)
    except ValueError:
        return None
    return parsed if type(parsed) is dict else None


def _button(payload: Mapping[str, Any]) -> MessageContent:
    return ButtonContent(**read_strs(payload, "payload", "text"))


def _reaction(payload: Mapping[str, Any]) -> MessageContent:
    return ReactionContent(
        message_id=read_id(payload.get("message_id")), emoji=read_str(payload.get("emoji")) or None
    )


def _order(payload: Mapping[str, Any]) -> MessageContent:
    return OrderContent(
        **read_strs(payload, "catalog_id", "text"),
        items=tuple(
            OrderItem(
                quantity=read_int(p.get("quantity")),
                item_price=read_float(p.get("item_price")),
                **read_strs(p, "product_retailer_id", "currency"),
            )
            for p in read_objects(payload.get("product_items"))
        ),
    )


def _revoke(payload: Mapping[str, Any]) -> MessageContent:
    return RevokeContent(original_message_id=read_id(payload.get("original_message_id")))


def _unsupported(
    message: Mapping[str, Any],
    value: Mapping[str, Any],
    mtype: str,
    reason: UnsupportedReason,
) -> UnsupportedContent:
    """Why a message's content cannot be typed, with the item's errors (else the value's)."""
    errors = read_errors(message.get("errors"))
    if not errors:
        errors = read_errors(value.get("errors"))
    unsupported_type = None
    if reason == "unsupported":
        unsupported_type = read_str(read_dict(message.get("unsupported")).get("type"))
    return UnsupportedContent(
        type=mtype, reason=reason, unsupported_type=unsupported_type, errors=errors
    )


def _edit(payload: Mapping[str, Any], value: Mapping[str, Any]) -> MessageContent:
    inner = payload.get("message")
    if type(inner) is dict:
        content = read_content(inner, value, nested=True)
        context = read_context(inner.get("context"))
    else:
        content = _unsupported(payload, value, "unsupported", "incomplete")
        context = None
    return EditContent(
        original_message_id=read_id(payload.get("original_message_id")),
        content=content,
        context=context,
    )


def read_content(
    message: Mapping[str, Any], value: Mapping[str, Any], *, nested: bool = False
) -> MessageContent:
    """The typed content of a message item; never raises, never drops the message.

    ``value`` is the change value (its ``errors`` back an unsupported content
    that has none of its own). An edit inside an edit (``nested``) is not read
    again, so reading stays bounded.
    """
    mtype = read_type(message.get("type"))
    if mtype is None:
        return _unsupported(message, value, "unsupported", "unknown_type")
    payload = message.get(mtype)
    # Each type's payload under message[type] has one shape (a list for contacts, else an
    # object); a reader answers None when the payload lacks what the type needs.
    content: MessageContent | None
    match mtype:
        case "text":
            content = _text(payload) if type(payload) is dict else None
        case "image" | "video" | "audio" | "document" | "sticker":
            content = _media(payload, mtype) if type(payload) is dict else None
        case "location":
            content = _location(payload) if type(payload) is dict else None
        case "contacts":
            content = _contacts(payload) if type(payload) is list else None
        case "interactive":
            content = _interactive(payload) if type(payload) is dict else None
        case "button":
            content = _button(payload) if type(payload) is dict else None
        case "reaction":
            content = _reaction(payload) if type(payload) is dict else None
        case "order":
            content = _order(payload) if type(payload) is dict else None
        case "revoke":
            content = _revoke(payload) if type(payload) is dict else None
        case "unsupported":
            return _unsupported(message, value, mtype, "unsupported")
        case "edit" if not nested:
            if type(payload) is dict:
                return _edit(payload, value)
            content = None
        case _:
            return _unsupported(message, value, mtype, "unknown_type")
    if content is None:
        return _unsupported(message, value, mtype, "incomplete")
    return content


def read_referral(value: Any) -> Referral | None:
    """The ``referral`` of a message from a click-to-WhatsApp ad or post, when sent."""
    if type(value) is not dict:
        return None
    return Referral(
        **read_strs(
            value,
            "source_url",
            "source_id",
            "source_type",
            "headline",
            "body",
            "media_type",
            "image_url",
            "video_url",
            "thumbnail_url",
            "ctwa_clid",
        ),
        welcome_message=read_str(read_dict(value.get("welcome_message")).get("text")),
    )


def read_context(value: Any) -> MessageContext | None:
    if type(value) is not dict:
        return None
    product = read_dict(value.get("referred_product"))
    return MessageContext(
        message_id=read_id(value.get("id")),
        from_=read_id(value.get("from")),
        forwarded=value.get("forwarded") is True,
        frequently_forwarded=value.get("frequently_forwarded") is True,
        referred_product_id=read_str(product.get("product_retailer_id")),
        referred_catalog_id=read_str(product.get("catalog_id")),
    )


# --- status, call, group, system pieces --------------------------------------------------


def read_conversation(value: Any) -> ConversationInfo | None:
    if type(value) is not dict:
        return None
    return ConversationInfo(
        id=read_id(value.get("id")),
        origin_type=read_str(read_dict(value.get("origin")).get("type")),
        expiration_timestamp=read_timestamp(value.get("expiration_timestamp")),
    )


def read_pricing(value: Any) -> PricingInfo | None:
    if type(value) is not dict:
        return None
    return PricingInfo(
        billable=read_bool(value.get("billable")),
        **read_strs(value, "pricing_model", "category", "type"),
    )


def read_session(value: Any) -> CallSession | None:
    if type(value) is not dict:
        return None
    return CallSession(**read_strs(value, "sdp_type", "sdp"))


def read_participants(value: Any) -> tuple[GroupParticipant, ...]:
    """A group event's participants: objects, or bare ids (strings or JSON numbers).

    A ``wa_id`` or ``input`` the platform sends as a JSON number (Meta's own
    group examples do) reads as its digit string, never as ``None``.
    """
    out = []
    for p in read_list(value):
        if type(p) is dict:
            wa_id = read_graph_id(p.get("wa_id"))
            raw_input = p.get("input")
            out.append(
                GroupParticipant(
                    wa_id=wa_id,
                    user=read_user(
                        _EMPTY,
                        wa_id,
                        p.get("user_id"),
                        p.get("parent_user_id"),
                        p.get("username"),
                    ),
                    input=str(raw_input) if type(raw_input) is int else read_str(raw_input),
                    errors=read_errors(p.get("errors")),
                )
            )
        elif type(p) is str or type(p) is int:
            wa_id = read_graph_id(p)
            out.append(GroupParticipant(wa_id=wa_id, user=read_user(_EMPTY, wa_id, None, None)))
    return tuple(out)


def read_setting(value: Any, key: str) -> GroupSettingChange | None:
    if type(value) is not dict:
        return None
    return GroupSettingChange(
        value=read_str(value.get(key)),
        update_successful=read_bool(value.get("update_successful")),
        errors=read_errors(value.get("errors")),
    )


def read_identity(value: Any) -> IdentityInfo | None:
    if type(value) is not dict:
        return None
    return IdentityInfo(
        acknowledged=read_bool(value.get("acknowledged")),
        created_timestamp=read_timestamp(value.get("created_timestamp")),
        hash=read_str(value.get("hash")),
    )
