"""The persistence exception tree.

    PersistenceError                 .code, .message; every store fault
     └── PersistenceValidationError  invalid_record | invalid_options | invalid_filename

Fault codes: ``migration_failed``, ``migration_checksum_mismatch``,
``migration_lock_failed``, ``claim_failed``, ``completion_failed``,
``outbox_failed``, ``query_failed``, ``store_closed``, ``driver_missing`` (the
adapter's database driver is not installed: an install fault, not the
caller's options). A raw driver error never
escapes: adapters raise one of these ``from None``, and messages never carry a
database path, a connection string or a stored value.
"""

from __future__ import annotations

from typing import Final, Literal, get_args

__all__ = [
    "FAULT_CODES",
    "REDACTED_POSTGRES_LOCATION",
    "REDACTED_SQLITE_LOCATION",
    "VALIDATION_CODES",
    "FaultCode",
    "PersistenceError",
    "PersistenceErrorCode",
    "PersistenceValidationError",
    "ValidationCode",
    "fault_messages",
]

FaultCode = Literal[
    "migration_failed",
    "migration_checksum_mismatch",
    "migration_lock_failed",
    "claim_failed",
    "completion_failed",
    "outbox_failed",
    "query_failed",
    "store_closed",
    "driver_missing",
]
ValidationCode = Literal["invalid_record", "invalid_options", "invalid_filename"]
PersistenceErrorCode = FaultCode | ValidationCode

REDACTED_SQLITE_LOCATION: Final = "[REDACTED_SQLITE_DATABASE]"
REDACTED_POSTGRES_LOCATION: Final = "[REDACTED_POSTGRES_DATABASE]"
"""What errors and reprs show instead of a database path or a connection string."""

FAULT_CODES: Final[frozenset[str]] = frozenset(get_args(FaultCode))
VALIDATION_CODES: Final[frozenset[str]] = frozenset(get_args(ValidationCode))

_FAILED: Final = {
    "migration_failed": "migration failed.",
    "claim_failed": "service-request transaction failed.",
    "completion_failed": "service-request completion failed.",
    "outbox_failed": "outbox or message transaction failed.",
    "query_failed": "query failed.",
}


def fault_messages(backend: str) -> dict[str, str]:
    """What a failed call of each fault code says on ``backend`` (a driver error's stand-in:
    ``"SQLite query failed."``), for the adapter and its writer process."""
    return {code: f"{backend} {failed}" for code, failed in _FAILED.items()}


class PersistenceError(Exception):
    """A store operation failed; ``code`` says which way, ``message`` is safe to log."""

    code: PersistenceErrorCode
    message: str

    def __init__(self, code: PersistenceErrorCode, message: str) -> None:
        if code not in FAULT_CODES and code not in VALIDATION_CODES:
            raise ValueError(f"unknown persistence error code {code!r}")
        super().__init__(code, message)
        self.code = code
        self.message = message

    def __str__(self) -> str:
        return f"{self.code}: {self.message}"

    def __repr__(self) -> str:
        return f"{type(self).__name__}(code={self.code!r}, message={self.message!r})"


class PersistenceValidationError(PersistenceError):
    """The caller passed a record, option or filename the store refuses before any I/O."""

    code: ValidationCode

    def __init__(self, code: ValidationCode, message: str) -> None:
        if code not in VALIDATION_CODES:
            raise ValueError(f"not a validation code: {code!r}")
        super().__init__(code, message)
