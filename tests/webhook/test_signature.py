"""Signature pipeline: the ordered checks of decisions.md section 3."""

from __future__ import annotations

import hmac
import json
import math

import pytest
from hypothesis import example, given
from hypothesis import strategies as st

from svc.webhook import (
    SIGNATURE_HEADER,
    BoundedBody,
    InvalidEnvelopeError,
    InvalidJsonError,
    InvalidSignatureFormatError,
    MissingSignatureError,
    PayloadTooLargeError,
    SignatureError,
    SignatureMismatchError,
    WebhookError,
    check_content_length,
    parse_envelope,
    parse_signature_header,
    receive_delivery,
    verify_signature,
)
from tests._support import sign

SECRET = "app-secret-for-tests"
CAP = 4096
ENVELOPE = {"object": "whatsapp_business_account", "entry": []}


def run(body: bytes, header: str | None, *, content_length: int | None = None) -> object:
    return receive_delivery(
        body, header, SECRET, max_body_bytes=CAP, content_length=content_length
    ).envelope


def test_header_name() -> None:
    assert SIGNATURE_HEADER == "X-Hub-Signature-256"


def test_valid_delivery_returns_the_envelope() -> None:
    body = json.dumps(ENVELOPE).encode()
    assert run(body, sign(body=body, secret=SECRET)) == ENVELOPE


def test_uppercase_hex_and_surrounding_whitespace_are_accepted() -> None:
    body = b'{"object":"x","entry":[]}'
    header = sign(body=body, secret=SECRET)
    assert run(body, " sha256=" + header[7:].upper() + "\t") == {"object": "x", "entry": []}


def test_bytes_secret_is_accepted() -> None:
    body = b'{"object":"x","entry":[]}'
    verify_signature(
        body=body,
        header=sign(body=body, secret=SECRET),
        app_secret=SECRET.encode(),
        max_body_bytes=CAP,
    )


@pytest.mark.parametrize(
    ("body", "header", "content_length", "error", "code", "status"),
    [
        # size first: even with no header at all, and on the declared length alone
        (b"x" * (CAP + 1), None, None, PayloadTooLargeError, "payload_too_large", 413),
        (b"{}", None, CAP + 1, PayloadTooLargeError, "payload_too_large", 413),
        # then presence, format, match
        (b"{}", None, None, MissingSignatureError, "missing_signature", 401),
        (b"{}", "", None, MissingSignatureError, "missing_signature", 401),
        (
            b"{}",
            "sha1=" + "a" * 40,
            None,
            InvalidSignatureFormatError,
            "invalid_signature_format",
            400,
        ),
        (
            b"{}",
            "sha256=" + "a" * 63,
            None,
            InvalidSignatureFormatError,
            "invalid_signature_format",
            400,
        ),
        (
            b"{}",
            "sha256=" + "a" * 65,
            None,
            InvalidSignatureFormatError,
            "invalid_signature_format",
            400,
        ),
        (
            b"{}",
            "sha256=" + "g" * 64,
            None,
            InvalidSignatureFormatError,
            "invalid_signature_format",
            400,
        ),
        (
            b"{}",
            "SHA256=" + "a" * 64,
            None,
            InvalidSignatureFormatError,
            "invalid_signature_format",
            400,
        ),
        (
            b"{}",
            "sha256=" + "٣" * 64,
            None,
            InvalidSignatureFormatError,
            "invalid_signature_format",
            400,
        ),
        (b"{}", "sha256=" + "a" * 64, None, SignatureMismatchError, "signature_mismatch", 401),
    ],
)
def test_ordered_refusals(
    body: bytes,
    header: str | None,
    content_length: int | None,
    error: type[WebhookError],
    code: str,
    status: int,
) -> None:
    with pytest.raises(error) as info:
        run(body, header, content_length=content_length)
    assert info.value.code == code
    assert info.value.http_status == status


def test_signature_checked_before_json() -> None:
    body = b"not json at all"
    with pytest.raises(SignatureMismatchError):
        run(body, "sha256=" + "0" * 64)
    with pytest.raises(InvalidJsonError) as info:
        run(body, sign(body=body, secret=SECRET))
    assert (info.value.code, info.value.http_status) == ("invalid_json", 400)


@pytest.mark.parametrize(
    "body",
    [b"", b"{", b"\xff\xfe\x00", b'{"a": NaN}', b"[" * 100_000 + b"]" * 100_000, b"1" * 5000],
)
def test_invalid_json(body: bytes) -> None:
    with pytest.raises(InvalidJsonError):
        parse_envelope(body)


@pytest.mark.parametrize(
    "body",
    [b"[]", b"null", b'"x"', b"{}", b'{"object":1,"entry":[]}', b'{"object":"x","entry":{}}'],
)
def test_invalid_envelope(body: bytes) -> None:
    with pytest.raises(InvalidEnvelopeError) as info:
        parse_envelope(body)
    assert (info.value.code, info.value.http_status) == ("invalid_envelope", 400)


def test_errors_hold_no_secret_or_body() -> None:
    body = b'{"object":"x","entry":[],"text":"private words"}'
    header = "sha256=" + "b" * 64
    with pytest.raises(SignatureError) as info:
        run(body, header)
    rendered = str(info.value) + repr(info.value) + str(info.value.args)
    for secret in (SECRET, "private words", "b" * 64):
        assert secret not in rendered


def test_parse_signature_header_returns_digest() -> None:
    assert parse_signature_header("sha256=" + "0f" * 32) == bytes.fromhex("0f" * 32)


def test_content_length_check_alone() -> None:
    check_content_length(None, max_body_bytes=10)
    check_content_length(10, max_body_bytes=10)
    with pytest.raises(PayloadTooLargeError):
        check_content_length(11, max_body_bytes=10)


def test_bounded_body_stops_past_the_cap() -> None:
    collector = BoundedBody(max_body_bytes=5)
    collector.feed(b"abc")
    collector.feed(b"de")
    assert collector.body() == b"abcde"
    assert collector.size == 5
    with pytest.raises(PayloadTooLargeError):
        collector.feed(b"f")


@pytest.mark.parametrize("secret", ["", b""])
def test_empty_secret_is_a_programming_error(secret: str | bytes) -> None:
    with pytest.raises(ValueError, match="app_secret"):
        verify_signature(body=b"{}", header=None, app_secret=secret, max_body_bytes=CAP)


@pytest.mark.parametrize("cap", [0, -1])
def test_cap_must_be_positive(cap: int) -> None:
    with pytest.raises(ValueError, match="max_body_bytes"):
        check_content_length(None, max_body_bytes=cap)


@pytest.mark.slow
@given(body=st.binary(max_size=512), guess=st.binary(min_size=32, max_size=32))
def test_arbitrary_bytes_never_pass_without_the_key(body: bytes, guess: bytes) -> None:
    header = "sha256=" + guess.hex()
    if hmac.compare_digest(header, sign(body=body, secret=SECRET)):  # pragma: no cover - 2**-256
        return
    with pytest.raises(SignatureMismatchError):
        verify_signature(body=body, header=header, app_secret=SECRET, max_body_bytes=CAP)
    # A signature made with another key never passes either.
    with pytest.raises(SignatureMismatchError):
        verify_signature(
            body=body,
            header=sign(body=body, secret="another-secret"),
            app_secret=SECRET,
            max_body_bytes=CAP,
        )


@pytest.mark.slow
@given(body=st.binary(max_size=512), secret=st.binary(min_size=1, max_size=64))
def test_a_correct_signature_always_passes(body: bytes, secret: bytes) -> None:
    verify_signature(
        body=body, header=sign(body=body, secret=secret), app_secret=secret, max_body_bytes=CAP
    )


# --- the direct-scan path of parse_envelope agrees with json.loads --------------------------

_DOC = '{"object":"x","entry":[{"t":"caf\u00e9 \\ud83d\\ude00"}]}'


@pytest.mark.parametrize(
    "body",
    [
        _DOC.encode(),
        b" " + _DOC.encode() + b"\n",
        _DOC.encode() + b" ",
        "\ufeff".encode() + _DOC.encode(),
        _DOC.encode("utf-16-le"),
        _DOC.encode("utf-16"),
        _DOC.encode("utf-32-be"),
    ],
)
def test_whitespace_boms_and_wide_encodings_parse_like_json_loads(body: bytes) -> None:
    assert parse_envelope(body) == json.loads(body)


@pytest.mark.parametrize(
    "body",
    [
        b'{"object":"x","entry":[]}{"object":"x","entry":[]}',
        b'{"object":"x","entry":[]} }',
        b'{"object":"x","entry":[],"n":NaN}',
        b'{"object":"x","entry":[],"n":-Infinity}',
        b'{"object":"x","entry":[]',
        b'{"object":"x","entry":[] x}',
        b'{"object":"x","entry":["\xff"]}',
        b"{\x00}",
        b"{}}",
    ],
)
def test_extra_data_constants_and_bad_bytes_are_invalid_json(body: bytes) -> None:
    with pytest.raises(InvalidJsonError):
        parse_envelope(body)


def _all_finite(value: object) -> bool:
    """Whether every number in a parsed JSON value is finite (``json.loads`` reads a literal
    past the float range, ``1E309``, as infinity; svc refuses it as invalid JSON)."""
    if isinstance(value, float):
        return math.isfinite(value)
    if isinstance(value, dict):
        return all(_all_finite(item) for item in value.values())
    if isinstance(value, list):
        return all(_all_finite(item) for item in value)
    return True


@given(st.text(alphabet='{}[]":,0123456789 \nabx\\-.eE', max_size=40))
@example("1E309")
@example("[-1e999]")
def test_near_json_text_parses_exactly_when_json_loads_does(text: str) -> None:
    """The same answer as ``json.loads``, except that a number out of the float range is
    invalid JSON (``svc/_json.py``)."""
    body = text.encode()
    try:
        expected: object = json.loads(body)
    except ValueError:
        expected = InvalidJsonError
    if not _all_finite(expected):
        expected = InvalidJsonError
    try:
        got: object = parse_envelope(body)
    except InvalidJsonError:
        got = InvalidJsonError
    except InvalidEnvelopeError:
        got = "valid JSON, not an envelope"
        assert expected is not InvalidJsonError
        expected = got
    assert got == expected


@pytest.mark.parametrize(
    "header",
    [
        "sha256=" + "ab " * 21 + "a",  # 71 characters; fromhex skips the spaces: too few bytes
        "sha256=" + "a" * 62 + "\t\t",
        "sha256=" + "a" * 63 + "\u0663",
    ],
)
def test_a_71_character_header_without_64_hex_digits_is_a_format_error(header: str) -> None:
    body = b"{}"
    assert len(header) == 71
    with pytest.raises(InvalidSignatureFormatError):
        run(body, header)
