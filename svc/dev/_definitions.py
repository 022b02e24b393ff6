"""The Flow JSON and template definitions a dev folder holds, found for the bot's sends.

``flows/<flow id or name>.json`` is a Flow's JSON (as the Flow Builder exports it);
``templates/<name>.json`` is a template's definition in the platform's shape (``name``,
``language``, ``components``: HEADER, BODY, FOOTER, BUTTONS with ``{{1}}`` placeholders),
or a list of such definitions, one per language. ``definition_of(folder, payload)`` gives
the one a send names, which the page draws a form or a filled template from; None when
the folder has none (or it is not a JSON object), and the page draws the send as it is.
"""

from __future__ import annotations

import json
import re
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Final

__all__ = ["definition_of"]

_FILE_NAME: Final = re.compile(r"[A-Za-z0-9][A-Za-z0-9_.-]{0,127}")
MAX_DEFINITION: Final = 1024 * 1024
"""A definition file larger than this is not read (the platform's Flow JSON cap is 10 MiB;
a dev folder's is smaller, as the page receives it on every send)."""


def _read(folder: Path, name: object) -> Any:
    """The JSON of ``folder/<name>.json``, None when absent, unreadable or oversized."""
    if not isinstance(name, str) or not _FILE_NAME.fullmatch(name) or ".." in name:
        return None
    path = folder / f"{name}.json"
    try:
        if path.stat().st_size > MAX_DEFINITION:
            return None
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None


def _flow(folder: Path, parameters: Mapping[str, Any]) -> dict[str, Any] | None:
    for key in ("flow_id", "flow_name"):
        found = _read(folder / "flows", parameters.get(key))
        if isinstance(found, dict) and isinstance(found.get("screens"), list):
            return found
    return None


def _template(folder: Path, template: Mapping[str, Any]) -> dict[str, Any] | None:
    found = _read(folder / "templates", template.get("name"))
    choices = found if isinstance(found, list) else [found]
    definitions = [d for d in choices if isinstance(d, dict)]
    language = template.get("language")
    code = language.get("code") if isinstance(language, Mapping) else None
    for definition in definitions:
        if definition.get("language") == code:
            return definition
    return definitions[0] if definitions else None


def definition_of(folder: Path, payload: object) -> dict[str, Any] | None:
    """The Flow JSON of a Flow message, or the definition of a template message, that
    ``folder`` holds; None for any other send or one the folder does not know."""
    if not isinstance(payload, Mapping):
        return None
    kind = payload.get("type")
    body = payload.get(kind) if isinstance(kind, str) else None
    if not isinstance(body, Mapping):
        return None
    if kind == "template":
        return _template(folder, body)
    action = body.get("action")
    if kind == "interactive" and body.get("type") == "flow" and isinstance(action, Mapping):
        parameters = action.get("parameters")
        if isinstance(parameters, Mapping):
            return _flow(folder, parameters)
    return None
