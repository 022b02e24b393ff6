"""Per-code error classes of the Graph layer; which codes map to which lives in ``_error_codes``.

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

A docstring says what a class means; the codes it answers are stated once,
in the registration table of ``_error_codes``.
"""

from __future__ import annotations

from ._errors import GraphApiError, GraphAuthError, GraphRateLimitError

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
    "BsuidRecipientNotSupportedError",
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
]


# --- authorization axis -------------------------------------------------------


class AuthExceptionError(GraphAuthError):
    """The platform could not authenticate the app user (token expired or revoked)."""


class APIMethodError(GraphAuthError):
    """Capability or permission issue for this API method."""


class PermissionDeniedError(GraphAuthError):
    """The permission is not granted or has been removed."""


class ExpiredAccessTokenError(GraphAuthError):
    """The access token has expired."""


class APIPermissionError(GraphAuthError):
    """An API permission is not granted or has been removed."""


# --- rate-limit axis ----------------------------------------------------------


class ToManyAPICallsError(GraphRateLimitError):
    """The app reached its API call rate limit (the platform's own spelling)."""


class RateLimitIssuesError(GraphRateLimitError):
    """The WhatsApp Business Account reached its rate limit."""


class RateLimitHitError(GraphRateLimitError):
    """Cloud API message throughput has been reached."""


class SpamRateLimitHitError(GraphRateLimitError):
    """Sends from this number are restricted after messages were flagged as spam."""


class TooManyMessagesError(GraphRateLimitError):
    """Too many messages from this sender to the same recipient in a short time."""


# --- integrity and messaging (plain GraphApiError axis) -----------------------


class InvalidParameterError(GraphApiError):
    """A parameter is unsupported, misspelled or has an invalid value."""


class TemporarilyBlockedError(GraphApiError):
    """The business account is restricted for a policy violation."""


class UserIsInExperimentGroupError(GraphApiError):
    """The user's number is part of a marketing message experiment."""


class AccountRestrictedFromCountryError(GraphApiError):
    """The business account may not message users in this country."""


class SomethingWentWrongError(GraphApiError):
    """The message failed for an unknown reason."""


class AccessDeniedError(GraphApiError):
    """Access denied for this messaging operation."""


class MissingRequiredParameterError(GraphApiError):
    """A required parameter is missing."""


class ServiceUnavailableError(GraphApiError):
    """A platform service is temporarily unavailable."""


class RecipientCannotBeSenderError(GraphApiError):
    """Sender and recipient are the same phone number."""


class MessageUndeliverableError(GraphApiError):
    """The message could not be delivered to this recipient."""


class RecipientNotInAllowedListError(GraphApiError):
    """A test number may only message its allowed recipients."""


class AccountLockedError(GraphApiError):
    """The business account has been locked."""


class DisplayNameApprovalRequiredError(GraphApiError):
    """The sending number needs an approved display name first."""


class BusinessEligibilityPaymentIssueError(GraphApiError):
    """The message failed because of the account's payment method."""


class IncorrectCertificateError(GraphApiError):
    """The phone number registration is incomplete (certificate)."""


class ReEngagementMessageError(GraphApiError):
    """More than 24 hours passed since the recipient last replied."""


class EcosystemEngagementError(GraphApiError):
    """Not delivered, to keep ecosystem engagement healthy."""


class UserStoppedMarketingMessagesError(GraphApiError):
    """The user stopped marketing messages from this business."""


class UnsupportedMessageTypeError(GraphApiError):
    """The message type is not supported."""


class MediaDownloadError(GraphApiError):
    """The platform could not download the media the user sent."""


class MediaUploadError(GraphApiError):
    """The platform could not upload the media used in the message."""


class MethodNotAllowedError(GraphApiError):
    """The method is not allowed for this resource."""


class AccountInMaintenanceModeError(GraphApiError):
    """The business account is in maintenance mode."""


class GenericUserError(GraphApiError):
    """Generic user error."""


class IdentityKeyMismatchError(GraphApiError):
    """The recipient's identity key hash does not match the one sent."""


# --- template family (send time) ---------------------------------------------


class TemplateError(GraphApiError):
    """A template send failed (family base)."""


class TemplateParamCountMismatchError(TemplateError):
    """The number of parameters does not match the template."""


class TemplateDoesNotExistError(TemplateError):
    """The template does not exist in this language or is not approved."""


class TemplateHydratedTextTooLongError(TemplateError):
    """The text with its parameters filled in is too long."""


class TemplateFormatCharacterPolicyViolatedError(TemplateError):
    """The template's content violates a formatting or character policy."""


class TemplateParameterFormatMismatchError(TemplateError):
    """A parameter value does not match the template's format."""


class TemplatePausedError(TemplateError):
    """The template is paused for low quality."""


class TemplateDisabledError(TemplateError):
    """The template was paused too often and is now disabled."""


# --- flow family (send time and management) ----------------------------------


class FlowError(GraphApiError):
    """A Flow failed (family base)."""


class FlowBlockedError(FlowError):
    """The Flow is blocked."""


class FlowThrottledError(FlowError):
    """The Flow is throttled."""


class FlowBlockedByIntegrityError(FlowError):
    """An integrity issue blocks creating or publishing the Flow."""


class FlowUpdatingError(FlowError):
    """The Flow could not be updated."""


class FlowPublishingError(FlowError):
    """The Flow could not be published."""


class FlowDeprecatingError(FlowError):
    """The Flow could not be deprecated."""


class FlowDeletingError(FlowError):
    """The Flow could not be deleted."""


# --- calling family ----------------------------------------------------------


class CallingError(GraphApiError):
    """A calling request failed (family base)."""


class CallingNotEnabledError(CallingError):
    """Calling is not enabled on the business number."""


class ReceiverUncallableError(CallingError):
    """The receiver cannot receive calls."""


class ConcurrentCallsLimitError(CallingError):
    """The number reached its limit of concurrent calls."""


class DuplicateCallError(CallingError):
    """A call with this receiver is already ongoing."""


class CallConnectionError(CallingError):
    """The call could not be connected."""


class CallRateLimitExceededError(CallingError):
    """The number reached its limit of initiated calls (not the rate-limit axis)."""


class CallPermissionNotFoundError(CallingError):
    """The recipient has not approved a call permission."""


class CallConnectionTimeoutError(CallingError):
    """The call timed out while connecting."""


class CallPermissionRequestLimitHitError(CallingError):
    """Too many call-permission requests for this business and user."""


class BusinessInitiatedCallsLimitHitError(CallingError):
    """The daily limit of business-initiated calls was reached."""


class FetchCallPermissionLimitHitError(CallingError):
    """Too many call-permission status requests.

    Not on the rate-limit axis by code; at HTTP status Too Many Requests (how
    the platform sends it) the answer is a plain ``GraphRateLimitError``.
    """


class CallingCannotBeEnabledError(CallingError):
    """Calling cannot be enabled (technical prerequisites unmet)."""


# --- block-user family -------------------------------------------------------


class BlockUserError(GraphApiError):
    """A block-users request failed (family base)."""


class BulkBlockingFailedError(BlockUserError):
    """Some or all users could not be blocked or unblocked."""


class BlockListLimitReachedError(BlockUserError):
    """The block list is full."""


class BlockListConcurrentUpdateError(BlockUserError):
    """The block list changed during pagination."""


class BlockUserInternalError(BlockUserError):
    """Internal error; try again."""


# --- rate-limit axis additions -------------------------------------------------


class GroupRateLimitHitError(GraphRateLimitError):
    """Too many group operations from this number in a short period."""


class RegisterDeregisterRateLimitExceededError(GraphRateLimitError):
    """Registration or deregistration attempted too often for this number."""


# --- template parameter (send time) ------------------------------------------


class TemplateParamValueInvalidError(TemplateError):
    """A template parameter value is formatted incorrectly."""


# --- groups family -----------------------------------------------------------


class GroupError(GraphApiError):
    """A Groups API request failed (family base).

    The group rate limit is on the rate-limit axis instead
    (``GroupRateLimitHitError``), so it is not a member.
    """


class BadGroupError(GroupError):
    """Messages cannot be sent to a single-member group."""


class GroupUnknownError(GroupError):
    """The group does not exist or this number is not a member."""


class InvalidCursorError(GroupError):
    """The pagination cursor expired or is corrupted; start over."""


class RequestPartiallySucceededError(GroupError):
    """Not every participant-level operation of the request succeeded."""


class DuplicateParticipantError(GroupError):
    """The participant list holds a duplicate."""


class ParticipantOverlimitError(GroupError):
    """The group would exceed its participant limit."""


class GroupSuspendedError(GroupError):
    """The group violates platform policies and is suspended."""


class InvalidGroupProfilePictureAspectRatioError(GroupError):
    """A group profile picture must be square."""


class ImageTooSmallToProcessError(GroupError):
    """A group profile picture is too small to process."""


class GroupCreateLimitReachedError(GroupError):
    """This number reached its limit of created groups."""


class ParticipantNotInGroupError(GroupError):
    """The participant is not a member of the group."""


# --- send-time codes without a class of their own ----------------------------


class MessageSendError(GraphApiError):
    """Send failures named by the reference (family base).

    Only these codes are members; the older send errors keep their own classes.
    """


class BsuidRecipientNotSupportedError(MessageSendError):
    """Business-scoped user id recipients are not supported for this message.

    OTP authentication templates are the documented case; the send helpers
    refuse those before sending with ``PhoneOnlyRecipientError``.
    """


# --- marketing messages ------------------------------------------------------


class MarketingMessagesError(GraphApiError):
    """A Marketing Messages API send was refused (family base)."""


# --- business usernames ------------------------------------------------------


class UsernameError(GraphApiError):
    """A business username request failed (family base)."""


class UsernameNotAvailableError(UsernameError):
    """The username is not available."""


class UsernameNotEligibleError(UsernameError):
    """The account is not eligible to request a username."""


class UsernameFacebookAccountRequiredError(UsernameError):
    """A Facebook account must be linked first."""


class UsernameInstagramAccountRequiredError(UsernameError):
    """An Instagram account must be linked first."""


class UsernameTransferRequiredError(UsernameError):
    """The username belongs to another number of the portfolio; use force_transfer."""


# --- template creation -------------------------------------------------------


class TemplateCreationError(GraphApiError):
    """A template was refused at creation.

    Not a ``TemplateError``: those are send-time failures of an approved template.
    """


class TemplateCharacterLimitExceededError(TemplateCreationError):
    """A template field exceeds its character limit."""


class TemplateHeaderFormatIncorrectError(TemplateCreationError):
    """The template header is not in the expected format."""


# --- phone registration and migration ----------------------------------------


class PhoneMigrationError(GraphApiError):
    """A phone number registration or migration failed."""


# --- signup ------------------------------------------------------------------


class SignupError(GraphApiError):
    """Onboarding (signup) failed (family base).

    An account in maintenance mode is ``AccountInMaintenanceModeError`` here too.
    """
