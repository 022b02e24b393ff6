"""Flow JSON limits: each limit at its edge, iterative depth checks, and property tests."""

from __future__ import annotations

import json
from typing import Any

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from svc.graph import (
    FLOW_JSON_LIMITS,
    FlowJsonValidationError,
    GraphRequestValidationError,
    validate_flow_json,
)


def text_component(text: str = "Hi") -> dict[str, Any]:
    return {"type": "TextBody", "text": text}


def flow(*screens: dict[str, Any]) -> dict[str, Any]:
    return {"version": "7.0", "screens": list(screens)}


def screen(children: list[Any], screen_id: str = "WELCOME") -> dict[str, Any]:
    return {
        "id": screen_id,
        "title": "Welcome",
        "terminal": True,
        "layout": {"type": "SingleColumnLayout", "children": children},
    }


def nested(depth: int) -> dict[str, Any]:
    """A valid flow whose deepest container sits at ``depth`` (root object = 1)."""
    doc = flow(screen([text_component()]))
    # flow(1) -> screens(2) -> screen(3) -> layout(4) -> children(5) -> component(6)
    node: dict[str, Any] = doc["screens"][0]["layout"]["children"][0]
    for _ in range(depth - 6):
        child: dict[str, Any] = {}
        node["x"] = child
        node = child
    return doc


def test_valid_flow_returns_compact_utf8() -> None:
    doc = flow(screen([text_component("héllo")]))
    assert validate_flow_json(doc) == json.dumps(
        doc, ensure_ascii=False, separators=(",", ":")
    ).encode()


def test_text_input_is_parsed_and_compacted() -> None:
    doc = flow(screen([text_component()]))
    pretty = json.dumps(doc, indent=4)
    assert validate_flow_json(pretty) == validate_flow_json(doc)
    assert validate_flow_json(pretty.encode()) == validate_flow_json(doc)


def test_limits_table_matches_spec() -> None:
    assert FLOW_JSON_LIMITS == {
        "max_depth": 16,
        "max_array_length": 1000,
        "max_screens": 50,
        "max_components": 1000,
        "max_string_length": 16384,
        "max_bytes": 131072,
    }


def expect_limit(value: Any, limit: str) -> FlowJsonValidationError:
    with pytest.raises(FlowJsonValidationError) as info:
        validate_flow_json(value)
    assert info.value.limit == limit
    assert isinstance(info.value, GraphRequestValidationError)
    assert info.value.field == "flow_json"
    if limit != "structure":
        assert limit in str(info.value)
    return info.value


def test_depth_16_passes_17_fails() -> None:
    validate_flow_json(nested(16))
    expect_limit(nested(17), "max_depth")


def test_very_deep_input_fails_without_recursion_error() -> None:
    doc = nested(16)
    node = doc
    for _ in range(100_000):
        node["deeper"] = {}
        node = node["deeper"]
    expect_limit(doc, "max_depth")
    text = '{"version":"7.0","screens":' + "[" * 200_000 + "]" * 200_000 + "}"
    expect_limit(text, "max_depth")


def test_brackets_inside_strings_do_not_count_as_depth() -> None:
    doc = flow(screen([text_component("[[[[[[[[[[[[[[[[[[[[{{{{{{{{{{{{{{{{{{{{ \\\" [[[[")]))
    assert validate_flow_json(json.dumps(doc))


def test_array_length_limit() -> None:
    ok = flow(screen([text_component()]))
    ok["data"] = list(range(1000))
    validate_flow_json(ok)
    ok["data"] = list(range(1001))
    expect_limit(ok, "max_array_length")


def test_screen_limit() -> None:
    screens = [screen([text_component()], f"S{i}") for i in range(50)]
    validate_flow_json(flow(*screens))
    screens.append(screen([text_component()], "S50"))
    expect_limit(flow(*screens), "max_screens")


def test_component_limit_counts_nested_components_across_screens() -> None:
    # 10 screens x (1 Form holding 99 components) = 1000 components.
    def form_screen(i: int, inner: int) -> dict[str, Any]:
        form = {"type": "Form", "name": "f", "children": [text_component()] * inner}
        return screen([form], f"S{i}")

    validate_flow_json(flow(*[form_screen(i, 99) for i in range(10)]))
    too_many = flow(*[form_screen(i, 99) for i in range(9)], form_screen(9, 100))
    expect_limit(too_many, "max_components")


def test_components_in_if_and_switch_branches_count() -> None:
    branch = [text_component()] * 300
    comp = {"type": "If", "condition": "true", "then": branch, "else": branch}
    switch = {"type": "Switch", "value": "x", "cases": {"a": branch[:200], "b": branch[:199]}}
    # 1 If + 600 + 1 Switch + 399 = 1001
    expect_limit(flow(screen([comp, switch])), "max_components")
    switch["cases"] = {"a": branch[:200], "b": branch[:198]}
    validate_flow_json(flow(screen([comp, switch])))


def test_string_limit_applies_to_values_and_keys() -> None:
    validate_flow_json(flow(screen([text_component("x" * 16384)])))
    expect_limit(flow(screen([text_component("x" * 16385)])), "max_string_length")
    doc = flow(screen([text_component()]))
    doc["k" * 16385] = 1
    expect_limit(doc, "max_string_length")


def test_byte_limit_counts_compact_utf8() -> None:
    def sized(chars: list[str]) -> dict[str, Any]:
        return flow(screen([text_component(c) for c in chars]))

    base = len(validate_flow_json(sized([])))
    # each component adds len('{"type":"TextBody","text":""},') = 30 bytes plus its text bytes
    per = len(json.dumps(text_component(""), separators=(",", ":"))) + 1
    count = 10
    room = 131072 - base - count * per + 1  # +1: the first item has no comma
    text = "é" * (room // 2 // count)
    chars = [text] * count
    encoded = validate_flow_json(sized(chars))
    assert len(encoded) <= 131072
    # multi-byte characters count as bytes, not characters
    grown = [*chars[:-1], chars[-1] + "é" * ((131072 - len(encoded)) // 2 + 1)]
    expect_limit(sized(grown), "max_bytes")


def test_huge_text_is_refused_before_parsing() -> None:
    expect_limit(" " * (131072 * 8 + 1), "max_bytes")


@pytest.mark.parametrize(
    "value",
    [
        [],
        "[]",
        "not json",
        b"\xff\xfe",
        {"screens": []},
        {"version": "7.0"},
        {"version": "7.0", "screens": []},
        {"version": "7.0", "screens": ["x"]},
        {"version": 7, "screens": [{}]},
        {"version": "7.0", "screens": [{}], "n": float("nan")},
        {"version": "7.0", "screens": [{}], "s": {1, 2}},
        {"version": "7.0", "screens": [{}], 1: "x"},
    ],
)
def test_structure_errors(value: Any) -> None:
    expect_limit(value, "structure")


json_leaf = st.none() | st.booleans() | st.integers() | st.text(max_size=20)
json_values = st.recursive(
    json_leaf,
    lambda children: st.lists(children, max_size=4)
    | st.dictionaries(st.text(max_size=8), children, max_size=4),
    max_leaves=30,
)


@settings(max_examples=75)
@given(extra=st.dictionaries(st.text(max_size=8), json_values, max_size=4))
def test_property_small_documents_round_trip(extra: dict[str, Any]) -> None:
    doc = {**extra, "version": "7.0", "screens": [screen([text_component()])]}
    encoded = validate_flow_json(doc)
    assert json.loads(encoded) == doc
    assert validate_flow_json(encoded) == encoded


@settings(max_examples=50)
@given(depth=st.integers(min_value=1, max_value=60))
def test_property_depth_boundary(depth: int) -> None:
    doc = flow(screen([text_component()]))
    node: dict[str, Any] = doc
    for _ in range(depth):
        node["n"] = {}
        node = node["n"]
    total = depth + 1
    if total > 16:
        expect_limit(doc, "max_depth")
        expect_limit(json.dumps(doc), "max_depth")
    else:
        validate_flow_json(doc)


@settings(max_examples=50)
@given(length=st.integers(min_value=0, max_value=1100))
def test_property_array_boundary(length: int) -> None:
    doc = flow(screen([text_component()]))
    doc["data"] = [0] * length
    if length > 1000:
        expect_limit(doc, "max_array_length")
    else:
        validate_flow_json(doc)
