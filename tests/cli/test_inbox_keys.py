"""The inbox keys a profile names: the config shape, live resolution and the dry run's key."""

from __future__ import annotations

import base64
import copy
from typing import Any

import pytest

from svc.cli import ConfigValidationError, SecretResolutionError
from svc.cli._config import parse_document
from svc.cli._inbox_keys import dry_run_inbox_keys, inbox_keys_needed, resolve_inbox_keys
from svc.cli._init import config_data
from svc.crypto import InboxKeyring, parse_inbox_key

NEW = base64.b64encode(bytes(range(32))).decode()
OLD = base64.urlsafe_b64encode(bytes(range(50, 82))).decode()


def _section(keys: list[Any] | None) -> Any:
    data = copy.deepcopy(config_data("default"))
    profile = data["profiles"]["default"]  # type: ignore[index]
    if keys is None:
        del profile["inbox"]
    else:
        profile["inbox"] = {"keys": keys}
    return parse_document(data).profiles["default"]


def test_init_names_one_inbox_key_and_the_file_lists_it_as_an_env_reference() -> None:
    section = _section([{"env": "SVC_INBOX_KEY"}])
    assert [ref.env for ref in section.inbox.keys] == ["SVC_INBOX_KEY"]
    assert config_data("default")["profiles"]["default"]["inbox"] == {  # type: ignore[index]
        "keys": [{"env": "SVC_INBOX_KEY"}]
    }


@pytest.mark.parametrize(
    ("keys", "problem"),
    [
        (
            ["c2VjcmV0"],
            "profiles.default.inbox.keys.0: a secret is written {env: NAME} "
            "(e.g. {env: SVC_ACCESS_TOKEN}); a literal secret is refused on purpose",
        ),
        ([], "profiles.default.inbox.keys: must not be empty"),
        ([{"env": f"K{n}"} for n in range(9)], "profiles.default.inbox.keys: has too many items"),
        ([{"env": "lower"}], "profiles.default.inbox.keys.0.env: must be an upper-case env name"),
    ],
)
def test_a_malformed_inbox_section_is_refused_by_place_never_by_value(
    keys: list[Any], problem: str
) -> None:
    with pytest.raises(ConfigValidationError) as caught:
        _section(keys)
    assert problem in caught.value.format_message()
    assert "c2VjcmV0" not in caught.value.format_message()


def test_live_keys_come_in_order_the_writing_key_first() -> None:
    section = _section([{"env": "SVC_INBOX_KEY"}, {"env": "SVC_INBOX_KEY_OLD"}])
    keys = resolve_inbox_keys(section, {"SVC_INBOX_KEY": NEW, "SVC_INBOX_KEY_OLD": OLD})
    assert keys == (parse_inbox_key(NEW), parse_inbox_key(OLD))
    assert InboxKeyring(keys).write_key_id == InboxKeyring([parse_inbox_key(NEW)]).write_key_id


@pytest.mark.parametrize(
    ("keys", "env", "message"),
    [
        (
            None,
            {},
            "handlers with a store keep waiting updates encrypted: the profile needs "
            "inbox: {keys: [{env: SVC_INBOX_KEY}]}, and SVC_INBOX_KEY a key "
            "(openssl rand -base64 32).",
        ),
        (
            [{"env": "SVC_INBOX_KEY"}, {"env": "SVC_INBOX_KEY_OLD"}],
            {"SVC_INBOX_KEY": NEW},
            "SVC_INBOX_KEY_OLD is not set (an inbox key).",
        ),
        (
            [{"env": "SVC_INBOX_KEY"}],
            {"SVC_INBOX_KEY": "hunter2-is-not-a-key"},
            "SVC_INBOX_KEY must be 32 bytes written as base64 (openssl rand -base64 32).",
        ),
        (
            [{"env": "SVC_INBOX_KEY"}, {"env": "SVC_INBOX_KEY_OLD"}],
            {"SVC_INBOX_KEY": NEW, "SVC_INBOX_KEY_OLD": NEW.rstrip("=")},
            "SVC_INBOX_KEY_OLD holds the same key as an earlier inbox key.",
        ),
    ],
)
def test_a_missing_malformed_or_repeated_key_names_its_env_never_its_value(
    keys: list[Any] | None, env: dict[str, str], message: str
) -> None:
    with pytest.raises(SecretResolutionError) as caught:
        resolve_inbox_keys(_section(keys), env)
    assert caught.value.format_message() == message
    for value in env.values():
        assert value not in message


def test_keys_are_needed_only_by_handlers_over_a_store() -> None:
    assert inbox_keys_needed(handlers=True, store=True)
    assert not inbox_keys_needed(handlers=True, store=False)
    assert not inbox_keys_needed(handlers=False, store=True)


def test_a_dry_run_generates_the_writing_key_unless_the_environment_sets_it() -> None:
    section = _section([{"env": "SVC_INBOX_KEY"}, {"env": "SVC_INBOX_KEY_OLD"}])
    fresh = dry_run_inbox_keys(section, {})
    assert fresh.generated is not None and fresh.keys == (parse_inbox_key(fresh.generated),)
    assert (fresh.writing_env, fresh.from_env) == ("SVC_INBOX_KEY", ())
    assert fresh.generated not in repr(fresh)
    assert dry_run_inbox_keys(section, {}).generated != fresh.generated  # new at every start
    kept = dry_run_inbox_keys(section, {"SVC_INBOX_KEY": NEW, "SVC_INBOX_KEY_OLD": OLD})
    assert kept.generated is None
    assert kept.keys == (parse_inbox_key(NEW), parse_inbox_key(OLD))
    assert kept.from_env == ("SVC_INBOX_KEY", "SVC_INBOX_KEY_OLD")
    rotated_away = dry_run_inbox_keys(section, {"SVC_INBOX_KEY_OLD": OLD})
    assert rotated_away.generated is not None
    assert rotated_away.keys[1:] == (parse_inbox_key(OLD),)
    assert rotated_away.from_env == ("SVC_INBOX_KEY_OLD",)
    # A profile without an inbox section still gets a key, under the default name.
    bare = dry_run_inbox_keys(_section(None), {})
    assert bare.generated is not None and bare.writing_env == "SVC_INBOX_KEY"
    with pytest.raises(SecretResolutionError, match="SVC_INBOX_KEY must be 32 bytes"):
        dry_run_inbox_keys(section, {"SVC_INBOX_KEY": "short"})
