"""The error-code registry: the one table of upstream codes, the class each resolves to and
its retry hint.

Resolution: an entry registered for the exact ``(code, error_subcode)`` wins,
then one registered for the code alone; among entries that match equally,
the last registered wins (a range counts as one entry per code it covers).
Two HTTP rules then keep the axes honest: an auth or rate-limit class at an
HTTP 5xx answer falls back to plain ``GraphApiError`` (a server fault is not
the caller's credentials or pace), and any HTTP 429 answer is a
``GraphRateLimitError``. The classes and what they mean live in ``_error_classes``.

Retry hints (``_HINTS``, one per row of ``_BUILTINS``) follow the same
resolution and the same two rules: at HTTP 5xx the outcome is ``UNKNOWN``
whatever the code, and HTTP 429 is always ``RETRY_LATER``; an upstream
``Retry-After`` in seconds replaces the table's wait.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from svc._text import decimal_int

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
    DO_NOT_RETRY,
    FIX_REQUEST,
    REFRESH_CREDENTIALS,
    RETRY_LATER,
    UNKNOWN_OUTCOME,
    GraphApiError,
    GraphAuthError,
    GraphRateLimitError,
    GraphRequestValidationError,
    RetryAction,
    RetryHint,
    status_hint,
)

__all__ = [
    "api_error_from_response",
    "register_error_code",
    "reset_error_registry",
    "resolve_error_class",
    "resolve_retry_hint",
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


def _later(seconds: float) -> RetryHint:
    return RetryHint(RetryAction.RETRY_LATER, seconds)


# The retry hint of every row of ``_BUILTINS``, keyed as the row is (a test holds the two
# tables to the same keys). RETRY_LATER waits are the platform's where it states one:
# 131056 allows one message per 6 s to a user, a throughput upgrade (131057) takes up to a
# minute, throughput (130429) is counted per second. DO_NOT_RETRY: the platform refused the
# request for good (recipient, account, policy) or its documentation gives no retry advice.
_HINTS: Mapping[int | range, RetryHint] = {
    range(132000, 132019): FIX_REQUEST,
    range(131201, 131216): FIX_REQUEST,
    range(134100, 134104): DO_NOT_RETRY,
    range(147001, 147006): FIX_REQUEST,
    range(2494164, 2494169): DO_NOT_RETRY,
    range(138000, 138019): DO_NOT_RETRY,
    range(139000, 139005): FIX_REQUEST,
    range(139100, 139104): DO_NOT_RETRY,
    0: REFRESH_CREDENTIALS,
    3: REFRESH_CREDENTIALS,
    4: RETRY_LATER,
    10: REFRESH_CREDENTIALS,
    100: FIX_REQUEST,
    190: REFRESH_CREDENTIALS,
    range(200, 300): REFRESH_CREDENTIALS,
    368: DO_NOT_RETRY,
    613: RETRY_LATER,
    80007: RETRY_LATER,
    130429: _later(1),
    130472: DO_NOT_RETRY,
    130497: DO_NOT_RETRY,
    131000: RETRY_LATER,
    131005: REFRESH_CREDENTIALS,
    131008: FIX_REQUEST,
    131009: FIX_REQUEST,
    131016: RETRY_LATER,
    131021: FIX_REQUEST,
    131026: DO_NOT_RETRY,
    131030: DO_NOT_RETRY,
    131031: DO_NOT_RETRY,
    131037: DO_NOT_RETRY,
    131042: DO_NOT_RETRY,
    131045: DO_NOT_RETRY,
    131047: FIX_REQUEST,
    131048: RETRY_LATER,
    131049: DO_NOT_RETRY,
    131050: DO_NOT_RETRY,
    131051: FIX_REQUEST,
    131052: DO_NOT_RETRY,
    131053: FIX_REQUEST,
    131055: FIX_REQUEST,
    131056: _later(6),
    131057: _later(60),
    132000: FIX_REQUEST,
    132001: FIX_REQUEST,
    132005: FIX_REQUEST,
    132007: FIX_REQUEST,
    132012: FIX_REQUEST,
    132015: DO_NOT_RETRY,
    132016: DO_NOT_RETRY,
    132068: DO_NOT_RETRY,
    132069: RETRY_LATER,
    135000: FIX_REQUEST,
    137000: FIX_REQUEST,
    138000: DO_NOT_RETRY,
    138001: DO_NOT_RETRY,
    138002: RETRY_LATER,
    138003: DO_NOT_RETRY,
    138004: RETRY_LATER,
    138005: RETRY_LATER,
    138006: DO_NOT_RETRY,
    138007: RETRY_LATER,
    138009: RETRY_LATER,
    138012: RETRY_LATER,
    138013: RETRY_LATER,
    138018: DO_NOT_RETRY,
    139000: DO_NOT_RETRY,
    139001: FIX_REQUEST,
    139002: FIX_REQUEST,
    139003: FIX_REQUEST,
    139004: FIX_REQUEST,
    139100: DO_NOT_RETRY,
    139101: DO_NOT_RETRY,
    139102: RETRY_LATER,
    139103: RETRY_LATER,
    131020: DO_NOT_RETRY,
    131041: FIX_REQUEST,
    131059: FIX_REQUEST,
    131201: DO_NOT_RETRY,
    131202: FIX_REQUEST,
    131204: DO_NOT_RETRY,
    131207: DO_NOT_RETRY,
    131208: RETRY_LATER,
    131209: FIX_REQUEST,
    131210: FIX_REQUEST,
    131211: DO_NOT_RETRY,
    131212: FIX_REQUEST,
    131044: DO_NOT_RETRY,
    range(131062, 131065): FIX_REQUEST,
    131062: FIX_REQUEST,
    132008: FIX_REQUEST,
    133016: RETRY_LATER,
    147001: FIX_REQUEST,
    147002: DO_NOT_RETRY,
    147003: DO_NOT_RETRY,
    147004: DO_NOT_RETRY,
    147005: FIX_REQUEST,
    2388019: FIX_REQUEST,
    2388040: FIX_REQUEST,
    2388047: FIX_REQUEST,
    2388073: FIX_REQUEST,
    2388293: FIX_REQUEST,
    2388299: FIX_REQUEST,
    2388012: DO_NOT_RETRY,
    2388091: DO_NOT_RETRY,
    2388093: DO_NOT_RETRY,
    2388103: DO_NOT_RETRY,
    2494100: _later(60),
    2494176: DO_NOT_RETRY,
    2494177: DO_NOT_RETRY,
    2494179: DO_NOT_RETRY,
}

MAX_ERROR_CODE = 2**31 - 1
"""Graph error codes and subcodes are 32-bit signed integers on the wire."""


@dataclass(frozen=True, slots=True, kw_only=True)
class _Entry:
    order: int
    codes: range
    subcode: int | None
    cls: type[GraphApiError]
    hint: RetryHint | None


_order = itertools.count()
_single: dict[tuple[int, int | None], _Entry] = {}
_ranges: list[_Entry] = []


def register_error_code(
    code: int | range,
    subcode: int | None = None,
    *,
    cls: type[GraphApiError],
    retry_hint: RetryHint | None = None,
) -> None:
    """Map an upstream ``code`` (or a ``range``), optionally narrowed by ``subcode``, to ``cls``
    and its ``retry_hint`` (None: the hint of the answer's status and ``cls``'s axis).

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
    if retry_hint is not None and not isinstance(retry_hint, RetryHint):
        raise GraphRequestValidationError(
            "retry_hint must be a RetryHint or None", field="retry_hint"
        )
    entry = _Entry(order=next(_order), codes=codes, subcode=subcode, cls=cls, hint=retry_hint)
    if len(codes) == 1:
        _single[(codes.start, subcode)] = entry
    else:
        _ranges.append(entry)


def reset_error_registry() -> None:
    """Forget every registration and restore the built-in classes (a hook for tests)."""
    _single.clear()
    _ranges.clear()
    for code, cls in _BUILTINS:
        register_error_code(code, cls=cls, retry_hint=_HINTS.get(code))


def resolve_error_class(code: int | None, subcode: int | None = None) -> type[GraphApiError]:
    """The registered class for ``(code, subcode)``: exact pair first, then the code alone."""
    entry = _resolve(code, subcode)
    return GraphApiError if entry is None else entry.cls


def resolve_retry_hint(
    code: int | None,
    subcode: int | None = None,
    *,
    status: int,
    retry_after: str | None = None,
) -> RetryHint:
    """The retry hint of an answer with HTTP ``status`` and ``(code, subcode)``.

    At HTTP 5xx the outcome is ``UNKNOWN`` whatever the code (the platform may
    have carried the request out); otherwise the registered entry's hint, or
    the hint of the status and the entry's axis; HTTP 429 is always
    ``RETRY_LATER``. A ``RETRY_LATER`` wait is the upstream ``Retry-After``
    when it is a number of seconds, else the table's.
    """
    if status >= 500:
        return UNKNOWN_OUTCOME
    entry = _resolve(code, subcode)
    if entry is None:
        hint = status_hint(status)
    elif entry.hint is None:
        hint = status_hint(status, entry.cls.classification)
    else:
        hint = entry.hint
    if status == 429 and hint.action is not RetryAction.RETRY_LATER:
        hint = RETRY_LATER
    seconds = _seconds(retry_after)
    if hint.action is RetryAction.RETRY_LATER and seconds is not None:
        hint = RetryHint(RetryAction.RETRY_LATER, seconds)
    return hint


def _seconds(value: str | None) -> float | None:
    """A ``Retry-After`` of delta-seconds (at most 6 digits); None for a date or anything else."""
    if value is None:
        return None
    seconds = decimal_int(value.strip(), max_digits=6)
    return None if seconds is None else float(seconds)


def _resolve(code: int | None, subcode: int | None) -> _Entry | None:
    """The entry for ``(code, subcode)``: exact pair first, then the code alone."""
    if code is None:
        return None
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
            return best
    return None


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
        retry_hint=resolve_retry_hint(code, subcode, status=status, retry_after=retry_after),
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
    if isinstance(value, str):
        return decimal_int(value, max_digits=10)
    return None


def _str_or_none(value: object) -> str | None:
    return value if isinstance(value, str) else None


reset_error_registry()
