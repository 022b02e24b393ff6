"""Sans-IO check of the webhook GET verification (hub.mode, hub.verify_token, hub.challenge)."""

from __future__ import annotations

from collections.abc import Mapping

from svc.crypto import constant_time_equal

from ._errors import InvalidModeError, InvalidVerifyTokenError, MissingChallengeError

__all__ = ["verify_challenge"]


def verify_challenge(query: Mapping[str, str], *, verify_token: str) -> str:
    """Return ``hub.challenge`` verbatim when the request is a valid subscription check.

    Checks in order: ``hub.mode`` is ``subscribe`` (``invalid_mode``), a
    non-empty challenge is present (``missing_challenge``), and the token
    matches in constant time (``invalid_verify_token``). No error holds the
    challenge or either token.
    """
    if not isinstance(verify_token, str) or not verify_token:
        raise ValueError("verify_token must be a non-empty string")
    if query.get("hub.mode") != "subscribe":
        raise InvalidModeError
    challenge = query.get("hub.challenge")
    if not isinstance(challenge, str) or not challenge:
        raise MissingChallengeError
    supplied = query.get("hub.verify_token")
    if not isinstance(supplied, str) or not constant_time_equal(
        supplied.encode("utf-8", "surrogatepass"), verify_token.encode("utf-8", "surrogatepass")
    ):
        raise InvalidVerifyTokenError
    return challenge
