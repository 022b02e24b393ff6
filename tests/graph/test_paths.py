"""check_path_segment: every accepted value becomes exactly one segment that decodes to itself."""

from __future__ import annotations

from urllib.parse import unquote

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc.graph import GraphRequestValidationError, check_path_segment

UNRESERVED = set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")


@pytest.mark.parametrize(
    ("value", "encoded"),
    [
        ("106540352242922", "106540352242922"),
        ("wamid.HBgL-x_y~z", "wamid.HBgL-x_y~z"),
        ("upload:MTphdHRhY2g=", "upload%3AMTphdHRhY2g%3D"),
        ("a b", "a%20b"),
        ("a%20b", "a%2520b"),
        ("émoji😀", "%C3%A9moji%F0%9F%98%80"),
        ("...", "..."),
        ("a..b", "a..b"),
    ],
)
def test_accepted_values_are_percent_encoded(value: str, encoded: str) -> None:
    assert check_path_segment(value, field="media_id") == encoded


@pytest.mark.parametrize(
    "value",
    [
        "",
        " ",
        "\t \u3000",
        ".",
        "..",
        "a/b",
        "/",
        "a\\b",
        "a?b",
        "a#b",
        "\x00",
        "a\x00b",
        "a\nb",
        "a\rb",
        "a\x1fb",
        "a\x7fb",
        "%2e",
        "%2E",
        "%2e%2e",
        "a%2eb",
        "%2f",
        "a%2Fb",
        "%5c",
        "%5C",
        "%3f",
        "%23",
        "%00",
        "%0a",
        "%252e",
        "%252E%252E",
        "%25252f",
        "%255c",
        "%u002e",
        "%U002F",
        "\uff0e\uff0e",
        "a\uff0fb",
        "\ud800",
    ],
)
def test_rejected_values(value: str) -> None:
    with pytest.raises(GraphRequestValidationError) as caught:
        check_path_segment(value, field="phone_number_id")
    assert caught.value.field == "phone_number_id"
    if len(value.strip()) > 2:
        assert value not in str(caught.value)


@pytest.mark.parametrize("value", [None, 123, 1.5, b"123", ["1"], object()])
def test_non_strings_are_rejected(value: object) -> None:
    with pytest.raises(GraphRequestValidationError):
        check_path_segment(value, field="waba_id")


@pytest.mark.slow
@given(st.text())
def test_any_text_is_rejected_or_one_safe_segment(value: str) -> None:
    try:
        encoded = check_path_segment(value, field="id")
    except GraphRequestValidationError:
        return
    assert set(encoded) <= UNRESERVED | set("%0123456789ABCDEF")
    assert "/" not in encoded and "?" not in encoded and "#" not in encoded
    assert encoded not in (".", "..")
    assert unquote(encoded, errors="strict") == value


@pytest.mark.slow
@given(st.text(alphabet=st.sampled_from("%2eEfF5cC.\\/?#0a"), max_size=12))
def test_encoding_alphabet_never_yields_traversal(value: str) -> None:
    try:
        encoded = check_path_segment(value, field="id")
    except GraphRequestValidationError:
        return
    decoded = encoded
    for _ in range(6):
        decoded = unquote(decoded)
        assert decoded.count(".") == value.count(".")
        assert not {"/", "\\", "?", "#"} & set(decoded)
        assert decoded not in (".", "..")
