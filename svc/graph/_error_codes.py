"""The error-code registry: the one table of upstream codes and the class each resolves to.

Resolution: an entry registered for the exact ``(code, error_subcode)`` wins,
then one registered for the code alone; among entries that match equally,
the last registered wins (a range counts as one entry per code it covers).
Two HTTP rules then keep the axes honest: an auth or rate-limit class at an
HTTP 5xx answer falls back to plain ``GraphApiError`` (a server fault is not
the caller's credentials or pace), and any HTTP 429 answer is a
``GraphRateLimitError``. The classes and what they mean live in ``_error_classes``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._error_classes import (
    AccessDeniedError,
    AccountInMaintenanceModeError,
    AccountLockedError,
    AccountRestrictedFromCountryError,
    APIMethodError,
    APIPermissionError,
    AuthExceptionError,
    BadGroupError,
    BlockListConcurrentUpdateError,
    BlockListLimitReachedError,
    BlockUserError,
    BlockUserInternalError,
    BsuidRecipientNotSupportedError,
    BulkBlockingFailedError,
    BusinessEligibilityPaymentIssueError,
    BusinessInitiatedCallsLimitHitError,
    CallConnectionError,
    CallConnectionTimeoutError,
    CallingCannotBeEnabledError,
    CallingError,
    CallingNotEnabledError,
    CallPermissionNotFoundError,
    CallPermissionRequestLimitHitError,
    CallRateLimitExceededError,
    ConcurrentCallsLimitError,
    DisplayNameApprovalRequiredError,
    DuplicateCallError,
    DuplicateParticipantError,
    EcosystemEngagementError,
    ExpiredAccessTokenError,
    FetchCallPermissionLimitHitError,
    FlowBlockedByIntegrityError,
    FlowBlockedError,
    FlowDeletingError,
    FlowDeprecatingError,
    FlowError,
    FlowPublishingError,
    FlowThrottledError,
    FlowUpdatingError,
    GenericUserError,
    GroupCreateLimitReachedError,
    GroupError,
    GroupRateLimitHitError,
    GroupSuspendedError,
    GroupUnknownError,
    IdentityKeyMismatchError,
    ImageTooSmallToProcessError,
    IncorrectCertificateError,
    InvalidCursorError,
    InvalidGroupProfilePictureAspectRatioError,
    InvalidParameterError,
    MarketingMessagesError,
    MediaDownloadError,
    MediaUploadError,
    MessageSendError,
    MessageUndeliverableError,
    MethodNotAllowedError,
    MissingRequiredParameterError,
    ParticipantNotInGroupError,
    ParticipantOverlimitError,
    PermissionDeniedError,
    PhoneMigrationError,
    RateLimitHitError,
    RateLimitIssuesError,
    ReceiverUncallableError,
    RecipientCannotBeSenderError,
    RecipientNotInAllowedListError,
    ReEngagementMessageError,
    RegisterDeregisterRateLimitExceededError,
    RequestPartiallySucceededError,
    ServiceUnavailableError,
    SignupError,
    SomethingWentWrongError,
    SpamRateLimitHitError,
    TemplateCharacterLimitExceededError,
    TemplateCreationError,
    TemplateDisabledError,
    TemplateDoesNotExistError,
    TemplateError,
    TemplateFormatCharacterPolicyViolatedError,
    TemplateHeaderFormatIncorrectError,
    TemplateHydratedTextTooLongError,
    TemplateParamCountMismatchError,
    TemplateParameterFormatMismatchError,
    TemplateParamValueInvalidError,
    TemplatePausedError,
    TemporarilyBlockedError,
    ToManyAPICallsError,
    TooManyMessagesError,
    UnsupportedMessageTypeError,
    UserIsInExperimentGroupError,
    UsernameError,
    UsernameFacebookAccountRequiredError,
    UsernameInstagramAccountRequiredError,
    UsernameNotAvailableError,
    UsernameNotEligibleError,
    UsernameTransferRequiredError,
    UserStoppedMarketingMessagesError,
)
from ._errors import (
    GraphApiError,
    GraphAuthError,
    GraphRateLimitError,
    GraphRequestValidationError,
)

__all__ = [
    "api_error_from_response",
    "register_error_code",
    "reset_error_registry",
    "resolve_error_class",
]

# Every built-in code, stated once: ``(code or range, class)``. Family ranges
# come first so that the specific codes registered later win. Families keep
# out their odd members: 131208 (group rate limit) is on the rate-limit axis,
# 131213-131215 resolve to ``GroupError`` itself, 2494100 joins 131057.
_BUILTINS: tuple[tuple[int | range, type[GraphApiError]], ...] = (
    (range(132000, 132019), TemplateError),
    (range(131201, 131216), GroupError),
    (range(134100, 134104), MarketingMessagesError),
    (range(147001, 147006), UsernameError),
    (range(2494164, 2494169), SignupError),
    (range(138000, 138019), CallingError),
    (range(139000, 139005), FlowError),
    (range(139100, 139104), BlockUserError),
    (0, AuthExceptionError),
    (3, APIMethodError),
    (4, ToManyAPICallsError),
    (10, PermissionDeniedError),
    (100, InvalidParameterError),
    (190, ExpiredAccessTokenError),
    (range(200, 300), APIPermissionError),
    (368, TemporarilyBlockedError),
    (613, FetchCallPermissionLimitHitError),
    (80007, RateLimitIssuesError),
    (130429, RateLimitHitError),
    (130472, UserIsInExperimentGroupError),
    (130497, AccountRestrictedFromCountryError),
    (131000, SomethingWentWrongError),
    (131005, AccessDeniedError),
    (131008, MissingRequiredParameterError),
    (131009, InvalidParameterError),
    (131016, ServiceUnavailableError),
    (131021, RecipientCannotBeSenderError),
    (131026, MessageUndeliverableError),
    (131030, RecipientNotInAllowedListError),
    (131031, AccountLockedError),
    (131037, DisplayNameApprovalRequiredError),
    (131042, BusinessEligibilityPaymentIssueError),
    (131045, IncorrectCertificateError),
    (131047, ReEngagementMessageError),
    (131048, SpamRateLimitHitError),
    (131049, EcosystemEngagementError),
    (131050, UserStoppedMarketingMessagesError),
    (131051, UnsupportedMessageTypeError),
    (131052, MediaDownloadError),
    (131053, MediaUploadError),
    (131055, MethodNotAllowedError),
    (131056, TooManyMessagesError),
    (131057, AccountInMaintenanceModeError),
    (132000, TemplateParamCountMismatchError),
    (132001, TemplateDoesNotExistError),
    (132005, TemplateHydratedTextTooLongError),
    (132007, TemplateFormatCharacterPolicyViolatedError),
    (132012, TemplateParameterFormatMismatchError),
    (132015, TemplatePausedError),
    (132016, TemplateDisabledError),
    (132068, FlowBlockedError),
    (132069, FlowThrottledError),
    (135000, GenericUserError),
    (137000, IdentityKeyMismatchError),
    (138000, CallingNotEnabledError),
    (138001, ReceiverUncallableError),
    (138002, ConcurrentCallsLimitError),
    (138003, DuplicateCallError),
    (138004, CallConnectionError),
    (138005, CallRateLimitExceededError),
    (138006, CallPermissionNotFoundError),
    (138007, CallConnectionTimeoutError),
    (138009, CallPermissionRequestLimitHitError),
    (138012, BusinessInitiatedCallsLimitHitError),
    (138013, FetchCallPermissionLimitHitError),
    (138018, CallingCannotBeEnabledError),
    (139000, FlowBlockedByIntegrityError),
    (139001, FlowUpdatingError),
    (139002, FlowPublishingError),
    (139003, FlowDeprecatingError),
    (139004, FlowDeletingError),
    (139100, BulkBlockingFailedError),
    (139101, BlockListLimitReachedError),
    (139102, BlockListConcurrentUpdateError),
    (139103, BlockUserInternalError),
    # groups
    (131020, BadGroupError),
    (131041, GroupUnknownError),
    (131059, InvalidCursorError),
    (131201, RequestPartiallySucceededError),
    (131202, DuplicateParticipantError),
    (131204, ParticipantOverlimitError),
    (131207, GroupSuspendedError),
    (131208, GroupRateLimitHitError),
    (131209, InvalidGroupProfilePictureAspectRatioError),
    (131210, ImageTooSmallToProcessError),
    (131211, GroupCreateLimitReachedError),
    (131212, ParticipantNotInGroupError),
    # sends, templates, registration
    (131044, MessageSendError),
    (range(131062, 131065), MessageSendError),
    (131062, BsuidRecipientNotSupportedError),
    (132008, TemplateParamValueInvalidError),
    (133016, RegisterDeregisterRateLimitExceededError),
    # usernames
    (147001, UsernameNotAvailableError),
    (147002, UsernameNotEligibleError),
    (147003, UsernameFacebookAccountRequiredError),
    (147004, UsernameInstagramAccountRequiredError),
    (147005, UsernameTransferRequiredError),
    # template creation, phone migration, signup and maintenance
    (2388019, TemplateCreationError),
    (2388040, TemplateCharacterLimitExceededError),
    (2388047, TemplateHeaderFormatIncorrectError),
    (2388073, TemplateCreationError),
    (2388293, TemplateCreationError),
    (2388299, TemplateCreationError),
    (2388012, PhoneMigrationError),
    (2388091, PhoneMigrationError),
    (2388093, PhoneMigrationError),
    (2388103, PhoneMigrationError),
    (2494100, AccountInMaintenanceModeError),
    (2494176, SignupError),
    (2494177, SignupError),
    (2494179, SignupError),
)

MAX_ERROR_CODE = 2**31 - 1
"""Graph error codes and subcodes are 32-bit signed integers on the wire."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Entry:
    order: int
    codes: range
    subcode: int | None
    cls: type[GraphApiError]


_order = itertools.count()
_single: dict[tuple[int, int | None], _Entry] = {}
_ranges: list[_Entry] = []


def register_error_code(
    code: int | range, subcode: int | None = None, *, cls: type[GraphApiError]
) -> None:
    """Map an upstream ``code`` (or a ``range``), optionally narrowed by ``subcode``, to ``cls``.

    A later registration for the same codes replaces an earlier one (last
    writer wins); ``reset_error_registry()`` restores the built-ins.
    """
    if isinstance(code, range):
        if code.step != 1 or not code or code.start < 0 or code.stop - 1 > MAX_ERROR_CODE:
            raise GraphRequestValidationError(
                "code range must be a non-empty step-1 range of non-negative codes", field="code"
            )
        codes = code
    else:
        codes = range(_check_code(code, "code"), _check_code(code, "code") + 1)
    if subcode is not None:
        _check_code(subcode, "subcode")
    if not isinstance(cls, type) or not issubclass(cls, GraphApiError):
        raise GraphRequestValidationError("cls must be a GraphApiError subclass", field="cls")
    entry = _Entry(order=next(_order), codes=codes, subcode=subcode, cls=cls)
    if len(codes) == 1:
        _single[(codes.start, subcode)] = entry
    else:
        _ranges.append(entry)


def reset_error_registry() -> None:
    """Forget every registration and restore the built-in classes (a hook for tests)."""
    _single.clear()
    _ranges.clear()
    for code, cls in _BUILTINS:
        register_error_code(code, cls=cls)


def resolve_error_class(code: int | None, subcode: int | None = None) -> type[GraphApiError]:
    """The registered class for ``(code, subcode)``: exact pair first, then the code alone."""
    if code is None:
        return GraphApiError
    keys: tuple[int | None, ...] = (subcode, None) if subcode is not None else (None,)
    for key in keys:
        best = _single.get((code, key))
        for entry in _ranges:
            if (
                entry.subcode == key
                and code in entry.codes
                and (best is None or entry.order > best.order)
            ):
                best = entry
        if best is not None:
            return best.cls
    return GraphApiError


def api_error_from_response(
    *, status: int, payload: Mapping[str, Any] | None, retry_after: str | None
) -> GraphApiError:
    """Build the typed error for a non-2xx answer (``payload`` is the parsed body, if any)."""
    error = payload.get("error") if isinstance(payload, Mapping) else None
    fields: Mapping[str, Any] = error if isinstance(error, Mapping) else {}
    code = _int_or_none(fields.get("code"))
    subcode = _int_or_none(fields.get("error_subcode"))
    cls = resolve_error_class(code, subcode)
    if status >= 500 and issubclass(cls, GraphAuthError | GraphRateLimitError):
        cls = GraphApiError
    if status == 429 and not issubclass(cls, GraphRateLimitError):
        cls = GraphRateLimitError
    return cls(
        _summary(status=status, code=code, subcode=subcode),
        status=status,
        code=code,
        error_subcode=subcode,
        type=_str_or_none(fields.get("type")),
        fbtrace_id=_str_or_none(fields.get("fbtrace_id")),
        payload=payload,
        retry_after=retry_after,
        upstream_message=_str_or_none(fields.get("message")),
    )


def _summary(*, status: int, code: int | None, subcode: int | None) -> str:
    if code is None:
        return f"Graph API error (HTTP {status})"
    if subcode is None:
        return f"Graph API error {code} (HTTP {status})"
    return f"Graph API error {code}/{subcode} (HTTP {status})"


def _check_code(value: object, field: str) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value <= MAX_ERROR_CODE:
        raise GraphRequestValidationError(
            f"{field} must be a non-negative 32-bit integer", field=field
        )
    return value


def _int_or_none(value: object) -> int | None:
    if isinstance(value, bool):
        return None
    if isinstance(value, int):
        return value
    if isinstance(value, str) and value.isascii() and value.isdigit() and len(value) <= 10:
        return int(value)
    return None


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


reset_error_registry()
