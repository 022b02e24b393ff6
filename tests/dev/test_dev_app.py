"""The dev routes over a real socket: the token, the signed webhook path, sends, statuses."""

from __future__ import annotations

import json
from typing import Any

import httpx
import pytest
import trio
from prometheus_client import CollectorRegistry

from svc.cli._runtime import build_app

from .conftest import DevService, bot_reply

pytestmark = pytest.mark.slow

KERRY = {"name": "Kerry", "phone": "16505551234"}
SHEENA = {"name": "Sheena", "bsuid": "US.13491208655302741918", "username": "sheena"}


async def _act(service: DevService, user: dict[str, str], **action: Any) -> dict[str, Any]:
    async with service.client() as client:
        response = await client.post("/dev/api/act", json={"user": user, "action": action})
    assert response.status_code == 200, response.text
    record: dict[str, Any] = response.json()
    return record


async def test_every_dev_route_needs_the_token(dev_service: DevService) -> None:
    token = dev_service.folder.token
    async with httpx.AsyncClient(base_url=dev_service.url) as anonymous:
        for path in ("/dev/", "/dev/events", "/dev/api/state", "/dev/static/dev.js", "/dev/nope"):
            assert (await anonymous.get(path)).status_code == 401, path
            wrong = await anonymous.get(path, headers={"X-Svc-Dev-Token": token + "x"})
            assert wrong.status_code == 403, path
        post = await anonymous.post("/dev/api/act", json={"user": KERRY, "action": {}})
        assert post.status_code == 401
        assert (await anonymous.get("/dev/?token=guess")).status_code == 403
        opened = await anonymous.get(f"/dev/?token={token}")
        assert opened.status_code == 303
        assert opened.headers["location"] == "/dev/"
        cookie = opened.headers["set-cookie"]
        assert "HttpOnly" in cookie and "SameSite=Strict" in cookie and "Path=/dev" in cookie
        page = await anonymous.get("/dev/", headers={"Cookie": f"svc_dev_token={token}"})
        assert page.status_code == 200
        assert "svc dev" in page.text
        assert "script-src 'self'" in page.headers["content-security-policy"]
        # Another site cannot drive the actions: a loopback Host and a JSON body only.
        foreign = await anonymous.get(
            "/dev/api/state", headers={"X-Svc-Dev-Token": token, "Host": "evil.example:80"}
        )
        assert foreign.status_code == 403
        form = await anonymous.post(
            "/dev/api/act",
            content=b"user=x",
            headers={"X-Svc-Dev-Token": token, "Content-Type": "application/x-www-form-urlencoded"},
        )
        assert form.status_code == 415
    assert dev_service.session.records() == []


async def test_a_serve_app_has_no_dev_routes(dev_service: DevService) -> None:
    app = build_app(dev_service.plan, None, CollectorRegistry())
    async with httpx.AsyncClient(
        transport=httpx.ASGITransport(app=app), base_url="http://127.0.0.1"
    ) as client:
        for path in ("/dev/", f"/dev/?token={dev_service.folder.token}", "/dev/events"):
            assert (await client.get(path)).status_code == 404, path


async def test_a_text_gets_buttons_and_a_tap_gets_its_title(dev_service: DevService) -> None:
    sent = await _act(dev_service, KERRY, kind="text", text="hello")
    assert sent["answer"] == {
        "status": 200,
        "body": {"status": "ok", "received": 1, "dispatched": 1, "skipped": 0, "queued": 1},
    }
    buttons = await dev_service.wait_for(
        lambda r: r["type"] == "send" and (r.get("payload") or {}).get("type") == "interactive"
    )
    assert buttons["chat"] == "16505551234"
    assert buttons["outcome"] == "sent"
    interactive = buttons["payload"]["interactive"]
    assert interactive["body"]["text"] == "You said *hello*. Tea or coffee?"
    message_id = buttons["message_id"]
    for status in ("sent", "delivered"):
        await dev_service.wait_for(
            lambda r, s=status: r["type"] == "delivery" and r["origin"] == "status"
            and r["raw"]["entry"][0]["changes"][0]["value"]["statuses"][0]["status"] == s
            and r["message_id"] == message_id
        )
    await _act(dev_service, KERRY, kind="button_reply", id="tea", title="Tea", context=message_id)
    await dev_service.wait_for(lambda r: bot_reply(r, "You chose Tea"))
    said = "dev: Kerry (16505551234) -> bot text"
    assert any(line.startswith(said) for line in dev_service.lines)


async def test_a_user_without_a_phone_is_answered_by_bsuid_and_read_when_open(
    dev_service: DevService,
) -> None:
    async with dev_service.client() as client:
        opened = await client.post("/dev/api/open", json={"chat": SHEENA["bsuid"]})
        assert opened.status_code == 200
    await _act(dev_service, SHEENA, kind="location", latitude=1.5, longitude=2.5, name="Home")
    reply = await dev_service.wait_for(lambda r: bot_reply(r, "Got a location"))
    assert reply["payload"]["recipient"] == SHEENA["bsuid"]
    assert reply["chat"] == SHEENA["bsuid"]
    read = await dev_service.wait_for(
        lambda r: r["type"] == "delivery" and r["origin"] == "status"
        and r["raw"]["entry"][0]["changes"][0]["value"]["statuses"][0]["status"] == "read"
    )
    status = read["raw"]["entry"][0]["changes"][0]["value"]["statuses"][0]
    assert status["recipient_user_id"] == SHEENA["bsuid"]
    assert read["answer"]["status"] == 200


async def test_the_next_send_fails_with_the_chosen_platform_error(dev_service: DevService) -> None:
    async with dev_service.client() as client:
        armed = await client.post("/dev/api/fail", json={"failure": "outside_window"})
        assert armed.json() == {"armed": "outside_window"}
        refused = await client.post("/dev/api/fail", json={"failure": "bogus"})
        assert refused.status_code == 400
    await _act(dev_service, KERRY, kind="text", text="late")
    failed = await dev_service.wait_for(lambda r: r["type"] == "send" and r["outcome"] == "failed")
    assert failed["status"] == 400
    assert failed["answer"]["error"]["code"] == 131047
    assert failed["failure"] == "outside_window"
    # The refusal is the send's answer: the run's retry replays it, nothing goes out again.
    await dev_service.wait_for(lambda r: r["type"] == "send" and r["outcome"] == "replayed")
    assert dev_service.session.transport.next_failure is None


async def test_a_dead_letter_can_be_retried_and_dropped(dev_service: DevService) -> None:
    await _act(dev_service, KERRY, kind="text", text="fail")
    async with dev_service.client() as client:
        with trio.fail_after(10):
            while not (items := (await client.get("/dev/api/dead")).json()["items"]):
                await trio.sleep(0.05)
        [item] = items
        assert item["kind"] == "message"
        assert item["attempts"] == 2
        retried = await client.post("/dev/api/dead/retry", json={"id": item["id"]})
        assert retried.json() == {"done": True}
        with trio.fail_after(10):
            while not (items := (await client.get("/dev/api/dead")).json()["items"]):
                await trio.sleep(0.05)
        dropped = await client.post("/dev/api/dead/drop", json={"id": item["id"]})
        assert dropped.json() == {"done": True}
        assert (await client.get("/dev/api/dead")).json() == {"items": []}
        again = await client.post("/dev/api/dead/drop", json={"id": item["id"]})
        assert again.status_code == 404


async def test_the_event_stream_replays_then_resumes_after_the_last_id(
    dev_service: DevService,
) -> None:
    await _act(dev_service, KERRY, kind="text", text="hello")
    await dev_service.wait_for(lambda r: r["type"] == "send")
    boot = dev_service.session.boot

    async def first_ids(headers: dict[str, str], count: int) -> list[str]:
        """The first ``count`` event ids of a stream read from a plain socket."""
        host, port = dev_service.url.removeprefix("http://").rsplit(":", 1)
        extra = "".join(f"{name}: {value}\r\n" for name, value in headers.items())
        request = (
            f"GET /dev/events HTTP/1.1\r\nHost: {host}:{port}\r\n"
            f"X-Svc-Dev-Token: {dev_service.folder.token}\r\n{extra}\r\n"
        )
        stream = await trio.open_tcp_stream(host, int(port))
        async with stream:
            await stream.send_all(request.encode("latin-1"))
            seen = b""
            while seen.count(b"\nid: ") < count:
                seen += await stream.receive_some()
        head, _, events = seen.decode().partition("\r\n\r\n")
        assert "text/event-stream" in head
        ids = [line.removeprefix("id: ") for line in events.splitlines() if line[:4] == "id: "]
        return ids[:count]

    with trio.fail_after(10):
        assert await first_ids({}, 2) == [f"{boot}:1", f"{boot}:2"]
        assert await first_ids({"Last-Event-ID": f"{boot}:1"}, 1) == [f"{boot}:2"]
        # An id that names no record of this boot replays from the start.
        for odd in ("9" * 5000, "\xb2", "-1", ""):
            assert await first_ids({"Last-Event-ID": f"{boot}:{odd}"}, 1) == [f"{boot}:1"]


async def test_no_secret_reaches_a_record_or_a_line(dev_service: DevService) -> None:
    await _act(dev_service, KERRY, kind="text", text="hello")
    await dev_service.wait_for(lambda r: r["type"] == "send")
    async with dev_service.client() as client:
        state = (await client.get("/dev/api/state")).text
    shown = json.dumps(dev_service.session.records()) + state + "\n".join(dev_service.lines)
    for name in ("SVC_APP_SECRET", "SVC_SERVICE_TOKEN", "SVC_INBOX_KEY", "SVC_VERIFY_TOKEN"):
        assert dev_service.folder.secrets[name] not in shown, name
