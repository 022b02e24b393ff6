"""The shared character rules (svc/_text.py): every boundary character, each variant."""

from __future__ import annotations

import unicodedata
from collections.abc import Callable

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc._text import (
    breaks_path_segment,
    breaks_url_path,
    decimal_int,
    has_ascii_control,
    has_ascii_control_or_space,
    has_control,
    has_header_break,
    has_sdp_control,
    has_surrogate,
    has_text_control,
    is_printable_ascii,
    is_printable_label,
    is_visible_ascii,
)

C0 = {chr(c) for c in range(0x20)}
DEL = {"\x7f"}
C1 = {chr(c) for c in range(0x80, 0xA0)}
SURROGATES = {chr(c) for c in range(0xD800, 0xE000)}
# Every character a rule could draw a line at, and its neighbours.
BOUNDARY = sorted(
    C0 | DEL | C1 | {" ", "!", "~", "/", "\\", "?", "#", "%", ".", "a", "\xa0", "\u2028", "\u00e9"}
    | {chr(c) for c in (0xD7FF, 0xD800, 0xDBFF, 0xDC00, 0xDFFF, 0xE000)}
)

# The set of characters each "has_*" / "breaks_*" rule refuses, spelled out once more by hand.
REFUSED: dict[Callable[[str], bool], set[str]] = {
    has_ascii_control: C0 | DEL,
    has_control: C0 | DEL | C1,
    has_text_control: (C0 | DEL | C1) - {"\t", "\n"},
    has_sdp_control: (C0 | DEL) - {"\t", "\r", "\n"},
    has_ascii_control_or_space: C0 | DEL | {" "},
    breaks_url_path: C0 | DEL | {" ", "?", "#", "\\"},
    breaks_path_segment: C0 | DEL | {"/", "\\", "?", "#"},
    has_header_break: {"\r", "\n", "\x00"},
    has_surrogate: SURROGATES,
}


@pytest.mark.parametrize("rule", list(REFUSED), ids=lambda rule: rule.__name__)
@pytest.mark.parametrize("char", BOUNDARY, ids=lambda ch: f"U+{ord(ch):04X}")
def test_each_rule_refuses_exactly_its_characters(rule: Callable[[str], bool], char: str) -> None:
    assert rule(char) is (char in REFUSED[rule])
    assert rule(f"ab{char}cd") is (char in REFUSED[rule])


@pytest.mark.parametrize("rule", list(REFUSED), ids=lambda rule: rule.__name__)
@given(st.text(st.characters(codec="utf-8")))
def test_each_rule_agrees_with_its_character_set(rule: Callable[[str], bool], value: str) -> None:
    assert rule(value) is any(ch in REFUSED[rule] for ch in value)


@pytest.mark.parametrize("rule", list(REFUSED), ids=lambda rule: rule.__name__)
def test_the_empty_string_holds_nothing_refused(rule: Callable[[str], bool]) -> None:
    assert rule("") is False


def test_has_control_is_unicode_category_cc() -> None:
    for code in range(0x100):
        assert has_control(chr(code)) is (unicodedata.category(chr(code)) == "Cc")


@pytest.mark.parametrize(
    ("value", "expected"),
    [("a", True), ("!~", True), ("", False), (" ", False), ("a b", False), ("\x7f", False),
     ("\x20a", False), ("é", False), ("x" * 5000, True)],
)
def test_is_visible_ascii(value: str, expected: bool) -> None:
    assert is_visible_ascii(value) is expected


@pytest.mark.parametrize(
    ("value", "expected"),
    [("", True), (" ", True), ("a b~", True), ("\x1f", False), ("\x7f", False), ("é", False),
     ("\t", False)],
)
def test_is_printable_ascii(value: str, expected: bool) -> None:
    assert is_printable_ascii(value) is expected


@given(st.text(st.characters(codec="utf-8")))
def test_ascii_predicates_agree_with_code_points(value: str) -> None:
    assert is_visible_ascii(value) is (bool(value) and all(0x21 <= ord(c) <= 0x7E for c in value))
    assert is_printable_ascii(value) is all(0x20 <= ord(c) <= 0x7E for c in value)


@pytest.mark.parametrize(
    ("value", "expected"),
    [("wamid.1", True), ("a b", True), ("", False), ("   ", False), ("a\tb", False),
     ("a\x85", False), ("a\u200b", False), ("a\xa0b", False), ("é", True)],
)
def test_is_printable_label(value: str, expected: bool) -> None:
    assert is_printable_label(value) is expected


@pytest.mark.parametrize(
    ("text", "signed", "expected"),
    [
        ("0", False, 0),
        ("2000", False, 2000),
        ("-1", True, -1),
        ("-1", False, None),
        ("--5", True, None),
        ("-", True, None),
        ("", False, None),
        ("²", False, None),  # str.isdigit holds; int refuses it
        ("1٣", False, None),  # int would read 13
        (" 5", False, None),
        ("5\n", False, None),
        ("+5", True, None),
        ("1_000", False, None),
        ("9" * 18, False, 10**18 - 1),
        ("9" * 19, False, None),
        ("-" + "9" * 18, True, -(10**18 - 1)),
        ("1" * 5000, False, None),  # int refuses past 4,300 digits
    ],
)
def test_decimal_int_reads_ascii_digits_only_within_the_bound(
    text: str, signed: bool, expected: int | None
) -> None:
    assert decimal_int(text, signed=signed) == expected


@given(st.text(max_size=24))
def test_decimal_int_never_raises_and_agrees_with_the_digits(text: str) -> None:
    value = decimal_int(text, signed=True)
    ascii_digits = text.removeprefix("-")
    if ascii_digits and len(ascii_digits) <= 18 and all("0" <= c <= "9" for c in ascii_digits):
        assert value == int(text)
    else:
        assert value is None
