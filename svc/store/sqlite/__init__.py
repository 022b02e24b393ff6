"""The SQLite adapter: ``SqliteStore`` (``_store``) and its set-based writes (``_writes``)."""

from ._store import SQLITE_SYNCHRONOUS_MODES as SQLITE_SYNCHRONOUS_MODES
from ._store import SQLITE_WRITERS as SQLITE_WRITERS
from ._store import SqliteStore as SqliteStore

__all__ = ["SQLITE_SYNCHRONOUS_MODES", "SQLITE_WRITERS", "SqliteStore"]
