"""Property tests: a definition and the components built for it pass; any one mutation is caught."""

from __future__ import annotations

import copy
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

import pytest
from hypothesis import HealthCheck, assume, given, settings
from hypothesis import strategies as st

from svc.graph import (
    Template,
    TemplateCheckError,
    build_template_body,
    build_template_catalog_button,
    build_template_copy_code_button,
    build_template_flow_button,
    build_template_header_location,
    build_template_header_media,
    build_template_header_text,
    build_template_otp_button,
    build_template_quick_reply_button,
    build_template_url_button,
    check_template_send,
    template_currency_parameter,
    template_date_time_parameter,
    template_text_parameter,
)

NAMES = ("first_name", "order_id", "amount", "when", "city", "code")
LANGUAGES = ("en_US", "pt_BR", "de", "es_MX")
HEADERS = (None, "TEXT", "IMAGE", "VIDEO", "DOCUMENT", "LOCATION")
BUTTONS = (
    "URL_STATIC",
    "URL_DYNAMIC",
    "QUICK_REPLY",
    "COPY_CODE",
    "FLOW",
    "CATALOG",
    "PHONE_NUMBER",
    "OTP",
)
REQUIRED = {"URL_DYNAMIC", "COPY_CODE", "OTP"}
SUB_TYPE = {
    "URL_DYNAMIC": "url",
    "OTP": "url",
    "QUICK_REPLY": "quick_reply",
    "COPY_CODE": "copy_code",
    "FLOW": "flow",
    "CATALOG": "catalog",
}


@dataclass
class Case:
    definition: dict[str, Any]
    language: str
    components: list[dict[str, Any]]
    named: bool
    header: str | None
    body_names: list[str]
    buttons: list[str]


def _placeholder_text(names: list[str]) -> str:
    return "Hi " + ", ".join("{{" + name + "}}" for name in names) + "."


def _definition_button(kind: str) -> dict[str, Any]:
    if kind == "URL_STATIC":
        return {"type": "URL", "text": "Open", "url": "https://shop.example/"}
    if kind == "URL_DYNAMIC":
        return {"type": "URL", "text": "Open", "url": "https://shop.example/{{1}}"}
    if kind == "OTP":
        return {"type": "OTP", "otp_type": "COPY_CODE", "text": "Copy"}
    if kind == "PHONE_NUMBER":
        return {"type": "PHONE_NUMBER", "text": "Call", "phone_number": "+15550001111"}
    return {"type": kind, "text": "Go"}


def _send_button(kind: str, index: int) -> dict[str, Any]:
    if kind == "URL_DYNAMIC":
        return build_template_url_button(index=index, text="order/42")
    if kind == "OTP":
        return build_template_otp_button(code="123456", index=index)
    if kind == "QUICK_REPLY":
        return build_template_quick_reply_button(index=index, payload="yes")
    if kind == "COPY_CODE":
        return build_template_copy_code_button(index=index, coupon_code="SAVE25")
    if kind == "FLOW":
        return build_template_flow_button(index=index, flow_token="tok")
    return build_template_catalog_button(index=index)


@st.composite
def cases(draw: st.DrawFn) -> Case:
    named = draw(st.booleans())
    language = draw(st.sampled_from(LANGUAGES))

    def placeholders(maximum: int) -> list[str]:
        count = draw(st.integers(0, maximum))
        if named:
            return draw(
                st.lists(st.sampled_from(NAMES), min_size=count, max_size=count, unique=True)
            )
        return [str(number) for number in range(1, count + 1)]

    definition_components: list[dict[str, Any]] = []
    send: list[dict[str, Any]] = []
    header = draw(st.sampled_from(HEADERS))
    if header == "TEXT":
        header_names = placeholders(1)
        definition_components.append(
            {"type": "HEADER", "format": "TEXT", "text": _placeholder_text(header_names)}
        )
        if header_names:
            name = header_names[0] if named else None
            send.append(build_template_header_text("Ana", parameter_name=name))
    elif header == "LOCATION":
        definition_components.append({"type": "HEADER", "format": "LOCATION"})
        send.append(build_template_header_location(latitude=1.5, longitude=-2.25, name="Shop"))
    elif header is not None:
        definition_components.append({"type": "HEADER", "format": header})
        send.append(build_template_header_media(header.lower(), link="https://cdn.example/x"))

    body_names = placeholders(4)
    definition_components.append({"type": "BODY", "text": _placeholder_text(body_names)})
    if body_names:
        order = draw(st.permutations(body_names)) if named else body_names
        parameters = []
        for name in order:
            parameter_name = name if named else None
            kind = draw(st.sampled_from(("text", "currency", "date_time")))
            if kind == "text":
                parameters.append(template_text_parameter("v", parameter_name=parameter_name))
            elif kind == "currency":
                parameters.append(
                    template_currency_parameter(
                        fallback_value="$1",
                        code="USD",
                        amount_1000=1000,
                        parameter_name=name if named else None,
                    )
                )
            else:
                parameters.append(
                    template_date_time_parameter(
                        fallback_value="today", parameter_name=parameter_name
                    )
                )
        send.append(build_template_body(parameters))
    if draw(st.booleans()):
        definition_components.append({"type": "FOOTER", "text": "Reply STOP"})

    buttons = draw(st.lists(st.sampled_from(BUTTONS), max_size=4))
    if buttons:
        definition_components.append(
            {"type": "BUTTONS", "buttons": [_definition_button(kind) for kind in buttons]}
        )
    for index, kind in enumerate(buttons):
        if kind in REQUIRED or (kind in SUB_TYPE and draw(st.booleans())):
            send.append(_send_button(kind, index))

    definition = {
        "id": "1",
        "name": "generated",
        "language": language,
        "status": "APPROVED",
        "category": "UTILITY",
        "parameter_format": "NAMED" if named else "POSITIONAL",
        "components": definition_components,
    }
    send = list(draw(st.permutations(send)))
    return Case(definition, language, send, named, header, body_names, buttons)


def _check(case: Case, as_template: bool) -> None:
    definition: Any = Template.from_api(case.definition) if as_template else case.definition
    check_template_send(definition, case.language, case.components)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), as_template=st.booleans())
@pytest.mark.slow
def test_generated_definition_and_components_always_pass(case: Case, as_template: bool) -> None:
    _check(case, as_template)


# --- single mutations ----------------------------------------------------------------------

Mutation = Callable[[Case], bool]
"""Mutates the case in place; returns False when it does not apply to this case."""


def _find(case: Case, kind: str) -> int | None:
    for index, component in enumerate(case.components):
        if component["type"] == kind:
            return index
    return None


def _body(case: Case) -> dict[str, Any] | None:
    index = _find(case, "body")
    return None if index is None else case.components[index]


def other_language(case: Case) -> bool:
    case.language = next(code for code in LANGUAGES if code != case.language)
    return True


def not_approved(case: Case) -> bool:
    case.definition["status"] = "PAUSED"
    return True


def drop_body_parameter(case: Case) -> bool:
    body = _body(case)
    if body is None:
        return False
    body["parameters"].pop()
    return True


def add_body_parameter(case: Case) -> bool:
    body = _body(case)
    extra = template_text_parameter("x", parameter_name="zz_extra" if case.named else None)
    if body is None:
        case.components.append(build_template_body([extra]))
    else:
        body["parameters"].append(extra)
    return True


def drop_body(case: Case) -> bool:
    index = _find(case, "body")
    if index is None:
        return False
    del case.components[index]
    return True


def flip_parameter_naming(case: Case) -> bool:
    body = _body(case)
    if body is None:
        return False
    parameter = body["parameters"][0]
    if case.named:
        del parameter["parameter_name"]
    else:
        parameter["parameter_name"] = "first_name"
    return True


def repeat_a_name(case: Case) -> bool:
    body = _body(case)
    if body is None or not case.named or len(body["parameters"]) < 2:
        return False
    body["parameters"][1]["parameter_name"] = body["parameters"][0]["parameter_name"]
    return True


def rename_a_parameter(case: Case) -> bool:
    body = _body(case)
    if body is None or not case.named:
        return False
    body["parameters"][0]["parameter_name"] = "not_a_placeholder"
    return True


def wrong_body_parameter_type(case: Case) -> bool:
    body = _body(case)
    if body is None:
        return False
    body["parameters"][0] = {"type": "payload", "payload": "x"}
    return True


def wrong_header_format(case: Case) -> bool:
    index = _find(case, "header")
    if index is None or case.header in (None, "TEXT"):
        return False
    other = "video" if case.header != "VIDEO" else "image"
    case.components[index] = build_template_header_media(other, media_id="7")  # type: ignore[arg-type]
    return True


def extra_header_parameter(case: Case) -> bool:
    index = _find(case, "header")
    if index is None:
        return False
    case.components[index]["parameters"].append({"type": "text", "text": "more"})
    return True


def drop_header(case: Case) -> bool:
    index = _find(case, "header")
    if index is None:
        return False
    del case.components[index]
    return True


def header_without_definition(case: Case) -> bool:
    if case.header is not None:
        return False
    case.components.append(build_template_header_text("x"))
    return True


def wrong_sub_type(case: Case) -> bool:
    index = _find(case, "button")
    if index is None:
        return False
    button = case.components[index]
    button["sub_type"] = "quick_reply" if button["sub_type"] != "quick_reply" else "url"
    return True


def index_out_of_range(case: Case) -> bool:
    index = _find(case, "button")
    if index is None:
        return False
    case.components[index]["index"] = str(len(case.buttons))
    return True


def drop_required_button(case: Case) -> bool:
    for index, component in enumerate(case.components):
        if component["type"] == "button":
            kind = case.buttons[int(component["index"])]
            if kind in REQUIRED:
                del case.components[index]
                return True
    return False


def repeat_a_button(case: Case) -> bool:
    index = _find(case, "button")
    if index is None:
        return False
    case.components.append(copy.deepcopy(case.components[index]))
    return True


def target_a_button_without_parameters(case: Case) -> bool:
    targets = [i for i, kind in enumerate(case.buttons) if kind in ("PHONE_NUMBER", "URL_STATIC")]
    if not targets:
        return False
    case.components.append(build_template_url_button(index=targets[0], text="x"))
    return True


def send_a_footer(case: Case) -> bool:
    case.components.append({"type": "footer", "parameters": []})
    return True


MUTATIONS: list[Mutation] = [
    other_language,
    not_approved,
    drop_body_parameter,
    add_body_parameter,
    drop_body,
    flip_parameter_naming,
    repeat_a_name,
    rename_a_parameter,
    wrong_body_parameter_type,
    wrong_header_format,
    extra_header_parameter,
    drop_header,
    header_without_definition,
    wrong_sub_type,
    index_out_of_range,
    drop_required_button,
    repeat_a_button,
    target_a_button_without_parameters,
    send_a_footer,
]


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(case=cases(), mutation=st.sampled_from(MUTATIONS), as_template=st.booleans())
@pytest.mark.slow
def test_any_single_mutation_is_caught(case: Case, mutation: Mutation, as_template: bool) -> None:
    mutated = copy.deepcopy(case)
    assume(mutation(mutated))
    with pytest.raises(TemplateCheckError) as caught:
        _check(mutated, as_template)
    assert caught.value.field
