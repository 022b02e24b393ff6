"""Field validators: each rule, with hypothesis for recipients, text and ids."""

from __future__ import annotations

import math
import re
import string
from typing import Any

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc.graph import GraphRequestValidationError
from svc.graph._validate import (
    check_bool,
    check_caption,
    check_choice,
    check_filename,
    check_group_id,
    check_id,
    check_int,
    check_latitude,
    check_link,
    check_longitude,
    check_mapping,
    check_media_id,
    check_phone_to,
    check_reply_to,
    check_sequence,
    check_text,
)

PHONE = re.compile(r"\+?[0-9]{1,15}")
CONTROL = [chr(c) for c in [*range(0x20), *range(0x7F, 0xA0)]]
TEXT_FORBIDDEN = [c for c in CONTROL if c not in "\n\t"]


# --- to -----------------------------------------------------------------------------------


@pytest.mark.slow
@given(st.from_regex(r"\+?[0-9]{1,15}", fullmatch=True))
def test_phone_to_accepts_digits_with_optional_plus(value: str) -> None:
    assert check_phone_to(value) == value


@given(st.text())
def test_phone_to_accepts_exactly_the_phone_shape(value: str) -> None:
    if PHONE.fullmatch(value):
        assert check_phone_to(value) == value
    else:
        with pytest.raises(GraphRequestValidationError) as info:
            check_phone_to(value)
        assert info.value.field == "to"


@pytest.mark.parametrize(
    "value",
    [
        "",
        "+",
        "1234567890123456",
        "++1555",
        "1555 1234",
        "1555\n",
        "https://evil.test",
        "../1555",
        "1555/messages",
        "user@example.test",
        "\N{ARABIC-INDIC DIGIT ONE}\N{ARABIC-INDIC DIGIT TWO}",
        15551234567,
        None,
    ],
)
def test_phone_to_rejections(value: object) -> None:
    with pytest.raises(GraphRequestValidationError):
        check_phone_to(value)


@given(st.text(alphabet=string.ascii_letters + string.digits + "_-=.:", min_size=1, max_size=256))
def test_group_id_accepts_opaque_safe_ids(value: str) -> None:
    if value in (".", ".."):
        with pytest.raises(GraphRequestValidationError):
            check_group_id(value)
    else:
        assert check_group_id(value) == value


@given(st.text(max_size=300))
def test_group_id_never_accepts_unsafe_values(value: str) -> None:
    try:
        check_group_id(value)
    except GraphRequestValidationError:
        return
    assert 0 < len(value) <= 256
    assert not any(c in value for c in "/\\?#%")
    assert not any(c in value for c in CONTROL)
    assert not any(c.isspace() for c in value)


@pytest.mark.parametrize("value", ["", "g" * 257, "a/b", "a\\b", "a\x00", "..", 7])
def test_group_id_rejections(value: object) -> None:
    with pytest.raises(GraphRequestValidationError):
        check_group_id(value)


# --- text -----------------------------------------------------------------------------------


@given(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cc", "Cs")) | st.sampled_from("\n\t"),
        min_size=1,
        max_size=4096,
    ).filter(str.strip)
)
def test_text_accepts_printable_text_with_newlines_and_tabs(value: str) -> None:
    assert check_text(value) == value


@given(st.text(min_size=1, max_size=50), st.sampled_from(TEXT_FORBIDDEN))
def test_text_rejects_control_characters_other_than_newline_and_tab(prefix: str, bad: str) -> None:
    with pytest.raises(GraphRequestValidationError):
        check_text(prefix + bad)


@pytest.mark.parametrize("value", ["", "   ", "\n", "x" * 4097, None, 5])
def test_text_rejections(value: object) -> None:
    with pytest.raises(GraphRequestValidationError):
        check_text(value)


def test_text_limit_is_inclusive() -> None:
    assert check_text("x" * 4096) == "x" * 4096


# --- ids ------------------------------------------------------------------------------------


@given(
    st.text(
        alphabet=st.characters(blacklist_categories=("Cc", "Cs")), min_size=1, max_size=256
    ).filter(str.strip)
)
def test_reply_to_accepts_bounded_ids(value: str) -> None:
    assert check_reply_to(value) == value


@given(st.text(min_size=0, max_size=20), st.sampled_from(CONTROL))
def test_ids_reject_control_characters(prefix: str, bad: str) -> None:
    for check in (check_reply_to, check_media_id):
        with pytest.raises(GraphRequestValidationError):
            check(prefix + bad)


@given(st.integers(min_value=0, max_value=3000))
def test_id_lengths(length: int) -> None:
    value = "a" * length
    for check, limit in ((check_reply_to, 256), (check_media_id, 2048)):
        if 1 <= length <= limit:
            assert check(value) == value
        else:
            with pytest.raises(GraphRequestValidationError):
                check(value)


def test_id_rejects_blank_and_non_strings() -> None:
    for value in ("   ", 12, None):
        with pytest.raises(GraphRequestValidationError):
            check_id(value, "message_id")


# --- links, captions, filenames ------------------------------------------------------------


@pytest.mark.parametrize(
    "value",
    [
        "https://cdn.test/a.png",
        "http://cdn.test:8080/x?y=1",
        "https://cdn.test/" + "a" * 2000,
        # IDNA labels are the platform's to resolve; a malformed one never raises idna's error
        "https://xn--zz/a.png",
        "https://xn--abc.example/a.png",
        "https://xn--mller-kva.example/a.png",
    ],
)
def test_link_accepts_http_and_https(value: str) -> None:
    assert check_link(value) == value


@pytest.mark.parametrize(
    "value",
    [
        "",
        "cdn.test/a.png",
        "ftp://cdn.test/a",
        "file:///etc/passwd",
        "javascript:alert(1)",
        "https://",
        "https://cdn.test/a b",
        "https://cdn.test/\x00",
        "https://cdn.test/" + "a" * 2033,
        None,
    ],
)
def test_link_rejections(value: object) -> None:
    with pytest.raises(GraphRequestValidationError):
        check_link(value)


def test_caption_and_filename_limits() -> None:
    assert check_caption("c" * 1024)
    assert check_filename("f" * 256)
    for bad in ("", "c" * 1025):
        with pytest.raises(GraphRequestValidationError):
            check_caption(bad)
    for bad in ("", "f" * 257, "a\nb"):
        with pytest.raises(GraphRequestValidationError):
            check_filename(bad)


# --- booleans, numbers, choices, containers -------------------------------------------------


@pytest.mark.parametrize("value", [1, 0, "true", "false", None, "yes"])
def test_booleans_must_be_real_bools(value: object) -> None:
    with pytest.raises(GraphRequestValidationError):
        check_bool(value, "preview_url")


def test_booleans_accept_true_and_false() -> None:
    assert check_bool(True, "voice") is True
    assert check_bool(False, "voice") is False


@given(st.floats(allow_nan=True, allow_infinity=True) | st.integers(-1000, 1000))
def test_coordinates_are_finite_and_in_range(value: float) -> None:
    for check, limit in ((check_latitude, 90), (check_longitude, 180)):
        if math.isfinite(value) and -limit <= value <= limit:
            assert check(value) == value
        else:
            with pytest.raises(GraphRequestValidationError):
                check(value)


@pytest.mark.parametrize("value", [True, "1", None])
def test_coordinates_must_be_numbers(value: object) -> None:
    with pytest.raises(GraphRequestValidationError):
        check_latitude(value)


def test_int_rejects_bools_and_floats() -> None:
    assert check_int(5, "n", minimum=1, maximum=30) == 5
    for value in (True, 5.0, "5", 0, 31):
        with pytest.raises(GraphRequestValidationError):
            check_int(value, "n", minimum=1, maximum=30)


def test_choice() -> None:
    assert check_choice("STRICT", "p", {"STRICT"}) == "STRICT"
    with pytest.raises(GraphRequestValidationError):
        check_choice("strict", "p", {"STRICT"})


def test_mapping_rejects_unknown_and_missing_keys() -> None:
    assert check_mapping({"a": 1}, "m", allowed=("a", "b"), required=("a",)) == {"a": 1}
    bad: list[Any] = [{"c": 1}, {"b": 1}, {"a": None}, [("a", 1)], {1: "a"}]
    for value in bad:
        with pytest.raises(GraphRequestValidationError):
            check_mapping(value, "m", allowed=("a", "b"), required=("a",))


def test_sequence_bounds_and_type() -> None:
    assert check_sequence([1], "s", minimum=1, maximum=2) == [1]
    for value in ([], [1, 2, 3], "ab", {"a": 1}, None):
        with pytest.raises(GraphRequestValidationError):
            check_sequence(value, "s", minimum=1, maximum=2)


@pytest.mark.parametrize("host", ["xn--zz", "xn--.example", "xn--abc.example", "xn--ls8h.la"])
def test_admin_urls_take_idna_hosts_as_written(host: str) -> None:
    """A malformed ``xn--`` label is the platform's to refuse, never idna's error here."""
    from svc.graph._admin_checks import check_url

    assert check_url(f"https://{host}/cb", field="endpoint_uri") == f"https://{host}/cb"
