"""A business portfolio (``BusinessClient``): its WhatsApp Business Accounts, credit lines,
its users' assigned accounts and Marketing Messages onboarding of its clients.
"""

from __future__ import annotations

from dataclasses import dataclass

from ._admin_checks import (
    FIELDS_PARAM,
    PAGING_PARAMS,
    BusinessScoped,
    check_fields,
    check_numeric_id,
    listing,
    listing_query,
    page_reader,
)
from ._endpoint import Param, route
from ._parse import ApiRecord, Raw
from ._results import Page
from ._waba import WabaInfo

__all__ = ["BusinessPortfolio", "BusinessPortfolioInfo", "CreditLine", "OnboardingRequest"]

_LISTED = {**FIELDS_PARAM, **PAGING_PARAMS}

GET_BUSINESS = route("GET", "/{business_id}", **FIELDS_PARAM)
LIST_OWNED_WABAS = route("GET", "/{business_id}/owned_whatsapp_business_accounts", **_LISTED)
LIST_CLIENT_WABAS = route("GET", "/{business_id}/client_whatsapp_business_accounts", **_LISTED)
LIST_CREDIT_LINES = route("GET", "/{business_id}/extendedcredits", **_LISTED)
ONBOARD_TO_MARKETING_MESSAGES = route(
    "POST", "/{business_id}/onboard_partners_to_mm_lite", solution_id=Param(in_="query")
)
LIST_USER_ASSIGNED_WABAS = route("GET", "/{user_id}/assigned_whatsapp_business_accounts", **_LISTED)


@dataclass(frozen=True, slots=True, kw_only=True)
class BusinessPortfolioInfo(ApiRecord):
    """``GET /{business_id}``."""

    _what = "business portfolio"

    id: str
    name: str | None
    timezone_id: str | None
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class CreditLine(ApiRecord):
    """A credit line of the portfolio (shared with clients in partner-initiated WABA creation)."""

    _what = "credit line"

    id: str | None
    legal_entity_name: str | None
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class OnboardingRequest(ApiRecord):
    """An onboarding request the client business reviews and accepts (``request_id``)."""

    _what = "onboarding request"

    request_id: str
    raw: Raw


class BusinessPortfolio(BusinessScoped):
    """Accounts, credit lines and client onboarding of one business portfolio."""

    async def get_business(self, *, fields: str | list[str] | None = None) -> BusinessPortfolioInfo:
        """``GET /{business_id}`` with optional ``fields``."""
        raw = await self._on_scope(GET_BUSINESS, {"fields": check_fields(fields)})
        return BusinessPortfolioInfo.from_api(raw)

    list_owned_wabas = page_reader(
        LIST_OWNED_WABAS, listing, WabaInfo.from_api, what="owned WABAs"
    )

    list_client_wabas = page_reader(
        LIST_CLIENT_WABAS,
        listing,
        WabaInfo.from_api,
        what="client WABAs",
        note=": WABAs clients shared.",
    )

    list_credit_lines = page_reader(
        LIST_CREDIT_LINES, listing, CreditLine.from_api, what="credit lines"
    )

    async def list_user_assigned_wabas(
        self,
        *,
        user_id: str,
        fields: str | list[str] | None = None,
        limit: int | None = None,
        after: str | None = None,
        before: str | None = None,
    ) -> Page[WabaInfo]:
        """``GET /{user_id}/assigned_whatsapp_business_accounts`` for a user of the portfolio."""
        params = {"user_id": user_id, **listing_query(fields, limit, after, before)}
        raw = await self._on_node(LIST_USER_ASSIGNED_WABAS, params)
        return Page.from_api(raw, WabaInfo.from_api, what="assigned WABAs")

    async def onboard_to_marketing_messages(
        self, *, solution_id: str | None = None
    ) -> OnboardingRequest:
        """``POST /{business_id}/onboard_partners_to_mm_lite``: ask this (client) business to
        accept the Marketing Messages API terms; ``solution_id`` links a Multi-Partner Solution.
        """
        params = {
            "solution_id": None
            if solution_id is None
            else check_numeric_id(solution_id, field="solution_id")
        }
        raw = await self._on_scope(ONBOARD_TO_MARKETING_MESSAGES, params)
        return OnboardingRequest.from_api(raw)
