"""Phone number set-up beyond registration: verification codes, conversational automation,
business compliance details, the business-profile node and pre-encrypted sends.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, Final

from ._admin_checks import (
    FIELDS_PARAM,
    MESSAGING_PRODUCT,
    PhoneScoped,
    check_bool,
    check_choice,
    check_email,
    check_fields,
    check_items,
    check_keys,
    check_text,
    opt_text,
)
from ._endpoint import route
from ._errors import GraphRequestValidationError
from ._parse import ApiRecord, Raw, as_object, first_data, object_list, opt_str, read_record
from ._phone_admin import BusinessProfile, business_profile_body
from ._results import Success
from ._validate import check_match

__all__ = [
    "CODE_METHODS",
    "COMPLIANCE_ENTITY_TYPES",
    "MAX_AUTOMATION_COMMANDS",
    "MAX_AUTOMATION_PROMPTS",
    "BusinessComplianceInfo",
    "CodeVerification",
    "ConversationalAutomation",
    "EncryptedMessageResult",
    "PhoneSetup",
]

CODE_METHODS: Final = ("SMS", "VOICE")
"""How a verification code reaches the number: a text message or a voice call."""
COMPLIANCE_ENTITY_TYPES: Final = (
    "LIMITED_LIABILITY_PARTNERSHIP",
    "SOLE_PROPRIETORSHIP",
    "PARTNERSHIP",
    "PUBLIC_COMPANY",
    "PRIVATE_COMPANY",
    "OTHER",
)
MAX_AUTOMATION_PROMPTS: Final = 3
MAX_AUTOMATION_COMMANDS: Final = 30
MAX_PROMPT_LENGTH: Final = 80
MAX_COMMAND_NAME_LENGTH: Final = 30
MAX_COMMAND_DESCRIPTION_LENGTH: Final = 256
MAX_ENCRYPTED_CONTENTS: Final = 1_048_576

_CODE = re.compile(r"[0-9]{6}")
_CODE_LANGUAGE = re.compile(r"[a-z]{2}(_[A-Z]{2})?")
_COMMAND_NAME = re.compile(rf"[A-Za-z0-9_]{{1,{MAX_COMMAND_NAME_LENGTH}}}")
_E164 = re.compile(r"\+[1-9][0-9]{1,14}")
_JWE = re.compile(r"[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]*){4}")

REQUEST_CODE = route("POST", "/{phone_number_id}/request_code")
VERIFY_CODE = route("POST", "/{phone_number_id}/verify_code")
CONVERSATIONAL_AUTOMATION = route("POST", "/{phone_number_id}/conversational_automation")
GET_BOT = route("GET", "/{bot_id}", **FIELDS_PARAM)
GET_COMPLIANCE = route("GET", "/{phone_number_id}/business_compliance_info", **FIELDS_PARAM)
UPDATE_COMPLIANCE = route("POST", "/{phone_number_id}/business_compliance_info")
GET_PROFILE_NODE = route("GET", "/{profile_id}", **FIELDS_PARAM)
UPDATE_PROFILE_NODE = route("POST", "/{profile_id}")
SEND_ENCRYPTED = route("POST", "/{phone_number_id}/messages_encrypted")


# --- results ------------------------------------------------------------------


@dataclass(frozen=True, slots=True, kw_only=True)
class CodeVerification:
    """``POST .../verify_code``: whether the code matched, and the verified number's id."""

    success: bool
    id: str | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> CodeVerification:
        obj = as_object(raw, what="verify code")
        return read_record(cls, obj, what="verify code", success=Success.from_api(obj).success)


@dataclass(frozen=True, slots=True, kw_only=True)
class ConversationalAutomation:
    """A number's welcome message, ice breakers (``prompts``) and ``/`` commands.

    ``commands`` holds ``(command_name, command_description)`` pairs.
    """

    id: str | None
    enable_welcome_message: bool | None
    prompts: tuple[str, ...]
    commands: tuple[tuple[str, str], ...]
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> ConversationalAutomation:
        obj = as_object(raw, what="conversational automation")
        commands = tuple(
            (name, opt_str(item, "command_description") or "")
            for item in object_list(obj.get("commands"))
            if (name := opt_str(item, "command_name")) is not None
        )
        return read_record(cls, obj, what="conversational automation", commands=commands)


@dataclass(frozen=True, slots=True, kw_only=True)
class BusinessComplianceInfo:
    """``GET /{phone_number_id}/business_compliance_info`` (the first ``data`` item).

    The contact sections are kept as sent (``name``, ``email``, ``mobile_number``,
    ``landline_number``): they are the business's published contacts.
    """

    waba_id: str | None
    entity_name: str | None
    entity_type: str | None
    entity_type_custom: str | None
    is_registered: bool | None
    grievance_officer_details: Raw | None
    customer_care_details: Raw | None
    raw: Raw

    @classmethod
    def from_api(cls, raw: Any) -> BusinessComplianceInfo:
        obj = as_object(raw, what="business compliance info")
        info = first_data(obj)
        waba_id = opt_str(info, "whatsapp_business_account_id")
        return read_record(cls, info, what="business compliance info", waba_id=waba_id, raw=obj)


@dataclass(frozen=True, slots=True, kw_only=True)
class EncryptedMessageResult(ApiRecord):
    """``POST /{phone_number_id}/messages_encrypted``: the platform's answer, itself a JWE."""

    _what = "encrypted message"

    encrypted_contents: str
    raw: Raw


# --- checks -------------------------------------------------------------------


def _language(value: object) -> str:
    return check_match(
        value, _CODE_LANGUAGE, "language", "language must be a language code such as en or en_US"
    )


def code_request_body(code_method: object, language: object) -> dict[str, str]:
    """The body of a verification-code request (a business number or a pre-verified one)."""
    return {
        "code_method": check_choice(code_method, field="code_method", choices=CODE_METHODS),
        "language": _language(language),
    }


def check_code(value: object) -> str:
    """A six-digit verification code."""
    return check_match(value, _CODE, "code", "code must be six digits")


def _prompts(value: object) -> list[str]:
    prompts = check_items(
        value, field="prompts", max_items=MAX_AUTOMATION_PROMPTS, of="strings", items="ice breakers"
    )
    return [check_text(item, field="prompts", max_length=MAX_PROMPT_LENGTH) for item in prompts]


def _commands(value: object) -> list[dict[str, str]]:
    commands = check_items(
        value, field="commands", max_items=MAX_AUTOMATION_COMMANDS, of="mappings", items="commands"
    )
    out: list[dict[str, str]] = []
    for item in commands:
        command = check_keys(
            item,
            field="commands",
            allowed=("command_name", "command_description"),
            required=("command_name", "command_description"),
        )
        name = check_match(
            command["command_name"], _COMMAND_NAME,
            "commands", f"command_name must be 1..{MAX_COMMAND_NAME_LENGTH} letters, digits or '_'",
        )
        out.append({
            "command_name": name,
            "command_description": check_text(
                command["command_description"],
                field="commands",
                max_length=MAX_COMMAND_DESCRIPTION_LENGTH,
            ),
        })
    names = [command["command_name"] for command in out]
    if len(set(names)) != len(names):
        raise GraphRequestValidationError("command names must be distinct", field="commands")
    return out


def _phone(value: object, *, field: str) -> str:
    return check_match(
        value, _E164, field, f"{field} must be an E.164 number such as +913854559033"
    )


def _contact(value: object, *, field: str, named: bool) -> dict[str, str]:
    numbers = ("mobile_number", "landline_number")
    allowed = ("name", "email", *numbers) if named else ("email", *numbers)
    required = ("name", "email") if named else ("email",)
    contact = check_keys(value, field=field, allowed=allowed, required=required)
    out: dict[str, str] = {}
    if named:
        out["name"] = check_text(contact["name"], field=f"{field}.name", max_length=128)
    out["email"] = check_email(contact["email"], field=f"{field}.email")
    for key in numbers:
        if contact.get(key) is not None:
            out[key] = _phone(contact[key], field=f"{field}.{key}")
    return out


def _jwe(value: object) -> str:
    if (
        not isinstance(value, str)
        or len(value) > MAX_ENCRYPTED_CONTENTS
        or not _JWE.fullmatch(value)
    ):
        raise GraphRequestValidationError(
            "encrypted_contents must be a JWE in compact serialization "
            f"(five base64url parts, at most {MAX_ENCRYPTED_CONTENTS} characters)",
            field="encrypted_contents",
        )
    return value


# --- helpers ------------------------------------------------------------------


class PhoneSetup(PhoneScoped):
    """Verification, automation, compliance and profile-node helpers (``PhoneNumberClient``)."""

    # --- verification

    async def request_code(self, *, code_method: str, language: str) -> Success:
        """``POST /{phone_number_id}/request_code``: send a verification code by SMS or voice."""
        body = code_request_body(code_method, language)
        return Success.from_api(await self._on_scope(REQUEST_CODE, body=body))

    async def verify_code(self, *, code: str) -> CodeVerification:
        """``POST /{phone_number_id}/verify_code`` with the six-digit code received."""
        raw = await self._on_scope(VERIFY_CODE, body={"code": check_code(code)})
        return CodeVerification.from_api(raw)

    # --- conversational automation

    async def configure_conversational_automation(
        self,
        *,
        enable_welcome_message: bool | None = None,
        prompts: list[str] | None = None,
        commands: list[Mapping[str, str]] | None = None,
    ) -> Success:
        """``POST /{phone_number_id}/conversational_automation``.

        ``prompts`` are up to 3 ice breakers (<= 80 characters each); ``commands`` up to
        30 ``{"command_name", "command_description"}`` (name <= 30 of ``[A-Za-z0-9_]``,
        description <= 256). An empty list clears that part.
        """
        body: dict[str, object] = {}
        if enable_welcome_message is not None:
            body["enable_welcome_message"] = check_bool(
                enable_welcome_message, field="enable_welcome_message"
            )
        if prompts is not None:
            body["prompts"] = _prompts(prompts)
        if commands is not None:
            body["commands"] = _commands(commands)
        if not body:
            raise GraphRequestValidationError(
                "configure_conversational_automation needs enable_welcome_message, "
                "prompts or commands"
            )
        return Success.from_api(await self._on_scope(CONVERSATIONAL_AUTOMATION, body=body))

    async def get_business_bot(
        self, *, bot_id: str, fields: str | list[str] | None = None
    ) -> ConversationalAutomation:
        """``GET /{bot_id}``: the automation a number's bot node holds."""
        params = {"bot_id": bot_id, "fields": check_fields(fields)}
        return ConversationalAutomation.from_api(await self._on_node(GET_BOT, params))

    # --- business compliance (India's Consumer Protection rules)

    async def get_compliance_info(
        self, *, fields: str | list[str] | None = None
    ) -> BusinessComplianceInfo:
        """``GET /{phone_number_id}/business_compliance_info``."""
        raw = await self._on_scope(GET_COMPLIANCE, {"fields": check_fields(fields)})
        return BusinessComplianceInfo.from_api(raw)

    async def update_compliance_info(
        self,
        *,
        entity_name: str,
        entity_type: str,
        grievance_officer_details: Mapping[str, str],
        customer_care_details: Mapping[str, str],
        entity_type_custom: str | None = None,
        is_registered: bool | None = None,
    ) -> Success:
        """``POST /{phone_number_id}/business_compliance_info``.

        ``entity_type`` is one of ``COMPLIANCE_ENTITY_TYPES``; ``OTHER`` needs
        ``entity_type_custom``. The grievance officer needs ``name`` and ``email``, customer
        care ``email``; both may add ``mobile_number`` and ``landline_number`` (E.164).
        """
        body: dict[str, object] = {
            **MESSAGING_PRODUCT,
            "entity_name": check_text(entity_name, field="entity_name", max_length=128),
            "entity_type": check_choice(
                entity_type, field="entity_type", choices=COMPLIANCE_ENTITY_TYPES
            ),
        }
        custom = opt_text(entity_type_custom, field="entity_type_custom", max_length=1024)
        if (body["entity_type"] == "OTHER") != (custom is not None):
            raise GraphRequestValidationError(
                "entity_type_custom goes with entity_type OTHER, and only with it",
                field="entity_type_custom",
            )
        if custom is not None:
            body["entity_type_custom"] = custom
        if is_registered is not None:
            body["is_registered"] = check_bool(is_registered, field="is_registered")
        body["grievance_officer_details"] = _contact(
            grievance_officer_details, field="grievance_officer_details", named=True
        )
        body["customer_care_details"] = _contact(
            customer_care_details, field="customer_care_details", named=False
        )
        return Success.from_api(await self._on_scope(UPDATE_COMPLIANCE, body=body))

    # --- the business-profile node

    async def get_business_profile_node(
        self, *, profile_id: str, fields: str | list[str] | None = None
    ) -> BusinessProfile:
        """``GET /{profile_id}``: a business profile read by its own id."""
        params = {"profile_id": profile_id, "fields": check_fields(fields)}
        return BusinessProfile.from_api(await self._on_node(GET_PROFILE_NODE, params))

    async def update_business_profile_node(
        self,
        *,
        profile_id: str,
        about: str | None = None,
        address: str | None = None,
        description: str | None = None,
        email: str | None = None,
        vertical: str | None = None,
        websites: list[str] | None = None,
        profile_picture_handle: str | None = None,
    ) -> Success:
        """``POST /{profile_id}`` with the fields given (as ``update_business_profile`` checks)."""
        body = business_profile_body(
            about=about,
            address=address,
            description=description,
            email=email,
            vertical=vertical,
            websites=websites,
            profile_picture_handle=profile_picture_handle,
        )
        raw = await self._on_node(UPDATE_PROFILE_NODE, {"profile_id": profile_id}, body=body)
        return Success.from_api(raw)

    # --- pre-encrypted sends

    async def send_encrypted_message(self, *, encrypted_contents: str) -> EncryptedMessageResult:
        """``POST /{phone_number_id}/messages_encrypted`` with a message the caller encrypted.

        ``encrypted_contents`` is the JWE (compact serialization) of a message payload; svc
        checks its shape, not its content, and returns the platform's encrypted answer.
        """
        body = {**MESSAGING_PRODUCT, "encrypted_contents": _jwe(encrypted_contents)}
        return EncryptedMessageResult.from_api(await self._on_scope(SEND_ENCRYPTED, body=body))
