"""Error resolution: built-in classes, axis exclusivity, HTTP rules and the registry."""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

import svc.graph as graph
from svc.graph import (
    GraphApiError,
    GraphAuthError,
    GraphError,
    GraphNetworkError,
    GraphRateLimitError,
    GraphRequestValidationError,
    _error_classes,
    _error_codes,
    register_error_code,
    reset_error_registry,
    resolve_error_class,
)
from svc.graph._error_codes import api_error_from_response

TOKEN = "EAAG-secret-token-value"

BUILTIN: dict[int, str] = {
    0: "AuthExceptionError",
    3: "APIMethodError",
    4: "ToManyAPICallsError",
    10: "PermissionDeniedError",
    100: "InvalidParameterError",
    190: "ExpiredAccessTokenError",
    200: "APIPermissionError",
    250: "APIPermissionError",
    299: "APIPermissionError",
    368: "TemporarilyBlockedError",
    613: "FetchCallPermissionLimitHitError",
    80007: "RateLimitIssuesError",
    130429: "RateLimitHitError",
    130472: "UserIsInExperimentGroupError",
    130497: "AccountRestrictedFromCountryError",
    131000: "SomethingWentWrongError",
    131005: "AccessDeniedError",
    131008: "MissingRequiredParameterError",
    131009: "InvalidParameterError",
    131016: "ServiceUnavailableError",
    131021: "RecipientCannotBeSenderError",
    131026: "MessageUndeliverableError",
    131030: "RecipientNotInAllowedListError",
    131031: "AccountLockedError",
    131037: "DisplayNameApprovalRequiredError",
    131042: "BusinessEligibilityPaymentIssueError",
    131045: "IncorrectCertificateError",
    131047: "ReEngagementMessageError",
    131048: "SpamRateLimitHitError",
    131049: "EcosystemEngagementError",
    131050: "UserStoppedMarketingMessagesError",
    131051: "UnsupportedMessageTypeError",
    131052: "MediaDownloadError",
    131053: "MediaUploadError",
    131055: "MethodNotAllowedError",
    131056: "TooManyMessagesError",
    131057: "AccountInMaintenanceModeError",
    132000: "TemplateParamCountMismatchError",
    132001: "TemplateDoesNotExistError",
    132005: "TemplateHydratedTextTooLongError",
    132007: "TemplateFormatCharacterPolicyViolatedError",
    132012: "TemplateParameterFormatMismatchError",
    132015: "TemplatePausedError",
    132016: "TemplateDisabledError",
    132003: "TemplateError",
    132068: "FlowBlockedError",
    132069: "FlowThrottledError",
    135000: "GenericUserError",
    137000: "IdentityKeyMismatchError",
    138000: "CallingNotEnabledError",
    138001: "ReceiverUncallableError",
    138002: "ConcurrentCallsLimitError",
    138003: "DuplicateCallError",
    138004: "CallConnectionError",
    138005: "CallRateLimitExceededError",
    138006: "CallPermissionNotFoundError",
    138007: "CallConnectionTimeoutError",
    138008: "CallingError",
    138009: "CallPermissionRequestLimitHitError",
    138012: "BusinessInitiatedCallsLimitHitError",
    138013: "FetchCallPermissionLimitHitError",
    138018: "CallingCannotBeEnabledError",
    139000: "FlowBlockedByIntegrityError",
    139001: "FlowUpdatingError",
    139002: "FlowPublishingError",
    139003: "FlowDeprecatingError",
    139004: "FlowDeletingError",
    139100: "BulkBlockingFailedError",
    139101: "BlockListLimitReachedError",
    139102: "BlockListConcurrentUpdateError",
    139103: "BlockUserInternalError",
    # issue 15: groups, sends, templates, registration, marketing, usernames, onboarding
    131020: "BadGroupError",
    131041: "GroupUnknownError",
    131059: "InvalidCursorError",
    131201: "RequestPartiallySucceededError",
    131202: "DuplicateParticipantError",
    131204: "ParticipantOverlimitError",
    131207: "GroupSuspendedError",
    131208: "GroupRateLimitHitError",
    131209: "InvalidGroupProfilePictureAspectRatioError",
    131210: "ImageTooSmallToProcessError",
    131211: "GroupCreateLimitReachedError",
    131212: "ParticipantNotInGroupError",
    131213: "GroupError",
    131214: "GroupError",
    131215: "GroupError",
    131044: "MessageSendError",
    131062: "BsuidRecipientNotSupportedError",
    131063: "MessageSendError",
    131064: "MessageSendError",
    132008: "TemplateParamValueInvalidError",
    132018: "TemplateError",
    133016: "RegisterDeregisterRateLimitExceededError",
    134100: "MarketingMessagesError",
    134101: "MarketingMessagesError",
    134102: "MarketingMessagesError",
    134103: "MarketingMessagesError",
    147001: "UsernameNotAvailableError",
    147002: "UsernameNotEligibleError",
    147003: "UsernameFacebookAccountRequiredError",
    147004: "UsernameInstagramAccountRequiredError",
    147005: "UsernameTransferRequiredError",
    2388012: "PhoneMigrationError",
    2388019: "TemplateCreationError",
    2388040: "TemplateCharacterLimitExceededError",
    2388047: "TemplateHeaderFormatIncorrectError",
    2388073: "TemplateCreationError",
    2388091: "PhoneMigrationError",
    2388093: "PhoneMigrationError",
    2388103: "PhoneMigrationError",
    2388293: "TemplateCreationError",
    2388299: "TemplateCreationError",
    2494100: "AccountInMaintenanceModeError",
    2494164: "SignupError",
    2494165: "SignupError",
    2494166: "SignupError",
    2494167: "SignupError",
    2494168: "SignupError",
    2494176: "SignupError",
    2494177: "SignupError",
    2494179: "SignupError",
}
AUTH_CODES = {0, 3, 10, 190, 200, 250, 299}
RATE_LIMIT_CODES = {4, 80007, 130429, 131048, 131056, 131208, 133016}
AXES = (GraphApiError, GraphAuthError, GraphRateLimitError)


@pytest.fixture(autouse=True)
def _fresh_registry() -> Iterator[None]:
    reset_error_registry()
    yield
    reset_error_registry()


def body(code: int | None = None, **extra: Any) -> dict[str, Any]:
    error: dict[str, Any] = {"message": "(#100) upstream words", "type": "OAuthException"}
    if code is not None:
        error["code"] = code
    error.update(extra)
    return {"error": error}


def resolve(status: int, payload: Any, retry_after: str | None = None) -> GraphApiError:
    return api_error_from_response(status=status, payload=payload, retry_after=retry_after)


def exported_error_classes() -> list[type[GraphApiError]]:
    return [
        obj
        for name in graph.__all__
        if isinstance(obj := getattr(graph, name), type) and issubclass(obj, GraphApiError)
    ]


@pytest.mark.parametrize(("code", "name"), sorted(BUILTIN.items()))
def test_every_builtin_code_resolves_to_its_class(code: int, name: str) -> None:
    cls = getattr(graph, name)
    assert resolve_error_class(code) is cls
    error = resolve(400, body(code, error_subcode=2494010, fbtrace_id="AbC123"))
    assert type(error) is cls
    assert (error.status, error.code, error.error_subcode) == (400, code, 2494010)
    assert error.type == "OAuthException"
    assert error.fbtrace_id == "AbC123"
    assert error.upstream_message == "(#100) upstream words"
    assert error.payload == body(code, error_subcode=2494010, fbtrace_id="AbC123")


@pytest.mark.parametrize(("code", "name"), sorted(BUILTIN.items()))
def test_classification_follows_the_code_sets(code: int, name: str) -> None:
    error = resolve(400, body(code))
    expected = "other"
    if code in AUTH_CODES:
        expected = "auth"
    elif code in RATE_LIMIT_CODES:
        expected = "rate_limit"
    assert error.classification == expected
    assert error.is_auth_error is (expected == "auth")
    assert error.is_rate_limit is (expected == "rate_limit")
    assert isinstance(error, GraphAuthError) is (expected == "auth")
    assert isinstance(error, GraphRateLimitError) is (expected == "rate_limit")


def test_every_exported_class_sits_on_exactly_one_axis() -> None:
    classes = exported_error_classes()
    assert len(classes) > 60
    for cls in classes:
        axes = [axis for axis in (GraphAuthError, GraphRateLimitError) if issubclass(cls, axis)]
        assert len(axes) <= 1, cls
        assert issubclass(cls, GraphApiError)


# (status, code, subcode) in -> (class name, classification) out, at the status the
# platform documents for the code where it says one (issue 15).
DOCUMENTED: list[tuple[int, int, int | None, str, str]] = [
    (400, 131020, None, "BadGroupError", "other"),
    (400, 131041, None, "GroupUnknownError", "other"),
    (400, 131059, None, "InvalidCursorError", "other"),
    (400, 131201, None, "RequestPartiallySucceededError", "other"),
    (400, 131202, None, "DuplicateParticipantError", "other"),
    (400, 131204, None, "ParticipantOverlimitError", "other"),
    (403, 131207, None, "GroupSuspendedError", "other"),
    (429, 131208, None, "GroupRateLimitHitError", "rate_limit"),
    (400, 131208, None, "GroupRateLimitHitError", "rate_limit"),
    (400, 131209, None, "InvalidGroupProfilePictureAspectRatioError", "other"),
    (400, 131210, None, "ImageTooSmallToProcessError", "other"),
    (400, 131211, None, "GroupCreateLimitReachedError", "other"),
    (400, 131212, 2494010, "ParticipantNotInGroupError", "other"),
    (400, 131215, None, "GroupError", "other"),
    (400, 131044, None, "MessageSendError", "other"),
    (400, 131064, 7, "MessageSendError", "other"),
    (400, 132008, None, "TemplateParamValueInvalidError", "other"),
    (400, 132018, None, "TemplateError", "other"),
    (400, 133016, None, "RegisterDeregisterRateLimitExceededError", "rate_limit"),
    (429, 133016, None, "RegisterDeregisterRateLimitExceededError", "rate_limit"),
    (400, 134102, None, "MarketingMessagesError", "other"),
    (400, 147005, None, "UsernameTransferRequiredError", "other"),
    (400, 2388040, None, "TemplateCharacterLimitExceededError", "other"),
    (400, 2388299, None, "TemplateCreationError", "other"),
    (400, 2388103, None, "PhoneMigrationError", "other"),
    (503, 2494100, None, "AccountInMaintenanceModeError", "other"),
    (400, 2494179, None, "SignupError", "other"),
    (403, 3, None, "APIMethodError", "auth"),
    (500, 3, None, "GraphApiError", "other"),
]


@pytest.mark.parametrize(("status", "code", "subcode", "name", "axis"), DOCUMENTED)
def test_documented_status_and_code_give_class_and_axis(
    status: int, code: int, subcode: int | None, name: str, axis: str
) -> None:
    extra = {} if subcode is None else {"error_subcode": subcode}
    error = resolve(status, body(code, **extra), retry_after="60")
    assert type(error) is getattr(graph, name)
    assert (error.status, error.code, error.error_subcode) == (status, code, subcode)
    assert error.classification == axis
    assert isinstance(error, GraphAuthError) is (axis == "auth")
    assert isinstance(error, GraphRateLimitError) is (axis == "rate_limit")
    assert error.retry_after == "60"


def test_new_families_catch_their_members_and_nothing_else() -> None:
    assert isinstance(resolve(400, body(131212)), graph.GroupError)
    assert isinstance(resolve(400, body(131020)), graph.GroupError)
    assert not isinstance(resolve(429, body(131208)), graph.GroupError)
    assert isinstance(resolve(400, body(132008)), graph.TemplateError)
    assert not isinstance(resolve(400, body(2388040)), graph.TemplateError)
    assert isinstance(resolve(400, body(147003)), graph.UsernameError)
    assert type(resolve(400, body(131061))) is GraphApiError
    assert type(resolve(400, body(131065))) is GraphApiError
    assert type(resolve(400, body(131216))) is GraphApiError
    assert type(resolve(400, body(147006))) is GraphApiError
    assert type(resolve(400, body(2494169))) is GraphApiError


def test_unsupported_message_type_is_neither_invalid_parameter_nor_auth() -> None:
    error = resolve(400, body(131051))
    assert type(error) is graph.UnsupportedMessageTypeError
    assert not isinstance(error, graph.InvalidParameterError)
    assert not isinstance(error, GraphAuthError)
    assert not isinstance(error, GraphRateLimitError)
    assert error.classification == "other"


def test_code_100_and_131009_share_invalid_parameter() -> None:
    assert type(resolve(400, body(100))) is graph.InvalidParameterError
    assert type(resolve(400, body(131009))) is graph.InvalidParameterError


def test_families_catch_their_members() -> None:
    assert isinstance(resolve(400, body(132015)), graph.TemplateError)
    assert isinstance(resolve(400, body(138006)), graph.CallingError)
    assert isinstance(resolve(400, body(139002)), graph.FlowError)
    assert isinstance(resolve(400, body(132068)), graph.FlowError)
    assert isinstance(resolve(400, body(139101)), graph.BlockUserError)


@pytest.mark.parametrize("code", sorted(AUTH_CODES | RATE_LIMIT_CODES))
@pytest.mark.parametrize("status", [500, 502, 503, 504])
def test_auth_or_rate_limit_code_at_5xx_is_not_on_an_axis(code: int, status: int) -> None:
    error = resolve(status, body(code), retry_after="30")
    assert type(error) is GraphApiError
    assert error.classification == "other"
    assert not isinstance(error, GraphAuthError | GraphRateLimitError)
    assert (error.status, error.code, error.retry_after) == (status, code, "30")


def test_non_axis_code_at_5xx_keeps_its_class() -> None:
    assert type(resolve(503, body(131016))) is graph.ServiceUnavailableError


def test_code_4_at_http_429_is_to_many_api_calls() -> None:
    error = resolve(429, body(4), retry_after="120")
    assert type(error) is graph.ToManyAPICallsError
    assert isinstance(error, GraphRateLimitError)
    assert error.retry_after == "120"


@pytest.mark.parametrize("payload", [body(100), body(613), body(), None, {"unexpected": 1}])
def test_any_http_429_is_a_rate_limit(payload: Any) -> None:
    error = resolve(429, payload, retry_after="7")
    assert type(error) is GraphRateLimitError
    assert error.is_rate_limit
    assert error.retry_after == "7"


@pytest.mark.parametrize(
    "payload",
    [None, {}, {"error": "text"}, {"error": {"code": "abc"}}, {"error": {"code": True}}, []],
)
def test_malformed_error_bodies_give_a_plain_api_error(payload: Any) -> None:
    error = resolve(400, payload)
    assert type(error) is GraphApiError
    assert error.code is None
    assert str(error) == "Graph API error (HTTP 400)"


def test_digit_string_code_is_accepted() -> None:
    assert type(resolve(400, {"error": {"code": "190"}})) is graph.ExpiredAccessTokenError


def test_str_is_a_safe_summary_and_never_the_upstream_text() -> None:
    error = resolve(400, body(100, message="secret-looking upstream text"))
    assert str(error) == "Graph API error 100 (HTTP 400)"
    assert "secret-looking" not in repr(error)
    with_subcode = resolve(400, body(100, error_subcode=33))
    assert str(with_subcode) == "Graph API error 100/33 (HTTP 400)"


# --- registry -------------------------------------------------------------------------


class WindowClosedError(GraphApiError):
    pass


class WindowClosedBySubcodeError(GraphApiError):
    pass


class CustomAuthError(GraphAuthError):
    pass


def test_register_new_code() -> None:
    register_error_code(555001, cls=WindowClosedError)
    assert type(resolve(400, body(555001))) is WindowClosedError


def test_exact_code_and_subcode_wins_over_code_only() -> None:
    register_error_code(555001, 7, cls=WindowClosedBySubcodeError)
    register_error_code(555001, cls=WindowClosedError)  # later, but code-only
    assert type(resolve(400, body(555001, error_subcode=7))) is WindowClosedBySubcodeError
    assert type(resolve(400, body(555001, error_subcode=8))) is WindowClosedError
    assert type(resolve(400, body(555001))) is WindowClosedError


def test_subcode_entry_does_not_match_without_subcode() -> None:
    register_error_code(555002, 7, cls=WindowClosedBySubcodeError)
    assert type(resolve(400, body(555002))) is GraphApiError


def test_subcode_refines_a_builtin_code() -> None:
    register_error_code(100, 2494010, cls=WindowClosedBySubcodeError)
    assert type(resolve(400, body(100, error_subcode=2494010))) is WindowClosedBySubcodeError
    assert type(resolve(400, body(100, error_subcode=1))) is graph.InvalidParameterError


def test_last_writer_wins() -> None:
    register_error_code(131051, cls=WindowClosedError)
    assert type(resolve(400, body(131051))) is WindowClosedError
    register_error_code(131051, cls=WindowClosedBySubcodeError)
    assert type(resolve(400, body(131051))) is WindowClosedBySubcodeError


def test_ranges_and_last_writer_wins_between_range_and_single() -> None:
    register_error_code(range(600000, 600010), cls=WindowClosedError)
    assert type(resolve(400, body(600000))) is WindowClosedError
    assert type(resolve(400, body(600009))) is WindowClosedError
    assert type(resolve(400, body(600010))) is GraphApiError
    register_error_code(600005, cls=WindowClosedBySubcodeError)
    assert type(resolve(400, body(600005))) is WindowClosedBySubcodeError
    register_error_code(range(600004, 600007), cls=WindowClosedError)
    assert type(resolve(400, body(600005))) is WindowClosedError


def test_builtin_range_member_can_be_overridden() -> None:
    register_error_code(250, cls=CustomAuthError)
    assert type(resolve(403, body(250))) is CustomAuthError
    assert type(resolve(403, body(251))) is graph.APIPermissionError


def test_registered_auth_class_follows_the_5xx_rule() -> None:
    register_error_code(555003, cls=CustomAuthError)
    assert type(resolve(401, body(555003))) is CustomAuthError
    assert type(resolve(500, body(555003))) is GraphApiError


def test_reset_restores_builtins_and_forgets_registrations() -> None:
    register_error_code(100, cls=WindowClosedError)
    register_error_code(555004, cls=WindowClosedError)
    reset_error_registry()
    assert resolve_error_class(100) is graph.InvalidParameterError
    assert resolve_error_class(555004) is GraphApiError


@pytest.mark.parametrize(
    ("args", "kwargs"),
    [
        ((-1,), {"cls": WindowClosedError}),
        ((True,), {"cls": WindowClosedError}),
        (("100",), {"cls": WindowClosedError}),
        ((2**31,), {"cls": WindowClosedError}),
        ((range(5, 5),), {"cls": WindowClosedError}),
        ((range(0, 10, 2),), {"cls": WindowClosedError}),
        ((100, -3), {"cls": WindowClosedError}),
        ((100, "7"), {"cls": WindowClosedError}),
        ((100,), {"cls": ValueError}),
        ((100,), {"cls": GraphNetworkError}),
        ((100,), {"cls": "InvalidParameterError"}),
    ],
)
def test_register_rejects_bad_arguments(args: tuple[Any, ...], kwargs: dict[str, Any]) -> None:
    with pytest.raises(GraphRequestValidationError):
        register_error_code(*args, **kwargs)
    assert resolve_error_class(100) is graph.InvalidParameterError


# --- through the client ---------------------------------------------------------------


async def test_client_raises_the_resolved_class_with_context() -> None:
    def handler(request: httpx.Request) -> httpx.Response:
        return httpx.Response(
            429,
            headers={"Retry-After": "42"},
            content=json.dumps(body(130429, fbtrace_id="Trace1")).encode(),
        )

    client = graph.GraphClient(access_token=TOKEN, transport=httpx.MockTransport(handler))
    with pytest.raises(graph.RateLimitHitError) as caught:
        await client.request("POST", "/1065/messages", json={"to": "1"})
    error = caught.value
    assert (error.status, error.code, error.retry_after, error.fbtrace_id) == (
        429,
        130429,
        "42",
        "Trace1",
    )
    assert isinstance(error, GraphError)
    for text in (str(error), repr(error)):
        assert TOKEN not in text
    await client.aclose()


# --- issue 19: each code is stated once, in the registration table


def test_class_docstrings_state_no_codes() -> None:
    for name in _error_classes.__all__:
        doc = getattr(_error_classes, name).__doc__ or ""
        assert doc.strip(), name
        assert not re.search(r"\d{3,}", doc), f"{name} repeats a code in its docstring"


def test_every_error_class_is_registered_or_a_family_base() -> None:
    registered = {cls for _, cls in _error_codes._BUILTINS}
    for name in _error_classes.__all__:
        cls = getattr(_error_classes, name)
        family = any(other is not cls and issubclass(other, cls) for other in registered)
        assert cls in registered or family, name


def test_bsuid_recipient_not_supported_is_named_and_stays_a_send_error() -> None:
    error = api_error_from_response(
        status=400,
        payload={"error": {"code": 131062, "message": "not supported", "type": "OAuthException"}},
        retry_after=None,
    )
    assert type(error) is graph.BsuidRecipientNotSupportedError
    assert isinstance(error, graph.MessageSendError)
    assert (error.status, error.code, error.classification) == (400, 131062, "other")
    assert error.upstream_message == "not supported"
    assert "not supported" not in str(error)


def _documented_classes() -> dict[int, str]:
    """docs/graph.md's code -> class table: each code with the class the page names for it.

    A family's heading range, ``(132000-132018)``, gives the family class to its other codes.
    """
    text = (Path(__file__).resolve().parents[2] / "docs" / "graph.md").read_text("utf-8")
    table = text[text.index("| Axis | Codes -> class |") : text.index("After the code lookup")]
    documented: dict[int, str] = {}
    for row in filter(None, table.splitlines()[2:]):
        _, head, cell, _ = row.split("|")
        family = re.search(r"`(\w+)` family(?: \((\d+)-(\d+))?", head)
        for clause in re.sub(r"\(as \d+\)", "", cell).split(";"):
            pending: list[int] = []
            for code, name in re.findall(r"(\d+(?:-\d+)?)|`(\w+)`", clause):
                if code:
                    start, _, end = code.partition("-")
                    pending += range(int(start), int(end or start) + 1)
                else:
                    documented.update(dict.fromkeys(pending, name))
                    pending = []
            if pending:  # a family row listing its members alone
                assert family, row
                documented.update(dict.fromkeys(pending, family[1]))
        if family and family[2]:
            for code in range(int(family[2]), int(family[3]) + 1):
                documented.setdefault(code, family[1])
    return documented


def test_the_docs_class_table_is_the_registry() -> None:
    documented = _documented_classes()
    for code, name in documented.items():
        assert resolve_error_class(code).__name__ == name, code
    for key, _ in _error_codes._BUILTINS:
        codes = key if isinstance(key, range) else range(key, key + 1)
        assert set(codes) <= set(documented), key
