"""Pre-verified phone numbers: numbers a partner verifies ahead of time and offers to clients.

The pool belongs to a business portfolio (``BusinessClient``); each number is also a
node of its own (``preverified_id``) with its verification codes and the partners it
is shared with.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Final

from ._admin_checks import (
    FIELDS_PARAM,
    PAGING_PARAMS,
    BusinessScoped,
    check_fields,
    check_numeric_id,
    listing_query,
    opt_choice,
)
from ._endpoint import Param, route
from ._parse import ApiRecord, Raw, as_object, opt_str, read_record
from ._phone_setup import CodeVerification, check_code, code_request_body
from ._results import CreatedObject, Page, Success
from ._validate import check_match

__all__ = [
    "PREVERIFIED_CODE_STATUSES",
    "BusinessSummary",
    "PreverifiedNumber",
    "PreverifiedNumbers",
]

PREVERIFIED_CODE_STATUSES: Final = ("VERIFIED", "NOT_VERIFIED", "EXPIRED")
_E164 = re.compile(r"\+?[1-9][0-9]{6,14}")

LIST_PREVERIFIED = route(
    "GET",
    "/{business_id}/preverified_numbers",
    **FIELDS_PARAM,
    code_verification_status=Param(in_="query"),
    phone_number=Param(in_="query"),
    **PAGING_PARAMS,
)
ADD_PREVERIFIED = route("POST", "/{business_id}/add_phone_numbers")
SHARE_PREVERIFIED = route("POST", "/{business_id}/share_preverified_numbers")
UNSHARE_PREVERIFIED = route(
    "DELETE",
    "/{business_id}/share_preverified_numbers",
    preverified_id=Param(in_="query", required=True),
    partner_business_id=Param(in_="query", required=True),
)
GET_PREVERIFIED = route("GET", "/{preverified_id}", **FIELDS_PARAM)
DELETE_PREVERIFIED = route("DELETE", "/{preverified_id}")
LIST_PREVERIFIED_PARTNERS = route(
    "GET", "/{preverified_id}/partners", **FIELDS_PARAM, **PAGING_PARAMS
)
PREVERIFIED_REQUEST_CODE = route("POST", "/{preverified_id}/request_code")
PREVERIFIED_VERIFY_CODE = route("POST", "/{preverified_id}/verify_code")


@dataclass(frozen=True, slots=True, kw_only=True)
class PreverifiedNumber:
    """A pre-verified number: its id, the number and whether its code was verified."""

    id: str | None
    phone_number: str | None
    code_verification_status: str | None
    verification_expiry_time: str | None
    is_input_id_valid: bool | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> PreverifiedNumber:
        obj = as_object(raw, what="pre-verified number")
        return read_record(
            cls,
            obj,
            what="pre-verified number",
            phone_number=opt_str(obj, "phone_number") or opt_str(obj, "display_phone_number"),
            code_verification_status=opt_str(obj, "code_verification_status")
            or opt_str(obj, "verification_status"),
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class BusinessSummary(ApiRecord):
    """A business as other edges list it (a partner, a connected client)."""

    _what = "business"

    id: str | None
    name: str | None
    verification_status: str | None
    raw: Raw


def _phone_number(value: object) -> str:
    return check_match(
        value, _E164,
        "phone_number", "phone_number must be an international number such as +16505551234",
    )


def _sharing(preverified_id: object, partner_business_id: object) -> dict[str, object]:
    return {
        "preverified_id": check_numeric_id(preverified_id, field="preverified_id"),
        "partner_business_id": check_numeric_id(
            partner_business_id, field="partner_business_id"
        ),
    }


class PreverifiedNumbers(BusinessScoped):
    """The pre-verified numbers of one business portfolio (``BusinessClient``)."""

    async def list_preverified_numbers(
        self,
        *,
        code_verification_status: str | None = None,
        phone_number: str | None = None,
        fields: str | list[str] | None = None,
        limit: int | None = None,
        after: str | None = None,
        before: str | None = None,
    ) -> Page[PreverifiedNumber]:
        """``GET /{business_id}/preverified_numbers``, optionally narrowed by status or number."""
        params = {
            "code_verification_status": opt_choice(
                code_verification_status,
                field="code_verification_status",
                choices=PREVERIFIED_CODE_STATUSES,
            ),
            "phone_number": None if phone_number is None else _phone_number(phone_number),
            **listing_query(fields, limit, after, before),
        }
        raw = await self._on_scope(LIST_PREVERIFIED, params)
        return Page.from_api(raw, PreverifiedNumber.from_api, what="pre-verified numbers")

    async def add_preverified_number(self, *, phone_number: str) -> CreatedObject:
        """``POST /{business_id}/add_phone_numbers``: add a number to the pre-verified pool."""
        body = {"phone_number": _phone_number(phone_number)}
        raw = await self._on_scope(ADD_PREVERIFIED, body=body)
        return CreatedObject.from_api(raw, what="add pre-verified number")

    async def share_preverified_number(
        self, *, preverified_id: str, partner_business_id: str
    ) -> Success:
        """``POST /{business_id}/share_preverified_numbers`` with another business."""
        body = _sharing(preverified_id, partner_business_id)
        return Success.from_api(await self._on_scope(SHARE_PREVERIFIED, body=body))

    async def unshare_preverified_number(
        self, *, preverified_id: str, partner_business_id: str
    ) -> Success:
        """``DELETE /{business_id}/share_preverified_numbers``: stop sharing with a business."""
        params = _sharing(preverified_id, partner_business_id)
        return Success.from_api(await self._on_scope(UNSHARE_PREVERIFIED, params))

    async def get_preverified_number(
        self, *, preverified_id: str, fields: str | list[str] | None = None
    ) -> PreverifiedNumber:
        """``GET /{preverified_id}``."""
        params = {"preverified_id": preverified_id, "fields": check_fields(fields)}
        return PreverifiedNumber.from_api(await self._on_node(GET_PREVERIFIED, params))

    async def delete_preverified_number(self, *, preverified_id: str) -> Success:
        """``DELETE /{preverified_id}``: remove the number from the pool (cannot be undone)."""
        raw = await self._on_node(DELETE_PREVERIFIED, {"preverified_id": preverified_id})
        return Success.from_api(raw)

    async def list_preverified_number_partners(
        self,
        *,
        preverified_id: str,
        fields: str | list[str] | None = None,
        limit: int | None = None,
        after: str | None = None,
        before: str | None = None,
    ) -> Page[BusinessSummary]:
        """``GET /{preverified_id}/partners``: the businesses the number is shared with."""
        params = {
            "preverified_id": preverified_id,
            **listing_query(fields, limit, after, before),
        }
        raw = await self._on_node(LIST_PREVERIFIED_PARTNERS, params)
        return Page.from_api(raw, BusinessSummary.from_api, what="pre-verified number partners")

    async def request_preverified_code(
        self, *, preverified_id: str, code_method: str, language: str
    ) -> Success:
        """``POST /{preverified_id}/request_code`` (``code_method`` SMS or VOICE)."""
        raw = await self._on_node(
            PREVERIFIED_REQUEST_CODE,
            {"preverified_id": preverified_id},
            body=code_request_body(code_method, language),
        )
        return Success.from_api(raw)

    async def verify_preverified_code(
        self, *, preverified_id: str, code: str
    ) -> CodeVerification:
        """``POST /{preverified_id}/verify_code`` with the six-digit code received."""
        body = {"code": check_code(code)}
        raw = await self._on_node(
            PREVERIFIED_VERIFY_CODE, {"preverified_id": preverified_id}, body=body
        )
        return CodeVerification.from_api(raw)
