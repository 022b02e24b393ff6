"""Per-user order of the handler runtime over a real ``svc serve``, on SQLite and PostgreSQL.

Deliveries of several users, interleaved within a delivery and across deliveries,
reach the handler (``_handlers.BOT``) one at a time per user in the order svc
recorded them (payload order, then arrival order), while different users run side
by side up to ``--handler-concurrency 2``: the first two users' handlers wait for
each other (``meet``), which only two runs in flight at once can satisfy, and no
more than two are ever in flight. A run that fails holds its user's later updates
back until its retry succeeds.
"""

from __future__ import annotations

import pytest

from ._handlers import StoreBot, check_user_order, deliver, interleaved, run_to_the_end
from .conftest import LONG

pytestmark = pytest.mark.slow

USERS = ["16505550011", "16505550012", "16505550013", "16505550014"]
PER_USER = 25 if LONG else 6


@pytest.mark.parametrize(
    "backend", ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
)
def test_each_users_updates_run_one_at_a_time_in_recorded_order_and_users_run_in_parallel(
    backend: str, store_bot: StoreBot
) -> None:
    bot = store_bot
    a, b = USERS[:2]
    lead = [
        (a, "wamid.meetA", "meet-p-2"),
        (b, "wamid.meetB", "meet-p-2"),
        (a, "wamid.failA", "fail,sleep-0.02"),
    ]
    deliveries, expected = interleaved(USERS, PER_USER, lead=lead)
    served = bot.serve("--handler-concurrency", "2", "--handler-timeout", "30")
    for messages in deliveries:
        deliver(served, bot, *messages)

    every = [message_id for ids in expected.values() for message_id in ids]
    run_to_the_end(bot, every)
    assert served.stop() == 0
    events = bot.events()

    most = check_user_order(events, expected)
    assert most == 2  # two users in flight at once, never more than --handler-concurrency
    met = {e.message_id for e in events if e.what == "met"}
    assert met == {"wamid.meetA", "wamid.meetB"}
    assert [e.what for e in events if e.message_id == "wamid.failA"] == [
        "start",
        "fail",
        "start",
        "end",
    ]
    print(
        f"inbox order {backend}: users={len(USERS)} updates={len(every)} "
        f"deliveries={len(deliveries)} most_in_flight={most}"
    )
