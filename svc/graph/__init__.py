"""The Graph API layer: client, transports, errors, endpoint primitive and request helpers.

Nothing here does I/O beyond the injected ``httpx.AsyncBaseTransport``.
"""

# --- core: client, transports, errors
from ._client import DEFAULT_API_VERSION as DEFAULT_API_VERSION
from ._client import DEFAULT_BASE_URL as DEFAULT_BASE_URL
from ._client import GraphClient as GraphClient
from ._errors import GraphApiError as GraphApiError
from ._errors import GraphAuthError as GraphAuthError
from ._errors import GraphError as GraphError
from ._errors import GraphNetworkError as GraphNetworkError
from ._errors import GraphRateLimitError as GraphRateLimitError
from ._errors import GraphRequestValidationError as GraphRequestValidationError
from ._errors import GraphSerializationError as GraphSerializationError
from ._transports import DryRunTransport as DryRunTransport

# --- endpoint primitive, scoped clients, error registry (foundation)
# isort: split
from ._endpoint import HTTP_METHODS as HTTP_METHODS
from ._endpoint import Endpoint as Endpoint
from ._endpoint import Param as Param
from ._error_codes import AccessDeniedError as AccessDeniedError
from ._error_codes import AccountInMaintenanceModeError as AccountInMaintenanceModeError
from ._error_codes import AccountLockedError as AccountLockedError
from ._error_codes import AccountRestrictedFromCountryError as AccountRestrictedFromCountryError
from ._error_codes import APIMethodError as APIMethodError
from ._error_codes import APIPermissionError as APIPermissionError
from ._error_codes import AuthExceptionError as AuthExceptionError
from ._error_codes import BlockListConcurrentUpdateError as BlockListConcurrentUpdateError
from ._error_codes import BlockListLimitReachedError as BlockListLimitReachedError
from ._error_codes import BlockUserError as BlockUserError
from ._error_codes import BlockUserInternalError as BlockUserInternalError
from ._error_codes import BulkBlockingFailedError as BulkBlockingFailedError
from ._error_codes import (
    BusinessEligibilityPaymentIssueError as BusinessEligibilityPaymentIssueError,
)
from ._error_codes import BusinessInitiatedCallsLimitHitError as BusinessInitiatedCallsLimitHitError
from ._error_codes import CallConnectionError as CallConnectionError
from ._error_codes import CallConnectionTimeoutError as CallConnectionTimeoutError
from ._error_codes import CallingCannotBeEnabledError as CallingCannotBeEnabledError
from ._error_codes import CallingError as CallingError
from ._error_codes import CallingNotEnabledError as CallingNotEnabledError
from ._error_codes import CallPermissionNotFoundError as CallPermissionNotFoundError
from ._error_codes import CallPermissionRequestLimitHitError as CallPermissionRequestLimitHitError
from ._error_codes import CallRateLimitExceededError as CallRateLimitExceededError
from ._error_codes import ConcurrentCallsLimitError as ConcurrentCallsLimitError
from ._error_codes import DisplayNameApprovalRequiredError as DisplayNameApprovalRequiredError
from ._error_codes import DuplicateCallError as DuplicateCallError
from ._error_codes import EcosystemEngagementError as EcosystemEngagementError
from ._error_codes import ExpiredAccessTokenError as ExpiredAccessTokenError
from ._error_codes import FetchCallPermissionLimitHitError as FetchCallPermissionLimitHitError
from ._error_codes import FlowBlockedByIntegrityError as FlowBlockedByIntegrityError
from ._error_codes import FlowBlockedError as FlowBlockedError
from ._error_codes import FlowDeletingError as FlowDeletingError
from ._error_codes import FlowDeprecatingError as FlowDeprecatingError
from ._error_codes import FlowError as FlowError
from ._error_codes import FlowPublishingError as FlowPublishingError
from ._error_codes import FlowThrottledError as FlowThrottledError
from ._error_codes import FlowUpdatingError as FlowUpdatingError
from ._error_codes import GenericUserError as GenericUserError
from ._error_codes import IdentityKeyMismatchError as IdentityKeyMismatchError
from ._error_codes import IncorrectCertificateError as IncorrectCertificateError
from ._error_codes import InvalidParameterError as InvalidParameterError
from ._error_codes import MediaDownloadError as MediaDownloadError
from ._error_codes import MediaUploadError as MediaUploadError
from ._error_codes import MessageUndeliverableError as MessageUndeliverableError
from ._error_codes import MethodNotAllowedError as MethodNotAllowedError
from ._error_codes import MissingRequiredParameterError as MissingRequiredParameterError
from ._error_codes import PermissionDeniedError as PermissionDeniedError
from ._error_codes import RateLimitHitError as RateLimitHitError
from ._error_codes import RateLimitIssuesError as RateLimitIssuesError
from ._error_codes import ReceiverUncallableError as ReceiverUncallableError
from ._error_codes import RecipientCannotBeSenderError as RecipientCannotBeSenderError
from ._error_codes import RecipientNotInAllowedListError as RecipientNotInAllowedListError
from ._error_codes import ReEngagementMessageError as ReEngagementMessageError
from ._error_codes import ServiceUnavailableError as ServiceUnavailableError
from ._error_codes import SomethingWentWrongError as SomethingWentWrongError
from ._error_codes import SpamRateLimitHitError as SpamRateLimitHitError
from ._error_codes import TemplateDisabledError as TemplateDisabledError
from ._error_codes import TemplateDoesNotExistError as TemplateDoesNotExistError
from ._error_codes import TemplateError as TemplateError
from ._error_codes import (
    TemplateFormatCharacterPolicyViolatedError as TemplateFormatCharacterPolicyViolatedError,
)
from ._error_codes import TemplateHydratedTextTooLongError as TemplateHydratedTextTooLongError
from ._error_codes import TemplateParamCountMismatchError as TemplateParamCountMismatchError
from ._error_codes import (
    TemplateParameterFormatMismatchError as TemplateParameterFormatMismatchError,
)
from ._error_codes import TemplatePausedError as TemplatePausedError
from ._error_codes import TemporarilyBlockedError as TemporarilyBlockedError
from ._error_codes import ToManyAPICallsError as ToManyAPICallsError
from ._error_codes import TooManyMessagesError as TooManyMessagesError
from ._error_codes import UnsupportedMessageTypeError as UnsupportedMessageTypeError
from ._error_codes import UserIsInExperimentGroupError as UserIsInExperimentGroupError
from ._error_codes import UserStoppedMarketingMessagesError as UserStoppedMarketingMessagesError
from ._error_codes import register_error_code as register_error_code
from ._error_codes import reset_error_registry as reset_error_registry
from ._error_codes import resolve_error_class as resolve_error_class
from ._paths import check_path_segment as check_path_segment
from ._scoped import GroupClient as GroupClient
from ._scoped import PhoneNumberClient as PhoneNumberClient
from ._scoped import WABAClient as WABAClient

# --- messages: builders and send helpers

# --- admin helpers: groups, business admin, calling, templates, flows, pagination
# isort: split
from ._flow_json import FLOW_JSON_LIMITS as FLOW_JSON_LIMITS
from ._flow_json import FlowJsonValidationError as FlowJsonValidationError
from ._flow_json import validate_flow_json as validate_flow_json

__all__ = [
    "DEFAULT_API_VERSION",
    "DEFAULT_BASE_URL",
    "FLOW_JSON_LIMITS",
    "HTTP_METHODS",
    "APIMethodError",
    "APIPermissionError",
    "AccessDeniedError",
    "AccountInMaintenanceModeError",
    "AccountLockedError",
    "AccountRestrictedFromCountryError",
    "AuthExceptionError",
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
    "DryRunTransport",
    "DuplicateCallError",
    "EcosystemEngagementError",
    "Endpoint",
    "ExpiredAccessTokenError",
    "FetchCallPermissionLimitHitError",
    "FlowBlockedByIntegrityError",
    "FlowBlockedError",
    "FlowDeletingError",
    "FlowDeprecatingError",
    "FlowError",
    "FlowJsonValidationError",
    "FlowPublishingError",
    "FlowThrottledError",
    "FlowUpdatingError",
    "GenericUserError",
    "GraphApiError",
    "GraphAuthError",
    "GraphClient",
    "GraphError",
    "GraphNetworkError",
    "GraphRateLimitError",
    "GraphRequestValidationError",
    "GraphSerializationError",
    "GroupClient",
    "IdentityKeyMismatchError",
    "IncorrectCertificateError",
    "InvalidParameterError",
    "MediaDownloadError",
    "MediaUploadError",
    "MessageUndeliverableError",
    "MethodNotAllowedError",
    "MissingRequiredParameterError",
    "Param",
    "PermissionDeniedError",
    "PhoneNumberClient",
    "RateLimitHitError",
    "RateLimitIssuesError",
    "ReEngagementMessageError",
    "ReceiverUncallableError",
    "RecipientCannotBeSenderError",
    "RecipientNotInAllowedListError",
    "ServiceUnavailableError",
    "SomethingWentWrongError",
    "SpamRateLimitHitError",
    "TemplateDisabledError",
    "TemplateDoesNotExistError",
    "TemplateError",
    "TemplateFormatCharacterPolicyViolatedError",
    "TemplateHydratedTextTooLongError",
    "TemplateParamCountMismatchError",
    "TemplateParameterFormatMismatchError",
    "TemplatePausedError",
    "TemporarilyBlockedError",
    "ToManyAPICallsError",
    "TooManyMessagesError",
    "UnsupportedMessageTypeError",
    "UserIsInExperimentGroupError",
    "UserStoppedMarketingMessagesError",
    "WABAClient",
    "check_path_segment",
    "register_error_code",
    "reset_error_registry",
    "resolve_error_class",
    "validate_flow_json",
]
