"""``decrypt_request`` and ``encrypt_response`` against the platform, step by step, at the caps."""

from __future__ import annotations

import base64
import json
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from svc.flows import (
    MAX_FLOW_BYTES,
    FlowClose,
    FlowDecryptionError,
    FlowPayloadTooLargeError,
    FlowPrivateKey,
    FlowResponseError,
    FlowScreen,
    FlowTokenNoLongerValidError,
    decrypt_request,
    encrypt_response,
    invert_iv,
)
from tests._support import sign

from ._platform import APP_SECRET, gcm_seal, oaep_sha256, platform_key, seal_request
from .conftest import call

NOT_A_KEY: Any = object()  # decrypt_request raises TypeError if it ever reaches RSA with it


def never_called(request: object) -> Any:
    raise AssertionError("the handler must not run")


def test_round_trip_with_the_platform(private_key: FlowPrivateKey) -> None:
    payload = {
        "version": "3.0",
        "action": "data_exchange",
        "screen": "PICK",
        "flow_token": "t-1",
        "data": {"photo_picker": [{"file_name": "a.jpg"}], "n": 3},
    }
    sealed = seal_request(payload)
    decrypted = decrypt_request(sealed.body, private_key=private_key)
    assert decrypted.aes_key == sealed.aes_key and decrypted.iv == sealed.iv
    request = decrypted.request
    assert (request.action, request.version, request.screen, request.flow_token) == (
        "data_exchange",
        "3.0",
        "PICK",
        "t-1",
    )
    assert request.data == payload["data"]
    answer = {"screen": "DONE", "data": {"ok": True, "text": "ünïcode"}}
    body = decrypted.encrypt_response(answer)
    assert sealed.open_response(body) == answer
    assert body == encrypt_response(answer, aes_key=sealed.aes_key, iv=sealed.iv)
    # The same request given as an already parsed object.
    again = decrypt_request(json.loads(sealed.body), private_key=private_key)
    assert again.request == request


def test_response_is_sealed_under_the_inverted_iv() -> None:
    iv = bytes(range(16))
    assert invert_iv(iv) == bytes(255 - b for b in iv)
    key = bytes(16)
    body = encrypt_response({"data": {}}, aes_key=key, iv=iv)
    assert base64.b64decode(body) == gcm_seal(key, invert_iv(iv), b'{"data":{}}')


def _fields(**changes: Any) -> dict[str, Any]:
    return {**seal_request({"version": "3.0", "action": "ping"}).fields, **changes}


def _b64(raw: bytes) -> str:
    return base64.b64encode(raw).decode()


@pytest.mark.parametrize(
    ("envelope", "code"),
    [
        ({"encrypted_flow_data": "x"}, "invalid_envelope"),
        (_fields(initial_vector=7), "invalid_envelope"),
        (_fields(encrypted_aes_key=""), "invalid_envelope"),
        (_fields(initial_vector="AAAA*AAA"), "invalid_base64"),
        (_fields(initial_vector="AAAAAAAAAAAAAAAAAAAAAA"), "invalid_base64"),  # no padding
        (_fields(initial_vector="ÄAAA"), "invalid_base64"),
        (_fields(initial_vector=_b64(bytes(11))), "invalid_iv"),
        (_fields(initial_vector=_b64(bytes(17))), "invalid_iv"),
        (_fields(encrypted_flow_data=_b64(bytes(16))), "invalid_ciphertext"),
        (_fields(encrypted_aes_key=_b64(bytes(256))), "key_unwrap_failed"),
        (
            _fields(
                encrypted_aes_key=_b64(
                    platform_key().public_key().encrypt(bytes(15), oaep_sha256())
                )
            ),
            "invalid_key_length",
        ),
        (_fields(encrypted_flow_data=_b64(bytes(40))), "decryption_failed"),
    ],
)
def test_each_step_refuses_with_its_code(
    private_key: FlowPrivateKey, envelope: dict[str, Any], code: str
) -> None:
    with pytest.raises(FlowDecryptionError) as caught:
        decrypt_request(envelope, private_key=private_key)
    assert caught.value.code == code
    assert caught.value.http_status == 421
    assert str(caught.value) == "The Flow request could not be decrypted."


@pytest.mark.parametrize(
    ("plaintext", "code"),
    [
        (b"", "invalid_ciphertext"),  # only the tag is left
        (b"\xff{}", "invalid_json"),
        (b"[" * 10_000, "invalid_json"),  # too deep for the parser
        (b'{"action":"INIT","data":{"n":1e999}}', "invalid_json"),  # not a finite number
        (b'{"action":"INIT","data":{"n":-1e999}}', "invalid_json"),
        (b'{"action":"INIT","data":{"n":NaN}}', "invalid_json"),
        (b'"ping"', "invalid_request"),
        (b'{"action":"PING"}', "invalid_action"),
        (b'{"version":"3.0"}', "invalid_action"),
        (b'{"action":"INIT","flow_token":5}', "invalid_request"),
        (b'{"action":"INIT","screen":["A"]}', "invalid_request"),
        (b'{"action":"INIT","data":"x"}', "invalid_request"),
    ],
)
def test_plaintext_checks(private_key: FlowPrivateKey, plaintext: bytes, code: str) -> None:
    with pytest.raises(FlowDecryptionError) as caught:
        decrypt_request(seal_request(plaintext).body, private_key=private_key)
    assert caught.value.code == code


def test_optional_fields_may_be_absent_or_null(private_key: FlowPrivateKey) -> None:
    body = seal_request(b'{"action":"INIT","data":null,"screen":null,"flow_token":null}').body
    request = decrypt_request(body, private_key=private_key).request
    assert (request.version, request.screen, request.flow_token, dict(request.data)) == (
        None,
        None,
        None,
        {},
    )


def test_body_over_the_cap_is_refused_before_parsing_or_rsa() -> None:
    body = b" " * (MAX_FLOW_BYTES + 1)
    with pytest.raises(FlowPayloadTooLargeError) as caught:
        decrypt_request(body, private_key=NOT_A_KEY)
    assert caught.value.http_status == 413
    # At the cap the body is parsed (and refused as an envelope, still without RSA).
    with pytest.raises(FlowDecryptionError) as at_cap:
        decrypt_request(b" " * MAX_FLOW_BYTES, private_key=NOT_A_KEY)
    assert at_cap.value.code == "invalid_envelope"


async def test_signed_body_over_the_cap_is_413_before_signature_or_rsa() -> None:
    fields = _fields()
    padded = json.dumps(fields).encode()
    body = padded[:-1] + b" " * (MAX_FLOW_BYTES + 1 - len(padded)) + b"}"
    assert len(body) == MAX_FLOW_BYTES + 1
    response = await call(body, never_called, NOT_A_KEY)
    assert (response.status, response.body, response.outcome) == (
        413,
        b"Request body too large",
        "payload_too_large",
    )
    response = await call(body, never_called, NOT_A_KEY, signature=None)
    assert response.status == 413


@pytest.mark.parametrize("name", ["encrypted_flow_data", "encrypted_aes_key", "initial_vector"])
def test_each_base64_field_is_capped_before_decoding_and_rsa(name: str) -> None:
    envelope = _fields(**{name: "A" * (MAX_FLOW_BYTES + 4)})
    with pytest.raises(FlowDecryptionError) as caught:
        decrypt_request(envelope, private_key=NOT_A_KEY)
    assert caught.value.code == "field_too_large"


def test_a_field_at_the_cap_is_decoded(private_key: FlowPrivateKey) -> None:
    envelope = _fields(encrypted_flow_data="A" * MAX_FLOW_BYTES)
    with pytest.raises(FlowDecryptionError) as caught:
        decrypt_request(envelope, private_key=private_key)
    assert caught.value.code == "decryption_failed"  # it went all the way to the GCM tag


@pytest.mark.slow
@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(
    body=st.binary(max_size=600)
    | st.builds(
        lambda d: json.dumps(d).encode(),
        st.dictionaries(
            st.sampled_from(["encrypted_flow_data", "encrypted_aes_key", "initial_vector", "x"]),
            st.text(alphabet="AQgw+/=", max_size=400) | st.integers() | st.none(),
        ),
    )
)
async def test_any_signed_body_gets_an_answer_never_an_exception(
    private_key: FlowPrivateKey, body: bytes
) -> None:
    response = await call(
        body, never_called, private_key, signature=sign(body=body, secret=APP_SECRET)
    )
    assert (response.status, response.body) == (421, b"Request decryption failed")


def test_encrypt_response_refuses_what_json_cannot_carry() -> None:
    for payload in ({"a": float("inf")}, {"a": {1, 2}}, ["not", "an", "object"], None):
        with pytest.raises(FlowResponseError) as caught:
            encrypt_response(payload, aes_key=bytes(16), iv=bytes(16))  # type: ignore[arg-type]
        assert caught.value.code == "invalid_response"


def test_reply_types_check_their_fields() -> None:
    assert FlowScreen(screen="A").to_payload() == {"screen": "A", "data": {}}
    assert repr(FlowScreen(screen="A", data={"secret": "x"})) == "FlowScreen(screen='A')"
    assert repr(FlowClose(flow_token="tok", params={"p": 1})) == "FlowClose()"
    with pytest.raises(ValueError):
        FlowScreen(screen="")
    with pytest.raises(TypeError):
        FlowScreen(screen="A", data=[])  # type: ignore[arg-type]
    with pytest.raises(ValueError):
        FlowClose(flow_token="")
    with pytest.raises(ValueError):
        FlowTokenNoLongerValidError("")
    with pytest.raises(ValueError):
        FlowTokenNoLongerValidError("x" * 1025)
