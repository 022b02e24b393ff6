"""Typed results of the admin helpers: frozen, keyword-only value objects parsed from Graph JSON.

Every result keeps the upstream answer in ``raw`` (never a secret: these are
Graph answers), so fields the platform adds later stay reachable. Each class
has a ``from_api`` constructor that raises ``GraphSerializationError`` when a
field the helper relies on is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ._errors import GraphSerializationError
from ._parse import (
    as_object,
    object_list,
    opt_bool,
    opt_int,
    opt_object,
    opt_str,
    req_str,
    str_tuple,
)

__all__ = [
    "BlockUsersResult",
    "BlockedUser",
    "BlockedUserOutcome",
    "BusinessProfile",
    "BusinessPublicKey",
    "CallPermissionAction",
    "CallPermissionLimit",
    "CallPermissions",
    "CallResult",
    "CommerceSettings",
    "CreatedObject",
    "Flow",
    "FlowAsset",
    "FlowAssetsUpdateResult",
    "FlowCreated",
    "FlowPreview",
    "FlowValidationIssue",
    "Group",
    "GroupInviteLink",
    "GroupJoinRequest",
    "GroupJoinRequestsResult",
    "GroupMutation",
    "GroupParticipant",
    "GroupSummary",
    "OfficialBusinessAccountStatus",
    "Page",
    "PhoneNumberInfo",
    "PhoneNumberSettings",
    "QrCode",
    "SubscribedApp",
    "Success",
    "Template",
    "TemplateCreated",
    "TemplateGroup",
    "TemplateGroupAnalytics",
    "WabaInfo",
]

T = TypeVar("T")
Raw = Mapping[str, Any]


# --- shared ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Page(Generic[T]):
    """One page of a cursor-paged list: ``items`` plus the ``paging`` cursors.

    ``next_cursor`` is the ``after`` cursor when the platform says there is a
    next page (``paging.next`` present), else ``None``: the last page.
    """

    items: tuple[T, ...]
    before: str | None
    after: str | None
    next_url: str | None
    raw: Raw

    @property
    def next_cursor(self) -> str | None:
        return self.after if self.after and self.next_url else None

    @classmethod
    def from_api(
        cls,
        raw: Any,
        parse_item: Callable[[Raw], T],
        *,
        what: str,
        nested_key: str | None = None,
    ) -> Page[T]:
        """Parse ``{"data": [...], "paging": {...}}``; ``nested_key`` reads ``data[nested_key]``."""
        obj = as_object(raw, what=what)
        data: Any = obj.get("data")
        if nested_key is not None and isinstance(data, Mapping):
            data = data.get(nested_key)
        if data is None:
            data = []
        if not isinstance(data, list):
            raise GraphSerializationError(f"{what}: 'data' is not a list")
        paging = opt_object(obj, "paging") or {}
        cursors = opt_object(paging, "cursors") or {}
        return cls(
            items=tuple(parse_item(item) for item in object_list(data)),
            before=opt_str(cursors, "before"),
            after=opt_str(cursors, "after"),
            next_url=opt_str(paging, "next"),
            raw=obj,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Success:
    """An answer of the form ``{"success": true}``."""

    success: bool
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any, *, what: str = "answer") -> Success:
        obj = as_object(raw, what=what)
        return cls(success=opt_bool(obj, "success") is True, raw=obj)


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatedObject:
    """An answer carrying the ``id`` of what was created (``{"id": "..."}``)."""

    id: str
    success: bool | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any, *, what: str = "answer") -> CreatedObject:
        obj = as_object(raw, what=what)
        return cls(id=req_str(obj, "id", what=what), success=opt_bool(obj, "success"), raw=obj)


# --- groups ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupMutation:
    """An asynchronous group mutation: ``request_id`` correlates the later group webhook."""

    request_id: str | None
    success: bool | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any, *, what: str = "group mutation") -> GroupMutation:
        obj = as_object(raw, what=what)
        return cls(
            request_id=opt_str(obj, "request_id"), success=opt_bool(obj, "success"), raw=obj
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupSummary:
    """A group as listed by ``GET /{phone_number_id}/groups``."""

    id: str
    subject: str | None
    created_at: int | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Raw) -> GroupSummary:
        return cls(
            id=req_str(raw, "id", what="group"),
            subject=opt_str(raw, "subject"),
            created_at=opt_int(raw, "created_at") or opt_int(raw, "creation_timestamp"),
            raw=raw,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupParticipant:
    wa_id: str
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class Group:
    """Group metadata from ``GET /{group_id}`` (fields absent unless requested read ``None``)."""

    id: str
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
        return cls(
            id=req_str(obj, "id", what="group"),
            subject=opt_str(obj, "subject"),
            description=opt_str(obj, "description"),
            join_approval_mode=opt_str(obj, "join_approval_mode"),
            suspended=opt_bool(obj, "suspended"),
            creation_timestamp=opt_int(obj, "creation_timestamp"),
            participants=tuple(
                GroupParticipant(wa_id=wa_id, raw=item)
                for item in object_list(obj.get("participants"))
                if (wa_id := opt_str(item, "wa_id")) is not None
            ),
            total_participant_count=opt_int(obj, "total_participant_count"),
            raw=obj,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupInviteLink:
    invite_link: str
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> GroupInviteLink:
        obj = as_object(raw, what="group invite link")
        return cls(invite_link=req_str(obj, "invite_link", what="group invite link"), raw=obj)


@dataclass(frozen=True, slots=True, kw_only=True)
class GroupJoinRequest:
    join_request_id: str
    wa_id: str | None
    creation_timestamp: int | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Raw) -> GroupJoinRequest:
        return cls(
            join_request_id=req_str(raw, "join_request_id", what="join request"),
            wa_id=opt_str(raw, "wa_id"),
            creation_timestamp=opt_int(raw, "creation_timestamp"),
            raw=raw,
        )


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
        return cls(
            request_id=opt_str(obj, "request_id"),
            succeeded=str_tuple(obj.get(succeeded_key)),
            failed=tuple(
                ident
                for item in object_list(obj.get("failed_join_requests"))
                if (ident := opt_str(item, "join_request_id")) is not None
            ),
            raw=obj,
        )


# --- phone number administration -----------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class PhoneNumberInfo:
    """A business phone number (``GET /{phone_number_id}``, or an item of a WABA's list)."""

    id: str
    display_phone_number: str | None
    verified_name: str | None
    quality_rating: str | None
    code_verification_status: str | None
    name_status: str | None
    platform_type: str | None
    throughput_level: str | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> PhoneNumberInfo:
        obj = as_object(raw, what="phone number")
        throughput = opt_object(obj, "throughput") or {}
        return cls(
            id=req_str(obj, "id", what="phone number"),
            display_phone_number=opt_str(obj, "display_phone_number"),
            verified_name=opt_str(obj, "verified_name"),
            quality_rating=opt_str(obj, "quality_rating"),
            code_verification_status=opt_str(obj, "code_verification_status"),
            name_status=opt_str(obj, "name_status"),
            platform_type=opt_str(obj, "platform_type"),
            throughput_level=opt_str(throughput, "level"),
            raw=obj,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class PhoneNumberSettings:
    """``GET /{phone_number_id}/settings``: calling and storage sections, as sent."""

    calling: Raw | None
    storage_configuration: Raw | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> PhoneNumberSettings:
        obj = as_object(raw, what="phone number settings")
        return cls(
            calling=opt_object(obj, "calling"),
            storage_configuration=opt_object(obj, "storage_configuration"),
            raw=obj,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class BusinessProfile:
    """``GET /{phone_number_id}/whatsapp_business_profile`` (the first ``data`` item)."""

    about: str | None
    address: str | None
    description: str | None
    email: str | None
    profile_picture_url: str | None
    websites: tuple[str, ...]
    vertical: str | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> BusinessProfile:
        obj = as_object(raw, what="business profile")
        items = object_list(obj.get("data"))
        profile = items[0] if items else obj
        return cls(
            about=opt_str(profile, "about"),
            address=opt_str(profile, "address"),
            description=opt_str(profile, "description"),
            email=opt_str(profile, "email"),
            profile_picture_url=opt_str(profile, "profile_picture_url"),
            websites=str_tuple(profile.get("websites")),
            vertical=opt_str(profile, "vertical"),
            raw=obj,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class CommerceSettings:
    """``GET /{phone_number_id}/whatsapp_commerce_settings`` (the first ``data`` item)."""

    id: str | None
    is_cart_enabled: bool | None
    is_catalog_visible: bool | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> CommerceSettings:
        obj = as_object(raw, what="commerce settings")
        items = object_list(obj.get("data"))
        settings = items[0] if items else obj
        return cls(
            id=opt_str(settings, "id"),
            is_cart_enabled=opt_bool(settings, "is_cart_enabled"),
            is_catalog_visible=opt_bool(settings, "is_catalog_visible"),
            raw=obj,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockedUser:
    wa_id: str
    raw: Raw

    @classmethod
    def from_api(cls, raw: Raw) -> BlockedUser:
        return cls(wa_id=req_str(raw, "wa_id", what="blocked user"), raw=raw)


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockedUserOutcome:
    """One user of a block or unblock call: what was sent (``input``) and the resolved id."""

    input: str | None
    wa_id: str | None
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockUsersResult:
    """``block_users.added_users`` (block) or ``removed_users`` (unblock), and failures."""

    users: tuple[BlockedUserOutcome, ...]
    failed_users: tuple[BlockedUserOutcome, ...]
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any, *, users_key: str) -> BlockUsersResult:
        obj = as_object(raw, what="block users")
        section = opt_object(obj, "block_users") or {}

        def outcomes(value: Any) -> tuple[BlockedUserOutcome, ...]:
            return tuple(
                BlockedUserOutcome(input=opt_str(item, "input"), wa_id=opt_str(item, "wa_id"),
                                   raw=item)
                for item in object_list(value)
            )

        return cls(
            users=outcomes(section.get(users_key)),
            failed_users=outcomes(section.get("failed_users")),
            raw=obj,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class OfficialBusinessAccountStatus:
    """``GET /{phone_number_id}/official_business_account``."""

    id: str | None
    oba_status: str | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> OfficialBusinessAccountStatus:
        obj = as_object(raw, what="official business account")
        return cls(id=opt_str(obj, "id"), oba_status=opt_str(obj, "oba_status"), raw=obj)


@dataclass(frozen=True, slots=True, kw_only=True)
class QrCode:
    """A prefilled-message QR code (``message_qrdls``)."""

    code: str
    prefilled_message: str | None
    deep_link_url: str | None
    qr_image_url: str | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> QrCode:
        obj = as_object(raw, what="QR code")
        items = object_list(obj.get("data"))
        item = items[0] if items and "code" not in obj else obj
        return cls(
            code=req_str(item, "code", what="QR code"),
            prefilled_message=opt_str(item, "prefilled_message"),
            deep_link_url=opt_str(item, "deep_link_url"),
            qr_image_url=opt_str(item, "qr_image_url"),
            raw=item,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class BusinessPublicKey:
    """``GET /{phone_number_id}/whatsapp_business_encryption`` (the first ``data`` item)."""

    business_public_key: str | None
    signature_status: str | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> BusinessPublicKey:
        obj = as_object(raw, what="business public key")
        items = object_list(obj.get("data"))
        item = items[0] if items else obj
        return cls(
            business_public_key=opt_str(item, "business_public_key"),
            signature_status=opt_str(item, "business_public_key_signature_status"),
            raw=obj,
        )


# --- calling -------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CallResult:
    """A call action: ``call_id`` is set when the platform answers with ``calls[0].id``."""

    success: bool | None
    call_id: str | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> CallResult:
        obj = as_object(raw, what="call")
        calls = object_list(obj.get("calls"))
        return cls(
            success=opt_bool(obj, "success"),
            call_id=opt_str(calls[0], "id") if calls else None,
            raw=obj,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class CallPermissionLimit:
    time_period: str | None
    max_allowed: int | None
    current_usage: int | None
    limit_expiration_time: int | None
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class CallPermissionAction:
    action_name: str
    can_perform_action: bool | None
    limits: tuple[CallPermissionLimit, ...]
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class CallPermissions:
    """``GET /{phone_number_id}/call_permissions``: the user's permission and allowed actions."""

    status: str | None
    expiration_time: int | None
    actions: tuple[CallPermissionAction, ...]
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> CallPermissions:
        obj = as_object(raw, what="call permissions")
        permission = opt_object(obj, "permission") or {}
        return cls(
            status=opt_str(permission, "status"),
            expiration_time=opt_int(permission, "expiration_time"),
            actions=tuple(
                CallPermissionAction(
                    action_name=name,
                    can_perform_action=opt_bool(action, "can_perform_action"),
                    limits=tuple(
                        CallPermissionLimit(
                            time_period=opt_str(limit, "time_period"),
                            max_allowed=opt_int(limit, "max_allowed"),
                            current_usage=opt_int(limit, "current_usage"),
                            limit_expiration_time=opt_int(limit, "limit_expiration_time"),
                            raw=limit,
                        )
                        for limit in object_list(action.get("limits"))
                    ),
                    raw=action,
                )
                for action in object_list(obj.get("actions"))
                if (name := opt_str(action, "action_name")) is not None
            ),
            raw=obj,
        )


# --- WABA ----------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class WabaInfo:
    """``GET /{waba_id}``."""

    id: str
    name: str | None
    currency: str | None
    timezone_id: str | None
    message_template_namespace: str | None
    account_review_status: str | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> WabaInfo:
        obj = as_object(raw, what="WhatsApp Business Account")
        return cls(
            id=req_str(obj, "id", what="WhatsApp Business Account"),
            name=opt_str(obj, "name"),
            currency=opt_str(obj, "currency"),
            timezone_id=opt_str(obj, "timezone_id"),
            message_template_namespace=opt_str(obj, "message_template_namespace"),
            account_review_status=opt_str(obj, "account_review_status"),
            raw=obj,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class SubscribedApp:
    """An app subscribed to a WABA's webhooks (``whatsapp_business_api_data``)."""

    id: str | None
    name: str | None
    link: str | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Raw) -> SubscribedApp:
        data = opt_object(raw, "whatsapp_business_api_data") or raw
        return cls(
            id=opt_str(data, "id"), name=opt_str(data, "name"), link=opt_str(data, "link"), raw=raw
        )


# --- templates -----------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Template:
    """A message template (list item or ``GET /{template_id}``)."""

    id: str
    name: str | None
    status: str | None
    category: str | None
    language: str | None
    components: tuple[Raw, ...]
    rejected_reason: str | None
    quality_score: str | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> Template:
        obj = as_object(raw, what="template")
        quality = opt_object(obj, "quality_score") or {}
        return cls(
            id=req_str(obj, "id", what="template"),
            name=opt_str(obj, "name"),
            status=opt_str(obj, "status"),
            category=opt_str(obj, "category"),
            language=opt_str(obj, "language"),
            components=object_list(obj.get("components")),
            rejected_reason=opt_str(obj, "rejected_reason"),
            quality_score=opt_str(quality, "score"),
            raw=obj,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateCreated:
    """``POST /{waba_id}/message_templates``: ``{"id", "status", "category"}``."""

    id: str
    status: str | None
    category: str | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> TemplateCreated:
        obj = as_object(raw, what="template")
        return cls(
            id=req_str(obj, "id", what="template"),
            status=opt_str(obj, "status"),
            category=opt_str(obj, "category"),
            raw=obj,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateGroup:
    """A template group (list item or ``GET /{template_group_id}``)."""

    id: str
    name: str | None
    description: str | None
    template_ids: tuple[str, ...]
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> TemplateGroup:
        obj = as_object(raw, what="template group")
        templates = opt_object(obj, "whatsapp_business_templates")
        template_items = object_list(templates.get("data")) if templates else ()
        ids = tuple(i for t in template_items if (i := opt_str(t, "id")) is not None)
        return cls(
            id=req_str(obj, "id", what="template group"),
            name=opt_str(obj, "name"),
            description=opt_str(obj, "description"),
            template_ids=ids or str_tuple(obj.get("template_ids")),
            raw=obj,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateGroupAnalytics:
    """``GET /{waba_id}/template_group_analytics``: the ``data`` points, as sent."""

    data: tuple[Raw, ...]
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> TemplateGroupAnalytics:
        obj = as_object(raw, what="template group analytics")
        return cls(data=object_list(obj.get("data")), raw=obj)


# --- flows ---------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowValidationIssue:
    """One entry of a Flow's ``validation_errors``."""

    error: str | None
    error_type: str | None
    message: str | None
    line_start: int | None
    line_end: int | None
    column_start: int | None
    column_end: int | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Raw) -> FlowValidationIssue:
        return cls(
            error=opt_str(raw, "error"),
            error_type=opt_str(raw, "error_type"),
            message=opt_str(raw, "message"),
            line_start=opt_int(raw, "line_start"),
            line_end=opt_int(raw, "line_end"),
            column_start=opt_int(raw, "column_start"),
            column_end=opt_int(raw, "column_end"),
            raw=raw,
        )


def _issues(obj: Raw) -> tuple[FlowValidationIssue, ...]:
    return tuple(FlowValidationIssue.from_api(i) for i in object_list(obj.get("validation_errors")))


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowPreview:
    preview_url: str | None
    expires_at: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Flow:
    """A Flow (list item or ``GET /{flow_id}``)."""

    id: str
    name: str | None
    status: str | None
    categories: tuple[str, ...]
    validation_errors: tuple[FlowValidationIssue, ...]
    json_version: str | None
    data_api_version: str | None
    endpoint_uri: str | None
    preview: FlowPreview | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> Flow:
        obj = as_object(raw, what="flow")
        preview = opt_object(obj, "preview")
        return cls(
            id=req_str(obj, "id", what="flow"),
            name=opt_str(obj, "name"),
            status=opt_str(obj, "status"),
            categories=str_tuple(obj.get("categories")),
            validation_errors=_issues(obj),
            json_version=opt_str(obj, "json_version"),
            data_api_version=opt_str(obj, "data_api_version"),
            endpoint_uri=opt_str(obj, "endpoint_uri"),
            preview=(
                FlowPreview(
                    preview_url=opt_str(preview, "preview_url"),
                    expires_at=opt_str(preview, "expires_at"),
                )
                if preview is not None
                else None
            ),
            raw=obj,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowCreated:
    """``POST /{waba_id}/flows``: the new id and any Flow JSON validation errors."""

    id: str
    success: bool | None
    validation_errors: tuple[FlowValidationIssue, ...]
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> FlowCreated:
        obj = as_object(raw, what="flow")
        return cls(
            id=req_str(obj, "id", what="flow"),
            success=opt_bool(obj, "success"),
            validation_errors=_issues(obj),
            raw=obj,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowAsset:
    """An item of ``GET /{flow_id}/assets``."""

    name: str | None
    asset_type: str | None
    download_url: str | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Raw) -> FlowAsset:
        return cls(
            name=opt_str(raw, "name"),
            asset_type=opt_str(raw, "asset_type"),
            download_url=opt_str(raw, "download_url"),
            raw=raw,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowAssetsUpdateResult:
    """``POST /{flow_id}/assets``: success plus the platform's Flow JSON validation errors."""

    success: bool
    validation_errors: tuple[FlowValidationIssue, ...]
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> FlowAssetsUpdateResult:
        obj = as_object(raw, what="flow assets")
        return cls(
            success=opt_bool(obj, "success") is True, validation_errors=_issues(obj), raw=obj
        )
