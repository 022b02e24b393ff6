"""Schedules of a WhatsApp Business Account: business hours, automated-response windows, ..."""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ._admin_checks import (
    FIELDS_PARAM,
    PAGING_PARAMS,
    WabaScoped,
    check_bool,
    check_choice,
    check_id_list,
    check_items,
    check_keys,
    check_text,
    listing_query,
    opt_choice,
    opt_text,
)
from ._endpoint import Param, route
from ._errors import GraphRequestValidationError
from ._parse import ApiRecord, Raw
from ._results import CreatedObject, Page
from ._validate import ISO_DATE, check_match

__all__ = ["SCHEDULE_TYPES", "WEEKDAYS", "Schedules", "WabaSchedule"]

SCHEDULE_TYPES: Final = (
    "BUSINESS_HOURS",
    "AUTOMATED_RESPONSE",
    "MESSAGE_CAMPAIGN",
    "MAINTENANCE_WINDOW",
    "CUSTOM",
)
WEEKDAYS: Final = (
    "MONDAY", "TUESDAY", "WEDNESDAY", "THURSDAY", "FRIDAY", "SATURDAY", "SUNDAY",
)
SCHEDULE_SORTS: Final = (
    "created_time.asc", "created_time.desc", "updated_time.asc", "updated_time.desc",
)
RECURRENCE_FREQUENCIES: Final = ("DAILY", "WEEKLY", "MONTHLY", "YEARLY")
MAX_SCHEDULE_FILTERS: Final = 10

_CLOCK = re.compile(r"([01]?[0-9]|2[0-3]):[0-5][0-9]")
_TIMEZONE = re.compile(r"[A-Za-z0-9_+-]{1,32}(/[A-Za-z0-9_+-]{1,32}){0,2}")

LIST_SCHEDULES = route(
    "GET",
    "/{waba_id}/schedules",
    **FIELDS_PARAM,
    filtering=Param(in_="query"),
    sort=Param(in_="query"),
    **PAGING_PARAMS,
)
CREATE_SCHEDULE = route("POST", "/{waba_id}/schedules")


@dataclass(frozen=True, slots=True, kw_only=True)
class WabaSchedule(ApiRecord):
    """A schedule: its window (``start_time``..``end_time``, ``HH:MM``), days and status."""

    _what = "WABA schedule"

    id: str | None
    name: str | None
    status: str | None
    schedule_type: str | None
    start_time: str | None
    end_time: str | None
    timezone: str | None
    days_of_week: tuple[str, ...]
    is_active: bool | None
    raw: Raw


def _clock(value: object, *, field: str) -> str:
    return check_match(value, _CLOCK, field, f"{field} must be a time of day HH:MM")


def _recurrence(value: object) -> dict[str, object]:
    pattern = check_keys(
        value,
        field="recurrence_pattern",
        allowed=("frequency", "interval", "end_date"),
        required=("frequency",),
    )
    out: dict[str, object] = {
        "frequency": check_choice(
            pattern["frequency"], field="recurrence_pattern.frequency",
            choices=RECURRENCE_FREQUENCIES,
        )
    }
    interval = pattern.get("interval")
    if interval is not None:
        if isinstance(interval, bool) or not isinstance(interval, int) or not 1 <= interval <= 365:
            raise GraphRequestValidationError(
                "recurrence_pattern.interval must be an integer 1..365", field="recurrence_pattern"
            )
        out["interval"] = interval
    end_date = pattern.get("end_date")
    if end_date is not None:
        out["end_date"] = check_match(
            end_date, ISO_DATE,
            "recurrence_pattern", "recurrence_pattern.end_date must be YYYY-MM-DD",
        )
    return out


def _filtering(value: object) -> str | None:
    """Filter conditions (``{"field", "operator", "value"}``), sent as the JSON the edge reads."""
    if value is None:
        return None
    items = check_items(
        value,
        field="filtering",
        max_items=MAX_SCHEDULE_FILTERS,
        of="conditions",
        items="conditions",
        allow_empty=False,
    )
    conditions: list[dict[str, Any]] = []
    for item in items:
        condition = check_keys(
            item,
            field="filtering",
            allowed=("field", "operator", "value"),
            required=("field", "operator", "value"),
        )
        name = check_choice(
            condition["field"], field="filtering", choices=("status", "schedule_type", "is_active")
        )
        operator = check_text(condition["operator"], field="filtering", max_length=32)
        operand = condition["value"]
        if not isinstance(operand, str | bool) or (isinstance(operand, str) and len(operand) > 64):
            raise GraphRequestValidationError(
                "filtering values must be short strings or booleans", field="filtering"
            )
        conditions.append({"field": name, "operator": operator, "value": operand})
    return json.dumps(conditions, separators=(",", ":"))


class Schedules(WabaScoped):
    """The schedules of one WhatsApp Business Account (``WABAClient``)."""

    async def list_schedules(
        self,
        *,
        filtering: list[Mapping[str, Any]] | None = None,
        sort: str | None = None,
        fields: str | list[str] | None = None,
        limit: int | None = None,
        after: str | None = None,
        before: str | None = None,
    ) -> Page[WabaSchedule]:
        """``GET /{waba_id}/schedules``; ``sort`` is one of ``SCHEDULE_SORTS``."""
        params = {
            "filtering": _filtering(filtering),
            "sort": opt_choice(sort, field="sort", choices=SCHEDULE_SORTS),
            **listing_query(fields, limit, after, before),
        }
        raw = await self._on_scope(LIST_SCHEDULES, params)
        return Page.from_api(raw, WabaSchedule.from_api, what="WABA schedules")

    async def create_schedule(
        self,
        *,
        name: str,
        schedule_type: str,
        start_time: str,
        end_time: str,
        description: str | None = None,
        timezone: str | None = None,
        days_of_week: list[str] | None = None,
        is_active: bool | None = None,
        recurrence_pattern: Mapping[str, Any] | None = None,
    ) -> CreatedObject:
        """``POST /{waba_id}/schedules``: a window from ``start_time`` to ``end_time`` (``HH:MM``).

        ``timezone`` is an IANA name such as ``America/New_York``; ``recurrence_pattern`` is
        ``{"frequency": DAILY|WEEKLY|MONTHLY|YEARLY, "interval": 1.., "end_date": YYYY-MM-DD}``.
        """
        body: dict[str, object] = {
            "name": check_text(name, field="name", max_length=100),
            "schedule_type": check_choice(
                schedule_type, field="schedule_type", choices=SCHEDULE_TYPES
            ),
            "start_time": _clock(start_time, field="start_time"),
            "end_time": _clock(end_time, field="end_time"),
        }
        if (text := opt_text(description, field="description", max_length=500)) is not None:
            body["description"] = text
        if timezone is not None:
            body["timezone"] = check_match(
                timezone, _TIMEZONE,
                "timezone", "timezone must be an IANA time zone such as America/New_York",
            )
        if days_of_week is not None:
            body["days_of_week"] = check_id_list(
                days_of_week,
                field="days_of_week",
                min_items=1,
                max_items=len(WEEKDAYS),
                check_item=lambda item, field: check_choice(item, field=field, choices=WEEKDAYS),
            )
        if is_active is not None:
            body["is_active"] = check_bool(is_active, field="is_active")
        if recurrence_pattern is not None:
            body["recurrence_pattern"] = _recurrence(recurrence_pattern)
        raw = await self._on_scope(CREATE_SCHEDULE, body=body)
        return CreatedObject.from_api(raw, what="create schedule")
