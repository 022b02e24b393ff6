"""Template send components: typed builders for the platform's header, body and button wire form.

Each builder validates its inputs (``GraphRequestValidationError`` naming the
argument) and returns the exact JSON object the platform reads inside
``template.components``, with lower-case ``type`` and ``sub_type``. They
compose with ``send_template(components=[...])`` and ``check_template_send``.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, get_args

from ._content_messages import media_object
from ._errors import GraphRequestValidationError
from ._validate import (
    CURRENCY_CODE,
    PARAMETER_NAME,
    check_int,
    check_label,
    check_latitude,
    check_longitude,
    check_sequence,
    check_text,
    checked_objects,
)

__all__ = [
    "TEMPLATE_BUTTON_SUB_TYPES",
    "build_template_body",
    "build_template_catalog_button",
    "build_template_copy_code_button",
    "build_template_flow_button",
    "build_template_header_location",
    "build_template_header_media",
    "build_template_header_text",
    "build_template_otp_button",
    "build_template_quick_reply_button",
    "build_template_url_button",
    "template_currency_parameter",
    "template_date_time_parameter",
    "template_text_parameter",
]

Component = dict[str, Any]
TemplateMediaKind = Literal["image", "video", "document"]

TEMPLATE_BUTTON_SUB_TYPES: Final = frozenset(
    {"url", "quick_reply", "copy_code", "flow", "catalog", "mpm"}
)
"""Button ``sub_type`` values a template send may carry."""

MAX_BUTTON_INDEX: Final = 9
MAX_TEMPLATE_PARAMETER_TEXT: Final = 32768
MAX_HEADER_PARAMETER_TEXT: Final = 60
MAX_BUTTON_PARAMETER_TEXT: Final = 2000
MAX_QUICK_REPLY_PAYLOAD: Final = 256
MAX_COUPON_CODE: Final = 15
MAX_OTP_CODE: Final = 15
MAX_FALLBACK_VALUE: Final = 1024
MAX_BODY_PARAMETERS: Final = 100

_MEDIA_KINDS: Final[frozenset[str]] = frozenset(get_args(TemplateMediaKind))
BODY_PARAMETER_TYPES: Final = frozenset({"text", "currency", "date_time"})
"""The parameter types a template body takes (a send builds them; a check reads them)."""


def _parameter_name(value: object) -> str:
    if not isinstance(value, str) or not PARAMETER_NAME.fullmatch(value) or len(value) > 512:
        raise GraphRequestValidationError(
            "parameter_name must be lower-case letters, digits and underscores, "
            "starting with a letter or underscore",
            field="parameter_name",
        )
    return value


def _named(parameter: Component, parameter_name: str | None) -> Component:
    if parameter_name is not None:
        parameter["parameter_name"] = _parameter_name(parameter_name)
    return parameter


# --- parameters ------------------------------------------------------------------------


def template_text_parameter(text: str, *, parameter_name: str | None = None) -> Component:
    """A text parameter; ``parameter_name`` fills a named placeholder (``{{first_name}}``)."""
    parameter: Component = {
        "type": "text",
        "text": check_text(text, "text", max_length=MAX_TEMPLATE_PARAMETER_TEXT),
    }
    return _named(parameter, parameter_name)


def template_currency_parameter(
    *,
    fallback_value: str,
    code: str,
    amount_1000: int,
    parameter_name: str | None = None,
) -> Component:
    """A currency parameter: ISO 4217 ``code`` and the amount times 1000 (``amount_1000``)."""
    if not isinstance(code, str) or not CURRENCY_CODE.fullmatch(code):
        raise GraphRequestValidationError(
            "code must be an ISO 4217 currency code such as USD", field="code"
        )
    parameter: Component = {
        "type": "currency",
        "currency": {
            "fallback_value": check_label(
                fallback_value, "fallback_value", max_length=MAX_FALLBACK_VALUE
            ),
            "code": code,
            "amount_1000": check_int(amount_1000, "amount_1000", minimum=-(2**53), maximum=2**53),
        },
    }
    return _named(parameter, parameter_name)


_CALENDARS = frozenset({"GREGORIAN", "SOLAR_HIJRI"})
# date_time part -> (minimum, maximum), in the wire's order after ``calendar``.
_DATE_TIME_PARTS: Final = {
    "day_of_week": (1, 7),
    "year": (1, 9999),
    "month": (1, 12),
    "day_of_month": (1, 31),
    "hour": (0, 23),
    "minute": (0, 59),
}


def template_date_time_parameter(
    *,
    fallback_value: str,
    calendar: Literal["GREGORIAN", "SOLAR_HIJRI"] | None = None,
    day_of_week: int | None = None,
    year: int | None = None,
    month: int | None = None,
    day_of_month: int | None = None,
    hour: int | None = None,
    minute: int | None = None,
    parameter_name: str | None = None,
) -> Component:
    """A date-time parameter: ``fallback_value`` and the date's parts, each sent when given.

    The platform shows ``fallback_value`` (it no longer localizes the parts),
    but the parts are the documented object and Meta's own examples send
    them: ``calendar`` (``GREGORIAN`` or ``SOLAR_HIJRI``), ``day_of_week``
    1..7 (Monday 1), ``year``, ``month`` 1..12, ``day_of_month`` 1..31,
    ``hour`` 0..23 and ``minute`` 0..59.
    """
    date_time: Component = {
        "fallback_value": check_label(
            fallback_value, "fallback_value", max_length=MAX_FALLBACK_VALUE
        )
    }
    if calendar is not None:
        if not isinstance(calendar, str) or calendar not in _CALENDARS:
            raise GraphRequestValidationError(
                "calendar must be GREGORIAN or SOLAR_HIJRI", field="calendar"
            )
        date_time["calendar"] = calendar
    given = {
        "day_of_week": day_of_week,
        "year": year,
        "month": month,
        "day_of_month": day_of_month,
        "hour": hour,
        "minute": minute,
    }
    for part, (low, high) in _DATE_TIME_PARTS.items():
        value = given[part]
        if value is not None:
            date_time[part] = check_int(value, part, minimum=low, maximum=high)
    return _named({"type": "date_time", "date_time": date_time}, parameter_name)


# --- header ----------------------------------------------------------------------------


def build_template_header_text(text: str, *, parameter_name: str | None = None) -> Component:
    """A text header's one parameter (``{{1}}`` or the named ``parameter_name``)."""
    parameter: Component = {
        "type": "text",
        "text": check_label(text, "text", max_length=MAX_HEADER_PARAMETER_TEXT),
    }
    return {"type": "header", "parameters": [_named(parameter, parameter_name)]}


def build_template_header_media(
    kind: TemplateMediaKind,
    *,
    media_id: str | None = None,
    link: str | None = None,
    filename: str | None = None,
) -> Component:
    """An image, video or document header by ``media_id`` or ``link`` (``filename``: documents)."""
    if not isinstance(kind, str) or kind not in _MEDIA_KINDS:
        raise GraphRequestValidationError(
            "kind must be one of document, image, video", field="kind"
        )
    # The media rules of the message builders: id xor link, filename for documents only.
    name, media = media_object(
        kind, media_id=media_id, link=link, caption=None, filename=filename, voice=None
    )
    return {"type": "header", "parameters": [{"type": name, name: media}]}


def build_template_header_location(
    *,
    latitude: float,
    longitude: float,
    name: str | None = None,
    address: str | None = None,
) -> Component:
    """A location header: finite coordinates, optional ``name`` and ``address``."""
    location: Component = {
        "latitude": check_latitude(latitude),
        "longitude": check_longitude(longitude),
    }
    if name is not None:
        location["name"] = check_label(name, "name", max_length=1024)
    if address is not None:
        location["address"] = check_text(address, "address", max_length=1024)
    return {"type": "header", "parameters": [{"type": "location", "location": location}]}


# --- body ------------------------------------------------------------------------------


def build_template_body(parameters: Sequence[Mapping[str, Any]]) -> Component:
    """A body component from ``template_*_parameter`` values, in placeholder order.

    Either every parameter is named or none is (the platform does not mix them).
    """
    items = check_sequence(parameters, "parameters", minimum=1, maximum=MAX_BODY_PARAMETERS)
    out: list[Component] = []
    for field, parameter in checked_objects(
        items,
        "parameters",
        allowed=("type", "text", "currency", "date_time", "parameter_name"),
        required=("type",),
    ):
        kind = parameter["type"]
        if kind not in BODY_PARAMETER_TYPES or parameter.get(kind) is None:
            raise GraphRequestValidationError(
                f"{field} must be a text, currency or date_time parameter", field=f"{field}.type"
            )
        out.append(dict(parameter))
    named = {"parameter_name" in parameter for parameter in out}
    if len(named) > 1:
        raise GraphRequestValidationError(
            "parameters must be all named or all positional", field="parameters"
        )
    return {"type": "body", "parameters": out}


# --- buttons ---------------------------------------------------------------------------


def _button(sub_type: str, index: int, parameter: Component) -> Component:
    return {
        "type": "button",
        "sub_type": sub_type,
        "index": str(check_int(index, "index", minimum=0, maximum=MAX_BUTTON_INDEX)),
        "parameters": [parameter],
    }


def build_template_url_button(*, index: int, text: str) -> Component:
    """The variable part of a dynamic URL button (the ``{{1}}`` of its URL)."""
    value = check_label(text, "text", max_length=MAX_BUTTON_PARAMETER_TEXT)
    return _button("url", index, {"type": "text", "text": value})


def build_template_quick_reply_button(
    *, index: int, payload: str | None = None, text: str | None = None
) -> Component:
    """The payload a quick-reply button returns in the reply webhook.

    ``text`` instead of ``payload`` sends the parameter as ``{"type": "text"}``,
    the form Meta's own example of the ``sample_issue_resolution`` template uses.
    """
    if (payload is None) == (text is None):
        raise GraphRequestValidationError("give exactly one of payload or text", field="payload")
    if text is not None:
        value = check_label(text, "text", max_length=MAX_QUICK_REPLY_PAYLOAD)
        return _button("quick_reply", index, {"type": "text", "text": value})
    value = check_label(payload, "payload", max_length=MAX_QUICK_REPLY_PAYLOAD)
    return _button("quick_reply", index, {"type": "payload", "payload": value})


def build_template_copy_code_button(*, index: int, coupon_code: str) -> Component:
    """The coupon code a copy-code button copies (at most 15 characters)."""
    value = check_label(coupon_code, "coupon_code", max_length=MAX_COUPON_CODE)
    return _button("copy_code", index, {"type": "coupon_code", "coupon_code": value})


def build_template_flow_button(
    *,
    index: int,
    flow_token: str | None = None,
    flow_action_data: Mapping[str, Any] | None = None,
) -> Component:
    """A Flow button's action: an optional ``flow_token`` and initial ``flow_action_data``."""
    action: Component = {}
    if flow_token is not None:
        action["flow_token"] = check_label(flow_token, "flow_token", max_length=2048)
    if flow_action_data is not None:
        if not isinstance(flow_action_data, Mapping) or not all(
            isinstance(key, str) for key in flow_action_data
        ):
            raise GraphRequestValidationError(
                "flow_action_data must be an object", field="flow_action_data"
            )
        action["flow_action_data"] = dict(flow_action_data)
    return _button("flow", index, {"type": "action", "action": action})


def build_template_catalog_button(
    *, index: int = 0, thumbnail_product_retailer_id: str | None = None
) -> Component:
    """A catalog button, optionally choosing the product shown as thumbnail.

    Written as the platform's catalog-template reference writes it:
    ``"sub_type": "CATALOG"`` and a numeric ``index`` (the platform reads the
    sub-type in any case and the index as a number or a digit string).
    Without a thumbnail the button carries no ``parameters`` (the platform then
    shows the catalog's first item), never an empty ``action``.
    """
    button: Component = {
        "type": "button",
        "sub_type": "CATALOG",
        "index": check_int(index, "index", minimum=0, maximum=MAX_BUTTON_INDEX),
    }
    if thumbnail_product_retailer_id is None:
        return button
    thumbnail = check_label(
        thumbnail_product_retailer_id, "thumbnail_product_retailer_id", max_length=256
    )
    button["parameters"] = [
        {"type": "action", "action": {"thumbnail_product_retailer_id": thumbnail}}
    ]
    return button


def build_template_otp_button(*, code: str, index: int = 0) -> Component:
    """The one-time password of an authentication template's copy-code, one-tap or zero-tap button.

    All three OTP kinds take the code the same way on the wire: a ``url``
    sub-type button whose text parameter is the code.
    """
    value = check_label(code, "code", max_length=MAX_OTP_CODE)
    return _button("url", index, {"type": "text", "text": value})
