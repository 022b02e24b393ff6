"""No secret, key material or decrypted content in any answer, log line, repr or error message."""

from __future__ import annotations

import base64
import logging
from typing import Any

import pytest

from svc.flows import (
    FlowPrivateKey,
    FlowRequest,
    FlowScreen,
    FlowTokenNoLongerValidError,
    decrypt_request,
    generate_flow_key_pair,
    load_flow_private_key,
)

from ._platform import APP_SECRET, PASSPHRASE, platform_key, private_pem, seal_request
from .conftest import call

TOKEN = "tok-SECRET-7c1f0e"
CONTENT = "CONTENT-MARKER-41d9"
SCREEN = "SCREEN-MARKER-b2a0"
USER_MESSAGE = "Your session expired, USER-MSG-33ee"


def _forms(raw: bytes) -> list[str]:
    return [raw.hex(), base64.b64encode(raw).decode(), repr(raw)[2:-1]]


def _secrets(sealed_requests: list[Any]) -> list[str]:
    pem = private_pem(platform_key()).decode().splitlines()
    values = [APP_SECRET, PASSPHRASE.decode(), TOKEN, CONTENT, SCREEN, *pem[1:-1]]
    for sealed in sealed_requests:
        values += _forms(sealed.aes_key) + _forms(sealed.iv)
    return values


async def test_every_outcome_is_clean(
    private_key: FlowPrivateKey, caplog: pytest.LogCaptureFixture
) -> None:
    payload = {
        "version": "3.0",
        "action": "data_exchange",
        "screen": SCREEN,
        "flow_token": TOKEN,
        "data": {"field": CONTENT},
    }
    seen: list[str] = []

    def handler(request: FlowRequest) -> Any:
        seen.append(repr(request))
        if request.data.get("mode") == "expire":
            raise FlowTokenNoLongerValidError(USER_MESSAGE)
        if request.data.get("mode") == "crash":
            raise RuntimeError(f"{CONTENT} {TOKEN} {request.screen}")
        return FlowScreen(screen=SCREEN, data={"echo": CONTENT})

    requests = [
        seal_request(payload),
        seal_request({**payload, "action": "ping"}),
        seal_request({**payload, "data": {"error": CONTENT, "error_message": CONTENT}}),
        seal_request({**payload, "data": {"mode": "expire", "field": CONTENT}}),
        seal_request({**payload, "data": {"mode": "crash", "field": CONTENT}}),
        seal_request({**payload, "action": "unknown"}),
        seal_request({**payload, "data": CONTENT}),
    ]
    texts: list[str] = []
    with caplog.at_level(logging.DEBUG):
        for sealed in requests:
            for signature in ("auto", None, "sha256=" + "ab" * 32):
                response = await call(sealed, handler, private_key, signature=signature)
                texts += [repr(response), response.body.decode("latin-1")]
        tampered = requests[0].body.replace(b'"initial_vector": "', b'"initial_vector": "AA')
        texts.append(repr(await call(tampered, handler, private_key)))
        decrypted = decrypt_request(requests[0].body, private_key=private_key)
        texts += [repr(decrypted), repr(decrypted.request), str(decrypted.request)]
    texts += [record.getMessage() for record in caplog.records] + seen
    texts += [repr(private_key), str(private_key)]
    assert caplog.records, "the endpoint logs its outcomes"
    joined = "\n".join(texts)
    leaked = [value for value in _secrets(requests) if value and value in joined]
    assert leaked == []
    # The 427 body carries the handler's own message, and nothing else.
    assert joined.count(USER_MESSAGE) == 1  # the one correctly signed "expire" request
    assert "Internal server error" in joined and "Request decryption failed" in joined


@pytest.mark.slow  # RSA key generation takes a random 0.05-0.4 s
def test_key_pair_and_loading_errors_are_clean() -> None:
    pair = generate_flow_key_pair(PASSPHRASE)
    private_lines = pair.private_key_pem.decode().splitlines()[1:-1]
    texts = [repr(pair), str(pair)]
    for pem, passphrase in (
        (pair.private_key_pem, None),
        (pair.private_key_pem, b"wrong"),
        (pair.private_key_pem[:-40], PASSPHRASE),
    ):
        with pytest.raises(ValueError) as caught:
            load_flow_private_key(pem, passphrase)
        texts += [str(caught.value), repr(caught.value)]
    key = load_flow_private_key(pair.private_key_pem, PASSPHRASE)
    texts.append(repr(key))
    joined = "\n".join(texts)
    assert [line for line in private_lines if line in joined] == []
    assert PASSPHRASE.decode() not in joined
    assert pair.public_key_text in repr(pair) or "public_key_pem" in repr(pair)
