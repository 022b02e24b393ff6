"""Who may act on a WhatsApp Business Account, and what was done: assigned users and activities."""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Final

from ._admin_checks import (
    FIELDS_PARAM,
    PAGING_PARAMS,
    WabaScoped,
    check_choice,
    check_id_list,
    check_numeric_id,
    listing_query,
)
from ._endpoint import Param, route
from ._errors import GraphRequestValidationError
from ._parse import ApiRecord, Raw, opt_object, opt_str, read_record
from ._results import Page, Success
from ._validate import check_match

__all__ = ["WABA_USER_TASKS", "AssignedUser", "WabaActivity", "WabaUsers"]

WABA_USER_TASKS: Final = (
    "MANAGE",
    "DEVELOP",
    "MANAGE_TEMPLATES",
    "MANAGE_PHONE",
    "VIEW_COST",
    "MANAGE_EXTENSIONS",
    "VIEW_PHONE_ASSETS",
    "MANAGE_PHONE_ASSETS",
    "VIEW_TEMPLATES",
    "VIEW_INSIGHTS",
    "RECEIVE_INCOMING_MESSAGES",
    "MANAGE_BILLING",
    "MANAGE_USERS",
    "MESSAGING",
    "FULL_CONTROL",
)
"""The permission tasks a user can hold on a WhatsApp Business Account."""

_ACTIVITY_TYPE = re.compile(r"[A-Z_]{1,64}")
_TIME = re.compile(r"[0-9]{1,12}|[0-9]{4}-[0-9]{2}-[0-9]{2}(T[0-9:.]{5,15}(Z|[+-][0-9:]{4,5})?)?")

_USERS = "/{waba_id}/assigned_users"
LIST_ASSIGNED_USERS = route(
    "GET",
    _USERS,
    business=Param(in_="query", required=True),
    **FIELDS_PARAM,
    **PAGING_PARAMS,
)
ADD_ASSIGNED_USER = route("POST", _USERS)
REMOVE_ASSIGNED_USER = route("DELETE", _USERS, user=Param(in_="query", required=True))
LIST_ACTIVITIES = route(
    "GET",
    "/{waba_id}/activities",
    **FIELDS_PARAM,
    since=Param(in_="query"),
    until=Param(in_="query"),
    activity_type=Param(in_="query"),
    **PAGING_PARAMS,
)


@dataclass(frozen=True, slots=True, kw_only=True)
class AssignedUser:
    """A user with access to the WABA: ``user_type`` is a business, system or personal user."""

    id: str | None
    name: str | None
    user_type: str | None
    business_id: str | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Raw) -> AssignedUser:
        business = opt_object(raw, "business") or {}
        return read_record(cls, raw, what="assigned user", business_id=opt_str(business, "id"))


@dataclass(frozen=True, slots=True, kw_only=True)
class WabaActivity(ApiRecord):
    """One entry of the WABA's activity log (who did what, and when)."""

    _what = "WABA activity"

    id: str | None
    activity_type: str | None
    timestamp: str | None
    actor_type: str | None
    actor_id: str | None
    actor_name: str | None
    description: str | None
    raw: Raw


def _time(value: object, *, field: str) -> str | int | None:
    if value is None:
        return None
    if isinstance(value, int) and not isinstance(value, bool) and value >= 0:
        return value
    if isinstance(value, str) and _TIME.fullmatch(value):
        return value
    raise GraphRequestValidationError(
        f"{field} must be a Unix timestamp or an ISO 8601 date", field=field
    )


def _activity_types(value: object) -> str | None:
    if value is None:
        return None
    names: Sequence[object]
    if isinstance(value, str):
        names = [value]
    elif isinstance(value, Sequence) and not isinstance(value, bytes) and value:
        names = value
    else:
        raise GraphRequestValidationError(
            "activity_type must be a type or a list of types", field="activity_type"
        )
    checked: list[str] = []
    for name in names:
        checked.append(check_match(
            name, _ACTIVITY_TYPE,
            "activity_type", "activity_type names are upper-case such as USER_ADDED",
        ))
    return ",".join(checked)


class WabaUsers(WabaScoped):
    """Assigned users and the activity log of one WhatsApp Business Account (``WABAClient``)."""

    async def list_assigned_users(
        self,
        *,
        business_id: str,
        fields: str | list[str] | None = None,
        limit: int | None = None,
        after: str | None = None,
        before: str | None = None,
    ) -> Page[AssignedUser]:
        """``GET /{waba_id}/assigned_users?business=...``: users of the portfolio with access."""
        params = {
            "business": check_numeric_id(business_id, field="business_id"),
            **listing_query(fields, limit, after, before),
        }
        raw = await self._on_scope(LIST_ASSIGNED_USERS, params)
        return Page.from_api(raw, AssignedUser.from_api, what="assigned users")

    async def add_assigned_user(self, *, user_id: str, tasks: list[str]) -> Success:
        """``POST /{waba_id}/assigned_users``: give a user ``tasks`` (``WABA_USER_TASKS``)."""
        body = {
            "user": check_numeric_id(user_id, field="user_id"),
            "tasks": check_id_list(
                tasks,
                field="tasks",
                min_items=1,
                max_items=len(WABA_USER_TASKS),
                check_item=lambda item, field: check_choice(
                    item, field=field, choices=WABA_USER_TASKS
                ),
            ),
        }
        return Success.from_api(await self._on_scope(ADD_ASSIGNED_USER, body=body))

    async def remove_assigned_user(self, *, user_id: str) -> Success:
        """``DELETE /{waba_id}/assigned_users?user=...``: the user loses every task."""
        params = {"user": check_numeric_id(user_id, field="user_id")}
        return Success.from_api(await self._on_scope(REMOVE_ASSIGNED_USER, params))

    async def list_activities(
        self,
        *,
        since: int | str | None = None,
        until: int | str | None = None,
        activity_type: str | list[str] | None = None,
        fields: str | list[str] | None = None,
        limit: int | None = None,
        after: str | None = None,
        before: str | None = None,
    ) -> Page[WabaActivity]:
        """``GET /{waba_id}/activities``: the account's activity log, newest first.

        ``since`` and ``until`` are Unix timestamps or ISO 8601 dates.
        """
        params = {
            "since": _time(since, field="since"),
            "until": _time(until, field="until"),
            "activity_type": _activity_types(activity_type),
            **listing_query(fields, limit, after, before),
        }
        raw = await self._on_scope(LIST_ACTIVITIES, params)
        return Page.from_api(raw, WabaActivity.from_api, what="WABA activities")
