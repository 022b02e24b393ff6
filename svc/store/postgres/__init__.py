"""The PostgreSQL adapter: ``PostgresStore`` (``_store``, importable without psycopg), its
engine (``_engine``: the pool, the worker threads, the writer process) and its set-based
writes (``_writes``)."""

from ._store import POSTGRES_WRITERS as POSTGRES_WRITERS
from ._store import PostgresStore as PostgresStore

__all__ = ["POSTGRES_WRITERS", "PostgresStore"]
