"""Flow JSON validation before upload: the spec's size and shape limits, checked iteratively.

The walk never recurses, so a hostile, deeply nested input fails with a
``FlowJsonValidationError`` naming ``max_depth`` instead of a ``RecursionError``.
"""

from __future__ import annotations

import json
import math
from collections.abc import Mapping
from typing import Any, Final

from svc._json import json_depth_exceeds

from ._errors import GraphRequestValidationError

__all__ = [
    "FLOW_JSON_LIMITS",
    "FlowJsonValidationError",
    "validate_flow_json",
]

MAX_DEPTH: Final = 16
MAX_ARRAY_LENGTH: Final = 1000
MAX_SCREENS: Final = 50
MAX_COMPONENTS: Final = 1000
MAX_STRING_LENGTH: Final = 16384
MAX_BYTES: Final = 131072

FLOW_JSON_LIMITS: Final[Mapping[str, int]] = {
    "max_depth": MAX_DEPTH,
    "max_array_length": MAX_ARRAY_LENGTH,
    "max_screens": MAX_SCREENS,
    "max_components": MAX_COMPONENTS,
    "max_string_length": MAX_STRING_LENGTH,
    "max_bytes": MAX_BYTES,
}
"""The spec's Flow JSON limits, by the name a ``FlowJsonValidationError.limit`` carries."""

# Raw JSON text larger than this is refused before parsing: pretty-printing
# rarely more than quadruples a document, and parsing megabytes to refuse them is waste.
_MAX_TEXT_BYTES: Final = MAX_BYTES * 8
# Keys under which a component holds further components.
_COMPONENT_LIST_KEYS: Final = ("children", "then", "else")


class FlowJsonValidationError(GraphRequestValidationError):
    """Flow JSON broke a limit or is not a Flow JSON document.

    ``limit`` is one of the keys of ``FLOW_JSON_LIMITS``, or ``"structure"``
    for a document that is not a JSON object with ``version`` and ``screens``.
    """

    def __init__(self, message: str, *, limit: str) -> None:
        super().__init__(message, field="flow_json")
        self.limit = limit


def validate_flow_json(flow_json: Mapping[str, Any] | str | bytes) -> bytes:
    """Check ``flow_json`` against every limit and return the compact UTF-8 JSON to upload.

    ``flow_json`` is a parsed document (a mapping) or its JSON text.
    """
    document = _parse(flow_json) if isinstance(flow_json, str | bytes) else flow_json
    if not isinstance(document, Mapping):
        raise FlowJsonValidationError(
            "Flow JSON must be a JSON object (a mapping)", limit="structure"
        )
    _walk(document)
    screens = _check_shape(document)
    _count_components(screens)
    encoded = json.dumps(
        document, ensure_ascii=False, separators=(",", ":"), allow_nan=False
    ).encode("utf-8")
    if len(encoded) > MAX_BYTES:
        raise FlowJsonValidationError(
            f"Flow JSON is {len(encoded)} bytes, over the max_bytes limit of {MAX_BYTES}",
            limit="max_bytes",
        )
    return encoded


def _parse(text: str | bytes) -> Any:
    raw = text.encode("utf-8", "surrogatepass") if isinstance(text, str) else text
    if len(raw) > _MAX_TEXT_BYTES:
        raise FlowJsonValidationError(
            f"Flow JSON text is {len(raw)} bytes, far over the max_bytes limit of {MAX_BYTES}",
            limit="max_bytes",
        )
    try:
        decoded = raw.decode("utf-8")
    except UnicodeDecodeError:
        raise FlowJsonValidationError(
            "Flow JSON text is not valid UTF-8", limit="structure"
        ) from None
    try:
        document = json.loads(decoded)
    except RecursionError:
        raise _depth_error() from None
    except ValueError:
        raise FlowJsonValidationError(
            "Flow JSON text is not valid JSON", limit="structure"
        ) from None
    # After the parse: the bracket scan is linear on valid JSON only.
    if json_depth_exceeds(decoded, MAX_DEPTH):
        raise _depth_error()
    return document


def _depth_error() -> FlowJsonValidationError:
    return FlowJsonValidationError(
        f"Flow JSON nests deeper than the max_depth limit of {MAX_DEPTH}", limit="max_depth"
    )


def _walk(document: Mapping[str, Any]) -> None:
    """Check depth, array lengths, strings and JSON types of every value, without recursion.

    The root object is depth 1; each nested object or array adds one. A cycle
    necessarily exceeds the depth limit, so it ends the walk too.
    """
    stack: list[tuple[Any, int]] = [(document, 1)]
    visited = 0
    while stack:
        value, depth = stack.pop()
        visited += 1
        # Every JSON value takes at least one byte, so more values than bytes cannot fit.
        if visited > MAX_BYTES:
            raise FlowJsonValidationError(
                f"Flow JSON holds more values than fit in the max_bytes limit of {MAX_BYTES}",
                limit="max_bytes",
            )
        if isinstance(value, str):
            _check_string(value)
        elif value is None or isinstance(value, bool | int):
            continue
        elif isinstance(value, float):
            if not math.isfinite(value):
                raise FlowJsonValidationError(
                    "Flow JSON numbers must be finite", limit="structure"
                )
        elif isinstance(value, Mapping | list):
            if depth > MAX_DEPTH:
                raise _depth_error()
            if isinstance(value, list):
                if len(value) > MAX_ARRAY_LENGTH:
                    raise FlowJsonValidationError(
                        f"a Flow JSON array has {len(value)} items, over the max_array_length "
                        f"limit of {MAX_ARRAY_LENGTH}",
                        limit="max_array_length",
                    )
                stack.extend((item, depth + 1) for item in value)
            else:
                for key, item in value.items():
                    if not isinstance(key, str):
                        raise FlowJsonValidationError(
                            "Flow JSON object keys must be strings", limit="structure"
                        )
                    _check_string(key)
                    stack.append((item, depth + 1))
        else:
            raise FlowJsonValidationError(
                f"Flow JSON holds a {type(value).__name__}, which is not a JSON value",
                limit="structure",
            )


def _check_string(value: str) -> None:
    if len(value) > MAX_STRING_LENGTH:
        raise FlowJsonValidationError(
            f"a Flow JSON string has {len(value)} characters, over the max_string_length "
            f"limit of {MAX_STRING_LENGTH}",
            limit="max_string_length",
        )


def _check_shape(document: Mapping[str, Any]) -> list[Any]:
    version = document.get("version")
    if not isinstance(version, str) or not version:
        raise FlowJsonValidationError(
            "Flow JSON needs a non-empty string 'version'", limit="structure"
        )
    screens = document.get("screens")
    if not isinstance(screens, list) or not screens:
        raise FlowJsonValidationError(
            "Flow JSON needs a non-empty 'screens' array", limit="structure"
        )
    if len(screens) > MAX_SCREENS:
        raise FlowJsonValidationError(
            f"Flow JSON has {len(screens)} screens, over the max_screens limit of {MAX_SCREENS}",
            limit="max_screens",
        )
    if not all(isinstance(screen, Mapping) for screen in screens):
        raise FlowJsonValidationError("every Flow JSON screen must be an object", limit="structure")
    return screens


def _count_components(screens: list[Any]) -> None:
    """Count component objects in every screen's layout, nested ones included.

    Components live in ``layout.children`` and, inside a component, in
    ``children``, ``then``, ``else`` and each list under ``cases``.
    """
    count = 0
    pending: list[Any] = []
    for screen in screens:
        layout = screen.get("layout")
        if isinstance(layout, Mapping):
            pending.extend(_component_lists(layout))
    while pending:
        items = pending.pop()
        for item in items:
            if not isinstance(item, Mapping):
                continue
            count += 1
            if count > MAX_COMPONENTS:
                raise FlowJsonValidationError(
                    f"Flow JSON has more than {MAX_COMPONENTS} components, over the "
                    "max_components limit",
                    limit="max_components",
                )
            pending.extend(_component_lists(item))


def _component_lists(node: Mapping[str, Any]) -> list[list[Any]]:
    lists = [node[key] for key in _COMPONENT_LIST_KEYS if isinstance(node.get(key), list)]
    cases = node.get("cases")
    if isinstance(cases, Mapping):
        lists.extend(branch for branch in cases.values() if isinstance(branch, list))
    return lists
