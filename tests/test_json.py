"""The strict JSON decoder every inbound parse shares: finite numbers only (issue 22, item 2)."""

from __future__ import annotations

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from svc._json import loads_strict
from svc.http._requests import parse_json
from svc.webhook import InvalidJsonError, parse_envelope

# JSON number literals as the grammar spells them, exponents wide enough to overflow a float.
_INT = st.one_of(st.just("0"), st.from_regex(r"\A[1-9][0-9]{0,30}\Z"))
_FRACTION = st.from_regex(r"\A\.[0-9]{1,20}\Z")
_EXPONENT = st.builds(
    lambda e, sign, digits: f"{e}{sign}{digits}",
    st.sampled_from(["e", "E"]),
    st.sampled_from(["", "+", "-"]),
    st.integers(min_value=0, max_value=2000).map(str),
)
NUMBERS = st.builds(
    lambda minus, whole, fraction, exponent: minus + whole + fraction + exponent,
    st.sampled_from(["", "-"]),
    _INT,
    st.one_of(st.just(""), _FRACTION),
    st.one_of(st.just(""), _EXPONENT),
)


def _finite(literal: str) -> bool:
    return math.isfinite(float(literal))


@given(NUMBERS)
def test_every_json_number_is_read_when_finite_and_refused_when_not(literal: str) -> None:
    document = f'{{"n":[{literal}]}}'
    if _finite(literal):
        assert loads_strict(document) == json.loads(document)
        assert parse_json(document.encode()) == json.loads(document)
    else:
        with pytest.raises(ValueError):
            loads_strict(document)


@given(NUMBERS.filter(lambda literal: not _finite(literal)))
def test_a_non_finite_number_is_refused_by_every_inbound_parser(literal: str) -> None:
    from svc.http import HttpError

    envelope = f'{{"object":"whatsapp_business_account","entry":[{{"n":{literal}}}]}}'.encode()
    with pytest.raises(InvalidJsonError):
        parse_envelope(envelope)
    with pytest.raises(HttpError) as caught:
        parse_json(envelope)
    assert caught.value.code == "malformed_json"


@pytest.mark.parametrize("constant", ["NaN", "Infinity", "-Infinity", "1e999", "-1E+999"])
def test_the_named_non_finite_forms_are_refused(constant: str) -> None:
    with pytest.raises(ValueError):
        loads_strict(f"[{constant}]")


def test_the_depth_scan_runs_only_on_text_that_parsed() -> None:
    """Escaped quotes without an end and enough brackets to need the scan: refused by the
    parse, so the string scan (quadratic on such text) never runs; the test would take
    minutes, not milliseconds, if it did."""
    from svc._json import MAX_JSON_DEPTH

    text = "[" * (MAX_JSON_DEPTH + 1) + '"\\' * 40_000
    with pytest.raises(ValueError) as caught:
        loads_strict(text)
    assert type(caught.value) is json.JSONDecodeError
    with pytest.raises(InvalidJsonError):
        parse_envelope(text.encode())
