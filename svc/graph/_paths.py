"""Path-segment checks: a caller's id becomes exactly one URL path segment, or is rejected.

Every helper that puts a caller-supplied value into a Graph URL path goes
through ``check_path_segment``; it is the one place the traversal rules live.
"""

from __future__ import annotations

import re
import unicodedata
from urllib.parse import quote, unquote

from svc._text import breaks_path_segment

from ._errors import GraphRequestValidationError

__all__ = ["check_path_segment"]

_IIS_UNICODE_ESCAPE = re.compile(r"%[uU][0-9a-fA-F]{4}")
_MAX_DECODE_ROUNDS = 8


def check_path_segment(value: object, *, field: str) -> str:
    """Return ``value`` percent-encoded as one path segment, or raise a validation error.

    Rejected: non-strings; empty or whitespace-only values; ``.`` and ``..``;
    ``/``, ``\\``, ``?``, ``#``; control characters (U+0000..U+001F, U+007F);
    and any percent-escape that decodes, once or repeatedly (``%2e``,
    ``%252f``, ...), to one of those or to a dot. Everything outside the
    unreserved set (letters, digits, ``-._~``) is percent-encoded, so the
    server sees the value verbatim. ``field`` names the argument in the error
    (the value itself is never echoed).
    """
    if not isinstance(value, str):
        raise GraphRequestValidationError(f"{field} must be a string", field=field)
    if not value.strip():
        raise GraphRequestValidationError(f"{field} must not be empty", field=field)
    if value in (".", ".."):
        raise GraphRequestValidationError(f"{field} must not be a dot segment", field=field)
    if breaks_path_segment(value):
        raise GraphRequestValidationError(
            f"{field} must not contain '/', '\\', '?', '#' or control characters", field=field
        )
    if _IIS_UNICODE_ESCAPE.search(value) or _decodes_to_traversal(value):
        raise GraphRequestValidationError(
            f"{field} must not contain encoded path characters", field=field
        )
    try:
        return quote(value, safe="", encoding="utf-8", errors="strict")
    except UnicodeEncodeError:
        raise GraphRequestValidationError(
            f"{field} must be valid Unicode text", field=field
        ) from None


def _decodes_to_traversal(value: str) -> bool:
    """True when decoding (repeatedly) or normalizing ``value`` yields a dot or a separator."""
    dots = value.count(".")
    stage = value
    for _ in range(_MAX_DECODE_ROUNDS):
        for form in (stage, unicodedata.normalize("NFKC", stage)):
            if form.count(".") > dots or form in (".", "..") or breaks_path_segment(form):
                return True
        decoded = unquote(stage, errors="replace")
        if decoded == stage:
            return False
        stage = decoded
    return True  # still decoding after many rounds: nobody needs that in an id
