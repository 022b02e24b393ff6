"""Message template and template group helpers for one WhatsApp Business Account.

Template ``components`` are taken in the platform's own (snake_case)
structure and checked for shape, not rewritten.
"""

from __future__ import annotations

import json
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from ._admin_checks import (
    FIELDS_PARAM,
    PAGING_PARAMS,
    WabaScoped,
    check_bool,
    check_choice,
    check_fields,
    check_id,
    check_id_list,
    check_text,
    opt_text,
    page_reader,
    paging,
    paging_query,
)
from ._endpoint import Param, route
from ._errors import GraphRequestValidationError
from ._optimization import OptimizationSpec, refuse_bid_spec
from ._parse import (
    ApiRecord,
    Raw,
    as_object,
    object_list,
    opt_object,
    opt_str,
    read_record,
    str_tuple,
)
from ._results import CreatedObject, Page, Success, Template
from ._validate import TEMPLATE_LANGUAGE, TEMPLATE_NAME, check_match

__all__ = [
    "TEMPLATE_CATEGORIES",
    "TEMPLATE_GROUP_METRIC_TYPES",
    "TemplateCreated",
    "TemplateGroup",
    "TemplateGroupAnalytics",
    "Templates",
]

TEMPLATE_CATEGORIES: Final = ("AUTHENTICATION", "MARKETING", "UTILITY")
TEMPLATE_STATUSES: Final = (
    "APPROVED", "IN_APPEAL", "PENDING", "REJECTED", "PENDING_DELETION", "DELETED",
    "DISABLED", "PAUSED", "LIMIT_EXCEEDED", "ARCHIVED",
)
TEMPLATE_PARAMETER_FORMATS: Final = ("NAMED", "POSITIONAL")
TEMPLATE_GROUP_METRIC_TYPES: Final = (
    "SENT", "DELIVERED", "READ", "CLICKED", "COST", "REPLIED",
)
TEMPLATE_GROUP_GRANULARITIES: Final = ("DAILY", "HALF_HOUR", "MONTHLY")
MAX_COMPONENTS: Final = 20
MAX_TEMPLATE_GROUP_TEMPLATES: Final = 1000

LIST_TEMPLATES = route(
    "GET",
    "/{waba_id}/message_templates",
    **PAGING_PARAMS,
    **FIELDS_PARAM,
    name=Param(in_="query"),
    status=Param(in_="query"),
    category=Param(in_="query"),
    language=Param(in_="query"),
)
CREATE_TEMPLATE = route("POST", "/{waba_id}/message_templates")
DELETE_TEMPLATE = route(
    "DELETE",
    "/{waba_id}/message_templates",
    name=Param(in_="query", required=True),
    hsm_id=Param(in_="query"),
)
GET_TEMPLATE = route("GET", "/{template_id}", **FIELDS_PARAM)
UPDATE_TEMPLATE = route("POST", "/{template_id}")
LIST_TEMPLATE_GROUPS = route("GET", "/{waba_id}/template_groups", **PAGING_PARAMS)
CREATE_TEMPLATE_GROUP = route("POST", "/{waba_id}/template_groups")
GET_TEMPLATE_GROUP = route("GET", "/{template_group_id}", **FIELDS_PARAM)
UPDATE_TEMPLATE_GROUP = route("POST", "/{template_group_id}")
DELETE_TEMPLATE_GROUP = route("DELETE", "/{template_group_id}")
TEMPLATE_GROUP_ANALYTICS = route(
    "GET",
    "/{waba_id}/template_group_analytics",
    template_group_ids=Param(in_="query", required=True),
    start=Param(in_="query", required=True),
    end=Param(in_="query", required=True),
    granularity=Param(in_="query"),
    metric_types=Param(in_="query"),
)


# --- results ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateCreated(ApiRecord):
    """``POST /{waba_id}/message_templates``: ``{"id", "status", "category"}``."""

    _what = "template"

    id: str
    status: str | None
    category: str | None
    raw: Raw


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
        template_ids = ids or str_tuple(obj.get("template_ids"))
        return read_record(cls, obj, what="template group", template_ids=template_ids)


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateGroupAnalytics(ApiRecord):
    """``GET /{waba_id}/template_group_analytics``: the ``data`` points, as sent."""

    _what = "template group analytics"

    data: tuple[Raw, ...]
    raw: Raw


# --- helpers ------------------------------------------------------------------


def _template_name(value: object, field: str = "name") -> str:
    return check_match(
        value, TEMPLATE_NAME,
        field, f"{field} must be 1..512 lower-case letters, digits or underscores",
    )


def _components(value: object) -> list[dict[str, Any]]:
    """Template components in the platform's structure: 1..20 objects with a string ``type``."""
    if isinstance(value, str | bytes) or not isinstance(value, Sequence):
        raise GraphRequestValidationError("components must be a list", field="components")
    if not 1 <= len(value) <= MAX_COMPONENTS:
        raise GraphRequestValidationError(
            f"components must hold 1..{MAX_COMPONENTS} items", field="components"
        )
    out: list[dict[str, Any]] = []
    for component in value:
        if not isinstance(component, Mapping) or not isinstance(component.get("type"), str):
            raise GraphRequestValidationError(
                "each component must be an object with a string 'type'", field="components"
            )
        for button in component.get("buttons") or ():
            if isinstance(button, Mapping) and ("package_name" in button or
                                               "signature_hash" in button):
                raise GraphRequestValidationError(
                    "OTP buttons take supported_apps: [{package_name, signature_hash}], "
                    "not flat package_name or signature_hash",
                    field="components",
                )
        out.append(dict(component))
    try:
        json.dumps(out, allow_nan=False)
    except (TypeError, ValueError):
        raise GraphRequestValidationError(
            "components must be JSON-serializable", field="components"
        ) from None
    return out


def _optimization_spec(value: object) -> dict[str, object]:
    if not isinstance(value, OptimizationSpec):
        raise GraphRequestValidationError(
            "optimization_spec must be an OptimizationSpec", field="optimization_spec"
        )
    return value.wire()


def _id_array(values: Sequence[str]) -> str:
    """A list query value as the JSON array the Graph API reads (``["a","b"]``)."""
    return json.dumps(list(values), separators=(",", ":"))


def _unix_time(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or value < 0:
        raise GraphRequestValidationError(
            f"{field} must be a Unix timestamp in seconds", field=field
        )
    return value


class Templates(WabaScoped):
    """Message templates and template groups of one WABA (``WABAClient``)."""

    # --- templates

    async def list_templates(
        self,
        *,
        fields: str | list[str] | None = None,
        name: str | None = None,
        status: str | None = None,
        category: str | None = None,
        language: str | None = None,
        limit: int | None = None,
        after: str | None = None,
        before: str | None = None,
    ) -> Page[Template]:
        """``GET /{waba_id}/message_templates`` with optional filters; one page."""
        params = {
            "fields": check_fields(fields),
            "name": None if name is None else check_text(name, field="name", max_length=512),
            "status": None if status is None else check_choice(
                status, field="status", choices=TEMPLATE_STATUSES
            ),
            "category": None if category is None else check_choice(
                category, field="category", choices=TEMPLATE_CATEGORIES
            ),
            "language": None if language is None else _language(language),
            **paging_query(limit, after, before),
        }
        raw = await self._on_scope(LIST_TEMPLATES, params)
        return Page.from_api(raw, Template.from_api, what="list templates")

    async def create_template(
        self,
        *,
        name: str,
        language: str,
        category: str,
        components: list[dict[str, Any]],
        allow_category_change: bool | None = None,
        parameter_format: str | None = None,
        optimization_spec: OptimizationSpec | None = None,
        bid_spec: object = None,
    ) -> TemplateCreated:
        """``POST /{waba_id}/message_templates``: submit a template for review.

        ``optimization_spec`` sets a marketing template's max price (Marketing
        Messages API); a ``bid_spec`` is refused (the platform dropped it).
        """
        refuse_bid_spec(bid_spec)
        body: dict[str, object] = {
            "name": _template_name(name),
            "language": _language(language),
            "category": check_choice(category, field="category", choices=TEMPLATE_CATEGORIES),
            "components": _components(components),
        }
        if allow_category_change is not None:
            body["allow_category_change"] = check_bool(
                allow_category_change, field="allow_category_change"
            )
        if parameter_format is not None:
            body["parameter_format"] = check_choice(
                parameter_format, field="parameter_format", choices=TEMPLATE_PARAMETER_FORMATS
            )
        if optimization_spec is not None:
            if body["category"] != "MARKETING":
                raise GraphRequestValidationError(
                    "optimization_spec (a max price) is for MARKETING templates",
                    field="optimization_spec",
                )
            body["optimization_spec"] = _optimization_spec(optimization_spec)
        return TemplateCreated.from_api(await self._on_scope(CREATE_TEMPLATE, body=body))

    async def get_template(
        self, *, template_id: str, fields: str | list[str] | None = None
    ) -> Template:
        """``GET /{template_id}``."""
        params = {"template_id": template_id, "fields": check_fields(fields)}
        return Template.from_api(await self._on_node(GET_TEMPLATE, params))

    async def update_template(
        self,
        *,
        template_id: str,
        components: list[dict[str, Any]] | None = None,
        category: str | None = None,
        message_send_ttl_seconds: int | None = None,
        optimization_spec: OptimizationSpec | None = None,
        bid_spec: object = None,
    ) -> Success:
        """``POST /{template_id}``: edit components, category, message TTL or max price.

        ``optimization_spec`` changes a marketing template's max price; a
        ``bid_spec`` is refused (the platform dropped it).
        """
        refuse_bid_spec(bid_spec)
        body: dict[str, object] = {}
        if components is not None:
            body["components"] = _components(components)
        if category is not None:
            body["category"] = check_choice(category, field="category", choices=TEMPLATE_CATEGORIES)
        if message_send_ttl_seconds is not None:
            ttl = message_send_ttl_seconds
            if isinstance(ttl, bool) or not isinstance(ttl, int) or not -1 <= ttl <= 2_592_000:
                raise GraphRequestValidationError(
                    "message_send_ttl_seconds must be an integer -1..2592000",
                    field="message_send_ttl_seconds",
                )
            body["message_send_ttl_seconds"] = ttl
        if optimization_spec is not None:
            body["optimization_spec"] = _optimization_spec(optimization_spec)
        if not body:
            raise GraphRequestValidationError(
                "update_template needs components, category, message_send_ttl_seconds "
                "or optimization_spec"
            )
        raw = await self._on_node(UPDATE_TEMPLATE, {"template_id": template_id}, body=body)
        return Success.from_api(raw)

    async def delete_template(self, *, name: str, hsm_id: str | None = None) -> Success:
        """``DELETE /{waba_id}/message_templates?name=...[&hsm_id=...]``.

        Without ``hsm_id`` every language of the template goes; with it, only that one.
        """
        params = {
            "name": _template_name(name),
            "hsm_id": None if hsm_id is None else check_id(hsm_id, field="hsm_id"),
        }
        return Success.from_api(await self._on_scope(DELETE_TEMPLATE, params))

    # --- template groups

    list_template_groups = page_reader(
        LIST_TEMPLATE_GROUPS,
        paging,
        TemplateGroup.from_api,
        what="list template groups",
        note=": one page.",
    )

    async def create_template_group(
        self, *, name: str, template_ids: list[str], description: str | None = None
    ) -> CreatedObject:
        """``POST /{waba_id}/template_groups`` with ``template_ids``."""
        body: dict[str, object] = {
            "name": check_text(name, field="name", max_length=512),
            "template_ids": _template_ids(template_ids),
        }
        if (text := opt_text(description, field="description", max_length=2048,
                             multiline=True)) is not None:
            body["description"] = text
        raw = await self._on_scope(CREATE_TEMPLATE_GROUP, body=body)
        return CreatedObject.from_api(raw, what="create template group")

    async def get_template_group(
        self, *, template_group_id: str, fields: str | list[str] | None = None
    ) -> TemplateGroup:
        """``GET /{template_group_id}``."""
        params = {"template_group_id": template_group_id, "fields": check_fields(fields)}
        return TemplateGroup.from_api(await self._on_node(GET_TEMPLATE_GROUP, params))

    async def update_template_group(
        self,
        *,
        template_group_id: str,
        name: str | None = None,
        description: str | None = None,
        template_ids: list[str] | None = None,
    ) -> Success:
        """``POST /{template_group_id}`` with the fields given."""
        body: dict[str, object] = {}
        if name is not None:
            body["name"] = check_text(name, field="name", max_length=512)
        if (text := opt_text(description, field="description", max_length=2048,
                             multiline=True)) is not None:
            body["description"] = text
        if template_ids is not None:
            body["template_ids"] = _template_ids(template_ids)
        if not body:
            raise GraphRequestValidationError(
                "update_template_group needs name, description or template_ids"
            )
        params = {"template_group_id": template_group_id}
        return Success.from_api(await self._on_node(UPDATE_TEMPLATE_GROUP, params, body=body))

    async def delete_template_group(self, *, template_group_id: str) -> Success:
        """``DELETE /{template_group_id}``."""
        params = {"template_group_id": template_group_id}
        return Success.from_api(await self._on_node(DELETE_TEMPLATE_GROUP, params))

    async def get_template_group_analytics(
        self,
        *,
        template_group_ids: list[str],
        start: int,
        end: int,
        granularity: str | None = None,
        metric_types: list[str] | None = None,
    ) -> TemplateGroupAnalytics:
        """``GET /{waba_id}/template_group_analytics`` over ``start..end`` (Unix seconds)."""
        ids = check_id_list(
            template_group_ids,
            field="template_group_ids",
            min_items=1,
            max_items=100,
            check_item=check_id,
        )
        begin, finish = _unix_time(start, "start"), _unix_time(end, "end")
        if finish <= begin:
            raise GraphRequestValidationError("end must be after start", field="end")
        metrics = None
        if metric_types is not None:
            metrics = check_id_list(
                metric_types,
                field="metric_types",
                min_items=1,
                max_items=len(TEMPLATE_GROUP_METRIC_TYPES),
                check_item=lambda item, field: check_choice(
                    item, field=field, choices=TEMPLATE_GROUP_METRIC_TYPES
                ),
            )
        params = {
            "template_group_ids": _id_array(ids),
            "start": begin,
            "end": finish,
            "granularity": None if granularity is None else check_choice(
                granularity, field="granularity", choices=TEMPLATE_GROUP_GRANULARITIES
            ),
            "metric_types": None if metrics is None else _id_array(metrics),
        }
        raw = await self._on_scope(TEMPLATE_GROUP_ANALYTICS, params)
        return TemplateGroupAnalytics.from_api(raw)


def _language(value: object) -> str:
    return check_match(
        value, TEMPLATE_LANGUAGE, "language", "language must be a locale code such as en or en_US"
    )


def _template_ids(values: object) -> list[str]:
    return check_id_list(
        values,
        field="template_ids",
        min_items=1,
        max_items=MAX_TEMPLATE_GROUP_TEMPLATES,
        check_item=check_id,
    )
