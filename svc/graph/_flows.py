"""WhatsApp Flows helpers: Flow CRUD, assets, publish and deprecate.

Flow JSON is checked against the spec's limits (``validate_flow_json``)
before any upload; the asset upload is one ``multipart/form-data`` request.
"""

from __future__ import annotations

import secrets
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ._admin_checks import (
    FIELDS_PARAM,
    PAGING_PARAMS,
    WabaScoped,
    check_bool,
    check_choice,
    check_cursor,
    check_fields,
    check_id,
    check_id_list,
    check_limit,
    check_text,
    check_url,
    listing,
    page_reader,
)
from ._endpoint import route
from ._errors import GraphRequestValidationError
from ._flow_json import validate_flow_json
from ._parse import ApiRecord, Raw, as_object, object_list, opt_bool, read_record
from ._results import Page, Success

__all__ = [
    "FLOW_CATEGORIES",
    "Flow",
    "FlowAsset",
    "FlowAssetsUpdateResult",
    "FlowCreated",
    "FlowMigration",
    "FlowPreview",
    "FlowValidationIssue",
    "Flows",
    "MigratedFlow",
]

FLOW_CATEGORIES: Final = (
    "SIGN_UP",
    "SIGN_IN",
    "APPOINTMENT_BOOKING",
    "LEAD_GENERATION",
    "CONTACT_US",
    "CUSTOMER_SUPPORT",
    "SURVEY",
    "SHOPPING",
    "OTHER",
)
FLOW_ASSET_NAME: Final = "flow.json"
FLOW_ASSET_TYPE: Final = "FLOW_JSON"

LIST_FLOWS = route("GET", "/{waba_id}/flows", **PAGING_PARAMS, **FIELDS_PARAM)
CREATE_FLOW = route("POST", "/{waba_id}/flows")
GET_FLOW = route("GET", "/{flow_id}", **FIELDS_PARAM)
UPDATE_FLOW = route("POST", "/{flow_id}")
DELETE_FLOW = route("DELETE", "/{flow_id}")
LIST_FLOW_ASSETS = route("GET", "/{flow_id}/assets", **PAGING_PARAMS)
UPDATE_FLOW_ASSETS = route("POST", "/{flow_id}/assets")
PUBLISH_FLOW = route("POST", "/{flow_id}/publish")
DEPRECATE_FLOW = route("POST", "/{flow_id}/deprecate")
MIGRATE_FLOWS = route("POST", "/{waba_id}/migrate_flows")
MAX_MIGRATED_FLOWS: Final = 100


# --- results ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowValidationIssue(ApiRecord):
    """One entry of a Flow's ``validation_errors``."""

    _what = "flow validation issue"

    error: str | None
    error_type: str | None
    message: str | None
    line_start: int | None
    line_end: int | None
    column_start: int | None
    column_end: int | None
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowPreview(ApiRecord):
    _what = "flow preview"

    preview_url: str | None
    expires_at: str | None


@dataclass(frozen=True, slots=True, kw_only=True)
class Flow(ApiRecord):
    """A Flow (list item or ``GET /{flow_id}``)."""

    _what = "flow"

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


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowCreated(ApiRecord):
    """``POST /{waba_id}/flows``: the new id and any Flow JSON validation errors."""

    _what = "flow"

    id: str
    success: bool | None
    validation_errors: tuple[FlowValidationIssue, ...]
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowAsset(ApiRecord):
    """An item of ``GET /{flow_id}/assets``."""

    _what = "flow asset"

    name: str | None
    asset_type: str | None
    download_url: str | None
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowAssetsUpdateResult:
    """``POST /{flow_id}/assets``: success plus the platform's Flow JSON validation errors."""

    success: bool
    validation_errors: tuple[FlowValidationIssue, ...]
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> FlowAssetsUpdateResult:
        obj = as_object(raw, what="flow assets")
        return read_record(cls, obj, what="flow assets", success=opt_bool(obj, "success") is True)


@dataclass(frozen=True, slots=True, kw_only=True)
class MigratedFlow(ApiRecord):
    """One Flow of a migration: its name, its id in the source WABA and, when copied, the new
    id (``migrated_id``); a failed one carries the platform's ``error_code`` and message.
    """

    _what = "migrated flow"

    source_name: str | None
    source_id: str | None
    migrated_id: str | None
    error_code: str | None
    error_message: str | None
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class FlowMigration:
    """``POST /{waba_id}/migrate_flows``: the Flows copied and the ones that failed."""

    migrated: tuple[MigratedFlow, ...]
    failed: tuple[MigratedFlow, ...]
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> FlowMigration:
        obj = as_object(raw, what="migrate flows")
        return cls(
            migrated=tuple(map(MigratedFlow.from_api, object_list(obj.get("migrated_flows")))),
            failed=tuple(map(MigratedFlow.from_api, object_list(obj.get("failed_flows")))),
            raw=obj,
        )


# --- helpers ------------------------------------------------------------------


def _categories(values: object) -> list[str]:
    return check_id_list(
        values,
        field="categories",
        min_items=1,
        max_items=len(FLOW_CATEGORIES),
        check_item=lambda item, field: check_choice(item, field=field, choices=FLOW_CATEGORIES),
    )


def _endpoint_uri(value: object) -> str:
    url = check_url(value, field="endpoint_uri")
    if not url.startswith("https://"):
        raise GraphRequestValidationError("endpoint_uri must be https", field="endpoint_uri")
    return url


def flow_json_multipart(flow_json: bytes) -> tuple[bytes, str]:
    """The ``multipart/form-data`` body and content type uploading ``flow_json`` as flow.json."""
    boundary = f"svc-flow-{secrets.token_hex(16)}"
    while boundary.encode() in flow_json:  # pragma: no cover - 128 random bits
        boundary = f"svc-flow-{secrets.token_hex(16)}"
    mark = f"--{boundary}\r\n".encode()
    body = b"".join(
        [
            mark,
            b'Content-Disposition: form-data; name="name"\r\n\r\n',
            FLOW_ASSET_NAME.encode(),
            b"\r\n",
            mark,
            b'Content-Disposition: form-data; name="asset_type"\r\n\r\n',
            FLOW_ASSET_TYPE.encode(),
            b"\r\n",
            mark,
            b'Content-Disposition: form-data; name="file"; filename="flow.json"\r\n',
            b"Content-Type: application/json\r\n\r\n",
            flow_json,
            b"\r\n",
            f"--{boundary}--\r\n".encode(),
        ]
    )
    return body, f"multipart/form-data; boundary={boundary}"


class Flows(WabaScoped):
    """The Flows of one WABA (``WABAClient``); Flow ids go to each call."""

    list_flows = page_reader(
        LIST_FLOWS, listing, Flow.from_api, what="list flows", note=": one page."
    )

    async def create_flow(
        self,
        *,
        name: str,
        categories: list[str],
        clone_flow_id: str | None = None,
        endpoint_uri: str | None = None,
        flow_json: Mapping[str, Any] | str | bytes | None = None,
        publish: bool | None = None,
    ) -> FlowCreated:
        """``POST /{waba_id}/flows``; ``flow_json`` is validated and sent as a JSON string."""
        body: dict[str, object] = {
            "name": check_text(name, field="name", max_length=200),
            "categories": _categories(categories),
        }
        if clone_flow_id is not None:
            body["clone_flow_id"] = check_id(clone_flow_id, field="clone_flow_id")
        if endpoint_uri is not None:
            body["endpoint_uri"] = _endpoint_uri(endpoint_uri)
        if flow_json is not None:
            body["flow_json"] = validate_flow_json(flow_json).decode("utf-8")
        if publish is not None:
            if flow_json is None and check_bool(publish, field="publish"):
                raise GraphRequestValidationError(
                    "publish=True needs flow_json", field="publish"
                )
            body["publish"] = check_bool(publish, field="publish")
        return FlowCreated.from_api(await self._on_scope(CREATE_FLOW, body=body))

    async def get_flow(self, *, flow_id: str, fields: str | list[str] | None = None) -> Flow:
        """``GET /{flow_id}`` with optional ``fields``."""
        params = {"flow_id": flow_id, "fields": check_fields(fields)}
        return Flow.from_api(await self._on_node(GET_FLOW, params))

    async def update_flow(
        self,
        *,
        flow_id: str,
        name: str | None = None,
        categories: list[str] | None = None,
        endpoint_uri: str | None = None,
        application_id: str | None = None,
    ) -> Success:
        """``POST /{flow_id}``: update metadata (Flow JSON goes through ``update_flow_json``)."""
        body: dict[str, object] = {}
        if name is not None:
            body["name"] = check_text(name, field="name", max_length=200)
        if categories is not None:
            body["categories"] = _categories(categories)
        if endpoint_uri is not None:
            body["endpoint_uri"] = _endpoint_uri(endpoint_uri)
        if application_id is not None:
            body["application_id"] = check_id(application_id, field="application_id")
        if not body:
            raise GraphRequestValidationError(
                "update_flow needs name, categories, endpoint_uri or application_id"
            )
        return Success.from_api(await self._on_node(UPDATE_FLOW, {"flow_id": flow_id}, body=body))

    async def delete_flow(self, *, flow_id: str) -> Success:
        """``DELETE /{flow_id}`` (draft Flows only, upstream)."""
        return Success.from_api(await self._on_node(DELETE_FLOW, {"flow_id": flow_id}))

    async def list_flow_assets(
        self, *, flow_id: str, limit: int | None = None, after: str | None = None
    ) -> Page[FlowAsset]:
        """``GET /{flow_id}/assets``."""
        params = {
            "flow_id": flow_id,
            "limit": check_limit(limit),
            "after": check_cursor(after, field="after"),
        }
        raw = await self._on_node(LIST_FLOW_ASSETS, params)
        return Page.from_api(raw, FlowAsset.from_api, what="list flow assets")

    async def update_flow_json(
        self, *, flow_id: str, flow_json: Mapping[str, Any] | str | bytes
    ) -> FlowAssetsUpdateResult:
        """``POST /{flow_id}/assets``: upload ``flow.json`` (asset type ``FLOW_JSON``).

        The document is checked against every Flow JSON limit first and sent
        compact; a ``FlowJsonValidationError`` names the limit broken.
        """
        encoded = validate_flow_json(flow_json)
        body, content_type = flow_json_multipart(encoded)
        raw = await self._on_node(
            UPDATE_FLOW_ASSETS,
            {"flow_id": flow_id},
            body=body,
            headers={"Content-Type": content_type},
        )
        return FlowAssetsUpdateResult.from_api(raw)

    async def publish_flow(self, *, flow_id: str) -> Success:
        """``POST /{flow_id}/publish``."""
        return Success.from_api(await self._on_node(PUBLISH_FLOW, {"flow_id": flow_id}))

    async def deprecate_flow(self, *, flow_id: str) -> Success:
        """``POST /{flow_id}/deprecate``."""
        return Success.from_api(await self._on_node(DEPRECATE_FLOW, {"flow_id": flow_id}))

    async def migrate_flows(
        self, *, source_waba_id: str, source_flow_names: list[str]
    ) -> FlowMigration:
        """``POST /{waba_id}/migrate_flows``: copy Flows, by name, from another WABA into this one.

        Both accounts must belong to the same business portfolio; each copy keeps its name.
        """
        body = {
            "source_waba_id": check_id(source_waba_id, field="source_waba_id"),
            "source_flow_names": check_id_list(
                source_flow_names,
                field="source_flow_names",
                min_items=1,
                max_items=MAX_MIGRATED_FLOWS,
                check_item=lambda item, field: check_text(item, field=field, max_length=200),
            ),
        }
        return FlowMigration.from_api(await self._on_scope(MIGRATE_FLOWS, body=body))
