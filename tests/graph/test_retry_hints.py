"""Retry hints: one per registered code, the HTTP rules around them, the docs table, the client."""

from __future__ import annotations

import math
import re
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest

from svc.graph import (
    GraphApiError,
    GraphAuthError,
    GraphClient,
    GraphNetworkError,
    GraphRateLimitError,
    GraphRequestValidationError,
    GraphSerializationError,
    InvalidParameterError,
    RetryAction,
    RetryHint,
    register_error_code,
    reset_error_registry,
    resolve_error_class,
    resolve_retry_hint,
)
from svc.graph._error_codes import _BUILTINS, _HINTS, api_error_from_response

LATER = RetryAction.RETRY_LATER
REFRESH = RetryAction.REFRESH_CREDENTIALS
FIX = RetryAction.FIX_REQUEST
FINAL = RetryAction.DO_NOT_RETRY
UNKNOWN = RetryAction.UNKNOWN
DOCS = Path(__file__).resolve().parents[2] / "docs" / "graph.md"


@pytest.fixture(autouse=True)
def _fresh_registry() -> Iterator[None]:
    reset_error_registry()
    yield
    reset_error_registry()


def _codes(key: int | range) -> range:
    return key if isinstance(key, range) else range(key, key + 1)


def test_every_registered_code_has_one_hint_and_no_hint_is_stray() -> None:
    """A code added to the registry without a hint (or a hint left for a removed code) fails."""
    rows = [key for key, _ in _BUILTINS]
    assert sorted(map(repr, rows)) == sorted(map(repr, _HINTS))
    assert all(isinstance(hint, RetryHint) for hint in _HINTS.values())


@pytest.mark.parametrize("key", [key for key, _ in _BUILTINS], ids=repr)
def test_a_code_below_500_resolves_to_its_table_hint_and_the_axes_agree(key: int | range) -> None:
    for code in (_codes(key)[0], _codes(key)[-1]):
        hint = resolve_retry_hint(code, status=400)
        cls = resolve_error_class(code)
        if issubclass(cls, GraphRateLimitError):
            assert hint.action is LATER
        if issubclass(cls, GraphAuthError):
            assert hint.action is REFRESH
        error = api_error_from_response(
            status=400, payload={"error": {"code": code}}, retry_after=None
        )
        assert error.retry_hint == hint
    single = key if isinstance(key, int) else None
    if single is not None:
        assert resolve_retry_hint(single, status=400) == _HINTS[single]


@pytest.mark.parametrize(
    ("status", "code", "retry_after", "expected"),
    [
        (429, None, None, RetryHint(LATER)),
        (429, None, "7", RetryHint(LATER, 7.0)),
        (429, 100, None, RetryHint(LATER)),  # any HTTP 429 is retry-later, whatever its code
        (400, 130429, None, RetryHint(LATER, 1.0)),
        (400, 131056, None, RetryHint(LATER, 6.0)),
        (400, 131057, None, RetryHint(LATER, 60.0)),  # a throughput upgrade: up to a minute
        (400, 131057, "12", RetryHint(LATER, 12.0)),  # the platform's own wait wins
        (400, 131057, "Wed, 21 Oct 2026 07:28:00 GMT", RetryHint(LATER, 60.0)),
        (400, 4, None, RetryHint(LATER)),
        (401, 190, None, RetryHint(REFRESH)),
        (401, 0, None, RetryHint(REFRESH)),
        (403, 10, None, RetryHint(REFRESH)),
        (400, 100, "5", RetryHint(FIX)),  # a wait only on a retry-later hint
        (400, 131009, None, RetryHint(FIX)),
        (400, 131026, None, RetryHint(FINAL)),
        (400, 131049, None, RetryHint(FINAL)),
        (400, None, None, RetryHint(FIX)),  # no code: by status
        (404, 99999, None, RetryHint(FIX)),  # an unknown code: by status
        (401, None, None, RetryHint(REFRESH)),
        (408, None, None, RetryHint(LATER)),
        (500, 131000, None, RetryHint(UNKNOWN)),
        (503, 130429, "3", RetryHint(UNKNOWN)),  # 5xx: the outcome is unknown, whatever the code
        (500, 190, None, RetryHint(UNKNOWN)),
        (500, None, None, RetryHint(UNKNOWN)),
        (302, None, None, RetryHint(UNKNOWN)),
    ],
)
def test_the_http_rules_around_the_table(
    status: int, code: int | None, retry_after: str | None, expected: RetryHint
) -> None:
    assert resolve_retry_hint(code, status=status, retry_after=retry_after) == expected
    payload = {"error": {"code": code}} if code is not None else None
    error = api_error_from_response(status=status, payload=payload, retry_after=retry_after)
    assert error.retry_hint == expected


def test_the_docs_table_is_the_registry_table() -> None:
    text = DOCS.read_text(encoding="utf-8")
    rows = re.findall(r"^\| `(\w+)` \|\s*(\d+|none)?\s*\| ([^|]+) \|$", text, re.MULTILINE)
    documented: dict[str, RetryHint] = {}
    for action, after, codes in rows:
        hint = RetryHint(RetryAction(action), float(after) if after.isdigit() else None)
        for token in re.findall(r"\d+(?:-\d+)?", codes.split("(")[0]):
            start, _, end = token.partition("-")
            key: int | range = range(int(start), int(end) + 1) if end else int(start)
            assert repr(key) not in documented, key
            documented[repr(key)] = hint
    assert documented == {repr(key): hint for key, hint in _HINTS.items()}


def test_registered_codes_take_their_hint_or_the_axis_default() -> None:
    class Throttled(GraphRateLimitError):
        pass

    class Denied(GraphAuthError):
        pass

    register_error_code(4_000_001, cls=InvalidParameterError, retry_hint=RetryHint(FINAL))
    register_error_code(4_000_002, cls=Throttled)
    register_error_code(4_000_003, cls=Denied)
    register_error_code(4_000_004, cls=GraphApiError)
    register_error_code(131026, 77, cls=GraphApiError, retry_hint=RetryHint(LATER, 30))
    assert resolve_retry_hint(4_000_001, status=400) == RetryHint(FINAL)
    assert resolve_retry_hint(4_000_002, status=400) == RetryHint(LATER)
    assert resolve_retry_hint(4_000_003, status=400) == RetryHint(REFRESH)
    assert resolve_retry_hint(4_000_004, status=400) == RetryHint(FIX)
    assert resolve_retry_hint(131026, 77, status=400) == RetryHint(LATER, 30)
    assert resolve_retry_hint(131026, status=400) == RetryHint(FINAL)
    reset_error_registry()
    assert resolve_retry_hint(4_000_001, status=400) == RetryHint(FIX)
    with pytest.raises(GraphRequestValidationError):
        register_error_code(5, cls=GraphApiError, retry_hint="later")  # type: ignore[arg-type]


def test_hint_records_refuse_what_they_cannot_mean() -> None:
    assert RetryHint(LATER, 0).after == 0
    for action, after in ((FIX, 5.0), (UNKNOWN, 1.0)):
        with pytest.raises(ValueError):
            RetryHint(action, after)
    for after in (-1.0, math.inf, math.nan):
        with pytest.raises(ValueError):
            RetryHint(LATER, after)
    with pytest.raises(TypeError):
        RetryHint("retry_later", None)  # type: ignore[arg-type]
    with pytest.raises(TypeError):
        RetryHint(LATER, True)
    assert RetryHint(LATER).retry_may_succeed and RetryHint(REFRESH).retry_may_succeed
    assert not RetryHint(FIX).retry_may_succeed and not RetryHint(FINAL).retry_may_succeed
    assert not RetryHint(UNKNOWN).outcome_known and RetryHint(FINAL).outcome_known


def test_errors_built_by_hand_get_the_hint_of_their_status_and_axis() -> None:
    assert GraphApiError("x", status=400).retry_hint == RetryHint(FIX)
    assert GraphApiError("x", status=502).retry_hint == RetryHint(UNKNOWN)
    assert GraphRateLimitError("x", status=400).retry_hint == RetryHint(LATER)
    assert GraphAuthError("x", status=400).retry_hint == RetryHint(REFRESH)
    assert GraphRequestValidationError("bad").retry_hint == RetryHint(FIX)
    assert GraphSerializationError("unreadable").retry_hint == RetryHint(UNKNOWN)
    assert GraphNetworkError("x").retry_hint == RetryHint(UNKNOWN)
    assert GraphNetworkError("x", request_sent=False).retry_hint == RetryHint(LATER)


def _client(handler: httpx.MockTransport) -> GraphClient:
    return GraphClient(access_token="EAAG-token", transport=handler)


@pytest.mark.parametrize(
    ("exc", "sent", "action"),
    [
        (httpx.ConnectError("connection refused"), False, LATER),
        (httpx.ConnectTimeout("connect timed out"), False, LATER),
        (httpx.PoolTimeout("no connection free"), False, LATER),
        (httpx.ReadTimeout("no answer"), True, UNKNOWN),
        (httpx.RemoteProtocolError("peer closed"), True, UNKNOWN),
        (httpx.WriteError("broken pipe"), True, UNKNOWN),
        (OSError("reset"), True, UNKNOWN),
    ],
)
async def test_the_client_tells_a_request_never_sent_from_one_that_may_have_arrived(
    exc: Exception, sent: bool, action: RetryAction
) -> None:
    def fail(request: httpx.Request) -> httpx.Response:
        raise exc

    with pytest.raises(GraphNetworkError) as caught:
        await _client(httpx.MockTransport(fail)).request("POST", "/1/messages", json={})
    assert caught.value.request_sent is sent
    assert caught.value.retry_hint == RetryHint(action)


async def test_the_client_attaches_the_hint_of_each_answer() -> None:
    answers = [
        httpx.Response(400, json={"error": {"code": 131057, "message": "maintenance"}}),
        httpx.Response(429, headers={"Retry-After": "9"}, json={"error": {"code": 130429}}),
        httpx.Response(401, json={"error": {"code": 190}}),
        httpx.Response(400, json={"error": {"code": 131009}}),
        httpx.Response(503, json={"error": {"code": 131016}}),
    ]
    hints: list[RetryHint] = []
    client = _client(httpx.MockTransport(lambda request: answers.pop(0)))
    for _ in range(5):
        with pytest.raises(GraphApiError) as caught:
            await client.request("POST", "/1/messages", json={})
        hints.append(caught.value.retry_hint)
    assert hints == [
        RetryHint(LATER, 60.0),
        RetryHint(LATER, 9.0),
        RetryHint(REFRESH),
        RetryHint(FIX),
        RetryHint(UNKNOWN),
    ]
