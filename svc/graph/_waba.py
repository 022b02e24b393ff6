"""WhatsApp Business Account helpers: account info, subscribed apps and phone numbers."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Final

from ._admin_checks import (
    FIELDS_PARAM,
    PAGING_PARAMS,
    WabaScoped,
    check_bool,
    check_fields,
    check_text,
    check_url,
    listing,
    page_reader,
)
from ._endpoint import route
from ._errors import GraphRequestValidationError
from ._parse import ApiRecord, Raw, opt_object, read_record
from ._phone_admin import PhoneNumberInfo
from ._results import CreatedObject, Page, Success
from ._validate import check_match

__all__ = ["SubscribedApp", "WabaAccount", "WabaInfo"]

_CC = re.compile(r"[0-9]{1,3}")
_NATIONAL = re.compile(r"[0-9]{4,14}")

GET_WABA = route("GET", "/{waba_id}", **FIELDS_PARAM)
LIST_SUBSCRIBED_APPS = route("GET", "/{waba_id}/subscribed_apps")
SUBSCRIBE_APP = route("POST", "/{waba_id}/subscribed_apps")
UNSUBSCRIBE_APP = route("DELETE", "/{waba_id}/subscribed_apps")
UPDATE_WABA = route("POST", "/{waba_id}")
GET_ACCOUNT_NUMBER = route("GET", "/{account_number_id}", **FIELDS_PARAM)
LIST_PHONE_NUMBERS = route(
    "GET", "/{waba_id}/phone_numbers", **PAGING_PARAMS, **FIELDS_PARAM
)
ADD_PHONE_NUMBER = route("POST", "/{waba_id}/phone_numbers")

MAX_VERIFY_TOKEN_LENGTH: Final = 4096
_TIMEZONE_ID = re.compile(r"[0-9]{1,4}")


# --- results ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class WabaInfo(ApiRecord):
    """``GET /{waba_id}``."""

    _what = "WhatsApp Business Account"

    id: str
    name: str | None
    currency: str | None
    timezone_id: str | None
    message_template_namespace: str | None
    account_review_status: str | None
    raw: Raw


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
        return read_record(cls, data, what="subscribed app", raw=raw)


# --- helpers ------------------------------------------------------------------


class WabaAccount(WabaScoped):
    """Account-level helpers for one WhatsApp Business Account (``WABAClient``)."""

    async def get_waba_info(self, *, fields: str | list[str] | None = None) -> WabaInfo:
        """``GET /{waba_id}`` with optional ``fields``."""
        return WabaInfo.from_api(await self._on_scope(GET_WABA, {"fields": check_fields(fields)}))

    async def list_subscribed_apps(self) -> Page[SubscribedApp]:
        """``GET /{waba_id}/subscribed_apps``."""
        raw = await self._on_scope(LIST_SUBSCRIBED_APPS)
        return Page.from_api(raw, SubscribedApp.from_api, what="list subscribed apps")

    async def subscribe_app(
        self, *, override_callback_uri: str | None = None, verify_token: str | None = None
    ) -> Success:
        """``POST /{waba_id}/subscribed_apps``: subscribe the calling app to this WABA's webhooks.

        ``override_callback_uri`` and ``verify_token`` go together (a per-WABA callback).
        """
        if (override_callback_uri is None) != (verify_token is None):
            raise GraphRequestValidationError(
                "override_callback_uri and verify_token go together", field="verify_token"
            )
        body: dict[str, object] = {}
        if override_callback_uri is not None:
            url = check_url(override_callback_uri, field="override_callback_uri")
            if not url.startswith("https://"):
                raise GraphRequestValidationError(
                    "override_callback_uri must be https", field="override_callback_uri"
                )
            body["override_callback_uri"] = url
            body["verify_token"] = check_text(
                verify_token, field="verify_token", max_length=MAX_VERIFY_TOKEN_LENGTH
            )
        return Success.from_api(await self._on_scope(SUBSCRIBE_APP, body=body))

    async def unsubscribe_app(self) -> Success:
        """``DELETE /{waba_id}/subscribed_apps``: the calling app stops getting its webhooks."""
        return Success.from_api(await self._on_scope(UNSUBSCRIBE_APP))

    async def update_waba(
        self,
        *,
        name: str | None = None,
        timezone_id: str | None = None,
        is_enabled_for_insights: bool | None = None,
        template_auto_archival_enabled: bool | None = None,
        disable_marketing_messages_on_cloud_api: bool | None = None,
    ) -> Success:
        """``POST /{waba_id}`` with at least one setting."""
        body: dict[str, object] = {}
        if name is not None:
            body["name"] = check_text(name, field="name", max_length=100)
        if timezone_id is not None:
            body["timezone_id"] = check_match(
                timezone_id, _TIMEZONE_ID,
                "timezone_id", "timezone_id must be the platform's numeric timezone id",
            )
        for key, flag in (
            ("is_enabled_for_insights", is_enabled_for_insights),
            ("template_auto_archival_enabled", template_auto_archival_enabled),
            ("disable_marketing_messages_on_cloud_api", disable_marketing_messages_on_cloud_api),
        ):
            if flag is not None:
                body[key] = check_bool(flag, field=key)
        if not body:
            raise GraphRequestValidationError("update_waba needs at least one setting")
        return Success.from_api(await self._on_scope(UPDATE_WABA, body=body))

    async def get_account_number(
        self, *, account_number_id: str, fields: str | list[str] | None = None
    ) -> PhoneNumberInfo:
        """``GET /{account_number_id}``: a WhatsApp account number read by its own id."""
        params = {"account_number_id": account_number_id, "fields": check_fields(fields)}
        return PhoneNumberInfo.from_api(await self._on_node(GET_ACCOUNT_NUMBER, params))

    list_phone_numbers = page_reader(
        LIST_PHONE_NUMBERS,
        listing,
        PhoneNumberInfo.from_api,
        what="list phone numbers",
        note=": one page of the account's phone numbers.",
    )

    async def add_phone_number(
        self, *, cc: str, phone_number: str, verified_name: str
    ) -> CreatedObject:
        """``POST /{waba_id}/phone_numbers``: add a number (country code, national number, name)."""
        check_match(cc, _CC, "cc", "cc must be a 1-3 digit country code")
        check_match(
            phone_number, _NATIONAL,
            "phone_number", "phone_number must be the national number's digits",
        )
        body = {
            "cc": cc,
            "phone_number": phone_number,
            "verified_name": check_text(verified_name, field="verified_name", max_length=256),
        }
        return CreatedObject.from_api(
            await self._on_scope(ADD_PHONE_NUMBER, body=body), what="add phone number"
        )
