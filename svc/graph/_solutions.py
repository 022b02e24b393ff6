"""Multi-Partner Solutions and migration between solutions.

A solution is created by its owner app (``AppClient``), accepted, rejected or
deactivated on its own node (``SolutionClient``), and listed or migrated per
WhatsApp Business Account (``WABAClient``).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Final

from ._admin_checks import (
    FIELDS_PARAM,
    PAGING_PARAMS,
    AppScoped,
    SolutionScoped,
    WabaScoped,
    check_choice,
    check_fields,
    check_id_list,
    check_numeric_id,
    check_text,
    listing,
    listing_query,
    opt_choice,
    opt_text,
    page_reader,
)
from ._endpoint import Param, route
from ._errors import GraphRequestValidationError
from ._parse import ApiRecord, Raw, as_object, opt_object, opt_str, read_record, req_str
from ._preverified import BusinessSummary
from ._results import CreatedObject, Page, Success

__all__ = [
    "SOLUTION_REQUEST_TYPES",
    "SOLUTION_ROLES",
    "AppSolutions",
    "MigrationIntent",
    "Solution",
    "SolutionAccessToken",
    "SolutionLifecycle",
    "WabaSolutions",
]

SOLUTION_ROLES: Final = ("OWNER", "PARTNER")
SOLUTION_REQUEST_TYPES: Final = ("PARTNERSHIP_REQUEST", "DEACTIVATION_REQUEST")
SOLUTION_PERMISSIONS: Final = ("MESSAGING",)
MAX_REASON_LENGTH: Final = 500

CREATE_SOLUTION = route("POST", "/{app_id}/whatsapp_business_solution")
LIST_APP_SOLUTIONS = route(
    "GET",
    "/{app_id}/whatsapp_business_solutions",
    role=Param(in_="query"),
    **FIELDS_PARAM,
    **PAGING_PARAMS,
)
LIST_CONNECTED_CLIENTS = route(
    "GET", "/{app_id}/connected_client_businesses", **FIELDS_PARAM, **PAGING_PARAMS
)
GET_SOLUTION = route("GET", "/{solution_id}", **FIELDS_PARAM)
SOLUTION_ACCESS_TOKEN = route(
    "GET", "/{solution_id}/access_token", business_id=Param(in_="query", required=True)
)
ACCEPT_SOLUTION = route("POST", "/{solution_id}/accept")
REJECT_SOLUTION = route("POST", "/{solution_id}/reject")
SEND_DEACTIVATION = route("POST", "/{solution_id}/send_deactivation_request")
ACCEPT_DEACTIVATION = route("POST", "/{solution_id}/accept_deactivation_request", **FIELDS_PARAM)
REJECT_DEACTIVATION = route("POST", "/{solution_id}/reject_deactivation_request", **FIELDS_PARAM)
LIST_WABA_SOLUTIONS = route("GET", "/{waba_id}/solutions", **FIELDS_PARAM, **PAGING_PARAMS)
SET_MIGRATION_INTENT = route("POST", "/{waba_id}/set_solution_migration_intent")
GET_MIGRATION_INTENT = route("GET", "/{migration_intent_id}", **FIELDS_PARAM)


@dataclass(frozen=True, slots=True, kw_only=True)
class Solution:
    """A Multi-Partner Solution: ``status`` (DRAFT, INITIATED, ACTIVE, REJECTED,
    DEACTIVATED) and any transition waiting for approval (``status_for_pending_request``).
    """

    id: str | None
    name: str | None
    status: str | None
    status_for_pending_request: str | None
    owner_app_id: str | None
    owner_permissions: tuple[str, ...]
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> Solution:
        obj = as_object(raw, what="solution")
        owner = opt_object(obj, "owner_app") or {}
        return read_record(cls, obj, what="solution", owner_app_id=opt_str(owner, "id"))


@dataclass(frozen=True, slots=True, kw_only=True)
class SolutionAccessToken(ApiRecord):
    """A business token scoped to what the client shared with the solution.

    The token is a secret: it is left out of ``repr`` (and so of logs and tracebacks
    that print the result); read ``access_token`` only to hand it to a ``GraphClient``.
    """

    _what = "solution access token"

    access_token: str = field(repr=False)
    expires_at: int | None
    raw: Raw = field(repr=False)


@dataclass(frozen=True, slots=True, kw_only=True)
class MigrationIntent(ApiRecord):
    """A WABA's migration intent: ``status`` INITIATED, ACCEPTED, REJECTED or COMPLETED."""

    _what = "migration intent"

    id: str | None
    status: str | None
    raw: Raw


def _permissions(value: object, *, field: str) -> list[str]:
    return check_id_list(
        value,
        field=field,
        min_items=0,
        max_items=1,
        check_item=lambda item, field: check_choice(
            item, field=field, choices=SOLUTION_PERMISSIONS
        ),
    )


def _reason(value: object, *, field: str) -> str | None:
    return opt_text(value, field=field, max_length=MAX_REASON_LENGTH, multiline=True)


class AppSolutions(AppScoped):
    """Solutions an app owns or partners in, and its connected clients (``AppClient``)."""

    async def create_solution(
        self,
        *,
        solution_name: str,
        partner_app_id: str,
        owner_permissions: list[str] | None = None,
        partner_permissions: list[str] | None = None,
    ) -> CreatedObject:
        """``POST /{app_id}/whatsapp_business_solution``: a solution in INITIATED status.

        Exactly one of the two apps holds ``MESSAGING`` (``["MESSAGING"]`` on one side,
        ``[]`` or ``None`` on the other). The result's ``id`` is the solution id.
        """
        owner = _permissions(owner_permissions or [], field="owner_permissions")
        partner = _permissions(partner_permissions or [], field="partner_permissions")
        if len(owner) + len(partner) != 1:
            raise GraphRequestValidationError(
                "exactly one of the owner and the partner app holds MESSAGING",
                field="owner_permissions",
            )
        body = {
            "solution_name": check_text(solution_name, field="solution_name", max_length=75),
            "partner_app_id": check_numeric_id(partner_app_id, field="partner_app_id"),
            "owner_permissions": owner,
            "partner_permissions": partner,
        }
        if len(body["solution_name"]) < 2:
            raise GraphRequestValidationError(
                "solution_name must be 2..75 characters", field="solution_name"
            )
        obj = as_object(await self._on_scope(CREATE_SOLUTION, body=body), what="create solution")
        solution_id = req_str(obj, "solution_id", what="create solution")
        return CreatedObject(id=solution_id, success=None, raw=obj)

    async def list_solutions(
        self,
        *,
        role: str | None = None,
        fields: str | list[str] | None = None,
        limit: int | None = None,
        after: str | None = None,
        before: str | None = None,
    ) -> Page[Solution]:
        """``GET /{app_id}/whatsapp_business_solutions``; ``role`` OWNER or PARTNER narrows it."""
        params = {
            "role": opt_choice(role, field="role", choices=SOLUTION_ROLES),
            **listing_query(fields, limit, after, before),
        }
        raw = await self._on_scope(LIST_APP_SOLUTIONS, params)
        return Page.from_api(raw, Solution.from_api, what="app solutions")

    list_connected_client_businesses = page_reader(
        LIST_CONNECTED_CLIENTS,
        listing,
        BusinessSummary.from_api,
        what="connected client businesses",
    )


class SolutionLifecycle(SolutionScoped):
    """The lifecycle of one Multi-Partner Solution (``SolutionClient``)."""

    async def get_solution(self, *, fields: str | list[str] | None = None) -> Solution:
        """``GET /{solution_id}``."""
        raw = await self._on_scope(GET_SOLUTION, {"fields": check_fields(fields)})
        return Solution.from_api(raw)

    async def get_access_token(self, *, business_id: str) -> SolutionAccessToken:
        """``GET /{solution_id}/access_token?business_id=...``: a token for one client's assets."""
        params = {"business_id": check_numeric_id(business_id, field="business_id")}
        return SolutionAccessToken.from_api(await self._on_scope(SOLUTION_ACCESS_TOKEN, params))

    async def accept_invitation(
        self, *, partner_app_id: str, log_session_id: str | None = None
    ) -> Success:
        """``POST /{solution_id}/accept``: the partner app joins the solution."""
        body = {"partner_app_id": check_numeric_id(partner_app_id, field="partner_app_id")}
        if (session := opt_text(log_session_id, field="log_session_id", max_length=256)):
            body["log_session_id"] = session
        return Success.from_api(await self._on_scope(ACCEPT_SOLUTION, body=body))

    async def reject_request(
        self,
        *,
        request_type: str,
        rejection_reason: str | None = None,
        partner_app_id: str | None = None,
    ) -> Success:
        """``POST /{solution_id}/reject`` a partnership or deactivation request."""
        body = {
            "request_type": check_choice(
                request_type, field="request_type", choices=SOLUTION_REQUEST_TYPES
            )
        }
        if (reason := _reason(rejection_reason, field="rejection_reason")) is not None:
            body["rejection_reason"] = reason
        if partner_app_id is not None:
            body["partner_app_id"] = check_numeric_id(partner_app_id, field="partner_app_id")
        return Success.from_api(await self._on_scope(REJECT_SOLUTION, body=body))

    async def send_deactivation_request(self, *, reason: str | None = None) -> Success:
        """``POST /{solution_id}/send_deactivation_request`` (the solution owner asks)."""
        body = {} if (text := _reason(reason, field="reason")) is None else {"reason": text}
        return Success.from_api(await self._on_scope(SEND_DEACTIVATION, body=body))

    async def accept_deactivation_request(
        self, *, fields: str | list[str] | None = None
    ) -> Solution:
        """``POST /{solution_id}/accept_deactivation_request``: the solution is deactivated."""
        raw = await self._on_scope(ACCEPT_DEACTIVATION, {"fields": check_fields(fields)}, {})
        return Solution.from_api(raw)

    async def reject_deactivation_request(
        self, *, fields: str | list[str] | None = None
    ) -> Solution:
        """``POST /{solution_id}/reject_deactivation_request``: the solution stays active."""
        raw = await self._on_scope(
            REJECT_DEACTIVATION,
            {"fields": check_fields(fields)},
            {"reject_deactivation_request": True},
        )
        return Solution.from_api(raw)


class WabaSolutions(WabaScoped):
    """The solutions of one WhatsApp Business Account and migration off them (``WABAClient``)."""

    list_solutions = page_reader(
        LIST_WABA_SOLUTIONS, listing, Solution.from_api, what="WABA solutions"
    )

    async def set_solution_migration_intent(
        self, *, solution_id: str | None = None, app_id: str | None = None
    ) -> CreatedObject:
        """``POST /{waba_id}/set_solution_migration_intent``: tag the WABA for migration.

        Give the destination ``solution_id`` (to another solution) or ``app_id`` (off
        solutions, to a Tech Provider's app). The result's ``id`` is the migration intent.
        """
        if (solution_id is None) == (app_id is None):
            raise GraphRequestValidationError(
                "give exactly one of solution_id and app_id", field="solution_id"
            )
        body = (
            {"solution_id": check_numeric_id(solution_id, field="solution_id")}
            if solution_id is not None
            else {"app_id": check_numeric_id(app_id, field="app_id")}
        )
        obj = as_object(await self._on_scope(SET_MIGRATION_INTENT, body=body), what="migration")
        intent = opt_str(obj, "id") or req_str(obj, "migration_intent_id", what="migration")
        return CreatedObject(id=intent, success=None, raw=obj)

    async def get_migration_intent(
        self, *, migration_intent_id: str, fields: str | list[str] | None = None
    ) -> MigrationIntent:
        """``GET /{migration_intent_id}``."""
        params = {"migration_intent_id": migration_intent_id, "fields": check_fields(fields)}
        return MigrationIntent.from_api(await self._on_node(GET_MIGRATION_INTENT, params))
