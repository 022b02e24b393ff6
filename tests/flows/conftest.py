"""Shared fixtures: the business key (made once) and a signed-request helper."""

from __future__ import annotations

from typing import Any

import pytest

from svc.flows import FlowPrivateKey, FlowResponse, handle_flow_request, load_flow_private_key
from tests._support import sign

from ._platform import APP_SECRET, SealedRequest, platform_key, private_pem, seal_request


@pytest.fixture(scope="session")
def private_key() -> FlowPrivateKey:
    return load_flow_private_key(private_pem(platform_key()))


async def call(
    sealed: SealedRequest | bytes,
    handler: Any,
    private_key: FlowPrivateKey,
    *,
    signature: str | None = "auto",
    **options: Any,
) -> FlowResponse:
    """POST ``sealed`` to the sans-IO endpoint, signed by the platform unless told otherwise."""
    body = sealed.body if isinstance(sealed, SealedRequest) else sealed
    header = sign(body=body, secret=APP_SECRET) if signature == "auto" else signature
    return await handle_flow_request(
        body, header, private_key=private_key, app_secret=APP_SECRET, handler=handler, **options
    )


__all__ = ["call", "seal_request"]
