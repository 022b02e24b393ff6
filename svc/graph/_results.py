"""Typed results more than one helper returns, and ``Template``, which the send path reads.

Each admin helper module defines the results it alone returns beside it
(``_groups.Group``, ``_calling.CallResult``, ...), so a new endpoint is a
one-file change; this module keeps the cursor ``Page``, ``Success`` and
``CreatedObject`` that many helpers share, and ``Template``, which
``_send`` and ``_template_check`` check a template send against. Every
result keeps the upstream answer in ``raw`` (never a secret: these are Graph
answers), and ``from_api`` raises ``GraphSerializationError`` when a field
the helper relies on is missing.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Generic, TypeVar

from ._errors import GraphSerializationError
from ._optimization import OptimizationSpec
from ._parse import ApiRecord, Raw, as_object, object_list, opt_object, opt_str, read_record

__all__ = ["CreatedObject", "Page", "Success", "Template"]

T = TypeVar("T")


# --- shared ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class Page(Generic[T]):
    """One page of a cursor-paged list: ``items`` plus the ``paging`` cursors.

    ``next_cursor`` is the ``after`` cursor when the platform says there is a
    next page (``paging.next`` present), else ``None``: the last page.
    """

    items: tuple[T, ...]
    before: str | None
    after: str | None
    next_url: str | None
    raw: Raw

    @property
    def next_cursor(self) -> str | None:
        return self.after if self.after and self.next_url else None

    @classmethod
    def from_api(
        cls,
        raw: Any,
        parse_item: Callable[[Raw], T],
        *,
        what: str,
        nested_key: str | None = None,
    ) -> Page[T]:
        """Parse ``{"data": [...], "paging": {...}}``; ``nested_key`` reads ``data[nested_key]``."""
        obj = as_object(raw, what=what)
        data: Any = obj.get("data")
        if nested_key is not None and isinstance(data, Mapping):
            data = data.get(nested_key)
        if data is None:
            data = []
        if not isinstance(data, list):
            raise GraphSerializationError(f"{what}: 'data' is not a list")
        paging = opt_object(obj, "paging") or {}
        cursors = opt_object(paging, "cursors") or {}
        return cls(
            items=tuple(parse_item(item) for item in object_list(data)),
            before=opt_str(cursors, "before"),
            after=opt_str(cursors, "after"),
            next_url=opt_str(paging, "next"),
            raw=obj,
        )


@dataclass(frozen=True, slots=True, kw_only=True)
class Success:
    """An answer of the form ``{"success": true}`` (some edges send the string ``"true"``)."""

    success: bool
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any, *, what: str = "answer") -> Success:
        obj = as_object(raw, what=what)
        return cls(success=obj.get("success") in (True, "true"), raw=obj)


@dataclass(frozen=True, slots=True, kw_only=True)
class CreatedObject(ApiRecord):
    """An answer carrying the ``id`` of what was created (``{"id": "..."}``)."""

    _what = "answer"

    id: str
    success: bool | None
    raw: Raw


@dataclass(frozen=True, slots=True, kw_only=True)
class Template:
    """A message template (list item or ``GET /{template_id}``)."""

    id: str
    name: str | None
    status: str | None
    category: str | None
    language: str | None
    components: tuple[Raw, ...]
    rejected_reason: str | None
    quality_score: str | None
    raw: Raw
    optimization_spec: OptimizationSpec | None = None

    @classmethod
    def from_api(cls, raw: Any) -> Template:
        obj = as_object(raw, what="template")
        quality = opt_object(obj, "quality_score") or {}
        return read_record(cls, obj, what="template", quality_score=opt_str(quality, "score"))
