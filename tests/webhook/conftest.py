"""Shared helpers for the webhook tests: fixture loading and reading every property."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

FIXTURES = Path(__file__).parent / "fixtures"


def load(name: str) -> dict[str, Any]:
    with (FIXTURES / name).open(encoding="utf-8") as handle:
        data: dict[str, Any] = json.load(handle)
    return data


def fixture_names() -> list[str]:
    return sorted(path.name for path in FIXTURES.glob("*.json"))


def read_all(obj: object) -> dict[str, Any]:
    """Every public property of an update (and the fields of its values), read once."""
    out: dict[str, Any] = {}
    for name in dir(type(obj)):
        if name.startswith("_"):
            continue
        if isinstance(getattr(type(obj), name, None), property):
            out[name] = getattr(obj, name)
    return out
