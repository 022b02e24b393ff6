"""A finished HTTP answer (``Reply``) and the compact JSON every svc answer is written in."""

from __future__ import annotations

import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from ._errors import HttpError

__all__ = ["JSON_TYPE", "Reply", "error_reply", "json_bytes"]

JSON_TYPE: Final = "application/json"


@dataclass(frozen=True, slots=True)
class Reply:
    """A finished answer: status, body bytes, content type and extra headers."""

    status: int
    body: bytes
    content_type: str = JSON_TYPE
    headers: Mapping[str, str] = field(default_factory=dict)


# The encoder json.dumps(data, separators=(",", ":"), ensure_ascii=False) would build on
# every call (non-default arguments skip its cached default encoder), built once: same output.
_JSON_ENCODER = json.JSONEncoder(separators=(",", ":"), ensure_ascii=False)
_ASCII_ENCODER = json.JSONEncoder(separators=(",", ":"))


def json_bytes(data: object) -> bytes:
    """Compact UTF-8 JSON; all in ASCII escapes when a text holds a lone surrogate (an
    upstream answer's ``\\ud800``), which UTF-8 cannot carry: the same JSON, never a 500."""
    try:
        return _JSON_ENCODER.encode(data).encode("utf-8")
    except UnicodeEncodeError:
        return _ASCII_ENCODER.encode(data).encode("ascii")


def error_reply(error: HttpError) -> Reply:
    """The JSON answer of an ``HttpError``: its status, body and headers."""
    return Reply(error.status, json_bytes(error.body()), headers=error.headers)
