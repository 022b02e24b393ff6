"""Template messages: approved templates, marketing templates and the OTP button checks.

Components are given in the platform's structure; OTP (authentication)
buttons inside them are checked and normalized, and addressed to phone
numbers only.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any, ClassVar, Final, Literal

from ._envelope import Payload, address, envelope, routing
from ._errors import GraphRequestValidationError
from ._message import Message, builder
from ._recipient import AUTHENTICATION_OTP_RULE, require_phone_number
from ._validate import (
    TEMPLATE_LANGUAGE,
    TEMPLATE_NAME,
    check_bool,
    check_choice,
    check_label,
    check_mapping,
    check_match,
    check_sequence,
)

__all__ = [
    "MarketingTemplateMessage",
    "TemplateMessage",
    "build_marketing_template_message",
    "build_otp_button",
    "build_template_message",
    "has_otp_button",
    "template_object",
]

MAX_TEMPLATE_COMPONENTS: Final = 50
MAX_OTP_BUTTON_TEXT: Final = 25
MAX_SUPPORTED_APPS: Final = 5
MAX_PACKAGE_NAME: Final = 224
MAX_SIGNATURE_HASH: Final = 11

_OTP_TYPES = frozenset({"copy_code", "one_tap", "zero_tap"})
_OTP_KEYS = frozenset(
    {"type", "otp_type", "text", "autofill_text", "zero_tap_terms_accepted", "supported_apps"}
)


def build_otp_button(
    *,
    otp_type: str,
    text: str | None = None,
    autofill_text: str | None = None,
    zero_tap_terms_accepted: bool | None = None,
    supported_apps: Sequence[Mapping[str, str]] | None = None,
) -> Payload:
    """An authentication-template OTP button (``copy_code``, ``one_tap`` or ``zero_tap``).

    ``supported_apps`` is a list of ``{package_name, signature_hash}``; one-tap
    and zero-tap buttons need at least one.
    """
    kind = check_choice(
        otp_type.lower() if isinstance(otp_type, str) else otp_type, "otp_type", _OTP_TYPES
    )
    button: Payload = {"type": "otp", "otp_type": kind}
    if text is not None:
        button["text"] = check_label(text, "text", max_length=MAX_OTP_BUTTON_TEXT)
    if autofill_text is not None:
        button["autofill_text"] = check_label(
            autofill_text, "autofill_text", max_length=MAX_OTP_BUTTON_TEXT
        )
    if zero_tap_terms_accepted is not None:
        button["zero_tap_terms_accepted"] = check_bool(
            zero_tap_terms_accepted, "zero_tap_terms_accepted"
        )
    if supported_apps is not None:
        apps = check_sequence(
            supported_apps, "supported_apps", minimum=1, maximum=MAX_SUPPORTED_APPS
        )
        button["supported_apps"] = [
            _supported_app(item, f"supported_apps[{index}]") for index, item in enumerate(apps)
        ]
    elif kind != "copy_code":
        raise GraphRequestValidationError(
            f"a {kind} OTP button needs supported_apps", field="supported_apps"
        )
    return button


def _supported_app(value: object, field: str) -> dict[str, str]:
    app = check_mapping(
        value,
        field,
        allowed=("package_name", "signature_hash"),
        required=("package_name", "signature_hash"),
    )
    return {
        "package_name": check_label(
            app["package_name"], f"{field}.package_name", max_length=MAX_PACKAGE_NAME
        ),
        "signature_hash": check_label(
            app["signature_hash"], f"{field}.signature_hash", max_length=MAX_SIGNATURE_HASH
        ),
    }


def _check_otp_button(value: Mapping[str, Any], field: str) -> Payload:
    """Validate an OTP button given in the platform structure; the flat form is rejected."""
    if "package_name" in value or "signature_hash" in value:
        raise GraphRequestValidationError(
            "OTP buttons take supported_apps=[{package_name, signature_hash}], "
            "not a flat package_name/signature_hash",
            field=f"{field}.package_name",
        )
    button = check_mapping(value, field, allowed=_OTP_KEYS, required=("otp_type",))
    return build_otp_button(
        otp_type=button["otp_type"],
        text=button.get("text"),
        autofill_text=button.get("autofill_text"),
        zero_tap_terms_accepted=button.get("zero_tap_terms_accepted"),
        supported_apps=button.get("supported_apps"),
    )


def _components(value: object) -> list[Payload]:
    """Template components in the platform structure; OTP buttons are checked and normalized."""
    items = check_sequence(value, "components", maximum=MAX_TEMPLATE_COMPONENTS)
    out: list[Payload] = []
    for index, item in enumerate(items):
        field = f"components[{index}]"
        if not isinstance(item, Mapping) or not all(isinstance(key, str) for key in item):
            raise GraphRequestValidationError(f"{field} must be an object", field=field)
        component_type = item.get("type")
        if not isinstance(component_type, str) or not component_type:
            raise GraphRequestValidationError(f"{field}.type is required", field=f"{field}.type")
        component: Payload = dict(item)
        buttons = item.get("buttons")
        if buttons is not None:
            checked = check_sequence(buttons, f"{field}.buttons", maximum=10)
            component["buttons"] = [
                _button_in_component(button, f"{field}.buttons[{b}]")
                for b, button in enumerate(checked)
            ]
        out.append(component)
    return out


def _button_in_component(value: object, field: str) -> Any:
    if not isinstance(value, Mapping):
        raise GraphRequestValidationError(f"{field} must be an object", field=field)
    button_type = value.get("type")
    if isinstance(button_type, str) and button_type.lower() == "otp":
        return _check_otp_button(value, field)
    return dict(value)


def has_otp_button(template: Mapping[str, Any]) -> bool:
    """Whether checked template components carry an OTP (authentication) button."""
    components = template.get("components")
    for component in components if isinstance(components, list) else ():
        buttons = component.get("buttons") if isinstance(component, Mapping) else None
        for button in buttons if isinstance(buttons, list) else ():
            if isinstance(button, Mapping) and str(button.get("type", "")).lower() == "otp":
                return True
    return False


_LANGUAGE_POLICIES = frozenset({"deterministic"})


def template_object(
    name: object, language_code: object, components: object, language_policy: object = None
) -> Payload:
    if not isinstance(name, str) or not TEMPLATE_NAME.fullmatch(name):
        raise GraphRequestValidationError(
            "name must be a template name: lowercase letters, digits and underscores",
            field="name",
        )
    code = check_match(
        language_code,
        TEMPLATE_LANGUAGE,
        "language_code",
        "language_code must look like en or en_US",
    )
    language: Payload = {"code": code}
    if language_policy is not None:
        language["policy"] = check_choice(language_policy, "language_policy", _LANGUAGE_POLICIES)
    template: Payload = {"name": name, "language": language}
    if components is not None:
        template["components"] = _components(components)
    return template


@dataclass(frozen=True, slots=True, kw_only=True)
class TemplateMessage(Message):
    """A template message; ``components`` use the platform's structure.

    ``language_policy`` (``deterministic``, the one policy the platform keeps)
    is sent as ``language.policy`` when given.
    """

    to: str
    name: str
    language_code: str
    components: Sequence[Mapping[str, Any]] | None = None
    reply_to_message_id: str | None = None
    language_policy: Literal["deterministic"] | None = None

    def render(self) -> Payload:
        addressee = address(self.to)
        template = template_object(
            self.name, self.language_code, self.components, self.language_policy
        )
        if has_otp_button(template):
            require_phone_number(addressee, rule=AUTHENTICATION_OTP_RULE)
        return envelope(
            addressee, "template", template, reply_to_message_id=self.reply_to_message_id
        )


_PRODUCT_POLICIES = frozenset({"CLOUD_API_FALLBACK", "STRICT"})


@dataclass(frozen=True, slots=True, kw_only=True)
class MarketingTemplateMessage(Message):
    """A marketing template for ``/marketing_messages``, addressed by ``to`` or ``recipient``.

    ``to`` wins when both are given. ``product_policy`` is ``CLOUD_API_FALLBACK``
    or ``STRICT``; ``message_activity_sharing`` is a bool.
    """

    edge: ClassVar[str] = "marketing_messages"

    name: str
    language_code: str
    to: str | None = None
    recipient: str | None = None
    components: Sequence[Mapping[str, Any]] | None = None
    product_policy: Literal["CLOUD_API_FALLBACK", "STRICT"] | None = None
    message_activity_sharing: bool | None = None

    def render(self) -> Payload:
        addressee = routing(self.to, self.recipient)
        template = template_object(self.name, self.language_code, self.components)
        message = envelope(addressee, "template", template)
        if self.product_policy is not None:
            message["product_policy"] = check_choice(
                self.product_policy, "product_policy", _PRODUCT_POLICIES
            )
        if self.message_activity_sharing is not None:
            message["message_activity_sharing"] = check_bool(
                self.message_activity_sharing, "message_activity_sharing"
            )
        return message


build_template_message = builder(TemplateMessage)
build_marketing_template_message = builder(MarketingTemplateMessage)
