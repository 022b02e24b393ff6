"""Persistence: one contract, a SQLite and a PostgreSQL adapter, the outbox and inbox workers.

The store keeps webhook-event keys, idempotent send requests, a metadata-only
message projection, a user identity map (phone, BSUIDs, username), an outbox and the
handler runtime's inbox (updates sealed by the caller); never message text in the clear,
raw bodies or contact cards.
"""

from ._broadcast_methods import MAX_BROADCAST_RECIPIENTS as MAX_BROADCAST_RECIPIENTS
from ._broadcasts import BROADCAST_INTERRUPTED as BROADCAST_INTERRUPTED
from ._broadcasts import BroadcastCreateResult as BroadcastCreateResult
from ._broadcasts import BroadcastRecipientInput as BroadcastRecipientInput
from ._broadcasts import BroadcastSend as BroadcastSend
from ._broadcasts import BroadcastState as BroadcastState
from ._broadcasts import BroadcastStatus as BroadcastStatus
from ._checked import CheckedRows as CheckedRows
from ._checked import CheckedRowsBuilder as CheckedRowsBuilder
from ._checked import storable_phone as storable_phone
from ._checked import storable_user_id as storable_user_id
from ._contract import BroadcastStore as BroadcastStore
from ._contract import PersistenceStore as PersistenceStore
from ._errors import FAULT_CODES as FAULT_CODES
from ._errors import VALIDATION_CODES as VALIDATION_CODES
from ._errors import PersistenceError as PersistenceError
from ._errors import PersistenceErrorCode as PersistenceErrorCode
from ._errors import PersistenceValidationError as PersistenceValidationError
from ._inbox_methods import MAX_USER_STATE_BYTES as MAX_USER_STATE_BYTES
from ._leases import EXHAUSTED as EXHAUSTED
from ._leases import TIMEOUT as TIMEOUT
from ._leases import DeadLetter as DeadLetter
from ._leases import Decision as Decision
from ._leases import Failure as Failure
from ._leases import RetryPolicy as RetryPolicy
from ._leases import Verdict as Verdict
from ._leases import failure_of as failure_of
from ._leases import settle as settle
from ._migrations import SCHEMA_VERSION as SCHEMA_VERSION
from ._outbox import OutboxHandler as OutboxHandler
from ._outbox import OutboxReport as OutboxReport
from ._outbox import OutboxReporter as OutboxReporter
from ._outbox import OutboxWorkerHandle as OutboxWorkerHandle
from ._outbox import OutboxWorkerOptions as OutboxWorkerOptions
from ._outbox import OutboxWorkerStatistics as OutboxWorkerStatistics
from ._outbox import run_outbox_worker as run_outbox_worker
from ._outbox import run_outbox_worker_once as run_outbox_worker_once
from ._records import OUTBOX_LEASE_MS as OUTBOX_LEASE_MS
from ._records import Claimed as Claimed
from ._records import ClaimResult as ClaimResult
from ._records import Conflict as Conflict
from ._records import InboxItem as InboxItem
from ._records import InboxRow as InboxRow
from ._records import InboxStatistics as InboxStatistics
from ._records import InboxStatus as InboxStatus
from ._records import MessageDirection as MessageDirection
from ._records import MessagePage as MessagePage
from ._records import MessageRecord as MessageRecord
from ._records import OutboxItem as OutboxItem
from ._records import OutboxStatus as OutboxStatus
from ._records import Pending as Pending
from ._records import PersistenceHealth as PersistenceHealth
from ._records import PruneReport as PruneReport
from ._records import Replay as Replay
from ._records import ServiceRequestRecord as ServiceRequestRecord
from ._records import ServiceRequestState as ServiceRequestState
from ._records import StatusEvent as StatusEvent
from ._records import UpdatesRecorded as UpdatesRecorded
from ._records import UserIdentityRecord as UserIdentityRecord
from ._records import UserStateRecord as UserStateRecord
from ._records import UserStateWrite as UserStateWrite
from ._records import WebhookEventResult as WebhookEventResult
from ._retention import RetentionOptions as RetentionOptions
from ._retention import prune_once as prune_once
from ._retention import run_retention as run_retention
from ._row_ids import new_row_id as new_row_id
from ._row_ids import new_row_ids as new_row_ids
from ._status import STATUS_RANKS as STATUS_RANKS
from ._status import apply_status as apply_status
from ._status import status_rank as status_rank
from ._time import format_timestamp as format_timestamp
from ._time import from_ms as from_ms
from ._time import to_ms as to_ms
from ._time import utc_now as utc_now
from ._window import DEFAULT_WINDOW_MS as DEFAULT_WINDOW_MS
from ._window import MAX_WINDOW_MS as MAX_WINDOW_MS
from ._window import ConversationWindow as ConversationWindow
from ._window import conversation_window as conversation_window
from .postgres import POSTGRES_WRITERS as POSTGRES_WRITERS
from .postgres import PostgresStore as PostgresStore
from .sqlite import SQLITE_SYNCHRONOUS_MODES as SQLITE_SYNCHRONOUS_MODES
from .sqlite import SQLITE_WRITERS as SQLITE_WRITERS
from .sqlite import SqliteStore as SqliteStore

__all__ = [
    "BROADCAST_INTERRUPTED",
    "DEFAULT_WINDOW_MS",
    "EXHAUSTED",
    "FAULT_CODES",
    "MAX_BROADCAST_RECIPIENTS",
    "MAX_USER_STATE_BYTES",
    "MAX_WINDOW_MS",
    "OUTBOX_LEASE_MS",
    "POSTGRES_WRITERS",
    "SCHEMA_VERSION",
    "SQLITE_SYNCHRONOUS_MODES",
    "SQLITE_WRITERS",
    "STATUS_RANKS",
    "TIMEOUT",
    "VALIDATION_CODES",
    "BroadcastCreateResult",
    "BroadcastRecipientInput",
    "BroadcastSend",
    "BroadcastState",
    "BroadcastStatus",
    "BroadcastStore",
    "CheckedRows",
    "CheckedRowsBuilder",
    "ClaimResult",
    "Claimed",
    "Conflict",
    "ConversationWindow",
    "DeadLetter",
    "Decision",
    "Failure",
    "InboxItem",
    "InboxRow",
    "InboxStatistics",
    "InboxStatus",
    "MessageDirection",
    "MessagePage",
    "MessageRecord",
    "OutboxHandler",
    "OutboxItem",
    "OutboxReport",
    "OutboxReporter",
    "OutboxStatus",
    "OutboxWorkerHandle",
    "OutboxWorkerOptions",
    "OutboxWorkerStatistics",
    "Pending",
    "PersistenceError",
    "PersistenceErrorCode",
    "PersistenceHealth",
    "PersistenceStore",
    "PersistenceValidationError",
    "PostgresStore",
    "PruneReport",
    "Replay",
    "RetentionOptions",
    "RetryPolicy",
    "ServiceRequestRecord",
    "ServiceRequestState",
    "SqliteStore",
    "StatusEvent",
    "UpdatesRecorded",
    "UserIdentityRecord",
    "UserStateRecord",
    "UserStateWrite",
    "Verdict",
    "WebhookEventResult",
    "apply_status",
    "conversation_window",
    "failure_of",
    "format_timestamp",
    "from_ms",
    "new_row_id",
    "new_row_ids",
    "prune_once",
    "run_outbox_worker",
    "run_outbox_worker_once",
    "run_retention",
    "settle",
    "status_rank",
    "storable_phone",
    "storable_user_id",
    "to_ms",
    "utc_now",
]
