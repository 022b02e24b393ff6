"""Typed template updates: status, category, quality and components changes of a template.

Read from the change value of the ``message_template_status_update``,
``template_category_update``, ``message_template_quality_update`` and
``message_template_components_update`` fields (``AccountUpdate.details``).
Every field is optional: the platform leaves out what does not apply and
adds fields over time, and the raw value stays on the update.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Final, TypeAlias, TypedDict

from ._read import read_dict, read_graph_id, read_objects, read_str, read_strs, read_timestamp

__all__ = [
    "TemplateCategoryChange",
    "TemplateChange",
    "TemplateComponentButton",
    "TemplateComponentsChange",
    "TemplateOtherInfo",
    "TemplateQualityChange",
    "TemplateRejection",
    "TemplateStatusChange",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateRejection:
    """Why a template was rejected (``rejection_info``) and what the platform recommends."""

    reason: str | None = None
    recommendation: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateOtherInfo:
    """The ``other_info`` of a locked or unlocked template: a title and a description."""

    title: str | None = None
    description: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class _TemplateRef:
    """The template a change is about: its id (a string), name and language code."""

    template_id: str | None = None
    name: str | None = None
    language: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateStatusChange(_TemplateRef):
    """``message_template_status_update``: approved, rejected, paused, disabled, archived...

    ``event`` is the new status (``APPROVED``, ``REJECTED``, ``PAUSED``,
    ``DISABLED``, ...), ``reason`` the platform's reason word (``NONE`` when
    none), ``category`` the template category, ``disable_date`` the disable
    time (Unix seconds) of a disabled template.
    """

    event: str | None = None
    reason: str | None = None
    category: str | None = None
    rejection: TemplateRejection | None = None
    disable_date: int | None = None
    other_info: TemplateOtherInfo | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateCategoryChange(_TemplateRef):
    """``template_category_update``: the platform changed (or will change) a template's category.

    ``correct_category`` is the category the platform found right, when it
    sends one ahead of the change.
    """

    previous_category: str | None = None
    new_category: str | None = None
    correct_category: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateQualityChange(_TemplateRef):
    """``message_template_quality_update``: ``GREEN``, ``YELLOW``, ``RED`` or ``UNKNOWN``."""

    previous_quality_score: str | None = None
    new_quality_score: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateComponentButton:
    """One button of a template's components (``URL``, ``PHONE_NUMBER``, ``QUICK_REPLY``...)."""

    type: str | None = None
    text: str | None = None
    url: str | None = None
    phone_number: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateComponentsChange(_TemplateRef):
    """``message_template_components_update``: a template's components were edited.

    ``body`` is the body text (``message_template_element``), ``header`` the
    text header (``message_template_title``), ``footer`` the footer text.
    """

    body: str | None = None
    header: str | None = None
    footer: str | None = None
    buttons: tuple[TemplateComponentButton, ...] = ()


TemplateChange: TypeAlias = (
    TemplateStatusChange | TemplateCategoryChange | TemplateQualityChange | TemplateComponentsChange
)


class _Ref(TypedDict):
    template_id: str | None
    name: str | None
    language: str | None


def _ref(value: Mapping[str, Any]) -> _Ref:
    """The fields naming the template every template change carries."""
    return {
        "template_id": read_graph_id(value.get("message_template_id")),
        "name": read_str(value.get("message_template_name")),
        "language": read_str(value.get("message_template_language")),
    }


def _status(value: Mapping[str, Any]) -> TemplateChange:
    rejection = value.get("rejection_info")
    other = value.get("other_info")
    return TemplateStatusChange(
        **_ref(value),
        **read_strs(value, "event", "reason"),
        category=read_str(value.get("message_template_category")),
        rejection=(
            TemplateRejection(**read_strs(rejection, "reason", "recommendation"))
            if type(rejection) is dict
            else None
        ),
        disable_date=read_timestamp(read_dict(value.get("disable_info")).get("disable_date")),
        other_info=(
            TemplateOtherInfo(**read_strs(other, "title", "description"))
            if type(other) is dict
            else None
        ),
    )


def _category(value: Mapping[str, Any]) -> TemplateChange:
    return TemplateCategoryChange(
        **_ref(value),
        **read_strs(value, "previous_category", "new_category", "correct_category"),
    )


def _quality(value: Mapping[str, Any]) -> TemplateChange:
    return TemplateQualityChange(
        **_ref(value),
        **read_strs(value, "previous_quality_score", "new_quality_score"),
    )


def _components(value: Mapping[str, Any]) -> TemplateChange:
    return TemplateComponentsChange(
        **_ref(value),
        body=read_str(value.get("message_template_element")),
        header=read_str(value.get("message_template_title")),
        footer=read_str(value.get("message_template_footer")),
        buttons=tuple(
            TemplateComponentButton(
                type=read_str(b.get("message_template_button_type")),
                text=read_str(b.get("message_template_button_text")),
                url=read_str(b.get("message_template_button_url")),
                phone_number=read_str(b.get("message_template_button_phone_number")),
            )
            for b in read_objects(value.get("message_template_buttons"))
        ),
    )


TEMPLATE_READERS: Final[Mapping[str, Callable[[Mapping[str, Any]], TemplateChange]]] = {
    "message_template_status_update": _status,
    "template_category_update": _category,
    "message_template_quality_update": _quality,
    "message_template_components_update": _components,
}
"""field -> the reader of its change value (a ``TemplateChange``)."""
