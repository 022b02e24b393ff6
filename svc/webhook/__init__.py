"""The webhook layer, sans-IO: signature and challenge checks, envelope -> typed updates, facade.

Nothing here reads the environment, the disk or the network. The HTTP layer
calls ``receive_delivery(body, signature, app_secret)`` and answers a
``WebhookError`` with its ``code``/``http_status``, records the ``Delivery``
(``event_key``, ``body_hash``, updates) through the store with the updates its
facade ``handles`` (``update_to_json``, sealed, in their ``queue_key`` queues),
and runs them after its answer (``facade.run(context)``). See ``docs/webhooks.md``.
"""

# --- errors
# --- challenge (GET)
# --- typed account and template changes (AccountUpdate.details)
from ._account_values import THROUGHPUT_UPGRADE as THROUGHPUT_UPGRADE
from ._account_values import AccountAlert as AccountAlert
from ._account_values import AccountDetails as AccountDetails
from ._account_values import AccountEvent as AccountEvent
from ._account_values import AccountRestriction as AccountRestriction
from ._account_values import AccountReview as AccountReview
from ._account_values import BusinessCapabilities as BusinessCapabilities
from ._account_values import PhoneNumberQualityChange as PhoneNumberQualityChange
from ._account_values import WabaInfo as WabaInfo

# --- threads another responder holds (Meta's business agent)
from ._agent_updates import HANDOVER_FIELD as HANDOVER_FIELD
from ._agent_updates import STANDBY_FIELD as STANDBY_FIELD
from ._agent_updates import StandbyItem as StandbyItem
from ._challenge import verify_challenge as verify_challenge

# --- coexistence updates
from ._coexistence_updates import HistoryMessage as HistoryMessage
from ._coexistence_updates import HistoryThread as HistoryThread
from ._coexistence_updates import SyncedContact as SyncedContact

# --- conversations: waits, bursts, per-user state
from ._conversation import DEFAULT_LISTEN_TIMEOUT as DEFAULT_LISTEN_TIMEOUT
from ._conversation import MAX_COALESCE_COUNT as MAX_COALESCE_COUNT
from ._conversation import MAX_COALESCE_WAIT as MAX_COALESCE_WAIT
from ._conversation import MAX_LISTEN_TIMEOUT as MAX_LISTEN_TIMEOUT
from ._conversation import Coalesce as Coalesce
from ._conversation import Listener as Listener
from ._conversation import ListenerTimeout as ListenerTimeout
from ._conversation import click_listener as click_listener
from ._conversation import flow_listener as flow_listener
from ._conversation import listen_timeout as listen_timeout
from ._conversation import reply_listener as reply_listener
from ._conversation import status_listener as status_listener
from ._conversation import timed_out_wait as timed_out_wait
from ._deliveries import DevActionError as DevActionError
from ._deliveries import DevUser as DevUser
from ._deliveries import action_message as action_message
from ._deliveries import message_delivery as message_delivery
from ._deliveries import new_message_id as new_message_id
from ._deliveries import status_delivery as status_delivery

# --- the receive path (POST)
from ._delivery import Delivery as Delivery
from ._delivery import HmacMatcher as HmacMatcher
from ._delivery import receive_delivery as receive_delivery
from ._errors import ChallengeError as ChallengeError
from ._errors import InvalidEnvelopeError as InvalidEnvelopeError
from ._errors import InvalidJsonError as InvalidJsonError
from ._errors import InvalidModeError as InvalidModeError
from ._errors import InvalidSignatureFormatError as InvalidSignatureFormatError
from ._errors import InvalidVerifyTokenError as InvalidVerifyTokenError
from ._errors import MissingChallengeError as MissingChallengeError
from ._errors import MissingSignatureError as MissingSignatureError
from ._errors import PayloadTooLargeError as PayloadTooLargeError
from ._errors import SignatureError as SignatureError
from ._errors import SignatureMismatchError as SignatureMismatchError
from ._errors import WebhookError as WebhookError
from ._facade import ECHO_PREFIX as ECHO_PREFIX
from ._facade import MAX_ERROR_CLASSES as MAX_ERROR_CLASSES
from ._facade import BurstHandler as BurstHandler

# --- facade
from ._facade import ContextHandler as ContextHandler
from ._facade import DefaultFacade as DefaultFacade
from ._facade import Dispatcher as Dispatcher
from ._facade import FacadeFlags as FacadeFlags
from ._facade import FacadeStatistics as FacadeStatistics
from ._facade import Handler as Handler
from ._facade import HandlerContext as HandlerContext
from ._facade import ReplyOutcomeUnknown as ReplyOutcomeUnknown
from ._facade import SentMessage as SentMessage
from ._facade import TextSender as TextSender
from ._facade import TypingIndicator as TypingIndicator
from ._facade import WebhookFacade as WebhookFacade
from ._facade import dispatch_delivery as dispatch_delivery
from ._facade import facade_flags_from_env as facade_flags_from_env
from ._facade import safe_detail as safe_detail

# --- durable dedupe keys
from ._keys import body_hash as body_hash
from ._keys import canonical_json as canonical_json
from ._keys import event_key as event_key
from ._keys import queue_key as queue_key
from ._keys import queue_place as queue_place
from ._keys import queue_user as queue_user
from ._keys import update_key as update_key
from ._keys import user_queue_keys as user_queue_keys

# --- metrics
from ._metrics import METRIC_NAME as METRIC_NAME
from ._metrics import OUTCOMES as OUTCOMES
from ._metrics import TelemetrySink as TelemetrySink
from ._metrics import WebhookMetrics as WebhookMetrics
from ._metrics import clamp_update_kind as clamp_update_kind

# --- normalizer
from ._normalize import ACCOUNT_FIELDS as ACCOUNT_FIELDS
from ._normalize import GROUP_FIELDS as GROUP_FIELDS
from ._normalize import SKIP_REASONS as SKIP_REASONS
from ._normalize import normalize as normalize

# --- readers and limits
from ._read import MAX_ID_LENGTH as MAX_ID_LENGTH
from ._read import MAX_NESTED as MAX_NESTED
from ._read import MAX_TYPE_LENGTH as MAX_TYPE_LENGTH
from ._read import format_event_time as format_event_time
from ._read import is_safe_id as is_safe_id
from ._signature import SIGNATURE_HEADER as SIGNATURE_HEADER
from ._signature import SIGNATURE_PREFIX as SIGNATURE_PREFIX

# --- signature pipeline (POST)
from ._signature import BoundedBody as BoundedBody
from ._signature import check_content_length as check_content_length
from ._signature import parse_envelope as parse_envelope
from ._signature import parse_signature_header as parse_signature_header
from ._signature import sign_body as sign_body
from ._signature import verify_signature as verify_signature
from ._state import MAX_STATE_BYTES as MAX_STATE_BYTES
from ._state import StateTooLarge as StateTooLarge
from ._state import UserState as UserState
from ._template_values import TemplateCategoryChange as TemplateCategoryChange
from ._template_values import TemplateChange as TemplateChange
from ._template_values import TemplateComponentButton as TemplateComponentButton
from ._template_values import TemplateComponentsChange as TemplateComponentsChange
from ._template_values import TemplateOtherInfo as TemplateOtherInfo
from ._template_values import TemplateQualityChange as TemplateQualityChange
from ._template_values import TemplateRejection as TemplateRejection
from ._template_values import TemplateStatusChange as TemplateStatusChange
from ._updates import ECHO_FIELD as ECHO_FIELD
from ._updates import UPDATE_CLASSES as UPDATE_CLASSES
from ._updates import UPDATE_KINDS as UPDATE_KINDS

# --- updates
from ._updates import AccountUpdate as AccountUpdate
from ._updates import CallConnectUpdate as CallConnectUpdate
from ._updates import CallStatusUpdate as CallStatusUpdate
from ._updates import CallTerminateUpdate as CallTerminateUpdate
from ._updates import ChatOpenedUpdate as ChatOpenedUpdate
from ._updates import GroupLifecycleUpdate as GroupLifecycleUpdate
from ._updates import GroupParticipantsUpdate as GroupParticipantsUpdate
from ._updates import GroupSettingsUpdate as GroupSettingsUpdate
from ._updates import GroupStatusUpdate as GroupStatusUpdate
from ._updates import HistoryUpdate as HistoryUpdate
from ._updates import MessageUpdate as MessageUpdate
from ._updates import MessagingHandoverUpdate as MessagingHandoverUpdate
from ._updates import NormalizationResult as NormalizationResult
from ._updates import Skip as Skip
from ._updates import SmbAppStateSyncUpdate as SmbAppStateSyncUpdate
from ._updates import StandbyUpdate as StandbyUpdate
from ._updates import StatusUpdate as StatusUpdate
from ._updates import SystemUpdate as SystemUpdate
from ._updates import UnknownUpdate as UnknownUpdate
from ._updates import Update as Update
from ._updates import UpdateKind as UpdateKind
from ._updates import UpdateSource as UpdateSource
from ._updates import UserIdUpdate as UserIdUpdate
from ._updates import UserPreferencesUpdate as UserPreferencesUpdate
from ._updates import read_users as read_users
from ._values import PRICING_CATEGORIES as PRICING_CATEGORIES
from ._values import PRICING_MODELS as PRICING_MODELS
from ._values import PRICING_TYPES as PRICING_TYPES

# --- values inside updates
from ._values import ButtonContent as ButtonContent
from ._values import CallSession as CallSession
from ._values import ContactAddress as ContactAddress
from ._values import ContactEmail as ContactEmail
from ._values import ContactOrg as ContactOrg
from ._values import ContactPhone as ContactPhone
from ._values import ContactsContent as ContactsContent
from ._values import ContactUrl as ContactUrl
from ._values import ConversationInfo as ConversationInfo
from ._values import EditContent as EditContent
from ._values import GroupParticipant as GroupParticipant
from ._values import GroupSettingChange as GroupSettingChange
from ._values import IdentityInfo as IdentityInfo
from ._values import InteractiveContent as InteractiveContent
from ._values import LocationContent as LocationContent
from ._values import MediaContent as MediaContent
from ._values import MessageContent as MessageContent
from ._values import MessageContext as MessageContext
from ._values import OrderContent as OrderContent
from ._values import OrderItem as OrderItem
from ._values import PlatformError as PlatformError
from ._values import PricingCategory as PricingCategory
from ._values import PricingInfo as PricingInfo
from ._values import PricingModel as PricingModel
from ._values import PricingType as PricingType
from ._values import ReactionContent as ReactionContent
from ._values import Referral as Referral
from ._values import RevokeContent as RevokeContent
from ._values import SharedContact as SharedContact
from ._values import TextContent as TextContent
from ._values import UnsupportedContent as UnsupportedContent
from ._values import UnsupportedReason as UnsupportedReason
from ._values import UserIdentity as UserIdentity

# --- an update kept while it waits for its run
from ._wire import update_from_json as update_from_json
from ._wire import update_to_json as update_to_json

__all__ = [
    "ACCOUNT_FIELDS",
    "DEFAULT_LISTEN_TIMEOUT",
    "ECHO_FIELD",
    "ECHO_PREFIX",
    "GROUP_FIELDS",
    "HANDOVER_FIELD",
    "MAX_COALESCE_COUNT",
    "MAX_COALESCE_WAIT",
    "MAX_ERROR_CLASSES",
    "MAX_ID_LENGTH",
    "MAX_LISTEN_TIMEOUT",
    "MAX_NESTED",
    "MAX_STATE_BYTES",
    "MAX_TYPE_LENGTH",
    "METRIC_NAME",
    "OUTCOMES",
    "PRICING_CATEGORIES",
    "PRICING_MODELS",
    "PRICING_TYPES",
    "SIGNATURE_HEADER",
    "SIGNATURE_PREFIX",
    "SKIP_REASONS",
    "STANDBY_FIELD",
    "THROUGHPUT_UPGRADE",
    "UPDATE_CLASSES",
    "UPDATE_KINDS",
    "AccountAlert",
    "AccountDetails",
    "AccountEvent",
    "AccountRestriction",
    "AccountReview",
    "AccountUpdate",
    "BoundedBody",
    "BurstHandler",
    "BusinessCapabilities",
    "ButtonContent",
    "CallConnectUpdate",
    "CallSession",
    "CallStatusUpdate",
    "CallTerminateUpdate",
    "ChallengeError",
    "ChatOpenedUpdate",
    "Coalesce",
    "ContactAddress",
    "ContactEmail",
    "ContactOrg",
    "ContactPhone",
    "ContactUrl",
    "ContactsContent",
    "ContextHandler",
    "ConversationInfo",
    "DefaultFacade",
    "Delivery",
    "DevActionError",
    "DevUser",
    "Dispatcher",
    "EditContent",
    "FacadeFlags",
    "FacadeStatistics",
    "GroupLifecycleUpdate",
    "GroupParticipant",
    "GroupParticipantsUpdate",
    "GroupSettingChange",
    "GroupSettingsUpdate",
    "GroupStatusUpdate",
    "Handler",
    "HandlerContext",
    "HistoryMessage",
    "HistoryThread",
    "HistoryUpdate",
    "HmacMatcher",
    "IdentityInfo",
    "InteractiveContent",
    "InvalidEnvelopeError",
    "InvalidJsonError",
    "InvalidModeError",
    "InvalidSignatureFormatError",
    "InvalidVerifyTokenError",
    "Listener",
    "ListenerTimeout",
    "LocationContent",
    "MediaContent",
    "MessageContent",
    "MessageContext",
    "MessageUpdate",
    "MessagingHandoverUpdate",
    "MissingChallengeError",
    "MissingSignatureError",
    "NormalizationResult",
    "OrderContent",
    "OrderItem",
    "PayloadTooLargeError",
    "PhoneNumberQualityChange",
    "PlatformError",
    "PricingCategory",
    "PricingInfo",
    "PricingModel",
    "PricingType",
    "ReactionContent",
    "Referral",
    "ReplyOutcomeUnknown",
    "RevokeContent",
    "SentMessage",
    "SharedContact",
    "SignatureError",
    "SignatureMismatchError",
    "Skip",
    "SmbAppStateSyncUpdate",
    "StandbyItem",
    "StandbyUpdate",
    "StateTooLarge",
    "StatusUpdate",
    "SyncedContact",
    "SystemUpdate",
    "TelemetrySink",
    "TemplateCategoryChange",
    "TemplateChange",
    "TemplateComponentButton",
    "TemplateComponentsChange",
    "TemplateOtherInfo",
    "TemplateQualityChange",
    "TemplateRejection",
    "TemplateStatusChange",
    "TextContent",
    "TextSender",
    "TypingIndicator",
    "UnknownUpdate",
    "UnsupportedContent",
    "UnsupportedReason",
    "Update",
    "UpdateKind",
    "UpdateSource",
    "UserIdUpdate",
    "UserIdentity",
    "UserPreferencesUpdate",
    "UserState",
    "WabaInfo",
    "WebhookError",
    "WebhookFacade",
    "WebhookMetrics",
    "action_message",
    "body_hash",
    "canonical_json",
    "check_content_length",
    "clamp_update_kind",
    "click_listener",
    "dispatch_delivery",
    "event_key",
    "facade_flags_from_env",
    "flow_listener",
    "format_event_time",
    "is_safe_id",
    "listen_timeout",
    "message_delivery",
    "new_message_id",
    "normalize",
    "parse_envelope",
    "parse_signature_header",
    "queue_key",
    "queue_place",
    "queue_user",
    "read_users",
    "receive_delivery",
    "reply_listener",
    "safe_detail",
    "sign_body",
    "status_delivery",
    "status_listener",
    "timed_out_wait",
    "update_from_json",
    "update_key",
    "update_to_json",
    "user_queue_keys",
    "verify_challenge",
    "verify_signature",
]
