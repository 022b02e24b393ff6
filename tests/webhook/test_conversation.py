"""The conversation pieces of the webhook layer: what a wait matches, its timeout, a burst's
settings, and the per-user state document (JSON only, size-capped, changes found)."""

from __future__ import annotations

import json
from typing import Any

import pytest

from svc.webhook import (
    DEFAULT_LISTEN_TIMEOUT,
    MAX_STATE_BYTES,
    Coalesce,
    DefaultFacade,
    MessageUpdate,
    StateTooLarge,
    UserState,
    click_listener,
    flow_listener,
    listen_timeout,
    normalize,
    reply_listener,
    status_listener,
)

FIXTURES = __import__("pathlib").Path(__file__).parent / "fixtures"


def _message(item: dict[str, Any]) -> Any:
    payload = json.loads((FIXTURES / "message_text.json").read_text())
    payload["entry"][0]["changes"][0]["value"]["messages"] = [
        {"from": "16505551234", "id": "wamid.X", "timestamp": "1749416383", **item}
    ]
    return normalize(payload).updates[0]


def test_the_listeners_match_what_they_name() -> None:
    text = _message({"type": "text", "text": {"body": "hi"}})
    yes = _message(
        {
            "type": "interactive",
            "interactive": {"type": "button_reply", "button_reply": {"id": "yes", "title": "Yes"}},
        }
    )
    quick = _message({"type": "button", "button": {"payload": "later", "text": "Later"}})
    flow = _message(
        {
            "type": "interactive",
            "interactive": {"type": "nfm_reply", "nfm_reply": {"response_json": "{}"}},
        }
    )
    assert [reply_listener().matches(u) for u in (text, yes, flow)] == [True, True, True]
    assert [click_listener().matches(u) for u in (text, yes, quick, flow)] == [
        False,
        True,
        True,
        False,
    ]
    assert click_listener(["yes"]).matches(yes) and not click_listener(["no"]).matches(yes)
    assert click_listener(["later"]).matches(quick)
    assert [flow_listener().matches(u) for u in (text, yes, flow)] == [False, False, True]
    assert not status_listener("wamid.OUT").matches(text)
    with pytest.raises(TypeError):
        click_listener("yes")


def test_the_business_s_own_echoes_are_never_the_user_s_answer() -> None:
    payload = json.loads((FIXTURES / "smb_message_echoes.json").read_text())
    echoes = normalize(payload).updates
    assert echoes and all(isinstance(e, MessageUpdate) and e.is_echo for e in echoes)
    for listener in (reply_listener(), click_listener(), flow_listener()):
        assert not any(listener.matches(echo) for echo in echoes)


def test_a_wait_has_a_default_timeout_and_a_cap() -> None:
    assert listen_timeout(None) == DEFAULT_LISTEN_TIMEOUT == 300.0
    assert listen_timeout(5) == 5.0
    for bad in (0, -1, float("nan"), float("inf"), 86_401, True, "5"):
        with pytest.raises(ValueError):
            listen_timeout(bad)  # type: ignore[arg-type]


def test_a_burst_s_settings_are_checked() -> None:
    assert Coalesce.of(2.0) == Coalesce(2.0, 10.0, 20)
    assert Coalesce.of(100.0).max_wait == 300.0
    for args in ((0,), (2.0, 1.0), (2.0, None, 1), (2.0, None, 101), (301,), (2.0, 301)):
        with pytest.raises(ValueError):
            Coalesce.of(*args)  # type: ignore[arg-type]
    bot = DefaultFacade()
    with pytest.raises(ValueError):
        bot.on("message", lambda burst: None, max_count=5)  # type: ignore[call-overload]
    bot.on("message", lambda burst: None, coalesce=2.0)
    with pytest.raises(ValueError):
        bot.on("message", lambda update: None)  # coalesced alike, or none


def test_the_state_holds_json_only_is_capped_and_finds_its_changes() -> None:
    state = UserState.from_json(b'{"cart":[1]}')
    assert not state.changed
    state["cart"].append(2)  # a change in place is found
    assert state.changed and state.document() == b'{"cart":[1,2]}'
    with pytest.raises(TypeError):
        state["when"] = {1, 2}
    with pytest.raises(TypeError):
        state[1] = "x"  # type: ignore[index]
    state["big"] = "x" * MAX_STATE_BYTES
    with pytest.raises(StateTooLarge):
        state.document()
    state.clear()
    assert state.changed and state.document() is None
    assert "cart" not in repr(UserState({"cart": "secret"}))
