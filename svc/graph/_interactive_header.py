"""Interactive-message headers: a text header or an image, video or document by id or link.

The input is the flat form ``{"type": "image", "id" | "link"}`` (``filename``
for documents); the output is the platform's
``{"type": "image", "image": {"id" | "link"}}``. Reply-button, CTA URL and
Flow messages take any of these; carousel cards take images and videos only.
"""

from __future__ import annotations

from collections.abc import Collection, Mapping
from typing import Any, Final, Literal, get_args

from ._errors import GraphRequestValidationError
from ._validate import check_filename, check_label, check_link, check_mapping, check_media_id

__all__ = [
    "MEDIA_HEADER_KINDS",
    "MediaHeaderKind",
    "interactive_header",
    "interactive_media_header",
]

MediaHeaderKind = Literal["image", "video", "document"]
MEDIA_HEADER_KINDS: Final[frozenset[str]] = frozenset(get_args(MediaHeaderKind))
MAX_HEADER_TEXT: Final = 60


def interactive_media_header(
    value: object, field: str = "header", *, kinds: Collection[str] = MEDIA_HEADER_KINDS
) -> dict[str, Any]:
    """The wire header of ``{"type", "id" | "link", "filename"?}``; exactly one of id or link."""
    header = check_mapping(
        value, field, allowed=("type", "id", "link", "filename"), required=("type",)
    )
    kind = header["type"]
    if not isinstance(kind, str) or kind not in kinds:
        allowed = ", ".join(sorted(kinds))
        raise GraphRequestValidationError(
            f"{field}.type must be one of {allowed}", field=f"{field}.type"
        )
    if (header.get("id") is None) == (header.get("link") is None):
        raise GraphRequestValidationError(
            f"{field} needs exactly one of id or link", field=f"{field}.id"
        )
    media: dict[str, Any] = (
        {"id": check_media_id(header["id"], f"{field}.id")}
        if header.get("id") is not None
        else {"link": check_link(header["link"], f"{field}.link")}
    )
    if header.get("filename") is not None:
        if kind != "document":
            raise GraphRequestValidationError(
                f"{field}.filename is for document headers only", field=f"{field}.filename"
            )
        media["filename"] = check_filename(header["filename"], f"{field}.filename")
    return {"type": kind, kind: media}


def interactive_header(
    header_text: object, header: Mapping[str, Any] | None
) -> dict[str, Any] | None:
    """The wire header from ``header_text`` or a media ``header`` (not both), or None."""
    if header_text is not None and header is not None:
        raise GraphRequestValidationError(
            "give header_text or a media header, not both", field="header"
        )
    if header is not None:
        return interactive_media_header(header)
    if header_text is not None:
        return {
            "type": "text",
            "text": check_label(header_text, "header_text", max_length=MAX_HEADER_TEXT),
        }
    return None
