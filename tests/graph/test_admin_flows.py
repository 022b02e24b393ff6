"""Flows helpers: CRUD, multipart Flow JSON upload (validated first), publish and deprecate."""

from __future__ import annotations

import json
from email.parser import BytesParser
from email.policy import HTTP
from typing import Any

import pytest

from svc.graph import (
    FlowAssetsUpdateResult,
    FlowCreated,
    FlowJsonValidationError,
    GraphRequestValidationError,
)

from ._admin_wire import VERSION, WABA_ID, Upstream, assert_wire

FLOW_ID = "1234567890123456"
FLOW_JSON = {
    "version": "7.0",
    "screens": [
        {
            "id": "WELCOME",
            "title": "Welcome",
            "terminal": True,
            "layout": {
                "type": "SingleColumnLayout",
                "children": [{"type": "TextBody", "text": "Hello, world"}],
            },
        }
    ],
}
COMPACT = json.dumps(FLOW_JSON, separators=(",", ":")).encode()


async def test_list_create_get_update_delete_publish_deprecate() -> None:
    flow = {
        "id": FLOW_ID,
        "name": "Sign up",
        "status": "DRAFT",
        "categories": ["SIGN_UP"],
        "validation_errors": [],
        "json_version": "7.0",
        "data_api_version": "3.0",
        "endpoint_uri": "https://flows.example.com/endpoint",
        "preview": {
            "preview_url": "https://business.facebook.com/wa/manage/flows/55/preview/?token=x",
            "expires_at": "2026-12-01T00:00:00+0000",
        },
    }
    created = {"id": FLOW_ID, "success": True, "validation_errors": []}
    up = Upstream(
        {"data": [flow], "paging": {"cursors": {"before": "QVFI", "after": "QVFJ"}}},
        created,
        flow,
        {"success": True},
        {"success": True},
        {"success": True},
        {"success": True},
    )
    waba = up.waba()
    page = await waba.list_flows(limit=20)
    made = await waba.create_flow(
        name="Sign up",
        categories=["SIGN_UP"],
        endpoint_uri="https://flows.example.com/endpoint",
        flow_json=FLOW_JSON,
        publish=False,
    )
    fields = ["name", "status", "preview.invalidate(false)"]
    got = await waba.get_flow(flow_id=FLOW_ID, fields=fields)
    await waba.update_flow(flow_id=FLOW_ID, name="Sign up v2", categories=["SIGN_UP", "OTHER"])
    await waba.delete_flow(flow_id=FLOW_ID)
    await waba.publish_flow(flow_id=FLOW_ID)
    await waba.deprecate_flow(flow_id=FLOW_ID)
    assert_wire(up.requests[0], "GET", f"/{WABA_ID}/flows", query={"limit": "20"})
    assert_wire(
        up.requests[1],
        "POST",
        f"/{WABA_ID}/flows",
        body={
            "name": "Sign up",
            "categories": ["SIGN_UP"],
            "endpoint_uri": "https://flows.example.com/endpoint",
            "flow_json": COMPACT.decode(),
            "publish": False,
        },
    )
    assert_wire(
        up.requests[2],
        "GET",
        f"/{FLOW_ID}",
        query={"fields": "name,status,preview.invalidate(false)"},
    )
    assert_wire(
        up.requests[3],
        "POST",
        f"/{FLOW_ID}",
        body={"name": "Sign up v2", "categories": ["SIGN_UP", "OTHER"]},
    )
    assert_wire(up.requests[4], "DELETE", f"/{FLOW_ID}")
    assert_wire(up.requests[5], "POST", f"/{FLOW_ID}/publish")
    assert_wire(up.requests[6], "POST", f"/{FLOW_ID}/deprecate")
    assert page.items[0].categories == ("SIGN_UP",)
    assert made == FlowCreated(id=FLOW_ID, success=True, validation_errors=(), raw=created)
    assert got.preview is not None and got.preview.expires_at == "2026-12-01T00:00:00+0000"
    assert got.json_version == "7.0"


async def test_assets_list() -> None:
    answer = {
        "data": [
            {
                "name": "flow.json",
                "asset_type": "FLOW_JSON",
                "download_url": "https://mmg.whatsapp.net/m1/v/t24/flow.json",
            }
        ],
        "paging": {"cursors": {"before": "QVFI", "after": "QVFJ"}},
    }
    up = Upstream(answer)
    page = await up.waba().list_flow_assets(flow_id=FLOW_ID)
    assert_wire(up.only, "GET", f"/{FLOW_ID}/assets")
    asset = page.items[0]
    assert (asset.name, asset.asset_type) == ("flow.json", "FLOW_JSON")


def parse_multipart(content_type: str, body: bytes) -> dict[str, tuple[str | None, bytes]]:
    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + body
    )
    parts: dict[str, tuple[str | None, bytes]] = {}
    for part in message.iter_parts():
        name = part.get_param("name", header="content-disposition")
        payload = part.get_payload(decode=True)
        assert isinstance(name, str) and isinstance(payload, bytes)
        parts[name] = (part.get_filename(), payload)
    return parts


async def test_update_flow_json_uploads_validated_multipart() -> None:
    answer = {
        "success": True,
        "validation_errors": [
            {
                "error": "INVALID_PROPERTY_VALUE",
                "error_type": "FLOW_JSON_ERROR",
                "message": "Invalid value found for property 'type'.",
                "line_start": 10,
                "line_end": 10,
                "column_start": 21,
                "column_end": 34,
                "pointers": [{"path": "screens[0].layout.children[0].type"}],
            }
        ],
    }
    up = Upstream(answer)
    result = await up.waba().update_flow_json(flow_id=FLOW_ID, flow_json=json.dumps(FLOW_JSON))
    request = up.only
    assert request.method == "POST"
    assert request.url.raw_path.decode() == f"/{VERSION}/{FLOW_ID}/assets"
    content_type = request.headers["content-type"]
    assert content_type.startswith("multipart/form-data; boundary=")
    parts = parse_multipart(content_type, request.content)
    assert parts == {
        "name": (None, b"flow.json"),
        "asset_type": (None, b"FLOW_JSON"),
        "file": ("flow.json", COMPACT),
    }
    assert isinstance(result, FlowAssetsUpdateResult)
    assert result.success is True
    issue = result.validation_errors[0]
    assert (issue.error, issue.line_start, issue.column_end) == ("INVALID_PROPERTY_VALUE", 10, 34)


async def test_oversized_flow_json_is_refused_before_upload() -> None:
    too_many_screens = {**FLOW_JSON, "screens": FLOW_JSON["screens"] * 51}
    up = Upstream()
    with pytest.raises(FlowJsonValidationError) as info:
        await up.waba().update_flow_json(flow_id=FLOW_ID, flow_json=too_many_screens)
    assert info.value.limit == "max_screens"
    with pytest.raises(FlowJsonValidationError):
        await up.waba().create_flow(name="x", categories=["OTHER"], flow_json={"version": "7.0"})
    assert up.requests == []


@pytest.mark.parametrize(
    ("call", "kwargs"),
    [
        ("create_flow", {"name": "", "categories": ["OTHER"]}),
        ("create_flow", {"name": "x", "categories": []}),
        ("create_flow", {"name": "x", "categories": ["NOT_A_CATEGORY"]}),
        ("create_flow", {"name": "x", "categories": ["OTHER"], "endpoint_uri": "http://x.example"}),
        ("create_flow", {"name": "x", "categories": ["OTHER"], "publish": True}),
        ("create_flow", {"name": "x", "categories": ["OTHER"], "clone_flow_id": "1 2"}),
        ("get_flow", {"flow_id": ""}),
        ("get_flow", {"flow_id": "%2e%2e"}),
        ("update_flow", {"flow_id": FLOW_ID}),
        ("delete_flow", {"flow_id": "a?b"}),
        ("publish_flow", {"flow_id": "a#b"}),
        ("deprecate_flow", {"flow_id": ".."}),
        ("list_flow_assets", {"flow_id": FLOW_ID, "limit": -1}),
        ("update_flow_json", {"flow_id": FLOW_ID, "flow_json": "not json"}),
        ("update_flow_json", {"flow_id": "a/b", "flow_json": FLOW_JSON}),
    ],
)
async def test_rejections_send_nothing(call: str, kwargs: dict[str, Any]) -> None:
    up = Upstream()
    with pytest.raises(GraphRequestValidationError):
        await getattr(up.waba(), call)(**kwargs)
    assert up.requests == []
