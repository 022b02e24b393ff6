"""GET verification: hub.mode, hub.challenge, hub.verify_token, in that order."""

from __future__ import annotations

import pytest

from svc.webhook import (
    ChallengeError,
    InvalidModeError,
    InvalidVerifyTokenError,
    MissingChallengeError,
    verify_challenge,
)

TOKEN = "verify-token-for-tests"
CHALLENGE = "1158201444"


def query(**overrides: str | None) -> dict[str, str]:
    base: dict[str, str | None] = {
        "hub.mode": "subscribe",
        "hub.verify_token": TOKEN,
        "hub.challenge": CHALLENGE,
    }
    base.update(overrides)
    return {k: v for k, v in base.items() if v is not None}


def test_success_returns_the_challenge_verbatim() -> None:
    assert verify_challenge(query(), verify_token=TOKEN) == CHALLENGE
    odd = "  a challenge with spaces & <b>  "
    assert verify_challenge(query(**{"hub.challenge": odd}), verify_token=TOKEN) == odd


@pytest.mark.parametrize(
    ("overrides", "error", "code", "status"),
    [
        ({"hub.mode": None}, InvalidModeError, "invalid_mode", 400),
        ({"hub.mode": "unsubscribe"}, InvalidModeError, "invalid_mode", 400),
        # mode is checked first, even when everything else is wrong too
        (
            {"hub.mode": "x", "hub.verify_token": "bad", "hub.challenge": None},
            InvalidModeError,
            "invalid_mode",
            400,
        ),
        ({"hub.challenge": None}, MissingChallengeError, "missing_challenge", 400),
        ({"hub.challenge": ""}, MissingChallengeError, "missing_challenge", 400),
        (
            {"hub.challenge": None, "hub.verify_token": "bad"},
            MissingChallengeError,
            "missing_challenge",
            400,
        ),
        ({"hub.verify_token": "wrong"}, InvalidVerifyTokenError, "invalid_verify_token", 403),
        ({"hub.verify_token": None}, InvalidVerifyTokenError, "invalid_verify_token", 403),
        ({"hub.verify_token": TOKEN + "x"}, InvalidVerifyTokenError, "invalid_verify_token", 403),
    ],
)
def test_refusals(
    overrides: dict[str, str | None], error: type[ChallengeError], code: str, status: int
) -> None:
    with pytest.raises(error) as info:
        verify_challenge(query(**overrides), verify_token=TOKEN)
    assert (info.value.code, info.value.http_status) == (code, status)
    rendered = str(info.value) + repr(info.value) + str(info.value.args)
    assert CHALLENGE not in rendered
    assert TOKEN not in rendered


def test_empty_configured_token_is_refused() -> None:
    with pytest.raises(ValueError, match="verify_token"):
        verify_challenge(query(), verify_token="")
