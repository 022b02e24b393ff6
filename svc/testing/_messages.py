"""What a bot sent, as a test reads it: the kind, the text, the choices a user can tap."""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

__all__ = ["BotMessage", "Choice"]


@dataclass(frozen=True, slots=True, kw_only=True)
class Choice:
    """One thing a user can tap in a message: a reply button, a list row, a quick reply."""

    kind: str
    """The reply it makes: ``button_reply``, ``list_reply`` or ``quick_reply``."""
    id: str
    """The reply id (a quick reply's payload)."""
    title: str
    description: str | None = None


@dataclass(frozen=True, slots=True, kw_only=True)
class BotMessage:
    """One send of the bot to a user, as the platform received it (``payload``)."""

    payload: Mapping[str, Any]
    message_id: str | None
    """The id the platform answered with (``wamid.DRYRUN.…``)."""

    @property
    def kind(self) -> str:
        """The message's ``type``: ``text``, ``interactive``, ``template``, ``image``, …"""
        return str(self.payload.get("type", ""))

    @property
    def text(self) -> str | None:
        """A text's body, an interactive message's body text, a media message's caption."""
        body = self.payload.get(self.kind)
        if not isinstance(body, Mapping):
            return None
        if self.kind == "text":
            found = body.get("body")
        elif self.kind == "interactive":
            inner = body.get("body")
            found = inner.get("text") if isinstance(inner, Mapping) else None
        else:
            found = body.get("caption")
        return found if isinstance(found, str) else None

    @property
    def buttons(self) -> list[str]:
        """The titles of its choices, in order (reply buttons, list rows, quick replies)."""
        return [choice.title for choice in self.choices]

    @property
    def choices(self) -> list[Choice]:
        """What a user can tap in it (``user.taps`` picks one by id or title)."""
        body = self.payload.get(self.kind)
        if not isinstance(body, Mapping):
            return []
        if self.kind == "interactive":
            return _interactive_choices(body)
        if self.kind == "template":
            return _quick_replies(body)
        return []


def _interactive_choices(body: Mapping[str, Any]) -> list[Choice]:
    action = body.get("action")
    if not isinstance(action, Mapping):
        return []
    found: list[Choice] = []
    for button in action.get("buttons") or []:
        reply = button.get("reply") if isinstance(button, Mapping) else None
        if isinstance(reply, Mapping):
            found.append(
                Choice(kind="button_reply", id=str(reply.get("id")), title=str(reply.get("title")))
            )
    for section in action.get("sections") or []:
        for row in (section.get("rows") if isinstance(section, Mapping) else None) or []:
            if isinstance(row, Mapping):
                described = row.get("description")
                found.append(
                    Choice(
                        kind="list_reply",
                        id=str(row.get("id")),
                        title=str(row.get("title")),
                        description=described if isinstance(described, str) else None,
                    )
                )
    return found


def _quick_replies(body: Mapping[str, Any]) -> list[Choice]:
    """A template's quick-reply buttons, as the send names them (their payloads)."""
    found: list[Choice] = []
    for component in body.get("components") or []:
        if not isinstance(component, Mapping) or component.get("sub_type") != "quick_reply":
            continue
        for parameter in component.get("parameters") or []:
            if isinstance(parameter, Mapping) and parameter.get("payload"):
                payload = str(parameter["payload"])
                found.append(Choice(kind="quick_reply", id=payload, title=payload))
    return found
