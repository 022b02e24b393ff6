"""Updates of the non-message fields: account, calls, groups, user preferences, unknown."""

from __future__ import annotations

from dataclasses import dataclass
from typing import ClassVar, Literal

from ._account_values import AccountDetails, read_account_details
from ._base import ChangeUpdate, UpdateBase, required
from ._read import (
    CONTACT_KEYS,
    RECIPIENT_KEYS,
    SENDER_KEYS,
    TO_KEYS,
    item_errors,
    profile_name,
    read_dict,
    read_errors,
    read_graph_id,
    read_id,
    read_int,
    read_participants,
    read_session,
    read_setting,
    read_str,
    read_timestamp,
    read_user,
    read_user_at,
)
from ._values import (
    CallSession,
    GroupParticipant,
    GroupSettingChange,
    PlatformError,
    UserIdentity,
)

__all__ = [
    "AccountUpdate",
    "CallConnectUpdate",
    "CallStatusUpdate",
    "CallTerminateUpdate",
    "GroupLifecycleUpdate",
    "GroupParticipantsUpdate",
    "GroupSettingsUpdate",
    "GroupStatusUpdate",
    "UnknownUpdate",
    "UserPreferencesUpdate",
]

_ACCOUNT_EVENT_KEYS = ("event", "decision", "new_quality_score", "new_category", "alert_type")


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class AccountUpdate(ChangeUpdate):
    """Account, template and phone-number fields; ``raw`` is the change value."""

    kind: ClassVar[Literal["account"]] = "account"
    _repr_fields: ClassVar[tuple[str, ...]] = ("event",)

    @property
    def event(self) -> str | None:
        """The value's ``event`` (or ``decision``, ``new_quality_score``, ``new_category``,
        ``alert_info.alert_type``)."""
        raw = self.raw
        for key in _ACCOUNT_EVENT_KEYS:
            event = raw.get(key)
            if type(event) is str:
                return event
        alert = read_dict(raw.get("alert_info")).get("alert_type")
        return alert if type(alert) is str else None

    @property
    def details(self) -> AccountDetails | None:
        """The typed change: a template status, category, quality or components change,
        an ``account_update`` event, an account alert or review, a number's quality or
        throughput change, the account's capabilities; ``None`` for other fields.

        Read from the raw value on each access (``value`` stays as it is).
        """
        return read_account_details(self.source.field, self.raw)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class _CallUpdate(UpdateBase):
    @property
    def call_id(self) -> str:
        return required(self.raw, "id")

    @property
    def deeplink_payload(self) -> str | None:
        """The ``biz_payload`` of the call deep link the user called through."""
        return read_str(self.raw.get("deeplink_payload"))

    @property
    def cta_payload(self) -> str | None:
        """The payload of the call button the user tapped."""
        return read_str(self.raw.get("cta_payload"))

    @property
    def biz_opaque_callback_data(self) -> str | None:
        return read_str(self.raw.get("biz_opaque_callback_data"))

    @property
    def user(self) -> UserIdentity | None:
        """The user on the call: the caller of a user-initiated call, else the one called.

        From ``from``/``from_user_id``/``from_parent_user_id`` (``to``... for
        business-initiated calls), completed from the matching ``contacts[]``.
        """
        business_call = self.raw.get("direction") == "BUSINESS_INITIATED"
        return read_user_at(self.source.value, self.raw, TO_KEYS if business_call else SENDER_KEYS)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class _CallLegUpdate(_CallUpdate):
    """What a call event (connect, terminate) says of its two ends and its direction."""

    @property
    def from_(self) -> str | None:
        return read_id(self.raw.get("from"))

    @property
    def to(self) -> str | None:
        return read_id(self.raw.get("to"))

    @property
    def direction(self) -> str | None:
        """``USER_INITIATED`` or ``BUSINESS_INITIATED``."""
        return read_str(self.raw.get("direction"))

    @property
    def profile_name(self) -> str | None:
        return profile_name(self.source.value, self.user)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class CallConnectUpdate(_CallLegUpdate):
    """``calls[]`` with ``event: connect`` (an SDP offer, or the answer to a business call)."""

    kind: ClassVar[Literal["callConnect"]] = "callConnect"

    @property
    def session(self) -> CallSession | None:
        return read_session(self.raw.get("session"))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class CallTerminateUpdate(_CallLegUpdate):
    """``calls[]`` with ``event: terminate``; times are Unix seconds, ``duration`` seconds."""

    kind: ClassVar[Literal["callTerminate"]] = "callTerminate"
    _repr_fields: ClassVar[tuple[str, ...]] = ("status",)

    @property
    def status(self) -> str | None:
        """``COMPLETED`` or ``FAILED``."""
        return read_str(self.raw.get("status"))

    @property
    def start_time(self) -> int | None:
        return read_timestamp(self.raw.get("start_time"))

    @property
    def end_time(self) -> int | None:
        return read_timestamp(self.raw.get("end_time"))

    @property
    def duration(self) -> int | None:
        return read_int(self.raw.get("duration"))

    @property
    def errors(self) -> tuple[PlatformError, ...]:
        """The call's ``errors``, else the change value's."""
        return item_errors(self.raw, self.source.value)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class CallStatusUpdate(_CallUpdate):
    """``statuses[]`` of the ``calls`` field: RINGING, ACCEPTED or REJECTED for business calls."""

    kind: ClassVar[Literal["callStatus"]] = "callStatus"
    _repr_fields: ClassVar[tuple[str, ...]] = ("status",)

    @property
    def status(self) -> str | None:
        return read_str(self.raw.get("status"))

    @property
    def recipient_id(self) -> str | None:
        return read_id(self.raw.get("recipient_id"))

    @property
    def user(self) -> UserIdentity | None:
        """The user called (``recipient_id``, ``recipient_user_id``, parent BSUID)."""
        return read_user_at(self.source.value, self.raw, RECIPIENT_KEYS)

    @property
    def errors(self) -> tuple[PlatformError, ...]:
        return read_errors(self.raw.get("errors"))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class _GroupUpdate(UpdateBase):
    _repr_fields: ClassVar[tuple[str, ...]] = ("event_type",)

    @property
    def group_id(self) -> str | None:
        return read_id(self.raw.get("group_id"))

    @property
    def event_type(self) -> str | None:
        """The item ``type``: ``group_create``, ``group_participants_add``, ``group_suspend``..."""
        return read_str(self.raw.get("type"))

    @property
    def request_id(self) -> str | None:
        """The ``request_id`` of the asynchronous group call this result answers."""
        return read_str(self.raw.get("request_id"))

    @property
    def errors(self) -> tuple[PlatformError, ...]:
        return read_errors(self.raw.get("errors"))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GroupLifecycleUpdate(_GroupUpdate):
    """``group_lifecycle_update``: results of ``group_create``/``group_delete`` (invite link)."""

    kind: ClassVar[Literal["groupLifecycle"]] = "groupLifecycle"

    @property
    def subject(self) -> str | None:
        return read_str(self.raw.get("subject"))

    @property
    def description(self) -> str | None:
        return read_str(self.raw.get("description"))

    @property
    def invite_link(self) -> str | None:
        return read_str(self.raw.get("invite_link"))

    @property
    def join_approval_mode(self) -> str | None:
        return read_str(self.raw.get("join_approval_mode"))

    @property
    def added_participants(self) -> tuple[GroupParticipant, ...]:
        """The participants a ``group_create`` added (ids sent as numbers read as digits)."""
        return read_participants(self.raw.get("added_participants"))


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GroupParticipantsUpdate(_GroupUpdate):
    """``group_participants_update``: joins, join requests, approvals, removals, leaves."""

    kind: ClassVar[Literal["groupParticipants"]] = "groupParticipants"

    @property
    def added_participants(self) -> tuple[GroupParticipant, ...]:
        return read_participants(self.raw.get("added_participants"))

    @property
    def removed_participants(self) -> tuple[GroupParticipant, ...]:
        return read_participants(self.raw.get("removed_participants"))

    @property
    def failed_participants(self) -> tuple[GroupParticipant, ...]:
        return read_participants(self.raw.get("failed_participants"))

    @property
    def participant_users(self) -> tuple[UserIdentity, ...]:
        """The identities of every participant it names (added, removed, failed), in order."""
        listed = (self.added_participants, self.removed_participants, self.failed_participants)
        return tuple(p.user for group in listed for p in group if p.user is not None)

    @property
    def initiated_by(self) -> str | None:
        """``business`` or ``participant``."""
        return read_str(self.raw.get("initiated_by"))

    @property
    def reason(self) -> str | None:
        return read_str(self.raw.get("reason"))

    @property
    def join_request_id(self) -> str | None:
        return read_id(self.raw.get("join_request_id"))

    @property
    def wa_id(self) -> str | None:
        """The user of a join request (a JSON number reads as its digits)."""
        return read_graph_id(self.raw.get("wa_id"))

    @property
    def user(self) -> UserIdentity | None:
        """The user of a join request (``wa_id``, ``user_id``, ``parent_user_id``, ``username``)."""
        raw = self.raw
        return read_user(
            self.source.value,
            read_graph_id(raw.get("wa_id")),
            raw.get("user_id"),
            raw.get("parent_user_id"),
            raw.get("username"),
        )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GroupSettingsUpdate(_GroupUpdate):
    """``group_settings_update``: subject, description and profile picture results."""

    kind: ClassVar[Literal["groupSettings"]] = "groupSettings"

    @property
    def subject(self) -> GroupSettingChange | None:
        return read_setting(self.raw.get("group_subject"), "text")

    @property
    def description(self) -> GroupSettingChange | None:
        return read_setting(self.raw.get("group_description"), "text")

    @property
    def profile_picture(self) -> GroupSettingChange | None:
        """``value`` is the picture's sha256."""
        return read_setting(self.raw.get("profile_picture"), "sha256")


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class GroupStatusUpdate(_GroupUpdate):
    """``group_status_update``: ``group_suspend`` or ``group_suspend_cleared``."""

    kind: ClassVar[Literal["groupStatus"]] = "groupStatus"

    @property
    def suspended(self) -> bool | None:
        """True once suspended (treat the group as unusable), False once cleared."""
        return _SUSPENDED.get(self.event_type) if self.event_type is not None else None


_SUSPENDED = {"group_suspend": True, "group_suspend_cleared": False}


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class UserPreferencesUpdate(UpdateBase):
    """``user_preferences[]``: a user stopped or resumed marketing messages."""

    kind: ClassVar[Literal["userPreferences"]] = "userPreferences"
    _repr_fields: ClassVar[tuple[str, ...]] = ("category", "value")

    @property
    def wa_id(self) -> str | None:
        return read_id(self.raw.get("wa_id"))

    @property
    def category(self) -> str | None:
        """``marketing_messages``."""
        return read_str(self.raw.get("category"))

    @property
    def value(self) -> str | None:
        """``stop`` or ``resume``."""
        return read_str(self.raw.get("value"))

    @property
    def detail(self) -> str | None:
        return read_str(self.raw.get("detail"))

    @property
    def user(self) -> UserIdentity | None:
        """The user (``wa_id``/``user_id``/``parent_user_id``, completed from ``contacts[]``)."""
        return read_user_at(self.source.value, self.raw, CONTACT_KEYS)

    @property
    def profile_name(self) -> str | None:
        return profile_name(self.source.value, self.user)


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class UnknownUpdate(ChangeUpdate):
    """A change whose ``field`` this version does not know; ``value`` is the raw change value."""

    kind: ClassVar[Literal["unknown"]] = "unknown"
