"""The handler runtime's promises (``docs/handlers.md``), each over a real ``svc serve --app``.

One test per promise, named for its rule. Each drives real processes (the serve
command, and the ``svc inbox`` commands an operator runs) and judges only what the
user code of ``_promises.BOT`` noted (its runs, its ``ctx.state`` counter, its waits),
what the fake Graph got, the service's log and the ``svc inbox`` listing; a store's
promise holds on a SQLite file and on PostgreSQL alike.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from pathlib import Path

import httpx
import pytest

from tests._support import Captured, FakeGraph, ServeProcess

from ._promises import (
    PromiseBot,
    click,
    deliver,
    overlapping,
    post,
    promise_bot,
    seen_within,
    sent_texts,
    text,
)
from .conftest import in_threads, serve_database, serve_live, wait_until

pytestmark = pytest.mark.slow

BACKENDS = ["sqlite", pytest.param("postgres", marks=pytest.mark.postgres)]
PHONE = "16505550071"
BSUID = "US.13491208655302741918"
TIMEOUT = 1
"""``--handler-timeout`` of the tests that crash or overrun a run: a lease of 6.5 s, so a
lapsed claim shows within a test (the others hold runs open for seconds: 30)."""


@pytest.fixture
def bot(
    backend: str,
    tmp_path: Path,
    graph: FakeGraph,
    captured: Captured,
    request: pytest.FixtureRequest,
) -> PromiseBot:
    db, env = serve_database(backend, request) if backend != "memory" else ([], {})
    return promise_bot(tmp_path, graph.url, captured, db, env)


def _serve(
    captured: Captured,
    serving: list[ServeProcess],
    bot: PromiseBot,
    *flags: str,
    app: str = "bot:bot",
    timeout: int = 30,
) -> ServeProcess:
    args = (*bot.db, "--app", app, "--handler-timeout", str(timeout), *flags)
    return serve_live(captured, serving, bot.project, *args, env=bot.env)


def _replies_to(graph: FakeGraph, message_id: str) -> int:
    return sent_texts([r.body for r in graph.sends()]).count(f"reply to {message_id}")


def _state_after(served: ServeProcess, bot: PromiseBot, probe: str) -> int:
    """The ``n`` of the user's ``ctx.state`` as a new run of the user reads it."""
    deliver(served, bot, text(PHONE, probe, "count"))
    (start,) = bot.wait_for("start", probe)
    bot.wait_for("end", probe)
    return int(start.fields["n"])


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_retried_dead_letter_waits_until_its_queue_runs_nothing(
    bot: PromiseBot, graph: FakeGraph, captured: Captured, serving: list[ServeProcess]
) -> None:
    """At most one run of a queue is in flight at any time, under any operator command, and
    the user's state counts every run."""
    served = _serve(captured, serving, bot, "--handler-max-attempts", "1")
    deliver(served, bot, text(PHONE, "wamid.P1", "fail"), text(PHONE, "wamid.P2", "hold"))
    bot.wait_for("start", "wamid.P2")  # P1 failed once: a dead letter
    (dead,) = bot.inbox(captured, "list", "--dead")
    bot.inbox(captured, "retry", dead["id"])
    seen_within(lambda: len(bot.events("start", "wamid.P1")) == 2, 3)  # P2 still runs
    bot.release("wamid.P2")
    bot.wait_for("end", "wamid.P2")
    bot.wait_for("end", "wamid.P1")

    assert overlapping(bot.events()) == []
    assert _state_after(served, bot, "wamid.P3") == 2  # P2's run and P1's rerun


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_drop_of_the_running_head_fences_its_run_before_the_next_item_starts(
    bot: PromiseBot, graph: FakeGraph, captured: Captured, serving: list[ServeProcess]
) -> None:
    """A drop of a running item cancels that run and fences it (no completion, state write or
    send after the drop returned), and the queue's next item starts only after that."""
    served = _serve(captured, serving, bot)
    deliver(served, bot, text(PHONE, "wamid.D1", "hold,reply"), text(PHONE, "wamid.D2", "reply"))
    bot.wait_for("start", "wamid.D1")
    first = bot.inbox(captured, "list")[0]
    assert first["status"] == "running"
    drop_asked = time.time()
    bot.inbox(captured, "drop", first["id"])
    bot.release("wamid.D1")  # a run the drop did not stop goes on now
    bot.wait_for("end", "wamid.D2")
    seen_within(lambda: _replies_to(graph, "wamid.D1") > 0, 2)

    assert _replies_to(graph, "wamid.D1") == 0
    assert bot.events("end", "wamid.D1") == []
    # D1 was held until after the drop returned, so D2 starting at all means D1's run was
    # stopped first (one run per queue); it started only once the drop was asked.
    (next_start,) = bot.events("start", "wamid.D2")
    assert next_start.t > drop_asked
    assert _state_after(served, bot, "wamid.D3") == 1  # D2's write only


@pytest.mark.parametrize("backend", [*BACKENDS, "memory"])
def test_one_user_named_by_phone_then_by_phone_and_bsuid_has_one_queue_and_one_state(
    bot: PromiseBot, graph: FakeGraph, captured: Captured, serving: list[ServeProcess]
) -> None:
    """Updates of identifiers svc knows are one user share one queue and one ``ctx.state``, in
    recorded order, including updates already waiting."""
    served = _serve(captured, serving, bot)
    ids = ["wamid.U1", "wamid.U2", "wamid.U3", "wamid.U4"]
    for number, message_id in enumerate(ids):
        deliver(served, bot, text(PHONE, message_id, "hold", bsuid=BSUID if number % 2 else None))
    bot.wait_for("start", "wamid.U1")
    seen_within(lambda: len(bot.events("start")) > 1, 2)  # another queue's head would start
    for message_id in ids:
        bot.release(message_id)
    wait_until(lambda: {e.mid for e in bot.events("end")} >= set(ids), "every run to end")

    events = bot.events()
    assert overlapping(events) == []
    assert [e.mid for e in events if e.what == "start"] == ids
    assert [e.fields["n"] for e in events if e.what == "end"] == [1, 2, 3, 4]


@pytest.mark.parametrize("backend", [*BACKENDS, "memory"])
def test_a_wait_started_on_a_phone_only_message_gets_the_answer_named_by_phone_and_bsuid(
    bot: PromiseBot, graph: FakeGraph, captured: Captured, serving: list[ServeProcess]
) -> None:
    """A user's answer reaches the wait of that user's run, whichever known identifiers name
    the user in it."""
    served = _serve(captured, serving, bot)
    deliver(served, bot, text(PHONE, "wamid.W1", "ask"))
    bot.wait_for("waiting", "wamid.W1")
    deliver(served, bot, text(PHONE, "wamid.W2", "Ann", bsuid=BSUID))
    wait_until(
        lambda: bool(bot.events("got", "wamid.W1") or bot.events("timedout", "wamid.W1")),
        "the wait to end",
    )

    assert [e.fields["id"] for e in bot.events("got", "wamid.W1")] == ["wamid.W2"]
    assert bot.events("start", "wamid.W2") == []  # consumed: it never ran on its own


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_runs_deadline_holds_while_the_handler_only_awaits_sends(
    bot: PromiseBot, graph: FakeGraph, captured: Captured, serving: list[ServeProcess]
) -> None:
    """A run's deadline holds whatever the handler awaits: it ends as a timeout at its next
    checkpoint and is retried, and one item never runs twice at once."""
    served = _serve(captured, serving, bot, "--handler-max-attempts", "2", timeout=TIMEOUT)
    deliver(served, bot, text(PHONE, "wamid.F1", "flood"))  # replies for 8 s, the first time
    (start,) = bot.wait_for("start", "wamid.F1")
    sends, last_growth = len(graph.sends()), start.t
    while time.time() < start.t + TIMEOUT + 3:
        if len(graph.sends()) > sends:
            sends, last_growth = len(graph.sends()), time.time()
        time.sleep(0.02)
    bot.wait_for("start", "wamid.F1", count=2)
    bot.wait_for("end", "wamid.F1")

    assert last_growth - start.t < TIMEOUT + 1, f"sends went on {last_growth - start.t:.1f} s"
    runs = [e.run for e in bot.events("start", "wamid.F1")]
    assert [e.run for e in bot.events("end", "wamid.F1")] == [runs[1]]  # the first was cut
    assert overlapping(bot.events()) == []


@pytest.mark.parametrize("backend", ["memory"])
def test_without_a_store_a_redelivery_runs_nothing(
    bot: PromiseBot, graph: FakeGraph, captured: Captured, serving: list[ServeProcess]
) -> None:
    """Without a store, a redelivery of an update this process already accepted runs
    nothing: it is answered 200 as a duplicate."""
    served = _serve(captured, serving, bot)
    again = [post(served, bot, text(PHONE, "wamid.R1", "reply")) for _ in range(3)]
    at_once = in_threads(20, lambda _: post(served, bot, text("16505550072", "wamid.R2", "reply")))
    answers = [*again, *at_once]
    assert [a.status_code for a in answers] == [200] * 23
    dispatched = sum(a.json()["dispatched"] for a in answers)
    wait_until(lambda: len(bot.events("end")) >= dispatched, "the dispatched runs to end")
    seen_within(lambda: len(bot.events("end")) > dispatched, 1)

    assert Counter(e.mid for e in bot.events("start")) == {"wamid.R1": 1, "wamid.R2": 1}
    assert Counter(sent_texts([r.body for r in graph.sends()])) == {
        "reply to wamid.R1": 1,
        "reply to wamid.R2": 1,
    }
    assert [a.json()["dispatched"] for a in again] == [1, 0, 0]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_rerun_of_a_coalesced_wait_gathers_the_burst_of_its_first_run(
    bot: PromiseBot, graph: FakeGraph, captured: Captured, serving: list[ServeProcess]
) -> None:
    """A rerun after a crash reproduces the first run's burst, so its transcript equals that
    of a run without a crash."""
    first = _serve(captured, serving, bot, app="bot:burst", timeout=TIMEOUT)
    deliver(first, bot, text(PHONE, "wamid.O1", "order"))
    bot.wait_for("waiting", "wamid.O1")
    first.kill9()  # at the wait
    again = _serve(captured, serving, bot, app="bot:burst", timeout=TIMEOUT)
    deliver(again, bot, text(PHONE, "wamid.O2", "Ann"))
    deliver(again, bot, click(PHONE, "wamid.O3", "yes"))
    # Meanwhile another user, never crashed: the transcript the rule compares with.
    other = "16505550073"
    deliver(again, bot, text(other, "wamid.C1", "order"))
    bot.wait_for("waiting", "wamid.C1")
    deliver(again, bot, text(other, "wamid.C2", "Ann"))
    deliver(again, bot, click(other, "wamid.C3", "yes"))
    bot.wait_for("clicked", "wamid.C1")
    bot.wait_for("burst", "wamid.O1", count=2, timeout=60)  # the rerun, once the lease lapsed
    seen_within(lambda: bool(bot.events("clicked", "wamid.O1")), 5)

    def transcript(message_id: str) -> list[tuple[str, object]]:
        return [
            (e.what, e.fields.get("texts") or e.fields.get("text") or e.fields.get("choice"))
            for e in bot.events(mid=message_id)
            if e.what in ("burst", "got", "clicked")
        ]

    control = transcript("wamid.C1")
    assert control == [("burst", ["order"]), ("got", "Ann"), ("clicked", "yes")]
    rerun = transcript("wamid.O1")[1:]  # the first run was killed at its wait
    assert rerun == control
    assert bot.events("burst", "wamid.O2") == []


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_state_too_large_dead_letters_at_once_with_its_reason(
    bot: PromiseBot, graph: FakeGraph, captured: Captured, serving: list[ServeProcess]
) -> None:
    """A failure no retry can cure (a state over 16 KiB) dead-letters at once with its reason,
    and the queue's next item runs promptly."""
    served = _serve(captured, serving, bot)
    deliver(served, bot, text(PHONE, "wamid.S1", "big"), text(PHONE, "wamid.S2", "count"))
    bot.wait_for("end", "wamid.S2", timeout=30)

    starts = bot.events("start")
    assert [e.mid for e in starts] == ["wamid.S1", "wamid.S2"]  # one run of S1, not five
    assert [(d["kind"], d["lastError"]) for d in bot.inbox(captured, "list", "--dead")] == [
        ("message", "state_too_large")
    ]
    assert starts[1].t - starts[0].t < 3


@pytest.mark.parametrize("backend", BACKENDS)
def test_an_update_a_wait_consumed_is_listed_as_consumed_not_pending(
    bot: PromiseBot, graph: FakeGraph, captured: Captured, serving: list[ServeProcess]
) -> None:
    """An update a running wait took has its own state in ``svc inbox list`` until the run's
    completion, apart from unstarted work."""
    served = _serve(captured, serving, bot)
    deliver(served, bot, text(PHONE, "wamid.L1", "ask,hold"))
    bot.wait_for("waiting", "wamid.L1")
    deliver(served, bot, text(PHONE, "wamid.L2", "Ann"))
    bot.wait_for("got", "wamid.L1")
    listed = bot.inbox(captured, "list")
    bot.release("wamid.L1")
    bot.wait_for("end", "wamid.L1")

    assert [row["status"] for row in listed] == ["running", "consumed"]


@pytest.mark.parametrize("backend", BACKENDS)
def test_a_replayed_send_is_logged_as_replayed(
    bot: PromiseBot, graph: FakeGraph, captured: Captured, serving: list[ServeProcess]
) -> None:
    """The rerun's send that gets the first reply's answer back by its key is logged as
    replayed, never as a second send."""
    first = _serve(captured, serving, bot, timeout=TIMEOUT)
    deliver(first, bot, text(PHONE, "wamid.K1", "reply,die"))
    assert first.process.wait(timeout=30) == -9  # after the reply, before the completion
    first.close()
    again = _serve(captured, serving, bot, timeout=TIMEOUT)
    bot.wait_for("end", "wamid.K1")
    assert again.stop() == 0

    (reply,) = {e.fields["id"] for e in bot.events("sent", "wamid.K1")}
    assert len(graph.sends()) == 1
    assert f"handler reply sent type=text message_id={reply}" in first.lines
    logged = [line for line in again.lines if re.match(r"^handler reply (sent|replayed) ", line)]
    assert logged == [f"handler reply replayed type=text message_id={reply}"]


CRASH_POINTS = [
    # (fault, the deliveries the user makes before the crash)
    ("kill-at-run-start", ("order",)),  # before the burst is gathered
    ("kill-at-wait-start", ("order",)),  # after the gather and the question, at the wait
    ("kill-at-wait-end", ("order", "Ann")),  # the wait took the answer; before the next send
    ("kill-after-handler", ("order", "Ann", "yes")),  # every send made; before the completion
]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize(("fault", "before"), CRASH_POINTS, ids=[c[0] for c in CRASH_POINTS])
def test_a_crash_at_each_point_of_a_coalesced_conversation_leaves_the_transcript_whole(
    bot: PromiseBot,
    graph: FakeGraph,
    captured: Captured,
    serving: list[ServeProcess],
    fault: str,
    before: tuple[str, ...],
) -> None:
    """Killed at any step of a run (before the gather, at a wait, after a wait, after the last
    send), the rerun's transcript equals that of a run without a crash, and the user got each
    reply once."""
    env = {**bot.env, "SVC_TEST_FAULT": fault}
    args = (*bot.db, "--app", "bot:burst", "--handler-timeout", str(TIMEOUT))
    crashing = serve_live(captured, serving, bot.project, *args, env=env)
    steps = {
        "order": text(PHONE, "wamid.K1", "order"),
        "Ann": text(PHONE, "wamid.K2", "Ann"),
        "yes": click(PHONE, "wamid.K3", "yes"),
    }
    unanswered: list[str] = []
    for name in before:
        if name != "order":
            bot.wait_for("waiting", "wamid.K1")
        if name == "yes":
            bot.wait_for("got", "wamid.K1")
        try:
            deliver(crashing, bot, steps[name])
        except httpx.TransportError:
            # Killed at the run's start before its answer reached the client: recorded,
            # unanswered; the platform redelivers it, a duplicate then.
            assert fault == "kill-at-run-start"
            unanswered.append(name)
        if name == "order":
            time.sleep(1.5)  # past the burst window: "Ann" is never part of the burst
    crashing.process.wait(timeout=30)  # the fault killed it
    assert crashing.process.returncode == -9
    again = _serve(captured, serving, bot, app="bot:burst", timeout=TIMEOUT)
    for name in unanswered:
        redelivered = post(again, bot, steps[name])
        assert redelivered.status_code == 200, redelivered.text
        assert redelivered.json()["dispatched"] == 0  # recorded before the crash: a duplicate
    for name in ("Ann", "yes"):
        if name not in before:
            bot.wait_for("got" if name == "yes" else "waiting", "wamid.K1", timeout=60)
            deliver(again, bot, steps[name])
    bot.wait_for("clicked", "wamid.K1", count=2 if "yes" in before else 1, timeout=60)
    rerun = bot.events("clicked", "wamid.K1")[-1].pid
    assert rerun == again.process.pid  # the restarted process ran it to the end

    def transcript() -> list[tuple[str, object]]:
        return [
            (e.what, e.fields.get("texts") or e.fields.get("text") or e.fields.get("choice"))
            for e in bot.events(mid="wamid.K1")
            if e.what in ("burst", "got", "clicked") and e.pid == rerun
        ]

    assert transcript() == [("burst", ["order"]), ("got", "Ann"), ("clicked", "yes")]
    seen_within(lambda: len(graph.sends()) > 3, 3)
    assert Counter(sent_texts([r.body for r in graph.sends()])) == {
        "Your name?": 1,
        "Confirm, Ann?": 1,
        "Ordered for Ann: yes": 1,
    }
    assert bot.events("burst", "wamid.K2") == []  # the answer never ran on its own
