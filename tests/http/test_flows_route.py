"""POST <flows path>: the Flows data endpoint mounted in the service."""

from __future__ import annotations

from dataclasses import replace
from typing import Any

import pytest

from svc.flows import (
    FlowPrivateKey,
    FlowRequest,
    FlowScreen,
    FlowTokenNoLongerValidError,
    load_flow_private_key,
)
from svc.http import FlowsEndpoint, ServiceError
from tests._support import sign

from ..flows._platform import platform_key, private_pem, seal_request
from .conftest import APP_SECRET, SECRET_VALUES, AppFactory

FLOWS = "/flows/endpoint"


@pytest.fixture(scope="module")
def flow_key() -> FlowPrivateKey:
    return load_flow_private_key(private_pem(platform_key()))


async def handler(request: FlowRequest) -> Any:
    if request.action == "INIT":
        return FlowScreen(screen="WELCOME", data={"greeting": "hi"})
    raise FlowTokenNoLongerValidError("Session expired, please start again.")


def _client(make_app: AppFactory, profile: Any, key: FlowPrivateKey) -> Any:
    app = make_app(
        profile=replace(profile, flows_path=FLOWS),
        flows=FlowsEndpoint(handler=handler, private_key=key),
    )
    return app.test_client()


async def test_round_trip_through_the_service(
    make_app: AppFactory, profile: Any, flow_key: FlowPrivateKey
) -> None:
    sealed = seal_request({"version": "3.0", "action": "INIT", "flow_token": "tok"})
    response = await _client(make_app, profile, flow_key).post(
        FLOWS,
        data=sealed.body,
        headers={"X-Hub-Signature-256": sign(body=sealed.body, secret=APP_SECRET)},
    )
    assert response.status_code == 200
    assert response.content_type.startswith("text/plain")
    assert sealed.open_response(await response.get_data()) == {
        "screen": "WELCOME",
        "data": {"greeting": "hi"},
    }


async def test_ping_bad_signature_undecryptable_and_427(
    make_app: AppFactory, profile: Any, flow_key: FlowPrivateKey
) -> None:
    client = _client(make_app, profile, flow_key)
    ping = seal_request({"version": "3.0", "action": "ping"})
    answer = await client.post(
        FLOWS,
        data=ping.body,
        headers={"X-Hub-Signature-256": sign(body=ping.body, secret=APP_SECRET)},
    )
    assert ping.open_response(await answer.get_data()) == {"data": {"status": "active"}}
    unsigned = await client.post(
        FLOWS, data=ping.body, headers={"X-Hub-Signature-256": sign(body=ping.body, secret="other")}
    )
    assert unsigned.status_code == 432
    garbage = b'{"encrypted_flow_data":"AAAA","encrypted_aes_key":"AAAA","initial_vector":"AAAA"}'
    bad = await client.post(
        FLOWS, data=garbage, headers={"X-Hub-Signature-256": sign(body=garbage, secret=APP_SECRET)}
    )
    assert bad.status_code == 421
    expired = seal_request({"version": "3.0", "action": "data_exchange", "data": {}})
    gone = await client.post(
        FLOWS,
        data=expired.body,
        headers={"X-Hub-Signature-256": sign(body=expired.body, secret=APP_SECRET)},
    )
    assert gone.status_code == 427
    assert await gone.get_json() == {"error_msg": "Session expired, please start again."}
    for response in (answer, unsigned, bad, gone):
        text = await response.get_data(as_text=True)
        for secret in SECRET_VALUES:
            assert secret not in text


async def test_oversized_flow_request_is_413_before_any_work(
    make_app: AppFactory, profile: Any, flow_key: FlowPrivateKey
) -> None:
    body = b"x" * 131_073
    response = await _client(make_app, profile, flow_key).post(
        FLOWS, data=body, headers={"X-Hub-Signature-256": sign(body=body, secret=APP_SECRET)}
    )
    assert response.status_code == 413


def test_flows_need_path_handler_and_key(
    make_app: AppFactory, profile: Any, flow_key: FlowPrivateKey
) -> None:
    with pytest.raises(ServiceError) as caught:
        make_app(flows=FlowsEndpoint(handler=handler, private_key=flow_key))
    assert caught.value.code == "invalid_config"
    with pytest.raises(ServiceError):
        make_app(profile=replace(profile, flows_path=FLOWS))
    with pytest.raises(ServiceError):
        make_app(
            profile=replace(profile, flows_path=FLOWS),
            flows=FlowsEndpoint(handler=handler, private_key=b"pem bytes"),  # type: ignore[arg-type]
        )


async def test_flows_route_is_in_the_inventory_and_openapi(
    make_app: AppFactory, profile: Any, flow_key: FlowPrivateKey
) -> None:
    client = _client(make_app, profile, flow_key)
    document = await (await client.get("/openapi.json")).get_json()
    assert "security" not in document["paths"][FLOWS]["post"]
