"""Value objects inside updates: message contents, contexts, pricing, errors, participants.

Frozen, keyword-only, slotted; built on first access from the platform's
JSON (see ``_updates``), with every field typed and optional where the
platform may leave it out.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from dataclasses import field as _field
from typing import Any, Final, Literal, TypeAlias, get_args

UnsupportedReason: TypeAlias = Literal["unsupported", "unknown_type", "incomplete"]

__all__ = [
    "PRICING_CATEGORIES",
    "PRICING_MODELS",
    "PRICING_TYPES",
    "ButtonContent",
    "CallSession",
    "ContactAddress",
    "ContactEmail",
    "ContactOrg",
    "ContactPhone",
    "ContactUrl",
    "ContactsContent",
    "ConversationInfo",
    "EditContent",
    "GroupParticipant",
    "GroupSettingChange",
    "IdentityInfo",
    "InteractiveContent",
    "LocationContent",
    "MediaContent",
    "MessageContent",
    "MessageContext",
    "OrderContent",
    "OrderItem",
    "PlatformError",
    "PricingCategory",
    "PricingInfo",
    "PricingModel",
    "PricingType",
    "ReactionContent",
    "Referral",
    "RevokeContent",
    "SharedContact",
    "TextContent",
    "UnsupportedContent",
    "UnsupportedReason",
    "UserIdentity",
]


# --- shared pieces -----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class UserIdentity:
    """Who a WhatsApp user is, as one webhook item names them; any field may be missing.

    ``wa_id`` is the phone-number id (withheld for users with a username and
    no recent exchange), ``user_id`` the business-scoped user id (BSUID,
    ``US.13491208655302741918``), ``parent_user_id`` the parent BSUID of
    linked portfolios (``US.ENT.11815799212886844830``), ``username`` the
    user's handle and ``name`` their profile name. The repr names only the
    fields present, never their values.
    """

    wa_id: str | None = None
    user_id: str | None = None
    parent_user_id: str | None = None
    username: str | None = None
    name: str | None = None

    def __repr__(self) -> str:
        present = [
            name
            for name in ("wa_id", "user_id", "parent_user_id", "username", "name")
            if getattr(self, name) is not None
        ]
        return f"UserIdentity(present={present!r})"

    @property
    def key(self) -> str | None:
        """The most stable id present: ``user_id``, else ``parent_user_id``, else ``wa_id``."""
        return self.user_id or self.parent_user_id or self.wa_id


@dataclass(frozen=True, slots=True, kw_only=True)
class PlatformError:
    """One entry of a platform ``errors`` array (``error_data.details`` as ``details``)."""

    code: int | None = None
    title: str | None = None
    message: str | None = None
    details: str | None = None
    href: str | None = None


# --- message contents ----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TextContent:
    """``type: text``."""

    type: Literal["text"] = _field(default="text", init=False)
    body: str


@dataclass(frozen=True, slots=True, kw_only=True)
class MediaContent:
    """``type`` image, video, audio, document or sticker; ``voice`` for voice notes."""

    type: str
    media_id: str | None = None
    mime_type: str | None = None
    sha256: str | None = None
    caption: str | None = None
    filename: str | None = None
    voice: bool | None = None
    animated: bool | None = None
    url: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class LocationContent:
    """``type: location``."""

    type: Literal["location"] = _field(default="location", init=False)
    latitude: float | None = None
    longitude: float | None = None
    name: str | None = None
    address: str | None = None
    url: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ContactPhone:
    """One phone of a shared contact card (``user_id``: the BSUID, when the platform sends it)."""

    phone: str | None = None
    wa_id: str | None = None
    type: str | None = None
    user_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ContactAddress:
    """One postal address of a shared contact card (``type``: ``HOME``, ``WORK``)."""

    street: str | None = None
    city: str | None = None
    state: str | None = None
    zip: str | None = None
    country: str | None = None
    country_code: str | None = None
    type: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ContactEmail:
    """One email of a shared contact card, with its ``type`` (``HOME``, ``WORK``)."""

    email: str | None = None
    type: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ContactUrl:
    """One URL of a shared contact card, with its ``type`` (``HOME``, ``WORK``)."""

    url: str | None = None
    type: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ContactOrg:
    """The organisation of a shared contact card."""

    company: str | None = None
    department: str | None = None
    title: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class SharedContact:
    """One contact card of a ``contacts`` message; every part may be missing.

    ``emails`` keeps the addresses alone (as before); ``email_entries`` has
    each with its type. ``organization`` is ``org.company``; ``org`` has the
    department and title too. ``birthday`` is as sent (``YYYY-MM-DD``).
    """

    formatted_name: str | None = None
    first_name: str | None = None
    last_name: str | None = None
    phones: tuple[ContactPhone, ...] = ()
    emails: tuple[str, ...] = ()
    organization: str | None = None
    middle_name: str | None = None
    name_prefix: str | None = None
    name_suffix: str | None = None
    birthday: str | None = None
    addresses: tuple[ContactAddress, ...] = ()
    email_entries: tuple[ContactEmail, ...] = ()
    urls: tuple[ContactUrl, ...] = ()
    org: ContactOrg | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ContactsContent:
    """``type: contacts``."""

    type: Literal["contacts"] = _field(default="contacts", init=False)
    contacts: tuple[SharedContact, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class InteractiveContent:
    """``type: interactive``: a ``button_reply``, ``list_reply``, ``nfm_reply`` (Flow) reply,
    or a ``call_permission_reply``.

    ``reply_id``/``title``/``description`` come from button and list replies;
    ``response_json``/``flow_name``/``flow_body`` from an ``nfm_reply``;
    ``response`` (``accept``/``reject``), ``expiration_timestamp`` (Unix
    seconds), ``is_permanent`` and ``response_source`` (``user_action``,
    ``automatic``) from a ``call_permission_reply``. A Flow completion
    (``nfm_reply``) also gives ``flow_response``, its ``response_json`` parsed
    (``None`` unless a JSON object of finite numbers), and that object's
    ``flow_token``.
    """

    type: Literal["interactive"] = _field(default="interactive", init=False)
    reply_type: str
    reply_id: str | None = None
    title: str | None = None
    description: str | None = None
    response_json: str | None = None
    flow_name: str | None = None
    flow_body: str | None = None
    response: str | None = None
    expiration_timestamp: int | None = None
    is_permanent: bool | None = None
    response_source: str | None = None
    flow_token: str | None = None
    flow_response: Mapping[str, Any] | None = _field(default=None, hash=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class ButtonContent:
    """``type: button``: a quick-reply button of a template."""

    type: Literal["button"] = _field(default="button", init=False)
    payload: str | None = None
    text: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ReactionContent:
    """``type: reaction``; ``emoji`` is ``None`` when a reaction was removed."""

    type: Literal["reaction"] = _field(default="reaction", init=False)
    message_id: str | None = None
    emoji: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderItem:
    """One product line of an order."""

    product_retailer_id: str | None = None
    quantity: int | None = None
    item_price: float | None = None
    currency: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class OrderContent:
    """``type: order``."""

    type: Literal["order"] = _field(default="order", init=False)
    catalog_id: str | None = None
    text: str | None = None
    items: tuple[OrderItem, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class RevokeContent:
    """``type: revoke``: the sender deleted ``original_message_id`` (seen in echoes)."""

    type: Literal["revoke"] = _field(default="revoke", init=False)
    original_message_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class UnsupportedContent:
    """A message whose content this version cannot type, and why; the message is still delivered.

    ``reason`` is ``unsupported`` (the platform sent ``type: unsupported``;
    ``unsupported_type`` is its ``unsupported.type``), ``unknown_type`` (a
    type this version has no reader for, or no usable type) or ``incomplete``
    (a known type whose content object is missing or not in the shape the
    platform documents, such as an interactive message re-sent without its
    ``interactive`` object). ``errors`` are the item's own ``errors``, else
    the change value's.
    """

    type: str
    reason: UnsupportedReason = "unsupported"
    unsupported_type: str | None = None
    errors: tuple[PlatformError, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class EditContent:
    """``type: edit``: the sender edited ``original_message_id``; ``content`` is the new content.

    ``content`` is typed like an original message's content (``TextContent``,
    ``MediaContent`` with the new caption, ...; ``UnsupportedContent`` when
    the edit carries no readable message); ``context`` is the edited
    message's reply context, when sent.
    """

    type: Literal["edit"] = _field(default="edit", init=False)
    original_message_id: str | None = None
    content: MessageContent
    context: MessageContext | None = None


MessageContent: TypeAlias = (
    TextContent
    | MediaContent
    | LocationContent
    | ContactsContent
    | InteractiveContent
    | ButtonContent
    | ReactionContent
    | OrderContent
    | RevokeContent
    | EditContent
    | UnsupportedContent
)


@dataclass(frozen=True, slots=True, kw_only=True)
class Referral:
    """Where a message came from: a click-to-WhatsApp ad or post (the message's ``referral``).

    ``source_type`` is ``ad`` or ``post``; ``media_type`` is ``image`` or
    ``video``, with ``image_url`` or ``video_url`` and ``thumbnail_url``;
    ``ctwa_clid`` is the click id for conversion reporting;
    ``welcome_message`` the text of the ad's welcome message, when sent.
    """

    source_url: str | None = None
    source_id: str | None = None
    source_type: str | None = None
    headline: str | None = None
    body: str | None = None
    media_type: str | None = None
    image_url: str | None = None
    video_url: str | None = None
    thumbnail_url: str | None = None
    ctwa_clid: str | None = None
    welcome_message: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class MessageContext:
    """Reply/forward information: ``message_id`` and ``from_`` of the quoted message."""

    message_id: str | None = None
    from_: str | None = None
    forwarded: bool = False
    frequently_forwarded: bool = False
    referred_product_id: str | None = None
    referred_catalog_id: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationInfo:
    """The ``conversation`` object of a status."""

    id: str | None = None
    origin_type: str | None = None
    expiration_timestamp: int | None = None


PricingModel: TypeAlias = Literal["PMP", "CBP"]
"""``PMP``: per-message pricing (since July 2025); ``CBP``: the conversation-based model."""
PricingType: TypeAlias = Literal["regular", "free_customer_service", "free_entry_point"]
"""Whether a message is charged (``regular``) or free: a non-template message or a utility
template inside the customer service window, or any message inside a free entry point window."""
PricingCategory: TypeAlias = Literal[
    "marketing",
    "marketing_lite",
    "utility",
    "authentication",
    "authentication_international",
    "service",
    "referral_conversion",
]
"""The category a message is priced in: the template categories, ``marketing_lite``
(marketing sent through the Marketing Messages API), ``authentication_international``
(the international authentication rate) and ``service`` (non-template messages)."""
PRICING_MODELS: Final = frozenset(get_args(PricingModel))
PRICING_TYPES: Final = frozenset(get_args(PricingType))
PRICING_CATEGORIES: Final = frozenset(get_args(PricingCategory))


@dataclass(frozen=True, slots=True, kw_only=True)
class PricingInfo:
    """The ``pricing`` object of a status: how the platform prices the message.

    Every field is as sent, so a word this version does not list is kept:
    ``pricing_model`` (``PricingModel``), ``category`` (``PricingCategory``)
    and ``type`` (``PricingType``). ``billable`` is the older flag the
    platform still sends beside ``type``; ``free`` reads either.
    """

    billable: bool | None = None
    pricing_model: str | None = None
    category: str | None = None
    type: str | None = None

    @property
    def free(self) -> bool | None:
        """True for a free message (a ``free_*`` type, else ``billable: false``); None if unsaid."""
        if self.type is not None:
            return self.type.startswith("free_")
        return None if self.billable is None else not self.billable


@dataclass(frozen=True, slots=True, kw_only=True)
class CallSession:
    """The SDP of a call event (``offer`` or ``answer``)."""

    sdp_type: str | None = None
    sdp: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupParticipant:
    """One participant of a group event (``wa_id``; ``input`` as the business sent it).

    ``user`` is the participant's identity (``wa_id``, ``user_id``,
    ``parent_user_id``, ``username``) when any id is present.
    """

    wa_id: str | None = None
    user: UserIdentity | None = None
    input: str | None = None
    errors: tuple[PlatformError, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupSettingChange:
    """One changed group setting: new ``value`` (text or picture sha256) and whether it applied."""

    value: str | None = None
    update_successful: bool | None = None
    errors: tuple[PlatformError, ...] = ()


@dataclass(frozen=True, slots=True, kw_only=True)
class IdentityInfo:
    """The ``identity`` object of a customer identity change."""

    acknowledged: bool | None = None
    created_timestamp: int | None = None
    hash: str | None = None
