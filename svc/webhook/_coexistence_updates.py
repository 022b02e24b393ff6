"""Updates of the coexistence fields: ``history`` chunks and ``smb_app_state_sync`` contacts.

A business onboarded with its WhatsApp Business app number (coexistence)
shares its past chats as ``history`` chunks, and its contact book as
``smb_app_state_sync`` items (then every later change). One update per
item; every field is optional.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any, ClassVar, Literal

from ._base import UpdateBase
from ._read import (
    item_errors,
    message_type,
    read_content,
    read_dict,
    read_id,
    read_int,
    read_objects,
    read_str,
    read_strs,
    read_timestamp,
    read_timestamp_or,
)
from ._values import MessageContent, PlatformError

__all__ = [
    "HistoryMessage",
    "HistoryThread",
    "HistoryUpdate",
    "SmbAppStateSyncUpdate",
    "SyncedContact",
]


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryMessage:
    """One past message of a history thread; ``from_me`` when the business sent it.

    ``status`` is its ``history_context.status`` (``read``, ``delivered``,
    ``pending``, ...); ``content`` is typed like a live message's.
    """

    message_id: str | None = None
    from_: str | None = None
    to: str | None = None
    timestamp: int | None = None
    type: str = "unsupported"
    content: MessageContent
    status: str | None = None
    from_me: bool = False


@dataclass(frozen=True, slots=True, kw_only=True)
class HistoryThread:
    """One chat of a history chunk: the user's id (``thread_id``) and its messages."""

    thread_id: str | None = None
    messages: tuple[HistoryMessage, ...] = ()


def _history_message(message: Mapping[str, Any], value: Mapping[str, Any]) -> HistoryMessage:
    context = read_dict(message.get("history_context"))
    return HistoryMessage(
        message_id=read_id(message.get("id")),
        from_=read_id(message.get("from")),
        to=read_id(message.get("to")),
        timestamp=read_timestamp(message.get("timestamp")),
        type=message_type(message),
        content=read_content(message, value),
        status=read_str(context.get("status")),
        from_me=context.get("from_me") is True,
    )


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class HistoryUpdate(UpdateBase):
    """An item of ``history[]``: one chunk of the chats a coexistence business shared.

    ``phase`` (0, 1 or 2: the day ranges of the sync), ``chunk_order`` (from
    1, per phase) and ``progress`` (0-100) place the chunk; a business that
    declined to share reads as one item with ``errors`` and no threads.
    Threads and messages are read up to 256 each, like every nested list.
    """

    kind: ClassVar[Literal["history"]] = "history"
    _repr_fields: ClassVar[tuple[str, ...]] = ("phase", "chunk_order")

    @property
    def _metadata(self) -> Mapping[str, Any]:
        """The chunk's ``metadata`` object (empty when missing)."""
        return read_dict(self.raw.get("metadata"))

    @property
    def phase(self) -> int | None:
        return read_int(self._metadata.get("phase"))

    @property
    def chunk_order(self) -> int | None:
        return read_int(self._metadata.get("chunk_order"))

    @property
    def progress(self) -> int | None:
        return read_int(self._metadata.get("progress"))

    @property
    def threads(self) -> tuple[HistoryThread, ...]:
        value = self.source.value
        return tuple(
            HistoryThread(
                thread_id=read_id(thread.get("id")),
                messages=tuple(
                    _history_message(m, value)
                    for m in read_objects(thread.get("messages"))
                ),
            )
            for thread in read_objects(self.raw.get("threads"))
        )

    @property
    def thread_ids(self) -> tuple[str, ...]:
        """The user ids of the chunk's threads (safe ids only), in payload order."""
        ids = (read_id(t.get("id")) for t in read_objects(self.raw.get("threads")))
        return tuple(ident for ident in ids if ident is not None)

    @property
    def errors(self) -> tuple[PlatformError, ...]:
        """The item's ``errors`` (history sharing declined), else the change value's."""
        return item_errors(self.raw, self.source.value)

    @property
    def timestamp(self) -> int | None:
        """The entry ``time``."""
        return self.source.entry_time


@dataclass(frozen=True, slots=True, kw_only=True)
class SyncedContact:
    """A contact of the business's WhatsApp Business app contact book."""

    full_name: str | None = None
    first_name: str | None = None
    phone_number: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True, repr=False)
class SmbAppStateSyncUpdate(UpdateBase):
    """An item of ``state_sync[]``: a contact was added to (or removed from) the business's app.

    ``sync_type`` is ``contact``, ``action`` ``add`` or ``remove``;
    ``timestamp`` is the item's ``metadata.timestamp``, else the entry time.
    """

    kind: ClassVar[Literal["smbAppStateSync"]] = "smbAppStateSync"
    _repr_fields: ClassVar[tuple[str, ...]] = ("sync_type", "action")

    @property
    def sync_type(self) -> str | None:
        return read_str(self.raw.get("type"))

    @property
    def action(self) -> str | None:
        return read_str(self.raw.get("action"))

    @property
    def contact(self) -> SyncedContact | None:
        contact = self.raw.get("contact")
        if type(contact) is not dict:
            return None
        return SyncedContact(
            **read_strs(contact, "full_name", "first_name"),
            phone_number=read_id(contact.get("phone_number")),
        )

    @property
    def phone_number(self) -> str | None:
        """The contact's phone number (a safe id), when sent."""
        return read_id(read_dict(self.raw.get("contact")).get("phone_number"))

    @property
    def timestamp(self) -> int | None:
        metadata = read_dict(self.raw.get("metadata"))
        return read_timestamp_or(metadata.get("timestamp"), self.source.entry_time)
