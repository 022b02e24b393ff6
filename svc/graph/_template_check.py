"""``check_template_send``: template send components checked against the template's definition.

Pure and local: the definition is one the caller already holds (``get_template``
or ``list_templates``); nothing here calls the platform. Each mismatch the
platform would refuse (132000, 132001, 132012, 131008, ...) is raised before
sending as ``TemplateCheckError`` whose ``field`` names the offending place.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, Final

from svc._text import decimal_int

from ._errors import TemplateCheckError
from ._recipient import AUTHENTICATION_OTP_RULE, Recipient, require_phone_number
from ._results import Template
from ._template_params import BODY_PARAMETER_TYPES
from ._validate import PLACEHOLDER

__all__ = ["check_template_send"]

_MEDIA_FORMATS: Final = frozenset({"IMAGE", "VIDEO", "DOCUMENT", "LOCATION", "GIF", "PRODUCT"})
_HEADER_TYPES: Final = frozenset({"text"})
# Definition button type -> the sub_type a send uses for it (None: takes no send parameters).
_SUB_TYPES: Final[Mapping[str, str]] = {
    "URL": "url",
    "OTP": "url",
    "QUICK_REPLY": "quick_reply",
    "COPY_CODE": "copy_code",
    "FLOW": "flow",
    "CATALOG": "catalog",
    "MPM": "mpm",
}
_PARAMETER_TYPES: Final[Mapping[str, str]] = {
    "url": "text",
    "quick_reply": "payload",
    "copy_code": "coupon_code",
    "flow": "action",
    "catalog": "action",
    "mpm": "action",
}
_ALSO_TYPES: Final[Mapping[str, str]] = {"quick_reply": "text"}
"""A second parameter type a sub-type takes: Meta's sample templates send quick replies as text."""
_NEVER_SENT: Final = frozenset({"footer", "buttons"})


@dataclass(frozen=True, slots=True, kw_only=True)
class _Placeholders:
    names: tuple[str, ...]
    named: bool


@dataclass(frozen=True, slots=True, kw_only=True)
class _Button:
    kind: str
    sub_type: str | None
    required: bool
    takes_parameter: bool


def _fail(field: str, message: str) -> TemplateCheckError:
    return TemplateCheckError(f"{field}: {message}", field=field)


def check_template_send(
    definition: Template | Mapping[str, Any],
    language: str,
    components: Sequence[Mapping[str, Any]] | None,
    *,
    to: str | None = None,
) -> None:
    """Raise ``TemplateCheckError`` unless ``components`` fit ``definition`` in ``language``.

    Checked: the definition's language and approval, header format and
    parameters (text, media, GIF, location, product), body parameter count
    (``{{1}}``) or names (``{{name}}``), button indexes, sub-types and
    required button parameters (a multi-product button needs its sections),
    the limited-time offer's expiry, and carousel cards (their number, and
    each card's components against the definition's card). With ``to`` (the
    addressee), a template with an OTP button (one-tap, zero-tap or
    copy-code authentication) sent to a BSUID or parent BSUID raises
    ``PhoneOnlyRecipientError``: the platform delivers those to phone numbers only.
    """
    raw = definition.raw if isinstance(definition, Template) else definition
    if not isinstance(raw, Mapping):
        raise _fail("definition", "must be a Template or a template definition object")
    _check_language(raw, language)
    parts = _definition_parts(raw)
    named_format = str(raw.get("parameter_format", "")).upper() == "NAMED"
    buttons = _buttons(parts.get("BUTTONS"))
    if to is not None and any(button.kind == "OTP" for button in buttons):
        require_phone_number(Recipient.parse(to).wire(), rule=AUTHENTICATION_OTP_RULE)
    _check_parts(parts, _send_components(components), named_format, "components")


def _check_parts(
    parts: Mapping[str, Mapping[str, Any]],
    send: Sequence[Mapping[str, Any]],
    named_format: bool,
    where: str,
) -> None:
    """Check send components against one set of definition parts (a template or a card)."""
    header = parts.get("HEADER")
    body = parts.get("BODY")
    buttons = _buttons(parts.get("BUTTONS"))
    seen: dict[str, int] = {}
    used_buttons: set[int] = set()
    for index, component in enumerate(send):
        field = f"{where}[{index}]"
        kind = component["type"].lower()
        if kind in ("header", "body", "carousel", "limited_time_offer"):
            if kind in seen:
                raise _fail(f"{field}.type", f"a second {kind} component")
            seen[kind] = index
        if kind == "header":
            _check_header(header, component, field, named_format)
        elif kind == "body":
            _check_text_parameters(
                _placeholders(body, named_format), component, field, BODY_PARAMETER_TYPES, "body"
            )
        elif kind == "button":
            used_buttons.add(_check_button(buttons, component, field, used_buttons))
        elif kind == "carousel" and "CAROUSEL" in parts:
            _check_carousel(parts["CAROUSEL"], component, field, named_format)
        elif kind == "limited_time_offer" and "LIMITED_TIME_OFFER" in parts:
            _check_offer(component, field)
        elif kind in _NEVER_SENT or kind.upper() not in parts:
            raise _fail(f"{field}.type", f"the template has no {kind} component to fill")
    _check_missing(header, body, buttons, seen, used_buttons, named_format, where)
    if "CAROUSEL" in parts and "carousel" not in seen:
        raise _fail(where, "the carousel needs its cards")
    offer = parts.get("LIMITED_TIME_OFFER")
    details = offer.get("limited_time_offer") if offer is not None else None
    expires = isinstance(details, Mapping) and details.get("has_expiration") is True
    if expires and "limited_time_offer" not in seen:
        raise _fail(where, "the limited-time offer needs its expiration_time_ms")


def _check_offer(component: Mapping[str, Any], field: str) -> None:
    parameters = _parameters(component, field)
    offer = parameters[0].get("limited_time_offer") if len(parameters) == 1 else None
    expiry = offer.get("expiration_time_ms") if isinstance(offer, Mapping) else None
    if (
        parameters[0]["type"].lower() != "limited_time_offer"
        or not isinstance(expiry, int)
        or isinstance(expiry, bool)
    ):
        raise _fail(
            f"{field}.parameters", "takes one limited_time_offer parameter with expiration_time_ms"
        )


def _check_carousel(
    definition: Mapping[str, Any], component: Mapping[str, Any], field: str, named: bool
) -> None:
    defined = definition.get("cards")
    defined_cards = list(defined) if isinstance(defined, list | tuple) else []
    cards = component.get("cards")
    if not isinstance(cards, list | tuple) or len(cards) != len(defined_cards):
        raise _fail(f"{field}.cards", f"the carousel has {len(defined_cards)} cards")
    given: set[int] = set()
    for number, card in enumerate(cards):
        where = f"{field}.cards[{number}]"
        position = card.get("card_index") if isinstance(card, Mapping) else None
        if not isinstance(position, int) or isinstance(position, bool):
            raise _fail(f"{where}.card_index", "must be a card index")
        if not 0 <= position < len(defined_cards) or position in given:
            raise _fail(f"{where}.card_index", f"card {position} is not a card to fill once")
        given.add(position)
        assert isinstance(card, Mapping)
        card_definition = defined_cards[position]
        parts = _definition_parts(card_definition if isinstance(card_definition, Mapping) else {})
        components = _send_components(card.get("components"))
        _check_parts(parts, components, named, f"{where}.components")


def _check_language(raw: Mapping[str, Any], language: object) -> None:
    if not isinstance(language, str) or not language:
        raise _fail("language", "must be a language code such as en_US")
    defined = raw.get("language")
    if isinstance(defined, str) and defined != language:
        raise _fail("language", f"the definition is for {defined}, not {language}")
    status = raw.get("status")
    if isinstance(status, str) and status.upper() != "APPROVED":
        raise _fail("language", f"the template is {status} in {language}, not APPROVED")


def _definition_parts(raw: Mapping[str, Any]) -> dict[str, Mapping[str, Any]]:
    components = raw.get("components")
    if components is None:
        components = []
    if not isinstance(components, list | tuple):
        raise _fail("definition.components", "must be a list")
    parts: dict[str, Mapping[str, Any]] = {}
    for component in components:
        if isinstance(component, Mapping) and isinstance(component.get("type"), str):
            parts.setdefault(component["type"].upper(), component)
    return parts


def _placeholders(component: Mapping[str, Any] | None, named_format: bool) -> _Placeholders:
    text = component.get("text") if component is not None else None
    found = PLACEHOLDER.findall(text) if isinstance(text, str) else []
    names = tuple(dict.fromkeys(found))
    named = named_format or any(not name.isdigit() for name in names)
    return _Placeholders(names=names, named=named)


def _buttons(component: Mapping[str, Any] | None) -> list[_Button]:
    items = component.get("buttons") if component is not None else None
    out: list[_Button] = []
    for item in items if isinstance(items, list | tuple) else ():
        kind = str(item.get("type", "")).upper() if isinstance(item, Mapping) else ""
        sub_type = _SUB_TYPES.get(kind)
        dynamic_url = kind == "URL" and "{{" in str(item.get("url", ""))
        required = kind in ("OTP", "COPY_CODE", "MPM") or dynamic_url
        takes = sub_type is not None and (kind != "URL" or dynamic_url)
        out.append(_Button(kind=kind, sub_type=sub_type, required=required, takes_parameter=takes))
    return out


def _send_components(components: object) -> list[Mapping[str, Any]]:
    if components is None:
        return []
    if isinstance(components, str | bytes) or not isinstance(components, Sequence):
        raise _fail("components", "must be a list of components")
    for index, component in enumerate(components):
        if not isinstance(component, Mapping) or not isinstance(component.get("type"), str):
            raise _fail(f"components[{index}]", "must be an object with a string type")
    return list(components)


def _parameters(component: Mapping[str, Any], field: str) -> list[Mapping[str, Any]]:
    parameters = component.get("parameters", [])
    if isinstance(parameters, str | bytes) or not isinstance(parameters, Sequence):
        raise _fail(f"{field}.parameters", "must be a list")
    for index, parameter in enumerate(parameters):
        if not isinstance(parameter, Mapping) or not isinstance(parameter.get("type"), str):
            raise _fail(f"{field}.parameters[{index}]", "must be an object with a string type")
    return list(parameters)


def _check_header(
    header: Mapping[str, Any] | None, component: Mapping[str, Any], field: str, named: bool
) -> None:
    if header is None:
        raise _fail(f"{field}.type", "the template has no header")
    header_format = str(header.get("format", "TEXT")).upper()
    if header_format not in _MEDIA_FORMATS:
        expected = _placeholders(header, named)
        _check_text_parameters(expected, component, field, _HEADER_TYPES, "header")
        return
    kind = header_format.lower()
    parameters = _parameters(component, field)
    if len(parameters) != 1:
        raise _fail(f"{field}.parameters", f"a {kind} header takes exactly one {kind} parameter")
    if parameters[0]["type"].lower() != kind or not isinstance(parameters[0].get(kind), Mapping):
        raise _fail(f"{field}.parameters[0].type", f"the header format is {header_format}")


def _check_text_parameters(
    expected: _Placeholders,
    component: Mapping[str, Any],
    field: str,
    types: frozenset[str],
    what: str,
) -> None:
    parameters = _parameters(component, field)
    for index, parameter in enumerate(parameters):
        kind = parameter["type"].lower()
        if kind not in types or parameter.get(kind) is None:
            allowed = ", ".join(sorted(types))
            raise _fail(f"{field}.parameters[{index}].type", f"{what} parameters are {allowed}")
    if not expected.named:
        for index, parameter in enumerate(parameters):
            if "parameter_name" in parameter:
                raise _fail(
                    f"{field}.parameters[{index}].parameter_name",
                    f"the {what} uses positional placeholders",
                )
        if len(parameters) != len(expected.names):
            raise _fail(
                f"{field}.parameters",
                f"the {what} has {len(expected.names)} placeholders, got {len(parameters)}",
            )
        return
    given: set[str] = set()
    for index, parameter in enumerate(parameters):
        name = parameter.get("parameter_name")
        where = f"{field}.parameters[{index}].parameter_name"
        if not isinstance(name, str):
            raise _fail(where, f"the {what} uses named placeholders")
        if name not in expected.names:
            raise _fail(where, f"the {what} has no placeholder {{{{{name}}}}}")
        if name in given:
            raise _fail(where, f"{{{{{name}}}}} is given twice")
        given.add(name)
    missing = [name for name in expected.names if name not in given]
    if missing:
        raise _fail(f"{field}.parameters", f"missing {what} parameters: {', '.join(missing)}")


def _button_index(value: object, field: str) -> int:
    if isinstance(value, bool):
        raise _fail(field, "must be a button index")
    if isinstance(value, int):
        return value
    index = decimal_int(value, max_digits=2) if isinstance(value, str) else None
    if index is None:
        raise _fail(field, "must be a button index")
    return index


def _check_button(
    buttons: list[_Button], component: Mapping[str, Any], field: str, used: set[int]
) -> int:
    index = _button_index(component.get("index"), f"{field}.index")
    if not 0 <= index < len(buttons):
        raise _fail(f"{field}.index", f"the template has {len(buttons)} buttons")
    if index in used:
        raise _fail(f"{field}.index", f"button {index} is given twice")
    button = buttons[index]
    if button.sub_type is None:
        raise _fail(f"{field}.index", f"button {index} ({button.kind}) takes no send parameters")
    sub_type = component.get("sub_type")
    if not isinstance(sub_type, str) or sub_type.lower() != button.sub_type:
        raise _fail(
            f"{field}.sub_type", f"button {index} is {button.kind}: sub_type {button.sub_type}"
        )
    parameters = _parameters(component, field)
    if not button.takes_parameter:
        if parameters:
            raise _fail(f"{field}.parameters", f"button {index} has a static URL")
        return index
    kind = _PARAMETER_TYPES[button.sub_type]
    if len(parameters) > 1 or (button.required and not parameters):
        raise _fail(f"{field}.parameters", f"button {index} takes one {kind} parameter")
    for parameter in parameters:
        given = parameter["type"].lower()
        if given not in (kind, _ALSO_TYPES.get(button.sub_type)) or parameter.get(given) is None:
            raise _fail(f"{field}.parameters[0].type", f"button {index} takes a {kind} parameter")
    return index


def _check_missing(
    header: Mapping[str, Any] | None,
    body: Mapping[str, Any] | None,
    buttons: list[_Button],
    seen: Mapping[str, int],
    used: set[int],
    named: bool,
    where: str = "components",
) -> None:
    if header is not None and "header" not in seen:
        header_format = str(header.get("format", "TEXT")).upper()
        if header_format in _MEDIA_FORMATS:
            raise _fail(where, f"the {header_format} header needs its media parameter")
        if _placeholders(header, named).names:
            raise _fail(where, "the header has placeholders but no header component")
    if "body" not in seen and _placeholders(body, named).names:
        raise _fail(where, "the body has placeholders but no body component")
    for index, button in enumerate(buttons):
        if button.required and index not in used:
            raise _fail(where, f"button {index} ({button.kind}) needs a parameter")
