"""Groups API helpers: create and list on a phone number, everything else on a group.

Create, update, delete, participant removal, approve and reject are
asynchronous upstream: the answer carries ``request_id`` and the outcome
arrives later as a group webhook.

The platform documents few group record fields, so every field of a result
is optional and ``raw`` keeps the whole answer: a 2xx answer is never turned
into an error because a field is absent or new.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any, Final

from ._admin_checks import (
    FIELDS_PARAM,
    MESSAGING_PRODUCT,
    PAGING_PARAMS,
    GroupScoped,
    PhoneScoped,
    check_choice,
    check_fields,
    check_id,
    check_id_list,
    check_text,
    opt_text,
    page_reader,
    paging,
    user_entries,
)
from ._endpoint import route
from ._errors import GraphRequestValidationError
from ._parse import ApiRecord, Raw, as_object, object_list, opt_int, opt_str, read_record, str_tuple
from ._results import Success

__all__ = [
    "GROUP_DESCRIPTION_MAX_LENGTH",
    "GROUP_JOIN_APPROVAL_MODES",
    "GROUP_MAX_ADDED_PARTICIPANTS",
    "GROUP_MAX_REMOVED_PARTICIPANTS",
    "GROUP_SUBJECT_MAX_LENGTH",
    "Group",
    "GroupAdmin",
    "GroupInviteLink",
    "GroupJoinRequest",
    "GroupJoinRequestsResult",
    "GroupMutation",
    "GroupParticipant",
    "GroupSummary",
    "PhoneGroups",
]

GROUP_SUBJECT_MAX_LENGTH: Final = 128
GROUP_DESCRIPTION_MAX_LENGTH: Final = 2048
GROUP_MAX_REMOVED_PARTICIPANTS: Final = 8
GROUP_MAX_ADDED_PARTICIPANTS: Final = 8
GROUP_MAX_JOIN_REQUESTS: Final = 1000
GROUP_JOIN_APPROVAL_MODES: Final = ("auto_approve", "approval_required")

CREATE_GROUP = route("POST", "/{phone_number_id}/groups")
LIST_GROUPS = route("GET", "/{phone_number_id}/groups", **PAGING_PARAMS)
GET_GROUP = route("GET", "/{group_id}", **FIELDS_PARAM)
UPDATE_GROUP = route("POST", "/{group_id}")
DELETE_GROUP = route("DELETE", "/{group_id}")
GET_INVITE_LINK = route("GET", "/{group_id}/invite_link")
RESET_INVITE_LINK = route("POST", "/{group_id}/invite_link")
REVOKE_INVITE_LINK = route("DELETE", "/{group_id}/invite_link")
ADD_PARTICIPANTS = route("POST", "/{group_id}/participants")
REMOVE_PARTICIPANTS = route("DELETE", "/{group_id}/participants")
LIST_JOIN_REQUESTS = route("GET", "/{group_id}/join_requests", **PAGING_PARAMS)
APPROVE_JOIN_REQUESTS = route("POST", "/{group_id}/join_requests")
REJECT_JOIN_REQUESTS = route("DELETE", "/{group_id}/join_requests")


# --- results ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupMutation(ApiRecord):
    """An asynchronous group mutation: ``request_id`` correlates the later group webhook."""

    _what = "group mutation"

    request_id: str | None
    success: bool | None
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupSummary:
    """A group as listed by ``GET /{phone_number_id}/groups``."""

    id: str | None
    subject: str | None
    created_at: int | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Raw) -> GroupSummary:
        created_at = opt_int(raw, "created_at") or opt_int(raw, "creation_timestamp")
        return read_record(cls, raw, what="group summary", created_at=created_at)


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupParticipant:
    wa_id: str
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class Group:
    """Group metadata from ``GET /{group_id}`` (fields absent unless requested read ``None``)."""

    id: str | None
    subject: str | None
    description: str | None
    join_approval_mode: str | None
    suspended: bool | None
    creation_timestamp: int | None
    participants: tuple[GroupParticipant, ...]
    total_participant_count: int | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> Group:
        obj = as_object(raw, what="group")
        participants = tuple(
            GroupParticipant(wa_id=wa_id, raw=item)
            for item in object_list(obj.get("participants"))
            if (wa_id := opt_str(item, "wa_id")) is not None
        )
        return read_record(cls, obj, what="group", participants=participants)


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupInviteLink(ApiRecord):
    _what = "group invite link"

    invite_link: str | None
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupJoinRequest(ApiRecord):
    _what = "group join request"

    join_request_id: str | None
    wa_id: str | None
    creation_timestamp: int | None
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupJoinRequestsResult:
    """Outcome of approving or rejecting join requests.

    ``succeeded`` holds the ids the platform reports as approved (or rejected);
    ``failed`` the ids it refused.
    """

    request_id: str | None
    succeeded: tuple[str, ...]
    failed: tuple[str, ...]
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any, *, succeeded_key: str) -> GroupJoinRequestsResult:
        obj = as_object(raw, what="join requests")
        failed = tuple(
            ident
            for item in object_list(obj.get("failed_join_requests"))
            if (ident := opt_str(item, "join_request_id")) is not None
        )
        succeeded = str_tuple(obj.get(succeeded_key))
        return read_record(cls, obj, what="join requests", succeeded=succeeded, failed=failed)


# --- helpers ------------------------------------------------------------------


def _mode(value: object) -> str | None:
    if value is None:
        return None
    return check_choice(value, field="join_approval_mode", choices=GROUP_JOIN_APPROVAL_MODES)


def _description(value: object) -> str | None:
    return opt_text(
        value, field="description", max_length=GROUP_DESCRIPTION_MAX_LENGTH, multiline=True
    )


class PhoneGroups(PhoneScoped):
    """Group creation and listing for one business phone number (``PhoneNumberClient``)."""

    async def create_group(
        self,
        *,
        subject: str,
        description: str | None = None,
        join_approval_mode: str | None = None,
    ) -> GroupMutation:
        """``POST /{phone_number_id}/groups``; the group id arrives later by webhook."""
        body: dict[str, object] = {
            **MESSAGING_PRODUCT,
            "subject": check_text(subject, field="subject", max_length=GROUP_SUBJECT_MAX_LENGTH),
        }
        if (text := _description(description)) is not None:
            body["description"] = text
        if (mode := _mode(join_approval_mode)) is not None:
            body["join_approval_mode"] = mode
        raw = await self._on_scope(CREATE_GROUP, body=body)
        return GroupMutation.from_api(raw, what="create group")

    list_groups = page_reader(
        LIST_GROUPS,
        paging,
        GroupSummary.from_api,
        what="list groups",
        note=": one page of active groups.",
        nested_key="groups",
    )


class GroupAdmin(GroupScoped):
    """Management of one group (``GroupClient``)."""

    async def get_group(self, *, fields: str | list[str] | None = None) -> Group:
        """``GET /{group_id}`` with optional ``fields``."""
        return Group.from_api(await self._on_scope(GET_GROUP, {"fields": check_fields(fields)}))

    async def update_group(
        self,
        *,
        subject: str | None = None,
        description: str | None = None,
        join_approval_mode: str | None = None,
    ) -> GroupMutation:
        """``POST /{group_id}`` with at least one of the three settings."""
        body: dict[str, object] = dict(MESSAGING_PRODUCT)
        if subject is not None:
            body["subject"] = check_text(
                subject, field="subject", max_length=GROUP_SUBJECT_MAX_LENGTH
            )
        if (text := _description(description)) is not None:
            body["description"] = text
        if (mode := _mode(join_approval_mode)) is not None:
            body["join_approval_mode"] = mode
        if len(body) == 1:
            raise GraphRequestValidationError(
                "update_group needs subject, description or join_approval_mode"
            )
        raw = await self._on_scope(UPDATE_GROUP, body=body)
        return GroupMutation.from_api(raw, what="update group")

    async def delete_group(self) -> GroupMutation:
        """``DELETE /{group_id}``: removes every participant and closes the group."""
        raw = await self._on_scope(DELETE_GROUP)
        return GroupMutation.from_api(raw, what="delete group")

    async def get_invite_link(self) -> GroupInviteLink:
        """``GET /{group_id}/invite_link``."""
        raw = await self._on_scope(GET_INVITE_LINK)
        return GroupInviteLink.from_api(raw)

    async def reset_invite_link(self) -> GroupInviteLink:
        """``POST /{group_id}/invite_link``: a new link; the previous one stops working."""
        raw = await self._on_scope(RESET_INVITE_LINK, body=dict(MESSAGING_PRODUCT))
        return GroupInviteLink.from_api(raw)

    async def revoke_invite_link(self) -> Success:
        """``DELETE /{group_id}/invite_link``: the link stops working and no new one is made."""
        raw = await self._on_scope(REVOKE_INVITE_LINK, body=dict(MESSAGING_PRODUCT))
        return Success.from_api(raw, what="revoke invite link")

    async def add_participants(self, *, users: list[str]) -> GroupMutation:
        """``POST /{group_id}/participants`` for 1..8 users: ``participants: [{user}]``.

        Each user is a phone number / wa_id (``{"user": ...}``) or a (parent) BSUID
        (``{"recipient": ...}``).
        """
        participants = user_entries(
            users, field="users", max_items=GROUP_MAX_ADDED_PARTICIPANTS, phone_key="user"
        )
        body = {**MESSAGING_PRODUCT, "participants": participants}
        raw = await self._on_scope(ADD_PARTICIPANTS, body=body)
        return GroupMutation.from_api(raw, what="add participants")

    async def remove_participants(self, *, wa_ids: list[str]) -> GroupMutation:
        """``DELETE /{group_id}/participants`` for 1..8 users: ``participants: [{wa_id}]``.

        Each user is a phone number / wa_id or a (parent) BSUID, sent as ``{recipient}``.
        """
        participants = user_entries(
            wa_ids, field="wa_ids", max_items=GROUP_MAX_REMOVED_PARTICIPANTS, phone_key="wa_id"
        )
        body = {**MESSAGING_PRODUCT, "participants": participants}
        raw = await self._on_scope(REMOVE_PARTICIPANTS, body=body)
        return GroupMutation.from_api(raw, what="remove participants")

    list_join_requests = page_reader(
        LIST_JOIN_REQUESTS,
        paging,
        GroupJoinRequest.from_api,
        what="list join requests",
        note=": one page of open join requests.",
    )

    async def approve_join_requests(
        self, *, join_request_ids: list[str]
    ) -> GroupJoinRequestsResult:
        """``POST /{group_id}/join_requests`` with ``join_requests: [ids]``."""
        body = _join_requests_body(join_request_ids)
        raw = await self._on_scope(APPROVE_JOIN_REQUESTS, body=body)
        return GroupJoinRequestsResult.from_api(raw, succeeded_key="approved_join_requests")

    async def reject_join_requests(
        self, *, join_request_ids: list[str]
    ) -> GroupJoinRequestsResult:
        """``DELETE /{group_id}/join_requests`` (never POST) with ``join_requests: [ids]``."""
        body = _join_requests_body(join_request_ids)
        raw = await self._on_scope(REJECT_JOIN_REQUESTS, body=body)
        return GroupJoinRequestsResult.from_api(raw, succeeded_key="rejected_join_requests")


def _join_requests_body(join_request_ids: object) -> dict[str, object]:
    ids = check_id_list(
        join_request_ids,
        field="join_request_ids",
        min_items=1,
        max_items=GROUP_MAX_JOIN_REQUESTS,
        check_item=check_id,
    )
    return {**MESSAGING_PRODUCT, "join_requests": ids}
