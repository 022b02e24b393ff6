"""The dev page in a real browser: Playwright drives Debian's Chromium against ``svc dev``.

Every answer the page draws was sent by the real handler runtime through the signed
webhook path of a ``svc dev`` child process. Without ``/usr/bin/chromium`` these tests
skip; with ``CI=true`` a missing browser fails them instead.
"""

from __future__ import annotations

import dataclasses
import functools
import hashlib
import itertools
import json
import os
import queue
import re
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
import trio

from svc.cli._dev import dev_plan, dev_session, open_dev_folder
from svc.cli._runtime import serve_once
from svc.dev import DevSession

from .conftest import BOT, DevProcess, start_dev
from .test_uploads import png

pytestmark = pytest.mark.slow

CHROMIUM = Path("/usr/bin/chromium")
SCREENSHOT = Path(__file__).parents[2] / "docs" / "dev-page.png"
TIMEOUT_MS = 15_000
_PHONES = itertools.count(16505550100)


def _require_browser() -> Any:
    missing = None
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:
        missing = "playwright is not installed (pip install -e '.[dev]')"
    else:
        if not CHROMIUM.exists():
            missing = f"no Chromium at {CHROMIUM} (apt-get install chromium)"
    if missing is not None:
        if os.environ.get("CI") == "true":
            pytest.fail(f"CI needs the browser tests: {missing}")
        pytest.skip(missing)
    return sync_playwright


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    sync_playwright = _require_browser()
    args = ["--no-sandbox"] if os.geteuid() == 0 else []
    with sync_playwright() as playwright:
        launched = playwright.chromium.launch(executable_path=str(CHROMIUM), args=args)
        yield launched
        launched.close()


@pytest.fixture(scope="module")
def dev(tmp_path_factory: pytest.TempPathFactory) -> Iterator[DevProcess]:
    running = start_dev(
        tmp_path_factory.mktemp("devbot"), "--no-reload", "--handler-max-attempts", "1"
    )
    yield running
    running.process.stop()


@pytest.fixture
def page(browser: Any, dev: DevProcess) -> Iterator[Any]:
    context = browser.new_context(viewport={"width": 1400, "height": 860})
    opened = context.new_page()
    opened.set_default_timeout(TIMEOUT_MS)
    opened.goto(dev.url)
    opened.wait_for_selector("#link[data-state='live']")
    yield opened
    context.close()


def add_user(page: Any, name: str, *, bsuid: str | None = None) -> str:
    """Add a user on the page and open their chat; returns the user's key."""
    page.fill("#user-name", name)
    if bsuid is None:
        key = str(next(_PHONES))
        page.fill("#user-phone", key)
    else:
        key = bsuid
        page.select_option("#user-by", "bsuid")
        page.fill("#user-bsuid", bsuid)
        page.fill("#user-username", name.lower())
    page.click("#add-user-button")
    page.wait_for_selector(f".user.on[data-key='{key}']")
    return key


def say(page: Any, text: str) -> None:
    page.fill("#text", text)
    page.click("#send")


def chat(page: Any, key: str) -> Any:
    return page.locator(f".chat-log[data-chat='{key}']")


def bot_bubble(page: Any, key: str, text: str) -> Any:
    """The bot's bubble in ``key``'s chat showing ``text`` (waits until it is drawn)."""
    found = chat(page, key).locator(".bubble.out", has_text=text).last
    found.wait_for()
    return found


def test_two_users_chat_and_tap_a_button(page: Any, dev: DevProcess) -> None:
    kerry = add_user(page, "Kerry")
    say(page, "hello")
    offer = bot_bubble(page, kerry, "Tea or coffee?")
    assert offer.locator("b").inner_text() == "hello"  # *hello* drawn bold
    offer.locator(".reply-button", has_text="Tea").click()
    answer = bot_bubble(page, kerry, "You chose Tea")
    # Kerry's chat is open: the platform's statuses come back up to read.
    answer.locator(".ticks[data-status='read']").wait_for()
    # The tap went out as a quoted button_reply delivery, drawn on the user's side.
    assert chat(page, kerry).locator(".bubble.in .tapped", has_text="Tea").count() == 1

    sheena = add_user(page, "Sheena", bsuid="US.13491208655302741918")
    say(page, "bonjour")
    bot_bubble(page, sheena, "You said bonjour")
    bot_bubble(page, sheena, "Tea or coffee?").locator(".reply-button", has_text="Coffee").click()
    bot_bubble(page, sheena, "You chose Coffee")
    assert chat(page, kerry).is_hidden()
    assert "bonjour" not in chat(page, kerry).inner_text()
    page.click(f".user[data-key='{kerry}']")
    assert chat(page, kerry).is_visible()
    assert "You chose Tea" in chat(page, kerry).inner_text()

    # The inspector shows each delivery with the webhook's answer and each send.
    log = page.locator("#log")
    assert log.locator("summary", has_text=re.compile(r"delivery text → 200")).count() >= 2
    assert log.locator("summary", has_text=re.compile(r"send interactive → 200")).count() >= 2
    page.locator("#log summary", has_text="delivery text").first.click()
    assert '"signature' not in log.inner_text()  # raw JSON of the delivery, never the secret
    assert '"body": "bonjour"' in log.inner_text()
    page.screenshot(path=str(dev.folder / "dev-page.png"))
    if os.environ.get("SVC_WRITE_SCREENSHOT") == "1":
        page.screenshot(path=str(SCREENSHOT))


def test_a_conversation_waits_for_the_user_s_reply(page: Any) -> None:
    user = add_user(page, "Ada")
    say(page, "order")
    bot_bubble(page, user, "Your name?")
    say(page, "Ada Lovelace")
    bot_bubble(page, user, "Thanks, Ada Lovelace: order placed.")


def test_a_bot_typing_is_drawn_until_its_reply(page: Any) -> None:
    user = add_user(page, "Thinker")
    say(page, "think")
    page.locator("#typing").wait_for(state="visible")  # ctx.typing(): read mark + typing
    mine = chat(page, user).locator(".bubble.in", has_text="think")
    mine.locator(".ticks[data-status='read']").wait_for()
    page.locator("#log summary", has_text="read mark + typing").first.wait_for()
    say(page, "go on")
    bot_bubble(page, user, "Done thinking")
    assert page.locator("#typing").is_hidden()  # the reply hides it


def _check_text(page: Any, bubble: Any) -> None:
    assert bubble.locator("b").inner_text() == "bold"
    assert bubble.locator("i").inner_text() == "italic"
    assert bubble.locator("s").inner_text() == "struck"
    assert bubble.locator("code").inner_text() == "mono"


def _check_list(page: Any, bubble: Any) -> None:
    bubble.locator(".list-open", has_text="Slots").click()
    bubble.locator(".list-row", has_text="09:30").click()
    page.locator(".bubble.out", has_text="You chose 09:30").wait_for()


def _check_cta(page: Any, bubble: Any) -> None:
    link = bubble.locator("a.cta")
    assert link.get_attribute("href") == "https://example.com/menu"
    assert "Open menu" in link.inner_text()


def _check_image(page: Any, bubble: Any) -> None:
    assert "link https://example.com/cat.jpg" in bubble.inner_text()
    assert "A cat picture" in bubble.inner_text()


def _check_document(page: Any, bubble: Any) -> None:
    assert "media id 1013859600285441" in bubble.inner_text()
    assert "invoice.pdf" in bubble.inner_text()


def _check_location(page: Any, bubble: Any) -> None:
    assert "Main office 37.4833, -122.1489" in bubble.inner_text()
    assert "1 Hacker Way" in bubble.inner_text()


def _check_contacts(page: Any, bubble: Any) -> None:
    assert "Barbara Johnson" in bubble.inner_text()
    assert "+1 940 555 1234" in bubble.inner_text()


def _check_template(page: Any, bubble: Any) -> None:
    assert "Template order_update (en_US)" in bubble.inner_text()
    assert "body: Order 42 shipped" in bubble.inner_text()
    bubble.locator(".quick-reply", has_text="TRACK").click()
    page.locator(".bubble.out", has_text="Quick reply TRACK").wait_for()


def _check_flow(page: Any, bubble: Any) -> None:
    bubble.locator(".flow-open", has_text="Give a rating").click()
    page.fill("#flow-json", '{"flow_token": "rating-7", "stars": 5}')
    page.click("#flow-send")
    answered = "Flow answered: {'flow_token': 'rating-7', 'stars': 5}"
    page.locator(".bubble.out", has_text=answered).wait_for()


SHOWN: dict[str, tuple[str, Callable[[Any, Any], None]]] = {
    "text": ("Plain", _check_text),
    "list": ("Pick a slot", _check_list),
    "cta": ("Read the menu", _check_cta),
    "image": ("A cat picture", _check_image),
    "document": ("invoice.pdf", _check_document),
    "location": ("Main office", _check_location),
    "contacts": ("Barbara Johnson", _check_contacts),
    "template": ("Template order_update", _check_template),
    "flow": ("Rate us", _check_flow),
}


@pytest.mark.parametrize("kind", sorted(SHOWN))
def test_each_kind_of_message_is_drawn(page: Any, kind: str) -> None:
    user = add_user(page, f"Viewer {kind}")
    say(page, f"show {kind}")
    text, check = SHOWN[kind]
    bubble = bot_bubble(page, user, text)
    drawn_as = "interactive" if kind in ("list", "cta", "flow") else kind
    assert bubble.get_attribute("data-kind") == drawn_as
    check(page, bubble)


def test_reactions_read_marks_and_typing(page: Any) -> None:
    user = add_user(page, "Reactor")
    say(page, "show reaction")
    mine = chat(page, user).locator(".bubble.in", has_text="show reaction")
    mine.locator(".reaction[data-from='bot']", has_text="🎉").wait_for()
    say(page, "show read")
    read = chat(page, user).locator(".bubble.in", has_text="show read")
    read.locator(".ticks[data-status='read']").wait_for()
    page.locator("#log summary", has_text="read mark + typing").first.wait_for()


def test_the_user_sends_a_location_a_contact_a_quote_and_a_reaction(page: Any) -> None:
    user = add_user(page, "Sender")
    page.click("#attach")
    page.click("#send-location")
    bot_bubble(page, user, "Got a location")
    page.click("#attach")
    page.fill("#contact-name", "Grace Hopper")
    page.click("#send-contact")
    bot_bubble(page, user, "Got a contacts")
    assert "Grace Hopper" in chat(page, user).locator(".bubble.in").last.inner_text()
    target = bot_bubble(page, user, "Got a location")
    target.hover()
    target.locator("button.react").click()
    page.locator("#panel button.emoji", has_text="👍").click()
    bot_bubble(page, user, "Thanks for the 👍")
    assert target.locator(".reaction[data-from='user']").inner_text() == "👍"
    target.hover()
    target.locator("button.quote").click()
    say(page, "about this")
    quoted = chat(page, user).locator(".bubble.in", has_text="about this")
    assert "Got a location" in quoted.locator(".quoted").inner_text()


def test_the_user_uploads_an_image_and_a_document(page: Any, tmp_path: Path) -> None:
    user = add_user(page, "Uploader")
    image = tmp_path / "red.png"
    image.write_bytes(png(4, 3))
    page.click("#attach")
    page.set_input_files("#upload-file", str(image))
    page.fill("#upload-caption", "A red square")
    page.click("#send-file")
    # The bot fetched it through ctx.download_media (GET /{media-id}, then its URL).
    digest = hashlib.sha256(image.read_bytes()).hexdigest()
    answer = bot_bubble(page, user, f"sha256 {digest}")
    assert f"Got image: {image.stat().st_size} bytes, image/png" in answer.inner_text()
    mine = chat(page, user).locator(".bubble.in", has_text="A red square")
    thumbnail = mine.locator("img.thumbnail")
    assert thumbnail.evaluate("img => img.complete && img.naturalWidth") == 4
    document = tmp_path / "notes.txt"
    document.write_text("first line\n")
    page.click("#attach")
    page.set_input_files("#upload-file", str(document))
    page.click("#send-file")
    bot_bubble(page, user, "Got notes.txt: 11 bytes, text/plain")
    assert "notes.txt" in chat(page, user).locator(".bubble.in .filename").last.inner_text()


SIGNUP_FLOW = {
    "version": "7.0",
    "screens": [{
        "id": "SIGN_UP",
        "title": "Join the club",
        "terminal": True,
        "data": {"plans": {"type": "array", "__example__": [
            {"id": "basic", "title": "Basic"}, {"id": "gold", "title": "Gold"},
        ]}},
        "layout": {"type": "SingleColumnLayout", "children": [
            {"type": "TextHeading", "text": "Tell us about you"},
            {"type": "Form", "name": "form", "children": [
                {"type": "TextInput", "name": "name", "label": "Name", "required": True},
                {"type": "TextInput", "name": "age", "label": "Age", "input-type": "number"},
                {"type": "TextArea", "name": "about", "label": "About you"},
                {"type": "Dropdown", "name": "plan", "label": "Plan",
                 "data-source": "${data.plans}"},
                {"type": "RadioButtonsGroup", "name": "size", "label": "Cup size",
                 "data-source": [{"id": "s", "title": "Small"}, {"id": "m", "title": "Medium"}]},
                {"type": "CheckboxGroup", "name": "drinks", "label": "Drinks", "data-source": [
                    {"id": "tea", "title": "Tea"}, {"id": "coffee", "title": "Coffee"},
                    {"id": "juice", "title": "Juice"},
                ]},
                {"type": "DatePicker", "name": "birthday", "label": "Birthday"},
                {"type": "OptIn", "name": "terms", "label": "I accept the rules"},
                {"type": "Footer", "label": "Join",
                 "on-click-action": {"name": "complete", "payload": {}}},
            ]},
        ]},
    }],
}

RECEIPT_TEMPLATE = {
    "name": "order_receipt",
    "language": "en_US",
    "category": "UTILITY",
    "components": [
        {"type": "HEADER", "format": "TEXT", "text": "Order {{1}}"},
        {"type": "BODY", "text": "Hi {{1}}, your *{{2}}* are ready."},
        {"type": "FOOTER", "text": "Thanks for coming"},
        {"type": "BUTTONS", "buttons": [
            {"type": "QUICK_REPLY", "text": "All good"},
            {"type": "PHONE_NUMBER", "text": "Call us", "phone_number": "+15550783881"},
            {"type": "URL", "text": "See order", "url": "https://example.com/orders/{{1}}"},
        ]},
    ],
}


def _write(dev: DevProcess, relative: str, value: Any) -> None:
    path = dev.folder / ".svc-dev" / relative
    path.parent.mkdir(exist_ok=True)
    path.write_text(json.dumps(value))


def test_a_flow_with_its_json_is_drawn_as_a_form(page: Any, dev: DevProcess) -> None:
    _write(dev, "flows/signup.json", SIGNUP_FLOW)
    user = add_user(page, "Joiner")
    say(page, "show signup")
    bot_bubble(page, user, "Sign up for the club").locator(".flow-open", has_text="Sign up").click()
    form = page.locator("#flow-form[data-screen='SIGN_UP']")
    assert "Tell us about you" in form.inner_text()
    form.locator("[name='name']").fill("Kerry")
    form.locator("[name='age']").fill("31")
    form.locator("[name='about']").fill("Likes tea")
    form.locator("select[name='plan']").select_option("gold")
    form.locator("input[name='size'][value='m']").check()
    form.locator("input[name='drinks'][value='tea']").check()
    form.locator("input[name='drinks'][value='juice']").check()
    form.locator("[name='birthday']").fill("1990-05-17")
    form.locator("[name='terms']").check()
    form.locator("#flow-submit", has_text="Join").click()
    answered = (
        "Flow answered: {'name': 'Kerry', 'age': 31, 'about': 'Likes tea', 'plan': 'gold', "
        "'size': 'm', 'drinks': ['tea', 'juice'], 'birthday': '1990-05-17', 'terms': True, "
        "'flow_token': 'signup-1'}"
    )
    bot_bubble(page, user, answered)


def test_a_flow_without_its_json_keeps_the_response_textbox(page: Any) -> None:
    user = add_user(page, "Rater")
    say(page, "show flow")  # flows/1234567890.json does not exist
    bot_bubble(page, user, "Rate us").locator(".flow-open").click()
    assert page.locator("#flow-json").is_visible()
    assert page.locator("#flow-form").count() == 0


def test_a_template_with_its_definition_is_drawn_filled(page: Any, dev: DevProcess) -> None:
    _write(dev, "templates/order_receipt.json", [RECEIPT_TEMPLATE])
    user = add_user(page, "Receiver")
    say(page, "show receipt")
    bubble = bot_bubble(page, user, "Hi Kerry")
    assert bubble.locator(".header").inner_text() == "Order 42"
    assert bubble.locator(".body").inner_text() == "Hi Kerry, your 2 teas are ready."
    assert bubble.locator(".body b").inner_text() == "2 teas"
    assert bubble.locator(".footer").inner_text() == "Thanks for coming"
    assert bubble.locator("a.cta").get_attribute("href") == "https://example.com/orders/42"
    assert "Call us +15550783881" in bubble.inner_text()
    bubble.locator(".quick-reply", has_text="All good").click()
    bot_bubble(page, user, "Quick reply RECEIPT_OK")


def test_a_chosen_platform_error_fails_the_next_send(page: Any) -> None:
    user = add_user(page, "Late")
    page.select_option("#failure", "outside_window")
    say(page, "anyone there?")
    failed = chat(page, user).locator(".bubble.failed")
    failed.wait_for()
    assert "Not sent: 131047" in failed.inner_text()
    assert page.locator("#failure").input_value() == ""  # it fails one send only
    page.locator("#log summary", has_text="FAILED 400 (131047)").wait_for()


def test_a_dead_letter_is_shown_and_dropped(page: Any) -> None:
    add_user(page, "Breaker")
    say(page, "fail")
    page.click(".tabs button[data-tab='dead']")
    item = page.locator(".dead-item", has_text="message")
    for _ in range(50):
        page.click("#dead-refresh")
        if item.count():
            break
        page.wait_for_timeout(200)
    assert item.count() >= 1
    count = item.count()
    from playwright.sync_api import expect

    # Retry puts it back to pending: the bot fails again, and it is dead once more.
    with page.expect_response(re.compile(r"/dev/api/dead/retry$")) as retried:
        item.first.locator("button.retry").click()
    assert retried.value.json() == {"done": True}
    for _ in range(50):
        page.click("#dead-refresh")
        page.wait_for_timeout(100)
        if item.count() == count:
            break
    assert item.count() == count
    assert page.locator("#log .entry.error").count() == 0
    with page.expect_response(re.compile(r"/dev/api/dead/drop$")) as dropped:
        item.first.locator("button.drop").click()
    assert dropped.value.json() == {"done": True}
    expect(page.locator(".dead-item")).to_have_count(count - 1)


def test_the_page_needs_the_token(browser: Any, dev: DevProcess) -> None:
    context = browser.new_context()
    anonymous = context.new_page()
    response = anonymous.goto(f"{dev.base}/dev/")
    assert response is not None and response.status == 401
    response = anonymous.goto(f"{dev.base}/dev/?token=wrong")
    assert response is not None and response.status == 403
    context.close()


def test_the_open_page_reconnects_after_the_bot_is_reloaded(
    browser: Any, tmp_path: Path
) -> None:
    running = start_dev(tmp_path)
    context = browser.new_context()
    try:
        page = context.new_page()
        page.set_default_timeout(TIMEOUT_MS)
        page.goto(running.url)
        page.wait_for_selector("#link[data-state='live']")
        user = add_user(page, "Kerry")
        say(page, "before")
        bot_bubble(page, user, "You said before")
        bot = tmp_path / "bot.py"
        source = bot.read_text()
        bot.write_text(source.replace('f"You said *{update.text}*.', 'f"New code: {update.text}.'))
        running.process.wait_for_line(re.compile(r"^svc dev: bot\.py changed; restarting\."))
        running.process.wait_for_line(re.compile(r"^svc: serving http://127\.0\.0\.1:"))
        page.wait_for_selector("#link[data-state='live']")
        say(page, "after")
        bot_bubble(page, user, "New code: after")
        # The page kept what it drew before the restart, and its token still opens the routes.
        assert "You said before" in chat(page, user).inner_text()
        assert page.url == f"{running.base}/dev/"
    finally:
        context.close()
        running.process.stop()


@pytest.fixture
def in_process_dev(tmp_path: Path) -> Iterator[tuple[str, DevSession, Callable[[Any], None]]]:
    """``svc dev``'s service on a thread of its own: its URL, session, and a way to feed the
    session's observer from the test's thread (as the runtime calls it, in its trio run)."""
    ready: queue.Queue[tuple[str, DevSession, trio.lowlevel.TrioToken, trio.Event]] = (
        queue.Queue()
    )

    async def serve() -> None:
        folder = open_dev_folder(tmp_path / ".svc-dev")
        plan = dataclasses.replace(dev_plan(folder, BOT, 0), graceful_timeout=1.0)
        session = dev_session(plan, folder.token, say=lambda line: None)
        stop = trio.Event()
        async with trio.open_nursery() as nursery:
            binds = await nursery.start(
                functools.partial(serve_once, plan, shutdown_trigger=stop.wait, dev=session)
            )
            url = f"{binds[0]}/dev/?token={folder.token}"
            ready.put((url, session, trio.lowlevel.current_trio_token(), stop))

    thread = threading.Thread(target=trio.run, args=(serve,), daemon=True)
    thread.start()
    url, session, token, stop = ready.get(timeout=30)

    def feed(event: Any) -> None:
        trio.from_thread.run_sync(session.observe, event, trio_token=token)

    yield url, session, feed
    trio.from_thread.run_sync(stop.set, trio_token=token)
    thread.join(timeout=30)


def test_runtime_events_are_drawn_in_the_runs_tab(
    browser: Any, in_process_dev: tuple[str, DevSession, Callable[[Any], None]]
) -> None:
    from svc.runtime import RunEnded, RunStarted, StateWritten, UpdateQueued, WaitStarted

    url, _, feed = in_process_dev
    context = browser.new_context()
    page = context.new_page()
    page.set_default_timeout(TIMEOUT_MS)
    page.goto(url)
    page.wait_for_selector("#link[data-state='live']")
    key, other, queue_key = "a1" * 32, "b2" * 32, "c3" * 32
    try:
        raise ValueError("boom in the handler")
    except ValueError as exc:
        error = exc
    for event in (
        UpdateQueued(update_key=key, queue=queue_key, kind="message"),
        RunStarted(update_key=key, queue=queue_key, kind="message", attempt=1),
        WaitStarted(update_key=key, queue=queue_key, listener="reply", timeout=120.0),
        RunEnded(update_key=key, queue=queue_key, kind="message", attempt=1, outcome="error",
                 seconds=0.25, retry_in=2.0, error=error),
        RunStarted(update_key=key, queue=queue_key, kind="message", attempt=2),
        RunEnded(update_key=key, queue=queue_key, kind="message", attempt=2,
                 outcome="success", seconds=0.0125),
        StateWritten(queue=queue_key, document=b'{"name": "Kerry"}'),
        RunEnded(update_key=other, queue=queue_key, kind="message", attempt=5, outcome="dead",
                 seconds=0.5, reason="max_attempts"),
    ):
        feed(event)
    page.click(".tabs button[data-tab='runs']")
    run = page.locator(f".run[data-update='{key}']")
    run.locator(".step", has_text="done").wait_for()
    run.locator("summary").click()
    history = run.locator(".history").inner_text()
    assert "waiting · waits for reply · timeout 120 s" in history
    assert "retried · 250.0 ms · retry in 2 s · ValueError" in history
    assert "done · 12.5 ms" in history
    assert "ValueError: boom in the handler" in run.locator(".traceback").inner_text()
    assert "message a1a1a1a1a1a1 attempt 2" in run.locator(".label").inner_text()
    state = page.locator(f".run[data-update='state:{queue_key}']")
    state.locator("summary").click()
    assert '"name": "Kerry"' in state.locator(".state").inner_text()
    dead = page.locator(f".run[data-update='{other}']")
    assert dead.get_attribute("data-step") == "dead"
    dead.locator("summary").click()
    assert "reason max_attempts" in dead.locator(".history").inner_text()
    context.close()
