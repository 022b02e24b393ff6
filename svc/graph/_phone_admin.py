"""Business phone number administration: info, settings, profile, commerce, blocking,
official business account, display name, registration, QR codes and the business public key.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ._admin_checks import (
    FIELDS_PARAM,
    MESSAGING_PRODUCT,
    PAGING_PARAMS,
    PhoneScoped,
    check_bool,
    check_choice,
    check_email,
    check_fields,
    check_id_list,
    check_keys,
    check_text,
    check_url,
    opt_text,
    page_reader,
    paging,
    user_entries,
)
from ._endpoint import Param, route
from ._errors import GraphRequestValidationError
from ._parse import (
    ApiRecord,
    Raw,
    as_object,
    first_data,
    object_list,
    opt_object,
    opt_str,
    read_record,
)
from ._results import Page, Success
from ._validate import check_match

__all__ = [
    "BUSINESS_PROFILE_FIELDS",
    "MAX_BLOCK_USERS",
    "BlockUsersResult",
    "BlockedUser",
    "BlockedUserOutcome",
    "BusinessProfile",
    "BusinessPublicKey",
    "CommerceSettings",
    "OfficialBusinessAccountStatus",
    "PhoneAdmin",
    "PhoneNumberInfo",
    "PhoneNumberSettings",
    "QrCode",
    "business_profile_body",
]

BUSINESS_PROFILE_FIELDS: Final = (
    "about",
    "address",
    "description",
    "email",
    "profile_picture_url",
    "websites",
    "vertical",
)
"""Fields asked for by ``get_business_profile`` when the caller names none."""

MAX_BLOCK_USERS: Final = 1000
STORAGE_STATUSES: Final = ("DEFAULT", "IN_COUNTRY_STORAGE_ENABLED")
QR_IMAGE_FORMATS: Final = ("PNG", "SVG")

_PIN = re.compile(r"[0-9]{6}")
_REGION = re.compile(r"[A-Z]{2}")
_VERTICAL = re.compile(r"[A-Z_]{1,64}")
_QR_CODE = re.compile(r"[A-Za-z0-9_-]{1,64}")


# --- results ------------------------------------------------------------------


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
        level = opt_str(throughput, "level")
        return read_record(cls, obj, what="phone number", throughput_level=level)


@dataclass(frozen=True, slots=True, kw_only=True)
class PhoneNumberSettings(ApiRecord):
    """``GET /{phone_number_id}/settings``: calling and storage sections, as sent."""

    _what = "phone number settings"

    calling: Raw | None
    storage_configuration: Raw | None
    raw: Raw


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
        return read_record(cls, first_data(obj), what="business profile", raw=obj)


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
        return read_record(cls, first_data(obj), what="commerce settings", raw=obj)


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockedUser(ApiRecord):
    _what = "blocked user"

    wa_id: str
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class BlockedUserOutcome(ApiRecord):
    """One user of a block or unblock call: what was sent (``input``) and the resolved id."""

    _what = "blocked user outcome"

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
        users = tuple(map(BlockedUserOutcome.from_api, object_list(section.get(users_key))))
        return read_record(cls, section, what="block users", users=users, raw=obj)


@dataclass(frozen=True, slots=True, kw_only=True)
class OfficialBusinessAccountStatus(ApiRecord):
    """``GET /{phone_number_id}/official_business_account``."""

    _what = "official business account"

    id: str | None
    oba_status: str | None
    raw: Raw


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
        return read_record(cls, item, what="QR code")


@dataclass(frozen=True, slots=True, kw_only=True)
class BusinessPublicKey:
    """``GET /{phone_number_id}/whatsapp_business_encryption`` (the first ``data`` item)."""

    business_public_key: str | None
    signature_status: str | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> BusinessPublicKey:
        obj = as_object(raw, what="business public key")
        item = first_data(obj)
        status = opt_str(item, "business_public_key_signature_status")
        return read_record(cls, item, what="business public key", signature_status=status, raw=obj)


# --- endpoints and helpers ----------------------------------------------------


GET_PHONE_NUMBER = route("GET", "/{phone_number_id}", **FIELDS_PARAM)
REQUEST_DISPLAY_NAME = route("POST", "/{phone_number_id}")
GET_SETTINGS = route(
    "GET", "/{phone_number_id}/settings", **FIELDS_PARAM, include_sip_credentials=Param(in_="query")
)
UPDATE_SETTINGS = route("POST", "/{phone_number_id}/settings")
GET_BUSINESS_PROFILE = route("GET", "/{phone_number_id}/whatsapp_business_profile", **FIELDS_PARAM)
UPDATE_BUSINESS_PROFILE = route("POST", "/{phone_number_id}/whatsapp_business_profile")
GET_COMMERCE_SETTINGS = route("GET", "/{phone_number_id}/whatsapp_commerce_settings")
UPDATE_COMMERCE_SETTINGS = route("POST", "/{phone_number_id}/whatsapp_commerce_settings")
LIST_BLOCKED_USERS = route("GET", "/{phone_number_id}/block_users", **PAGING_PARAMS)
BLOCK_USERS = route("POST", "/{phone_number_id}/block_users")
UNBLOCK_USERS = route("DELETE", "/{phone_number_id}/block_users")
GET_OFFICIAL_BUSINESS_ACCOUNT = route(
    "GET", "/{phone_number_id}/official_business_account", **FIELDS_PARAM
)
REQUEST_OFFICIAL_BUSINESS_ACCOUNT = route("POST", "/{phone_number_id}/official_business_account")
REGISTER = route("POST", "/{phone_number_id}/register")
DEREGISTER = route("POST", "/{phone_number_id}/deregister")
LIST_QR_CODES = route("GET", "/{phone_number_id}/message_qrdls")
CREATE_QR_CODE = route("POST", "/{phone_number_id}/message_qrdls")
GET_QR_CODE = route("GET", "/{phone_number_id}/message_qrdls/{code}")
DELETE_QR_CODE = route("DELETE", "/{phone_number_id}/message_qrdls/{code}")
GET_BUSINESS_PUBLIC_KEY = route("GET", "/{phone_number_id}/whatsapp_business_encryption")
SET_BUSINESS_PUBLIC_KEY = route("POST", "/{phone_number_id}/whatsapp_business_encryption")


def _qr_code(value: object) -> str:
    return check_match(
        value, _QR_CODE, "code", "code must be a QR code id of letters, digits, '_' or '-'"
    )


def _storage(value: object) -> dict[str, Any]:
    config = check_keys(
        value,
        field="storage_configuration",
        allowed=("status", "data_localization_region"),
        required=("status",),
    )
    out: dict[str, Any] = {
        "status": check_choice(
            config["status"], field="storage_configuration.status", choices=STORAGE_STATUSES
        )
    }
    region = config.get("data_localization_region")
    if out["status"] == "IN_COUNTRY_STORAGE_ENABLED":
        out["data_localization_region"] = check_match(
            region,
            _REGION,
            "storage_configuration",
            "storage_configuration.data_localization_region must be a two-letter country "
            "code when in-country storage is enabled",
        )
    elif region is not None:
        raise GraphRequestValidationError(
            "storage_configuration.data_localization_region goes only with "
            "IN_COUNTRY_STORAGE_ENABLED",
            field="storage_configuration",
        )
    return out


def _calling(value: object) -> dict[str, Any]:
    if not isinstance(value, Mapping) or not value:
        raise GraphRequestValidationError("calling must be a non-empty mapping", field="calling")
    if not all(isinstance(key, str) for key in value):
        raise GraphRequestValidationError("calling keys must be strings", field="calling")
    return dict(value)


def _block_body(users: object) -> dict[str, object]:
    checked = user_entries(users, field="users", max_items=MAX_BLOCK_USERS, phone_key="user")
    return {**MESSAGING_PRODUCT, "block_users": checked}


def business_profile_body(
    *,
    about: object,
    address: object,
    description: object,
    email: object,
    vertical: object,
    websites: object,
    profile_picture_handle: object,
) -> dict[str, object]:
    """The checked body of a business-profile update (the phone edge and the profile node)."""
    body: dict[str, object] = dict(MESSAGING_PRODUCT)
    for name, value, limit, multiline in (
        ("about", about, 139, False),
        ("address", address, 256, False),
        ("description", description, 512, True),
        ("profile_picture_handle", profile_picture_handle, 4096, False),
    ):
        if (text := opt_text(value, field=name, max_length=limit, multiline=multiline)):
            body[name] = text
    if email is not None:
        body["email"] = check_email(email)
    if vertical is not None:
        body["vertical"] = check_match(
            vertical, _VERTICAL,
            "vertical", "vertical must be an upper-case category such as RETAIL",
        )
    if websites is not None:
        body["websites"] = check_id_list(
            websites,
            field="websites",
            min_items=1,
            max_items=2,
            check_item=lambda item, field: check_url(item, field=field, max_length=256),
        )
    if len(body) == 1:
        raise GraphRequestValidationError("a business profile update needs at least one field")
    return body


class PhoneAdmin(PhoneScoped):
    """Administration of one business phone number (``PhoneNumberClient``)."""

    # --- info and settings

    async def get_phone_number_info(
        self, *, fields: str | list[str] | None = None
    ) -> PhoneNumberInfo:
        """``GET /{phone_number_id}`` with optional ``fields``."""
        raw = await self._on_scope(GET_PHONE_NUMBER, {"fields": check_fields(fields)})
        return PhoneNumberInfo.from_api(raw)

    async def get_settings(
        self,
        *,
        fields: str | list[str] | None = None,
        include_sip_credentials: bool | None = None,
    ) -> PhoneNumberSettings:
        """``GET /{phone_number_id}/settings``; SIP credentials only when asked for."""
        include = (
            None
            if include_sip_credentials is None
            else check_bool(include_sip_credentials, field="include_sip_credentials")
        )
        raw = await self._on_scope(
            GET_SETTINGS, {"fields": check_fields(fields), "include_sip_credentials": include}
        )
        return PhoneNumberSettings.from_api(raw)

    async def update_settings(
        self,
        *,
        calling: Mapping[str, Any] | None = None,
        storage_configuration: Mapping[str, Any] | None = None,
    ) -> Success:
        """``POST /{phone_number_id}/settings``.

        ``storage_configuration`` is ``{"status": "DEFAULT" | "IN_COUNTRY_STORAGE_ENABLED",
        "data_localization_region": "DE"}`` (region only when enabling); the legacy
        top-level ``data_localization_region`` is never sent.
        """
        body: dict[str, object] = {}
        if calling is not None:
            body["calling"] = _calling(calling)
        if storage_configuration is not None:
            body["storage_configuration"] = _storage(storage_configuration)
        if not body:
            raise GraphRequestValidationError(
                "update_settings needs calling or storage_configuration"
            )
        return Success.from_api(await self._on_scope(UPDATE_SETTINGS, body=body))

    async def request_display_name_review(self, *, new_display_name: str) -> Success:
        """``POST /{phone_number_id}`` with ``new_display_name``: submits a new name for review."""
        body = {"new_display_name": check_text(
            new_display_name, field="new_display_name", max_length=256
        )}
        return Success.from_api(await self._on_scope(REQUEST_DISPLAY_NAME, body=body))

    # --- business profile and commerce

    async def get_business_profile(
        self, *, fields: str | list[str] | None = None
    ) -> BusinessProfile:
        """``GET /{phone_number_id}/whatsapp_business_profile`` (every profile field by default)."""
        checked = check_fields(fields if fields is not None else list(BUSINESS_PROFILE_FIELDS))
        raw = await self._on_scope(GET_BUSINESS_PROFILE, {"fields": checked})
        return BusinessProfile.from_api(raw)

    async def update_business_profile(
        self,
        *,
        about: str | None = None,
        address: str | None = None,
        description: str | None = None,
        email: str | None = None,
        vertical: str | None = None,
        websites: list[str] | None = None,
        profile_picture_handle: str | None = None,
    ) -> Success:
        """``POST /{phone_number_id}/whatsapp_business_profile`` with the fields given."""
        body = business_profile_body(
            about=about,
            address=address,
            description=description,
            email=email,
            vertical=vertical,
            websites=websites,
            profile_picture_handle=profile_picture_handle,
        )
        return Success.from_api(await self._on_scope(UPDATE_BUSINESS_PROFILE, body=body))

    async def get_commerce_settings(self) -> CommerceSettings:
        """``GET /{phone_number_id}/whatsapp_commerce_settings``."""
        return CommerceSettings.from_api(await self._on_scope(GET_COMMERCE_SETTINGS))

    async def update_commerce_settings(
        self, *, is_cart_enabled: bool | None = None, is_catalog_visible: bool | None = None
    ) -> Success:
        """``POST /{phone_number_id}/whatsapp_commerce_settings``."""
        body: dict[str, object] = {}
        if is_cart_enabled is not None:
            body["is_cart_enabled"] = check_bool(is_cart_enabled, field="is_cart_enabled")
        if is_catalog_visible is not None:
            body["is_catalog_visible"] = check_bool(is_catalog_visible, field="is_catalog_visible")
        if not body:
            raise GraphRequestValidationError(
                "update_commerce_settings needs is_cart_enabled or is_catalog_visible"
            )
        return Success.from_api(await self._on_scope(UPDATE_COMMERCE_SETTINGS, body=body))

    # --- block users

    list_blocked_users = page_reader(
        LIST_BLOCKED_USERS,
        paging,
        BlockedUser.from_api,
        what="list blocked users",
        note=": one page of blocked users.",
    )

    async def block_users(self, *, users: list[str]) -> BlockUsersResult:
        """``POST /{phone_number_id}/block_users`` for phone numbers or WhatsApp ids."""
        raw = await self._on_scope(BLOCK_USERS, body=_block_body(users))
        return BlockUsersResult.from_api(raw, users_key="added_users")

    async def unblock_users(self, *, users: list[str]) -> BlockUsersResult:
        """``DELETE /{phone_number_id}/block_users`` with the same body shape as blocking."""
        raw = await self._on_scope(UNBLOCK_USERS, body=_block_body(users))
        return BlockUsersResult.from_api(raw, users_key="removed_users")

    # --- official business account

    async def get_official_business_account(
        self, *, fields: str | list[str] | None = None
    ) -> OfficialBusinessAccountStatus:
        """``GET /{phone_number_id}/official_business_account``: the OBA status."""
        raw = await self._on_scope(GET_OFFICIAL_BUSINESS_ACCOUNT, {"fields": check_fields(fields)})
        return OfficialBusinessAccountStatus.from_api(raw)

    async def request_official_business_account(
        self,
        *,
        business_website_url: str,
        primary_country_of_operation: str,
        primary_language: str | None = None,
        parent_business_or_brand: str | None = None,
        supporting_links: list[str] | None = None,
        additional_supporting_information: str | None = None,
    ) -> Success:
        """``POST /{phone_number_id}/official_business_account``: submit an OBA review request."""
        body: dict[str, object] = {
            "business_website_url": check_url(business_website_url, field="business_website_url"),
            "primary_country_of_operation": check_text(
                primary_country_of_operation, field="primary_country_of_operation", max_length=128
            ),
        }
        if (language := opt_text(primary_language, field="primary_language", max_length=64)):
            body["primary_language"] = language
        if (parent := opt_text(
            parent_business_or_brand, field="parent_business_or_brand", max_length=256
        )):
            body["parent_business_or_brand"] = parent
        if supporting_links is not None:
            body["supporting_links"] = check_id_list(
                supporting_links,
                field="supporting_links",
                min_items=1,
                max_items=10,
                check_item=check_url,
            )
        if (info := opt_text(
            additional_supporting_information,
            field="additional_supporting_information",
            max_length=4096,
            multiline=True,
        )):
            body["additional_supporting_information"] = info
        return Success.from_api(await self._on_scope(REQUEST_OFFICIAL_BUSINESS_ACCOUNT, body=body))

    # --- registration

    async def register_phone_number(self, *, pin: str) -> Success:
        """``POST /{phone_number_id}/register`` with the six-digit two-step verification pin."""
        body = {**MESSAGING_PRODUCT, "pin": check_match(pin, _PIN, "pin", "pin must be six digits")}
        return Success.from_api(await self._on_scope(REGISTER, body=body))

    async def deregister_phone_number(self) -> Success:
        """``POST /{phone_number_id}/deregister``."""
        return Success.from_api(await self._on_scope(DEREGISTER, body={}))

    # --- QR codes

    async def list_qr_codes(self) -> Page[QrCode]:
        """``GET /{phone_number_id}/message_qrdls``."""
        raw = await self._on_scope(LIST_QR_CODES)
        return Page.from_api(raw, QrCode.from_api, what="list QR codes")

    async def get_qr_code(self, *, code: str) -> QrCode:
        """``GET /{phone_number_id}/message_qrdls/{code}``."""
        return QrCode.from_api(await self._on_scope(GET_QR_CODE, {"code": _qr_code(code)}))

    async def create_qr_code(
        self, *, prefilled_message: str, generate_qr_image: str = "PNG"
    ) -> QrCode:
        """``POST /{phone_number_id}/message_qrdls`` with a prefilled message."""
        body = {
            "prefilled_message": check_text(
                prefilled_message, field="prefilled_message", max_length=140, multiline=True
            ),
            "generate_qr_image": check_choice(
                generate_qr_image, field="generate_qr_image", choices=QR_IMAGE_FORMATS
            ),
        }
        return QrCode.from_api(await self._on_scope(CREATE_QR_CODE, body=body))

    async def update_qr_code(self, *, code: str, prefilled_message: str) -> QrCode:
        """``POST /{phone_number_id}/message_qrdls`` with ``code``: changes its message."""
        body = {
            "code": _qr_code(code),
            "prefilled_message": check_text(
                prefilled_message, field="prefilled_message", max_length=140, multiline=True
            ),
        }
        return QrCode.from_api(await self._on_scope(CREATE_QR_CODE, body=body))

    async def delete_qr_code(self, *, code: str) -> Success:
        """``DELETE /{phone_number_id}/message_qrdls/{code}``."""
        return Success.from_api(await self._on_scope(DELETE_QR_CODE, {"code": _qr_code(code)}))

    # --- business public key (Flows endpoint encryption)

    async def get_business_public_key(self) -> BusinessPublicKey:
        """``GET /{phone_number_id}/whatsapp_business_encryption``."""
        return BusinessPublicKey.from_api(await self._on_scope(GET_BUSINESS_PUBLIC_KEY))

    async def set_business_public_key(self, *, business_public_key: str) -> Success:
        """``POST /{phone_number_id}/whatsapp_business_encryption`` with a PEM public key."""
        key = check_text(
            business_public_key, field="business_public_key", max_length=8192, multiline=True
        )
        if "-----BEGIN PUBLIC KEY-----" not in key or "PRIVATE KEY" in key:
            raise GraphRequestValidationError(
                "business_public_key must be a PEM public key", field="business_public_key"
            )
        raw = await self._on_scope(SET_BUSINESS_PUBLIC_KEY, body={"business_public_key": key})
        return Success.from_api(raw)
