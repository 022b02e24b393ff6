"""Per-code error classes and the registry that resolves an upstream error answer to one.

Every class sits on exactly one axis (its only ``Graph*Error`` base)::

    GraphApiError        InvalidParameterError, UnsupportedMessageTypeError, ...
    │                    TemplateError, CallingError, FlowError, BlockUserError, GroupError,
    │                    MessageSendError, MarketingMessagesError, UsernameError,
    │                    TemplateCreationError, PhoneMigrationError, SignupError (families)
    ├── GraphAuthError   AuthExceptionError, APIMethodError, PermissionDeniedError,
    │                    ExpiredAccessTokenError, APIPermissionError
    └── GraphRateLimitError
                         ToManyAPICallsError, RateLimitIssuesError, RateLimitHitError,
                         SpamRateLimitHitError, TooManyMessagesError, GroupRateLimitHitError,
                         RegisterDeregisterRateLimitExceededError

Resolution: an entry registered for the exact ``(code, error_subcode)`` wins,
then one registered for the code alone; among entries that match equally,
the last registered wins (a range counts as one entry per code it covers).
Two HTTP rules then keep the axes honest: an auth or rate-limit class at an
HTTP 5xx answer falls back to plain ``GraphApiError`` (a server fault is not
the caller's credentials or pace), and any HTTP 429 answer is a
``GraphRateLimitError``.
"""

from __future__ import annotations

import itertools
from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from ._errors import (
    GraphApiError,
    GraphAuthError,
    GraphRateLimitError,
    GraphRequestValidationError,
)

__all__ = [
    "APIMethodError",
    "APIPermissionError",
    "AccessDeniedError",
    "AccountInMaintenanceModeError",
    "AccountLockedError",
    "AccountRestrictedFromCountryError",
    "AuthExceptionError",
    "BadGroupError",
    "BlockListConcurrentUpdateError",
    "BlockListLimitReachedError",
    "BlockUserError",
    "BlockUserInternalError",
    "BulkBlockingFailedError",
    "BusinessEligibilityPaymentIssueError",
    "BusinessInitiatedCallsLimitHitError",
    "CallConnectionError",
    "CallConnectionTimeoutError",
    "CallPermissionNotFoundError",
    "CallPermissionRequestLimitHitError",
    "CallRateLimitExceededError",
    "CallingCannotBeEnabledError",
    "CallingError",
    "CallingNotEnabledError",
    "ConcurrentCallsLimitError",
    "DisplayNameApprovalRequiredError",
    "DuplicateCallError",
    "DuplicateParticipantError",
    "EcosystemEngagementError",
    "ExpiredAccessTokenError",
    "FetchCallPermissionLimitHitError",
    "FlowBlockedByIntegrityError",
    "FlowBlockedError",
    "FlowDeletingError",
    "FlowDeprecatingError",
    "FlowError",
    "FlowPublishingError",
    "FlowThrottledError",
    "FlowUpdatingError",
    "GenericUserError",
    "GroupCreateLimitReachedError",
    "GroupError",
    "GroupRateLimitHitError",
    "GroupSuspendedError",
    "GroupUnknownError",
    "IdentityKeyMismatchError",
    "ImageTooSmallToProcessError",
    "IncorrectCertificateError",
    "InvalidCursorError",
    "InvalidGroupProfilePictureAspectRatioError",
    "InvalidParameterError",
    "MarketingMessagesError",
    "MediaDownloadError",
    "MediaUploadError",
    "MessageSendError",
    "MessageUndeliverableError",
    "MethodNotAllowedError",
    "MissingRequiredParameterError",
    "ParticipantNotInGroupError",
    "ParticipantOverlimitError",
    "PermissionDeniedError",
    "PhoneMigrationError",
    "RateLimitHitError",
    "RateLimitIssuesError",
    "ReEngagementMessageError",
    "ReceiverUncallableError",
    "RecipientCannotBeSenderError",
    "RecipientNotInAllowedListError",
    "RegisterDeregisterRateLimitExceededError",
    "RequestPartiallySucceededError",
    "ServiceUnavailableError",
    "SignupError",
    "SomethingWentWrongError",
    "SpamRateLimitHitError",
    "TemplateCharacterLimitExceededError",
    "TemplateCreationError",
    "TemplateDisabledError",
    "TemplateDoesNotExistError",
    "TemplateError",
    "TemplateFormatCharacterPolicyViolatedError",
    "TemplateHeaderFormatIncorrectError",
    "TemplateHydratedTextTooLongError",
    "TemplateParamCountMismatchError",
    "TemplateParamValueInvalidError",
    "TemplateParameterFormatMismatchError",
    "TemplatePausedError",
    "TemporarilyBlockedError",
    "ToManyAPICallsError",
    "TooManyMessagesError",
    "UnsupportedMessageTypeError",
    "UserIsInExperimentGroupError",
    "UserStoppedMarketingMessagesError",
    "UsernameError",
    "UsernameFacebookAccountRequiredError",
    "UsernameInstagramAccountRequiredError",
    "UsernameNotAvailableError",
    "UsernameNotEligibleError",
    "UsernameTransferRequiredError",
    "api_error_from_response",
    "register_error_code",
    "reset_error_registry",
    "resolve_error_class",
]


# --- authorization axis -------------------------------------------------------


class AuthExceptionError(GraphAuthError):
    """0: the platform could not authenticate the app user (token expired or revoked)."""


class APIMethodError(GraphAuthError):
    """3: capability or permission issue for this API method."""


class PermissionDeniedError(GraphAuthError):
    """10: the permission is not granted or has been removed."""


class ExpiredAccessTokenError(GraphAuthError):
    """190: the access token has expired."""


class APIPermissionError(GraphAuthError):
    """200-299: an API permission is not granted or has been removed."""


# --- rate-limit axis ----------------------------------------------------------


class ToManyAPICallsError(GraphRateLimitError):
    """4: the app reached its API call rate limit (the platform's own spelling)."""


class RateLimitIssuesError(GraphRateLimitError):
    """80007: the WhatsApp Business Account reached its rate limit."""


class RateLimitHitError(GraphRateLimitError):
    """130429: Cloud API message throughput has been reached."""


class SpamRateLimitHitError(GraphRateLimitError):
    """131048: sends from this number are restricted after messages were flagged as spam."""


class TooManyMessagesError(GraphRateLimitError):
    """131056: too many messages from this sender to the same recipient in a short time."""


# --- integrity and messaging (plain GraphApiError axis) -----------------------


class InvalidParameterError(GraphApiError):
    """100 and 131009: a parameter is unsupported, misspelled or has an invalid value."""


class TemporarilyBlockedError(GraphApiError):
    """368: the business account is restricted for a policy violation."""


class UserIsInExperimentGroupError(GraphApiError):
    """130472: the user's number is part of a marketing message experiment."""


class AccountRestrictedFromCountryError(GraphApiError):
    """130497: the business account may not message users in this country."""


class SomethingWentWrongError(GraphApiError):
    """131000: the message failed for an unknown reason."""


class AccessDeniedError(GraphApiError):
    """131005: access denied for this messaging operation."""


class MissingRequiredParameterError(GraphApiError):
    """131008: a required parameter is missing."""


class ServiceUnavailableError(GraphApiError):
    """131016: a platform service is temporarily unavailable."""


class RecipientCannotBeSenderError(GraphApiError):
    """131021: sender and recipient are the same phone number."""


class MessageUndeliverableError(GraphApiError):
    """131026: the message could not be delivered to this recipient."""


class RecipientNotInAllowedListError(GraphApiError):
    """131030: a test number may only message its allowed recipients."""


class AccountLockedError(GraphApiError):
    """131031: the business account has been locked."""


class DisplayNameApprovalRequiredError(GraphApiError):
    """131037: the sending number needs an approved display name first."""


class BusinessEligibilityPaymentIssueError(GraphApiError):
    """131042: the message failed because of the account's payment method."""


class IncorrectCertificateError(GraphApiError):
    """131045: the phone number registration is incomplete (certificate)."""


class ReEngagementMessageError(GraphApiError):
    """131047: more than 24 hours passed since the recipient last replied."""


class EcosystemEngagementError(GraphApiError):
    """131049: not delivered, to keep ecosystem engagement healthy."""


class UserStoppedMarketingMessagesError(GraphApiError):
    """131050: the user stopped marketing messages from this business."""


class UnsupportedMessageTypeError(GraphApiError):
    """131051: the message type is not supported."""


class MediaDownloadError(GraphApiError):
    """131052: the platform could not download the media the user sent."""


class MediaUploadError(GraphApiError):
    """131053: the platform could not upload the media used in the message."""


class MethodNotAllowedError(GraphApiError):
    """131055: the method is not allowed for this resource."""


class AccountInMaintenanceModeError(GraphApiError):
    """131057 and 2494100: the business account is in maintenance mode."""


class GenericUserError(GraphApiError):
    """135000: generic user error."""


class IdentityKeyMismatchError(GraphApiError):
    """137000: the recipient's identity key hash does not match the one sent."""


# --- template family (132000-132018) -----------------------------------------


class TemplateError(GraphApiError):
    """132000-132018: a template send failed (family base)."""


class TemplateParamCountMismatchError(TemplateError):
    """132000: the number of parameters does not match the template."""


class TemplateDoesNotExistError(TemplateError):
    """132001: the template does not exist in this language or is not approved."""


class TemplateHydratedTextTooLongError(TemplateError):
    """132005: the text with its parameters filled in is too long."""


class TemplateFormatCharacterPolicyViolatedError(TemplateError):
    """132007: the template's content violates a formatting or character policy."""


class TemplateParameterFormatMismatchError(TemplateError):
    """132012: a parameter value does not match the template's format."""


class TemplatePausedError(TemplateError):
    """132015: the template is paused for low quality."""


class TemplateDisabledError(TemplateError):
    """132016: the template was paused too often and is now disabled."""


# --- flow family (132068/132069 at send time, 139000-139004 management) ------


class FlowError(GraphApiError):
    """139000-139004, 132068, 132069: a Flow failed (family base)."""


class FlowBlockedError(FlowError):
    """132068: the Flow is blocked."""


class FlowThrottledError(FlowError):
    """132069: the Flow is throttled."""


class FlowBlockedByIntegrityError(FlowError):
    """139000: an integrity issue blocks creating or publishing the Flow."""


class FlowUpdatingError(FlowError):
    """139001: the Flow could not be updated."""


class FlowPublishingError(FlowError):
    """139002: the Flow could not be published."""


class FlowDeprecatingError(FlowError):
    """139003: the Flow could not be deprecated."""


class FlowDeletingError(FlowError):
    """139004: the Flow could not be deleted."""


# --- calling family (138000-138018) ------------------------------------------


class CallingError(GraphApiError):
    """138000-138018: a calling request failed (family base)."""


class CallingNotEnabledError(CallingError):
    """138000: calling is not enabled on the business number."""


class ReceiverUncallableError(CallingError):
    """138001: the receiver cannot receive calls."""


class ConcurrentCallsLimitError(CallingError):
    """138002: the number reached its limit of concurrent calls."""


class DuplicateCallError(CallingError):
    """138003: a call with this receiver is already ongoing."""


class CallConnectionError(CallingError):
    """138004: the call could not be connected."""


class CallRateLimitExceededError(CallingError):
    """138005: the number reached its limit of initiated calls (not the rate-limit axis)."""


class CallPermissionNotFoundError(CallingError):
    """138006: the recipient has not approved a call permission."""


class CallConnectionTimeoutError(CallingError):
    """138007: the call timed out while connecting."""


class CallPermissionRequestLimitHitError(CallingError):
    """138009: too many call-permission requests for this business and user."""


class BusinessInitiatedCallsLimitHitError(CallingError):
    """138012: the daily limit of business-initiated calls was reached."""


class FetchCallPermissionLimitHitError(CallingError):
    """613 (formerly 138013): too many call-permission status requests.

    Not on the rate-limit axis by code; at HTTP 429 (how the platform sends
    it) the answer is a plain ``GraphRateLimitError`` like every 429.
    """


class CallingCannotBeEnabledError(CallingError):
    """138018: calling cannot be enabled (technical prerequisites unmet)."""


# --- block-user family (139100-139103) ---------------------------------------


class BlockUserError(GraphApiError):
    """139100-139103: a block-users request failed (family base)."""


class BulkBlockingFailedError(BlockUserError):
    """139100: some or all users could not be blocked or unblocked."""


class BlockListLimitReachedError(BlockUserError):
    """139101: the block list is full."""


class BlockListConcurrentUpdateError(BlockUserError):
    """139102: the block list changed during pagination."""


class BlockUserInternalError(BlockUserError):
    """139103: internal error; try again."""


# --- rate-limit axis additions -------------------------------------------------


class GroupRateLimitHitError(GraphRateLimitError):
    """131208: too many group operations from this number in a short period (HTTP 429)."""


class RegisterDeregisterRateLimitExceededError(GraphRateLimitError):
    """133016: registration or deregistration attempted too often for this number."""


# --- template parameter (send time) ------------------------------------------


class TemplateParamValueInvalidError(TemplateError):
    """132008: a template parameter value is formatted incorrectly."""


# --- groups family (131201-131215 plus 131020, 131041, 131059) ----------------


class GroupError(GraphApiError):
    """131201-131215, 131020, 131041, 131059: a Groups API request failed (family base).

    131208 (group rate limit) is on the rate-limit axis instead, so it is not
    a member; 131213-131215 resolve to the family itself.
    """


class BadGroupError(GroupError):
    """131020: messages cannot be sent to a single-member group."""


class GroupUnknownError(GroupError):
    """131041: the group does not exist or this number is not a member."""


class InvalidCursorError(GroupError):
    """131059: the pagination cursor expired or is corrupted; start over."""


class RequestPartiallySucceededError(GroupError):
    """131201: not every participant-level operation of the request succeeded."""


class DuplicateParticipantError(GroupError):
    """131202: the participant list holds a duplicate."""


class ParticipantOverlimitError(GroupError):
    """131204: the group would exceed its participant limit."""


class GroupSuspendedError(GroupError):
    """131207: the group violates platform policies and is suspended."""


class InvalidGroupProfilePictureAspectRatioError(GroupError):
    """131209: a group profile picture must be square."""


class ImageTooSmallToProcessError(GroupError):
    """131210: a group profile picture must be larger than 192 px each side."""


class GroupCreateLimitReachedError(GroupError):
    """131211: this number reached its limit of created groups."""


class ParticipantNotInGroupError(GroupError):
    """131212: the participant is not a member of the group."""


# --- send-time codes without a class of their own ----------------------------


class MessageSendError(GraphApiError):
    """131044, 131062, 131063, 131064: send failures named by the reference (family base).

    Only these codes are members; the older send errors keep their own classes.
    """


# --- marketing messages (134100-134103) ---------------------------------------


class MarketingMessagesError(GraphApiError):
    """134100-134103: a Marketing Messages API send was refused (family base)."""


# --- business usernames (147001-147005) ---------------------------------------


class UsernameError(GraphApiError):
    """147001-147005: a business username request failed (family base)."""


class UsernameNotAvailableError(UsernameError):
    """147001: the username is not available."""


class UsernameNotEligibleError(UsernameError):
    """147002: the account is not eligible to request a username."""


class UsernameFacebookAccountRequiredError(UsernameError):
    """147003: a Facebook account must be linked first."""


class UsernameInstagramAccountRequiredError(UsernameError):
    """147004: an Instagram account must be linked first."""


class UsernameTransferRequiredError(UsernameError):
    """147005: the username belongs to another number of the portfolio; use force_transfer."""


# --- template creation (2388019, 2388040, 2388047, 2388073, 2388293, 2388299) --


class TemplateCreationError(GraphApiError):
    """2388019, 2388040, 2388047, 2388073, 2388293, 2388299: a template was refused at creation.

    Not a ``TemplateError``: those are send-time failures of an approved template.
    """


class TemplateCharacterLimitExceededError(TemplateCreationError):
    """2388040: a template field exceeds its character limit."""


class TemplateHeaderFormatIncorrectError(TemplateCreationError):
    """2388047: the template header is not in the expected format."""


# --- phone registration and migration (2388012, 2388091, 2388093, 2388103) ----


class PhoneMigrationError(GraphApiError):
    """2388012, 2388091, 2388093, 2388103: a phone number registration or migration failed."""


# --- signup (2494164-2494168, 2494176, 2494177, 2494179) ----------------------


class SignupError(GraphApiError):
    """2494164-2494168, 2494176, 2494177, 2494179: onboarding (signup) failed (family base).

    2494100 (account in maintenance mode) is ``AccountInMaintenanceModeError``, as 131057.
    """


# --- registry -----------------------------------------------------------------

_BUILTINS: tuple[tuple[int | range, type[GraphApiError]], ...] = (
    # Family ranges first, so that the specific codes registered later win.
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
