"""The inbox keys a profile names (``inbox: {keys: [{env: NAME}, ...]}``), read from the env.

Updates waiting for a handler are kept encrypted under these keys
(``svc.crypto.InboxKeyring``): the first key writes, every key reads, so a key
rotates by putting a new one first. Each value is 32 random bytes written as
base64 (``openssl rand -base64 32``). Errors name the env name, never a value.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Final

from ._config import ProfileSection
from ._errors import SecretResolutionError

__all__ = [
    "DEFAULT_INBOX_KEY_ENV",
    "DryRunInboxKeys",
    "dry_run_inbox_keys",
    "inbox_keys_needed",
    "resolve_inbox_keys",
]

DEFAULT_INBOX_KEY_ENV: Final = "SVC_INBOX_KEY"
"""The env name ``svc init`` writes, and the one a dry run suggests when the profile names none."""
_NO_KEYS: Final = (
    "handlers with a store keep waiting updates encrypted: the profile needs "
    "inbox: {keys: [{env: SVC_INBOX_KEY}]}, and SVC_INBOX_KEY a key (openssl rand -base64 32)."
)


def inbox_keys_needed(*, handlers: bool, store: bool) -> bool:
    """Whether a serving process needs inbox keys: it runs the user's handlers over a store."""
    return handlers and store


def _env_names(section: ProfileSection) -> tuple[str, ...]:
    return tuple(ref.env for ref in section.inbox.keys) if section.inbox is not None else ()


def _key(name: str, value: str) -> bytes:
    from ..crypto import parse_inbox_key

    try:
        return parse_inbox_key(value)
    except ValueError:
        raise SecretResolutionError(
            f"{name} must be 32 bytes written as base64 (openssl rand -base64 32).", field=name
        ) from None


def _checked(keys: list[bytes], names: list[str]) -> tuple[bytes, ...]:
    """The keys, refused when two are the same (the keyring's own rule)."""
    from ..crypto import InboxKeyring

    for index in range(1, len(keys)):
        try:
            InboxKeyring(keys[: index + 1])
        except ValueError:
            raise SecretResolutionError(
                f"{names[index]} holds the same key as an earlier inbox key.", field=names[index]
            ) from None
    return tuple(keys)


def resolve_inbox_keys(section: ProfileSection, env: Mapping[str, str]) -> tuple[bytes, ...]:
    """The profile's inbox keys from ``env``, the writing key first (live mode).

    ``SecretResolutionError`` when the profile names none, or a named one is
    unset, malformed or repeated; the message names the env name.
    """
    names = list(_env_names(section))
    if not names:
        raise SecretResolutionError(_NO_KEYS, field="inbox.keys")
    keys: list[bytes] = []
    for name in names:
        value = env.get(name)
        if not value:
            raise SecretResolutionError(f"{name} is not set (an inbox key).", field=name)
        keys.append(_key(name, value))
    return _checked(keys, names)


@dataclass(frozen=True, slots=True, kw_only=True)
class DryRunInboxKeys:
    """A dry run's inbox keys: those the environment sets, and a generated writing key if needed."""

    keys: tuple[bytes, ...] = field(repr=False)
    generated: str | None = field(default=None, repr=False)
    """The generated writing key as base64 (printed once), or None when the environment set it."""
    writing_env: str
    """The env name that would keep the writing key across restarts."""
    from_env: tuple[str, ...]


def dry_run_inbox_keys(section: ProfileSection, env: Mapping[str, str]) -> DryRunInboxKeys:
    """Each named key the environment sets; a generated writing key when the first is unset.

    A key the environment sets is the user's and is never printed; a generated
    one is new at every start, so updates still waiting for a handler at a restart
    cannot be read afterwards (they become ``key_unavailable`` dead letters).
    """
    from ..crypto import generate_inbox_key, parse_inbox_key

    names = list(_env_names(section)) or [DEFAULT_INBOX_KEY_ENV]
    keys: list[bytes] = []
    used: list[str] = []
    generated = None
    for index, name in enumerate(names):
        value = env.get(name)
        if value:
            keys.append(_key(name, value))
            used.append(name)
        elif index == 0:
            generated = generate_inbox_key()
            keys.append(parse_inbox_key(generated))
            used.append(name)
    return DryRunInboxKeys(
        keys=_checked(keys, used),
        generated=generated,
        writing_env=names[0],
        from_env=tuple(name for name in used if generated is None or name != names[0]),
    )
