"""The declared public surface of ``svc.store`` and its layering."""

from __future__ import annotations

import ast
import inspect
import types
from pathlib import Path

import svc.store
from svc.store import PersistenceStore, PostgresStore, SqliteStore

PACKAGE = Path(svc.store.__file__).parent


def test_all_is_complete_and_sorted() -> None:
    public = {
        name
        for name, value in vars(svc.store).items()
        if not name.startswith("_") and not isinstance(value, types.ModuleType)
    }
    assert set(svc.store.__all__) == public
    assert len(svc.store.__all__) == len(set(svc.store.__all__))
    for name in svc.store.__all__:
        assert getattr(svc.store, name) is not None


def test_protocol_method_set_is_the_specs() -> None:
    expected = {
        "backend",
        "migrate",
        "health",
        "record_webhook_event",
        "record_webhook_delivery",
        "record_webhook_updates",
        "get_service_request",
        "record_service_request",
        "claim_service_request",
        "complete_service_request",
        "release_service_request",
        "enqueue_outbox_item",
        "claim_outbox_items",
        "mark_outbox_item_failed",
        "mark_outbox_item_succeeded",
        "mark_outbox_item_dead",
        "list_outbox_items",
        "retry_outbox_item",
        "count_outbox_items",
        "prune",
        "record_message",
        "append_message_status",
        "get_message",
        "list_messages",
        "get_latest_inbound_message_at",
        "count_outbox_pending",
        "claim_inbox_items",
        "mark_inbox_item_succeeded",
        "mark_inbox_item_succeeded_and_claim",
        "mark_inbox_item_failed",
        "mark_inbox_item_dead",
        "list_inbox_items",
        "retry_inbox_item",
        "drop_inbox_item",
        "get_inbox_item",
        "watch_inbox",
        "mark_inbox_items_taken",
        "inbox_statistics",
        "delete_dead_inbox_items",
        "extend_inbox_lease",
        "list_inbox_queue",
        "get_user_state",
        "delete_expired_user_states",
        "record_user_identities",
        "record_identity_change",
        "find_user_identity",
        "close",
    }
    members = {n for n in vars(PersistenceStore) if not n.startswith("_")}
    assert members == expected
    for adapter in (SqliteStore, PostgresStore):
        for name in expected - {"backend"}:
            assert inspect.iscoroutinefunction(getattr(adapter, name)), (adapter, name)
        assert isinstance(inspect.getattr_static(adapter, "backend"), property)


def test_store_never_imports_upper_layers() -> None:
    for path in PACKAGE.rglob("*.py"):
        tree = ast.parse(path.read_text())
        for node in ast.walk(tree):
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                names = [node.module]
            for name in names:
                assert not name.startswith(("svc.webhook", "svc.http", "svc.cli")), path


def test_records_are_frozen_keyword_only_and_slotted() -> None:
    import dataclasses

    from svc.store import (
        InboxItem,
        InboxRow,
        InboxStatistics,
        MessageRecord,
        OutboxItem,
        PersistenceHealth,
        Replay,
        StatusEvent,
        UserIdentityRecord,
    )

    for cls in (
        InboxItem,
        InboxRow,
        InboxStatistics,
        MessageRecord,
        OutboxItem,
        PersistenceHealth,
        Replay,
        StatusEvent,
        UserIdentityRecord,
    ):
        params = cls.__dataclass_params__  # type: ignore[attr-defined]
        assert params.frozen
        assert hasattr(cls, "__slots__")
        assert all(f.kw_only for f in dataclasses.fields(cls))
