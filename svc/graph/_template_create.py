"""Template creation components: typed builders for ``create_template(components=[...])``.

Each builder checks its inputs against the platform's documented limits
(``GraphRequestValidationError`` naming the argument and the limit) and
returns the component or button object in the platform's creation form.
Placeholders are positional (``{{1}}``, ``{{2}}``, numbered from 1 without
gaps) or named (``{{first_name}}``), never both; examples must match them.
OTP buttons come from ``build_otp_button``.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Any, Final, Literal, get_args

from ._errors import GraphRequestValidationError
from ._validate import (
    PARAMETER_NAME,
    PLACEHOLDER,
    check_bool,
    check_choice,
    check_id,
    check_label,
    check_sequence,
    check_text,
)

__all__ = [
    "build_definition_body",
    "build_definition_buttons",
    "build_definition_catalog_button",
    "build_definition_copy_code_button",
    "build_definition_flow_button",
    "build_definition_footer",
    "build_definition_header_location",
    "build_definition_header_media",
    "build_definition_header_product",
    "build_definition_header_text",
    "build_definition_limited_time_offer",
    "build_definition_mpm_button",
    "build_definition_phone_number_button",
    "build_definition_quick_reply_button",
    "build_definition_request_contact_info_button",
    "build_definition_url_button",
]

Component = dict[str, Any]
DefinitionMediaFormat = Literal["IMAGE", "VIDEO", "DOCUMENT", "GIF"]

MAX_DEFINITION_HEADER_TEXT: Final = 60
MAX_DEFINITION_BODY: Final = 1024
MAX_DEFINITION_FOOTER: Final = 60
MAX_DEFINITION_BUTTON_TEXT: Final = 25
MAX_DEFINITION_URL: Final = 2000
MAX_DEFINITION_PHONE: Final = 20
MAX_DEFINITION_COPY_CODE: Final = 15
MAX_DEFINITION_OFFER_TEXT: Final = 16
MAX_DEFINITION_BUTTONS: Final = 10
MAX_DEFINITION_EXAMPLE: Final = 1024
MAX_HEADER_HANDLE: Final = 4096
# At most this many buttons of one kind in a template.
MAX_BUTTONS_OF_KIND: Final[Mapping[str, int]] = {
    "URL": 2,
    "PHONE_NUMBER": 1,
    "COPY_CODE": 1,
    "FLOW": 1,
    "CATALOG": 1,
    "MPM": 1,
    "REQUEST_CONTACT_INFO": 1,
    "OTP": 1,
}

_MEDIA_FORMATS: Final[frozenset[str]] = frozenset(get_args(DefinitionMediaFormat))
_FLOW_ACTIONS: Final = frozenset({"navigate", "data_exchange"})
_FLOW_ICONS: Final = frozenset({"DOCUMENT", "PROMOTION", "REVIEW"})


def _placeholders(text: str, field: str) -> tuple[list[str], bool]:
    """The distinct placeholders in order, and whether they are named."""
    names = list(dict.fromkeys(PLACEHOLDER.findall(text)))
    numeric = [name.isdigit() for name in names]
    if names and any(numeric) and not all(numeric):
        raise GraphRequestValidationError(
            f"{field} mixes positional and named placeholders", field=field
        )
    if names and all(numeric):
        if sorted(int(name) for name in names) != list(range(1, len(names) + 1)):
            raise GraphRequestValidationError(
                f"{field} placeholders must be {{{{1}}}}..{{{{{len(names)}}}}} without gaps",
                field=field,
            )
        return sorted(names, key=int), False
    for name in names:
        if not PARAMETER_NAME.fullmatch(name):
            raise GraphRequestValidationError(
                f"{field} placeholder {{{{{name}}}}} must be lower-case letters, digits and _",
                field=field,
            )
    return names, bool(names)


def _example(value: object, field: str) -> str:
    return check_label(value, field, max_length=MAX_DEFINITION_EXAMPLE)


def _examples(
    names: list[str], named: bool, examples: object, field: str, key: str
) -> dict[str, Any] | None:
    """The ``example`` object for ``names``: ``{key: [...]}`` or ``{key_named_params: [...]}``."""
    if not names:
        if examples is not None:
            raise GraphRequestValidationError(
                f"{field} has no placeholders to exemplify", field="examples"
            )
        return None
    if named:
        if not isinstance(examples, Mapping) or set(examples) != set(names):
            raise GraphRequestValidationError(
                f"examples must map each placeholder ({', '.join(names)}) to an example",
                field="examples",
            )
        return {
            f"{key}_named_params": [
                {"param_name": name, "example": _example(examples[name], f"examples.{name}")}
                for name in names
            ]
        }
    items = check_sequence(examples, "examples", minimum=len(names), maximum=len(names))
    values = [_example(item, f"examples[{index}]") for index, item in enumerate(items)]
    return {key: [values] if key == "body_text" else values}


# --- header, body, footer --------------------------------------------------------------


def build_definition_header_text(text: str, *, example: str | None = None) -> Component:
    """A text header (<= 60) with at most one placeholder, which needs its ``example``."""
    checked = check_label(text, "text", max_length=MAX_DEFINITION_HEADER_TEXT)
    names, named = _placeholders(checked, "text")
    if len(names) > 1:
        raise GraphRequestValidationError("a header holds at most one placeholder", field="text")
    component: Component = {"type": "HEADER", "format": "TEXT", "text": checked}
    given: object = None
    if example is not None:
        given = {names[0]: example} if named and names else [example]
    wire = _examples(names, named, given, "text", "header_text")
    if wire is not None:
        component["example"] = wire
    return component


def build_definition_header_media(
    format: DefinitionMediaFormat, *, header_handle: str
) -> Component:
    """An image, video, document or GIF header with its example's upload ``header_handle``."""
    kind = check_choice(format, "format", _MEDIA_FORMATS)
    handle = check_id(header_handle, "header_handle", max_length=MAX_HEADER_HANDLE)
    return {"type": "HEADER", "format": kind, "example": {"header_handle": [handle]}}


def build_definition_header_location() -> Component:
    """A location header (the location itself is given when sending)."""
    return {"type": "HEADER", "format": "LOCATION"}


def build_definition_header_product() -> Component:
    """A product header (single-product templates; the product is given when sending)."""
    return {"type": "HEADER", "format": "PRODUCT"}


def build_definition_body(
    text: str, *, examples: Sequence[str] | Mapping[str, str] | None = None
) -> Component:
    """The body (<= 1024); ``examples`` is a list for ``{{1}}``.. or a mapping for named ones."""
    checked = check_text(text, "text", max_length=MAX_DEFINITION_BODY)
    names, named = _placeholders(checked, "text")
    component: Component = {"type": "BODY", "text": checked}
    wire = _examples(names, named, examples, "text", "body_text")
    if wire is not None:
        component["example"] = wire
    return component


def build_definition_footer(text: str) -> Component:
    """A footer: fixed text of at most 60 characters."""
    return {"type": "FOOTER", "text": check_label(text, "text", max_length=MAX_DEFINITION_FOOTER)}


def build_definition_limited_time_offer(text: str, *, has_expiration: bool) -> Component:
    """A limited-time-offer component: its headline (<= 16) and whether it shows an expiry."""
    offer = {
        "text": check_label(text, "text", max_length=MAX_DEFINITION_OFFER_TEXT),
        "has_expiration": check_bool(has_expiration, "has_expiration"),
    }
    return {"type": "LIMITED_TIME_OFFER", "limited_time_offer": offer}


# --- buttons ---------------------------------------------------------------------------


def _text(value: object) -> str:
    return check_label(value, "text", max_length=MAX_DEFINITION_BUTTON_TEXT)


def build_definition_quick_reply_button(text: str) -> Component:
    """A quick-reply button (label <= 25)."""
    return {"type": "QUICK_REPLY", "text": _text(text)}


def build_definition_url_button(text: str, *, url: str, example: str | None = None) -> Component:
    """A URL button; a dynamic URL ends in ``{{1}}`` and needs a full ``example`` URL."""
    checked = check_label(url, "url", max_length=MAX_DEFINITION_URL)
    if not checked.startswith(("https://", "http://")):
        raise GraphRequestValidationError("url must start with http:// or https://", field="url")
    names = PLACEHOLDER.findall(checked)
    button: Component = {"type": "URL", "text": _text(text), "url": checked}
    if names:
        if names != ["1"] or not re.search(r"\{\{\s*1\s*\}\}$", checked):
            raise GraphRequestValidationError(
                "a dynamic url holds one {{1}}, at its end", field="url"
            )
        if example is None:
            raise GraphRequestValidationError("a dynamic url needs an example", field="example")
        button["example"] = [check_label(example, "example", max_length=MAX_DEFINITION_URL)]
    elif example is not None:
        raise GraphRequestValidationError("a static url takes no example", field="example")
    return button


def build_definition_phone_number_button(text: str, *, phone_number: str) -> Component:
    """A call button for ``phone_number`` (<= 20 characters, with its country code)."""
    number = check_label(phone_number, "phone_number", max_length=MAX_DEFINITION_PHONE)
    return {"type": "PHONE_NUMBER", "text": _text(text), "phone_number": number}


def build_definition_copy_code_button(*, example: str) -> Component:
    """A copy-code button with an example code (<= 15 characters)."""
    return {
        "type": "COPY_CODE",
        "example": check_label(example, "example", max_length=MAX_DEFINITION_COPY_CODE),
    }


def build_definition_flow_button(
    text: str,
    *,
    flow_id: str | None = None,
    flow_name: str | None = None,
    flow_json: str | None = None,
    flow_action: Literal["navigate", "data_exchange"] | None = None,
    navigate_screen: str | None = None,
    icon: Literal["DOCUMENT", "PROMOTION", "REVIEW"] | None = None,
) -> Component:
    """A Flow button naming exactly one of ``flow_id``, ``flow_name`` or ``flow_json``.

    ``navigate_screen`` is for ``navigate`` (the default) only.
    """
    given = [
        (k, v)
        for k, v in (("flow_id", flow_id), ("flow_name", flow_name), ("flow_json", flow_json))
        if v is not None
    ]
    if len(given) != 1:
        raise GraphRequestValidationError(
            "exactly one of flow_id, flow_name or flow_json is required", field="flow_id"
        )
    key, value = given[0]
    button: Component = {"type": "FLOW", "text": _text(text)}
    if key == "flow_json":
        button[key] = check_text(value, key, max_length=10 * 1024 * 1024)
    else:
        button[key] = check_label(value, key, max_length=512)
    if flow_action is not None:
        button["flow_action"] = check_choice(flow_action, "flow_action", _FLOW_ACTIONS)
    if navigate_screen is not None:
        if flow_action == "data_exchange":
            raise GraphRequestValidationError(
                "navigate_screen is for navigate only", field="navigate_screen"
            )
        button["navigate_screen"] = check_label(navigate_screen, "navigate_screen", max_length=256)
    if icon is not None:
        button["icon"] = check_choice(icon, "icon", _FLOW_ICONS)
    return button


def build_definition_catalog_button(text: str = "View catalog") -> Component:
    """The button of a catalog template."""
    return {"type": "CATALOG", "text": _text(text)}


def build_definition_mpm_button(text: str = "View items") -> Component:
    """The button of a multi-product template."""
    return {"type": "MPM", "text": _text(text)}


def build_definition_request_contact_info_button() -> Component:
    """A button asking the user to share contact details (its label is fixed by the platform)."""
    return {"type": "REQUEST_CONTACT_INFO"}


def build_definition_buttons(buttons: Sequence[Mapping[str, Any]]) -> Component:
    """The buttons component: 1..10 buttons, within the per-kind limits (2 URL, 1 phone...)."""
    items = check_sequence(buttons, "buttons", minimum=1, maximum=MAX_DEFINITION_BUTTONS)
    out: list[Component] = []
    for index, item in enumerate(items):
        if not isinstance(item, Mapping) or not isinstance(item.get("type"), str):
            raise GraphRequestValidationError(
                f"buttons[{index}] must be a button object", field=f"buttons[{index}]"
            )
        out.append(dict(item))
    counts = Counter(str(button["type"]).upper() for button in out)
    for kind, limit in MAX_BUTTONS_OF_KIND.items():
        if counts[kind] > limit:
            raise GraphRequestValidationError(
                f"a template holds at most {limit} {kind} button(s)", field="buttons"
            )
    return {"type": "BUTTONS", "buttons": out}
