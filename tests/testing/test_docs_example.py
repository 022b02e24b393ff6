"""``docs/testing.md``: every python example runs as written, its test functions included."""

from __future__ import annotations

import trio.testing

from tests._support import doc_example


async def test_the_first_example_passes(autojump_clock: trio.testing.MockClock) -> None:
    namespace = doc_example("testing.md", "testing", "first")
    await namespace["test_the_bot_answers"](autojump_clock)


async def test_the_conversation_example_passes(autojump_clock: trio.testing.MockClock) -> None:
    namespace = doc_example("testing.md", "testing", "conversation")
    await namespace["test_a_conversation"](autojump_clock)
    assert trio.current_time() >= 300  # the wait's timeout passed, in virtual time
