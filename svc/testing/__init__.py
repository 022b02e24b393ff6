"""``svc.testing``: test your bot as its users would talk to it, in process and in virtual time.

``async with BotTest(bot) as chat:`` serves the bot with ``create_app`` over a capturing
dry-run transport and runs its handler runtime in the test's task; ``chat.user(...)``
scripts a user whose every action is a signed delivery through the webhook path, and
``await user.next_message()`` reads the bot's answer. Run the tests under pytest-trio's
``autojump_clock`` (trio's ``MockClock(autojump_threshold=0)``): waits, bursts and
retries then take no real time (``docs/testing.md``).
"""

from ._chat import DEFAULT_START as DEFAULT_START
from ._chat import SETTLE_LIMIT as SETTLE_LIMIT
from ._chat import BotTest as BotTest
from ._chat import ScriptedUser as ScriptedUser
from ._held import HeldStore as HeldStore
from ._messages import BotMessage as BotMessage
from ._messages import Choice as Choice

__all__ = [
    "DEFAULT_START",
    "SETTLE_LIMIT",
    "BotMessage",
    "BotTest",
    "Choice",
    "HeldStore",
    "ScriptedUser",
]
