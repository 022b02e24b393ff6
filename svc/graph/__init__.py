"""The Graph API layer: client, transports, errors, endpoint primitive and request helpers.

Nothing here does I/O beyond the injected ``httpx.AsyncBaseTransport``.
"""

# --- core: client, transports, errors
from ._capture import FAILURES as FAILURES
from ._capture import CapturedRequest as CapturedRequest
from ._capture import CapturingTransport as CapturingTransport
from ._capture import Failure as Failure
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
from ._errors import PhoneOnlyRecipientError as PhoneOnlyRecipientError
from ._errors import RetryAction as RetryAction
from ._errors import RetryHint as RetryHint
from ._errors import TemplateCheckError as TemplateCheckError
from ._transports import DryRunTransport as DryRunTransport

# --- endpoint primitive, scoped clients, error registry (foundation)
# isort: split
from ._endpoint import HTTP_METHODS as HTTP_METHODS
from ._endpoint import Endpoint as Endpoint
from ._endpoint import Param as Param
from ._error_classes import AccessDeniedError as AccessDeniedError
from ._error_classes import AccountInMaintenanceModeError as AccountInMaintenanceModeError
from ._error_classes import AccountLockedError as AccountLockedError
from ._error_classes import AccountRestrictedFromCountryError as AccountRestrictedFromCountryError
from ._error_classes import APIMethodError as APIMethodError
from ._error_classes import APIPermissionError as APIPermissionError
from ._error_classes import AuthExceptionError as AuthExceptionError
from ._error_classes import BadGroupError as BadGroupError
from ._error_classes import BlockListConcurrentUpdateError as BlockListConcurrentUpdateError
from ._error_classes import BlockListLimitReachedError as BlockListLimitReachedError
from ._error_classes import BlockUserError as BlockUserError
from ._error_classes import BlockUserInternalError as BlockUserInternalError
from ._error_classes import BsuidRecipientNotSupportedError as BsuidRecipientNotSupportedError
from ._error_classes import BulkBlockingFailedError as BulkBlockingFailedError
from ._error_classes import (
    BusinessEligibilityPaymentIssueError as BusinessEligibilityPaymentIssueError,
)
from ._error_classes import (
    BusinessInitiatedCallsLimitHitError as BusinessInitiatedCallsLimitHitError,
)
from ._error_classes import CallConnectionError as CallConnectionError
from ._error_classes import CallConnectionTimeoutError as CallConnectionTimeoutError
from ._error_classes import CallingCannotBeEnabledError as CallingCannotBeEnabledError
from ._error_classes import CallingError as CallingError
from ._error_classes import CallingNotEnabledError as CallingNotEnabledError
from ._error_classes import CallPermissionNotFoundError as CallPermissionNotFoundError
from ._error_classes import CallPermissionRequestLimitHitError as CallPermissionRequestLimitHitError
from ._error_classes import CallRateLimitExceededError as CallRateLimitExceededError
from ._error_classes import ConcurrentCallsLimitError as ConcurrentCallsLimitError
from ._error_classes import DisplayNameApprovalRequiredError as DisplayNameApprovalRequiredError
from ._error_classes import DuplicateCallError as DuplicateCallError
from ._error_classes import DuplicateParticipantError as DuplicateParticipantError
from ._error_classes import EcosystemEngagementError as EcosystemEngagementError
from ._error_classes import ExpiredAccessTokenError as ExpiredAccessTokenError
from ._error_classes import FetchCallPermissionLimitHitError as FetchCallPermissionLimitHitError
from ._error_classes import FlowBlockedByIntegrityError as FlowBlockedByIntegrityError
from ._error_classes import FlowBlockedError as FlowBlockedError
from ._error_classes import FlowDeletingError as FlowDeletingError
from ._error_classes import FlowDeprecatingError as FlowDeprecatingError
from ._error_classes import FlowError as FlowError
from ._error_classes import FlowPublishingError as FlowPublishingError
from ._error_classes import FlowThrottledError as FlowThrottledError
from ._error_classes import FlowUpdatingError as FlowUpdatingError
from ._error_classes import GenericUserError as GenericUserError
from ._error_classes import GroupCreateLimitReachedError as GroupCreateLimitReachedError
from ._error_classes import GroupError as GroupError
from ._error_classes import GroupRateLimitHitError as GroupRateLimitHitError
from ._error_classes import GroupSuspendedError as GroupSuspendedError
from ._error_classes import GroupUnknownError as GroupUnknownError
from ._error_classes import IdentityKeyMismatchError as IdentityKeyMismatchError
from ._error_classes import ImageTooSmallToProcessError as ImageTooSmallToProcessError
from ._error_classes import IncorrectCertificateError as IncorrectCertificateError
from ._error_classes import InvalidCursorError as InvalidCursorError
from ._error_classes import (
    InvalidGroupProfilePictureAspectRatioError as InvalidGroupProfilePictureAspectRatioError,
)
from ._error_classes import InvalidParameterError as InvalidParameterError
from ._error_classes import MarketingMessagesError as MarketingMessagesError
from ._error_classes import MediaDownloadError as MediaDownloadError
from ._error_classes import MediaUploadError as MediaUploadError
from ._error_classes import MessageSendError as MessageSendError
from ._error_classes import MessageUndeliverableError as MessageUndeliverableError
from ._error_classes import MethodNotAllowedError as MethodNotAllowedError
from ._error_classes import MissingRequiredParameterError as MissingRequiredParameterError
from ._error_classes import ParticipantNotInGroupError as ParticipantNotInGroupError
from ._error_classes import ParticipantOverlimitError as ParticipantOverlimitError
from ._error_classes import PermissionDeniedError as PermissionDeniedError
from ._error_classes import PhoneMigrationError as PhoneMigrationError
from ._error_classes import RateLimitHitError as RateLimitHitError
from ._error_classes import RateLimitIssuesError as RateLimitIssuesError
from ._error_classes import ReceiverUncallableError as ReceiverUncallableError
from ._error_classes import RecipientCannotBeSenderError as RecipientCannotBeSenderError
from ._error_classes import RecipientNotInAllowedListError as RecipientNotInAllowedListError
from ._error_classes import ReEngagementMessageError as ReEngagementMessageError
from ._error_classes import (
    RegisterDeregisterRateLimitExceededError as RegisterDeregisterRateLimitExceededError,
)
from ._error_classes import RequestPartiallySucceededError as RequestPartiallySucceededError
from ._error_classes import ServiceUnavailableError as ServiceUnavailableError
from ._error_classes import SignupError as SignupError
from ._error_classes import SomethingWentWrongError as SomethingWentWrongError
from ._error_classes import SpamRateLimitHitError as SpamRateLimitHitError
from ._error_classes import (
    TemplateCharacterLimitExceededError as TemplateCharacterLimitExceededError,
)
from ._error_classes import TemplateCreationError as TemplateCreationError
from ._error_classes import TemplateDisabledError as TemplateDisabledError
from ._error_classes import TemplateDoesNotExistError as TemplateDoesNotExistError
from ._error_classes import TemplateError as TemplateError
from ._error_classes import (
    TemplateFormatCharacterPolicyViolatedError as TemplateFormatCharacterPolicyViolatedError,
)
from ._error_classes import TemplateHeaderFormatIncorrectError as TemplateHeaderFormatIncorrectError
from ._error_classes import TemplateHydratedTextTooLongError as TemplateHydratedTextTooLongError
from ._error_classes import TemplateParamCountMismatchError as TemplateParamCountMismatchError
from ._error_classes import (
    TemplateParameterFormatMismatchError as TemplateParameterFormatMismatchError,
)
from ._error_classes import TemplateParamValueInvalidError as TemplateParamValueInvalidError
from ._error_classes import TemplatePausedError as TemplatePausedError
from ._error_classes import TemporarilyBlockedError as TemporarilyBlockedError
from ._error_classes import ToManyAPICallsError as ToManyAPICallsError
from ._error_classes import TooManyMessagesError as TooManyMessagesError
from ._error_classes import UnsupportedMessageTypeError as UnsupportedMessageTypeError
from ._error_classes import UserIsInExperimentGroupError as UserIsInExperimentGroupError
from ._error_classes import UsernameError as UsernameError
from ._error_classes import (
    UsernameFacebookAccountRequiredError as UsernameFacebookAccountRequiredError,
)
from ._error_classes import (
    UsernameInstagramAccountRequiredError as UsernameInstagramAccountRequiredError,
)
from ._error_classes import UsernameNotAvailableError as UsernameNotAvailableError
from ._error_classes import UsernameNotEligibleError as UsernameNotEligibleError
from ._error_classes import UsernameTransferRequiredError as UsernameTransferRequiredError
from ._error_classes import UserStoppedMarketingMessagesError as UserStoppedMarketingMessagesError
from ._error_codes import register_error_code as register_error_code
from ._error_codes import reset_error_registry as reset_error_registry
from ._error_codes import resolve_error_class as resolve_error_class
from ._error_codes import resolve_retry_hint as resolve_retry_hint
from ._paths import check_path_segment as check_path_segment
from ._scoped import AppClient as AppClient
from ._scoped import BusinessClient as BusinessClient
from ._scoped import GroupClient as GroupClient
from ._scoped import PhoneNumberClient as PhoneNumberClient
from ._scoped import SolutionClient as SolutionClient
from ._scoped import WABAClient as WABAClient

# --- messages: builders and send helpers
# isort: split
from ._builders import GROUP_MESSAGE_TYPES as GROUP_MESSAGE_TYPES
from ._builders import build_read_receipt as build_read_receipt
from ._builders import check_message_payload as check_message_payload
from ._builders import is_read_receipt_payload as is_read_receipt_payload
from ._callback_data import MAX_BIZ_OPAQUE_CALLBACK_DATA as MAX_BIZ_OPAQUE_CALLBACK_DATA
from ._callback_data import check_callback_data as check_callback_data
from ._callback_data import with_callback_data as with_callback_data
from ._contacts import build_contacts_message as build_contacts_message
from ._content_messages import MEDIA_KINDS as MEDIA_KINDS
from ._content_messages import MediaKind as MediaKind
from ._content_messages import build_audio_message as build_audio_message
from ._content_messages import build_document_message as build_document_message
from ._content_messages import build_image_message as build_image_message
from ._content_messages import build_location_message as build_location_message
from ._content_messages import build_media_message as build_media_message
from ._content_messages import build_reaction_message as build_reaction_message
from ._content_messages import build_remove_reaction_message as build_remove_reaction_message
from ._content_messages import build_sticker_message as build_sticker_message
from ._content_messages import build_text_message as build_text_message
from ._content_messages import build_video_message as build_video_message
from ._group_messages import build_group_media_message as build_group_media_message
from ._group_messages import build_group_pin_message as build_group_pin_message
from ._group_messages import build_group_template_message as build_group_template_message
from ._group_messages import build_group_text_message as build_group_text_message
from ._interactive import FLOW_MESSAGE_VERSION as FLOW_MESSAGE_VERSION
from ._interactive import build_interactive_carousel_message as build_interactive_carousel_message
from ._interactive import build_interactive_flow_message as build_interactive_flow_message
from ._interactive_header import interactive_media_header as interactive_media_header
from ._interactive_messages import (
    build_call_permission_request_message as build_call_permission_request_message,
)
from ._interactive_messages import (
    build_interactive_buttons_message as build_interactive_buttons_message,
)
from ._interactive_messages import (
    build_interactive_catalog_message as build_interactive_catalog_message,
)
from ._interactive_messages import (
    build_interactive_cta_url_message as build_interactive_cta_url_message,
)
from ._interactive_messages import build_interactive_list_message as build_interactive_list_message
from ._interactive_messages import (
    build_interactive_location_request_message as build_interactive_location_request_message,
)
from ._interactive_messages import (
    build_interactive_product_message as build_interactive_product_message,
)
from ._interactive_messages import (
    build_interactive_products_message as build_interactive_products_message,
)
from ._interactive_messages import (
    build_voice_call_button_message as build_voice_call_button_message,
)
from ._orders import GOODS_TYPES as GOODS_TYPES
from ._orders import ORDER_STATUSES as ORDER_STATUSES
from ._orders import build_order_details_message as build_order_details_message
from ._orders import build_order_status_message as build_order_status_message
from ._recipient import AUTHENTICATION_OTP_RULE as AUTHENTICATION_OTP_RULE
from ._recipient import Recipient as Recipient
from ._recipient import RecipientField as RecipientField
from ._recipient import RecipientKind as RecipientKind
from ._recipient import is_bsuid as is_bsuid
from ._recipient import is_parent_bsuid as is_parent_bsuid
from ._recipient import is_phone_number as is_phone_number
from ._recipient import is_user_id as is_user_id
from ._recipient import resolve_recipient as resolve_recipient
from ._send import MessageSender as MessageSender
from ._send import ReadReceiptResult as ReadReceiptResult
from ._send import SendResult as SendResult
from ._send import read_receipt_result_from_answer as read_receipt_result_from_answer
from ._send import send_result_from_answer as send_result_from_answer
from ._send_interactive import InteractiveSender as InteractiveSender
from ._template_check import check_template_send as check_template_send
from ._template_components import build_template_carousel as build_template_carousel
from ._template_components import build_template_carousel_card as build_template_carousel_card
from ._template_components import build_template_header_gif as build_template_header_gif
from ._template_components import build_template_header_product as build_template_header_product
from ._template_components import (
    build_template_limited_time_offer as build_template_limited_time_offer,
)
from ._template_components import build_template_mpm_button as build_template_mpm_button
from ._template_create import build_definition_body as build_definition_body
from ._template_create import build_definition_buttons as build_definition_buttons
from ._template_create import build_definition_catalog_button as build_definition_catalog_button
from ._template_create import build_definition_copy_code_button as build_definition_copy_code_button
from ._template_create import build_definition_flow_button as build_definition_flow_button
from ._template_create import build_definition_footer as build_definition_footer
from ._template_create import build_definition_header_location as build_definition_header_location
from ._template_create import build_definition_header_media as build_definition_header_media
from ._template_create import build_definition_header_product as build_definition_header_product
from ._template_create import build_definition_header_text as build_definition_header_text
from ._template_create import (
    build_definition_limited_time_offer as build_definition_limited_time_offer,
)
from ._template_create import build_definition_mpm_button as build_definition_mpm_button
from ._template_create import (
    build_definition_phone_number_button as build_definition_phone_number_button,
)
from ._template_create import (
    build_definition_quick_reply_button as build_definition_quick_reply_button,
)
from ._template_create import (
    build_definition_request_contact_info_button as build_definition_request_contact_info_button,
)
from ._template_create import build_definition_url_button as build_definition_url_button
from ._template_messages import build_marketing_template_message as build_marketing_template_message
from ._template_messages import build_otp_button as build_otp_button
from ._template_messages import build_template_message as build_template_message
from ._template_params import TEMPLATE_BUTTON_SUB_TYPES as TEMPLATE_BUTTON_SUB_TYPES
from ._template_params import build_template_body as build_template_body
from ._template_params import build_template_catalog_button as build_template_catalog_button
from ._template_params import build_template_copy_code_button as build_template_copy_code_button
from ._template_params import build_template_flow_button as build_template_flow_button
from ._template_params import build_template_header_location as build_template_header_location
from ._template_params import build_template_header_media as build_template_header_media
from ._template_params import build_template_header_text as build_template_header_text
from ._template_params import build_template_otp_button as build_template_otp_button
from ._template_params import build_template_quick_reply_button as build_template_quick_reply_button
from ._template_params import build_template_url_button as build_template_url_button
from ._template_params import template_currency_parameter as template_currency_parameter
from ._template_params import template_date_time_parameter as template_date_time_parameter
from ._template_params import template_text_parameter as template_text_parameter

# --- admin helpers: groups, business admin, portfolio, solutions, calling, templates, flows
# isort: split
from ._admin import AppAdmin as AppAdmin
from ._admin import BusinessAdmin as BusinessAdmin
from ._admin import GroupAdmin as GroupAdmin
from ._admin import PhoneNumberAdmin as PhoneNumberAdmin
from ._admin import SolutionAdmin as SolutionAdmin
from ._admin import WABAAdmin as WABAAdmin
from ._calling import CALL_ACTIONS as CALL_ACTIONS
from ._calling import CallPermissionAction as CallPermissionAction
from ._calling import CallPermissionLimit as CallPermissionLimit
from ._calling import CallPermissions as CallPermissions
from ._calling import CallResult as CallResult
from ._flow_json import FLOW_JSON_LIMITS as FLOW_JSON_LIMITS
from ._flow_json import FlowJsonValidationError as FlowJsonValidationError
from ._flow_json import validate_flow_json as validate_flow_json
from ._flows import FLOW_CATEGORIES as FLOW_CATEGORIES
from ._flows import Flow as Flow
from ._flows import FlowAsset as FlowAsset
from ._flows import FlowAssetsUpdateResult as FlowAssetsUpdateResult
from ._flows import FlowCreated as FlowCreated
from ._flows import FlowMigration as FlowMigration
from ._flows import FlowPreview as FlowPreview
from ._flows import FlowValidationIssue as FlowValidationIssue
from ._flows import MigratedFlow as MigratedFlow
from ._groups import GROUP_DESCRIPTION_MAX_LENGTH as GROUP_DESCRIPTION_MAX_LENGTH
from ._groups import GROUP_JOIN_APPROVAL_MODES as GROUP_JOIN_APPROVAL_MODES
from ._groups import GROUP_MAX_REMOVED_PARTICIPANTS as GROUP_MAX_REMOVED_PARTICIPANTS
from ._groups import GROUP_SUBJECT_MAX_LENGTH as GROUP_SUBJECT_MAX_LENGTH
from ._groups import Group as Group
from ._groups import GroupInviteLink as GroupInviteLink
from ._groups import GroupJoinRequest as GroupJoinRequest
from ._groups import GroupJoinRequestsResult as GroupJoinRequestsResult
from ._groups import GroupMutation as GroupMutation
from ._groups import GroupParticipant as GroupParticipant
from ._groups import GroupSummary as GroupSummary
from ._message_history import MessageHistoryEntry as MessageHistoryEntry
from ._message_history import MessageHistoryEvent as MessageHistoryEvent
from ._operations import PLATFORM_OPERATIONS as PLATFORM_OPERATIONS
from ._operations import PlatformOperation as PlatformOperation
from ._optimization import BID_STRATEGIES as BID_STRATEGIES
from ._optimization import OptimizationSpec as OptimizationSpec
from ._pagination import Paginator as Paginator
from ._pagination import paginate as paginate
from ._phone_admin import BUSINESS_PROFILE_FIELDS as BUSINESS_PROFILE_FIELDS
from ._phone_admin import MAX_BLOCK_USERS as MAX_BLOCK_USERS
from ._phone_admin import BlockedUser as BlockedUser
from ._phone_admin import BlockedUserOutcome as BlockedUserOutcome
from ._phone_admin import BlockUsersResult as BlockUsersResult
from ._phone_admin import BusinessProfile as BusinessProfile
from ._phone_admin import BusinessPublicKey as BusinessPublicKey
from ._phone_admin import CommerceSettings as CommerceSettings
from ._phone_admin import OfficialBusinessAccountStatus as OfficialBusinessAccountStatus
from ._phone_admin import PhoneNumberInfo as PhoneNumberInfo
from ._phone_admin import PhoneNumberSettings as PhoneNumberSettings
from ._phone_admin import QrCode as QrCode
from ._phone_setup import COMPLIANCE_ENTITY_TYPES as COMPLIANCE_ENTITY_TYPES
from ._phone_setup import BusinessComplianceInfo as BusinessComplianceInfo
from ._phone_setup import CodeVerification as CodeVerification
from ._phone_setup import ConversationalAutomation as ConversationalAutomation
from ._phone_setup import EncryptedMessageResult as EncryptedMessageResult
from ._portfolio import BusinessPortfolioInfo as BusinessPortfolioInfo
from ._portfolio import CreditLine as CreditLine
from ._portfolio import OnboardingRequest as OnboardingRequest
from ._preverified import BusinessSummary as BusinessSummary
from ._preverified import PreverifiedNumber as PreverifiedNumber
from ._results import CreatedObject as CreatedObject
from ._results import Page as Page
from ._results import Success as Success
from ._results import Template as Template
from ._schedules import WabaSchedule as WabaSchedule
from ._solutions import MigrationIntent as MigrationIntent
from ._solutions import Solution as Solution
from ._solutions import SolutionAccessToken as SolutionAccessToken
from ._templates import TEMPLATE_CATEGORIES as TEMPLATE_CATEGORIES
from ._templates import TEMPLATE_GROUP_METRIC_TYPES as TEMPLATE_GROUP_METRIC_TYPES
from ._templates import TemplateCreated as TemplateCreated
from ._templates import TemplateGroup as TemplateGroup
from ._templates import TemplateGroupAnalytics as TemplateGroupAnalytics
from ._thread_control import THREAD_CONTROL_ACTIONS as THREAD_CONTROL_ACTIONS
from ._thread_control import ThreadControlResult as ThreadControlResult
from ._username import BusinessUsername as BusinessUsername
from ._username import UsernameSuggestions as UsernameSuggestions
from ._waba import SubscribedApp as SubscribedApp
from ._waba import WabaInfo as WabaInfo
from ._waba_users import WABA_USER_TASKS as WABA_USER_TASKS
from ._waba_users import AssignedUser as AssignedUser
from ._waba_users import WabaActivity as WabaActivity

# The error classes and the template-definition builders are named once, in their
# own modules' __all__; the package adds those lists to its own.
# isort: split
from . import _error_classes, _template_create

__all__ = [
    "AUTHENTICATION_OTP_RULE",
    "BID_STRATEGIES",
    "BUSINESS_PROFILE_FIELDS",
    "CALL_ACTIONS",
    "COMPLIANCE_ENTITY_TYPES",
    "DEFAULT_API_VERSION",
    "DEFAULT_BASE_URL",
    "FAILURES",
    "FLOW_CATEGORIES",
    "FLOW_JSON_LIMITS",
    "FLOW_MESSAGE_VERSION",
    "GOODS_TYPES",
    "GROUP_DESCRIPTION_MAX_LENGTH",
    "GROUP_JOIN_APPROVAL_MODES",
    "GROUP_MAX_REMOVED_PARTICIPANTS",
    "GROUP_MESSAGE_TYPES",
    "GROUP_SUBJECT_MAX_LENGTH",
    "HTTP_METHODS",
    "MAX_BIZ_OPAQUE_CALLBACK_DATA",
    "MAX_BLOCK_USERS",
    "MEDIA_KINDS",
    "ORDER_STATUSES",
    "PLATFORM_OPERATIONS",
    "TEMPLATE_BUTTON_SUB_TYPES",
    "TEMPLATE_CATEGORIES",
    "TEMPLATE_GROUP_METRIC_TYPES",
    "THREAD_CONTROL_ACTIONS",
    "WABA_USER_TASKS",
    "AppAdmin",
    "AppClient",
    "AssignedUser",
    "BlockUsersResult",
    "BlockedUser",
    "BlockedUserOutcome",
    "BusinessAdmin",
    "BusinessClient",
    "BusinessComplianceInfo",
    "BusinessPortfolioInfo",
    "BusinessProfile",
    "BusinessPublicKey",
    "BusinessSummary",
    "BusinessUsername",
    "CallPermissionAction",
    "CallPermissionLimit",
    "CallPermissions",
    "CallResult",
    "CapturedRequest",
    "CapturingTransport",
    "CodeVerification",
    "CommerceSettings",
    "ConversationalAutomation",
    "CreatedObject",
    "CreditLine",
    "DryRunTransport",
    "EncryptedMessageResult",
    "Endpoint",
    "Failure",
    "Flow",
    "FlowAsset",
    "FlowAssetsUpdateResult",
    "FlowCreated",
    "FlowJsonValidationError",
    "FlowMigration",
    "FlowPreview",
    "FlowValidationIssue",
    "GraphApiError",
    "GraphAuthError",
    "GraphClient",
    "GraphError",
    "GraphNetworkError",
    "GraphRateLimitError",
    "GraphRequestValidationError",
    "GraphSerializationError",
    "Group",
    "GroupAdmin",
    "GroupClient",
    "GroupInviteLink",
    "GroupJoinRequest",
    "GroupJoinRequestsResult",
    "GroupMutation",
    "GroupParticipant",
    "GroupSummary",
    "InteractiveSender",
    "MediaKind",
    "MessageHistoryEntry",
    "MessageHistoryEvent",
    "MessageSender",
    "MigratedFlow",
    "MigrationIntent",
    "OfficialBusinessAccountStatus",
    "OnboardingRequest",
    "OptimizationSpec",
    "Page",
    "Paginator",
    "Param",
    "PhoneNumberAdmin",
    "PhoneNumberClient",
    "PhoneNumberInfo",
    "PhoneNumberSettings",
    "PhoneOnlyRecipientError",
    "PlatformOperation",
    "PreverifiedNumber",
    "QrCode",
    "ReadReceiptResult",
    "Recipient",
    "RecipientField",
    "RecipientKind",
    "RetryAction",
    "RetryHint",
    "SendResult",
    "Solution",
    "SolutionAccessToken",
    "SolutionAdmin",
    "SolutionClient",
    "SubscribedApp",
    "Success",
    "Template",
    "TemplateCheckError",
    "TemplateCreated",
    "TemplateGroup",
    "TemplateGroupAnalytics",
    "ThreadControlResult",
    "UsernameSuggestions",
    "WABAAdmin",
    "WABAClient",
    "WabaActivity",
    "WabaInfo",
    "WabaSchedule",
    "build_audio_message",
    "build_call_permission_request_message",
    "build_contacts_message",
    "build_document_message",
    "build_group_media_message",
    "build_group_pin_message",
    "build_group_template_message",
    "build_group_text_message",
    "build_image_message",
    "build_interactive_buttons_message",
    "build_interactive_carousel_message",
    "build_interactive_catalog_message",
    "build_interactive_cta_url_message",
    "build_interactive_flow_message",
    "build_interactive_list_message",
    "build_interactive_location_request_message",
    "build_interactive_product_message",
    "build_interactive_products_message",
    "build_location_message",
    "build_marketing_template_message",
    "build_media_message",
    "build_order_details_message",
    "build_order_status_message",
    "build_otp_button",
    "build_reaction_message",
    "build_read_receipt",
    "build_remove_reaction_message",
    "build_sticker_message",
    "build_template_body",
    "build_template_carousel",
    "build_template_carousel_card",
    "build_template_catalog_button",
    "build_template_copy_code_button",
    "build_template_flow_button",
    "build_template_header_gif",
    "build_template_header_location",
    "build_template_header_media",
    "build_template_header_product",
    "build_template_header_text",
    "build_template_limited_time_offer",
    "build_template_message",
    "build_template_mpm_button",
    "build_template_otp_button",
    "build_template_quick_reply_button",
    "build_template_url_button",
    "build_text_message",
    "build_video_message",
    "build_voice_call_button_message",
    "check_callback_data",
    "check_message_payload",
    "check_path_segment",
    "check_template_send",
    "interactive_media_header",
    "is_bsuid",
    "is_parent_bsuid",
    "is_phone_number",
    "is_read_receipt_payload",
    "is_user_id",
    "paginate",
    "read_receipt_result_from_answer",
    "register_error_code",
    "reset_error_registry",
    "resolve_error_class",
    "resolve_recipient",
    "resolve_retry_hint",
    "send_result_from_answer",
    "template_currency_parameter",
    "template_date_time_parameter",
    "template_text_parameter",
    "validate_flow_json",
    "with_callback_data",
]
__all__ += _error_classes.__all__
__all__ += _template_create.__all__
