"""``svc dev`` as a user runs it: its folder, its one URL, no live mode, and the reload."""

from __future__ import annotations

import re
import stat
import time
from pathlib import Path

import httpx
import pytest

from tests._support.serve import run_svc

from .conftest import start_dev

pytestmark = pytest.mark.slow

KERRY = {"name": "Kerry", "phone": "16505551234"}


def _act(base: str, token: str, text: str) -> None:
    response = httpx.post(
        f"{base}/dev/api/act",
        json={"user": KERRY, "action": {"kind": "text", "text": text}},
        headers={"X-Svc-Dev-Token": token},
        timeout=10,
    )
    assert response.status_code == 200, response.text


def test_live_mode_and_a_missing_app_are_refused(tmp_path: Path) -> None:
    live = run_svc("dev", "--app", "bot:bot", "--live", cwd=tmp_path)
    assert live.returncode != 0
    assert "dry run only" in live.stderr
    missing = run_svc("dev", "--app", "nobot:bot", cwd=tmp_path)
    assert missing.returncode != 0
    assert "cannot be imported" in missing.stderr
    assert not (tmp_path / ".svc-dev").exists()


def test_the_folder_and_token_are_made_once_and_kept(tmp_path: Path) -> None:
    first = start_dev(tmp_path, "--no-reload")
    try:
        assert first.base.startswith("http://127.0.0.1:")
        with httpx.Client(follow_redirects=True, timeout=10) as browser:
            opened = browser.get(first.url)  # the redirect sets the cookie the page then needs
        assert opened.status_code == 200
        assert "svc dev" in opened.text
        _act(first.base, first.token, "hello")
        first.process.wait_for_line(re.compile(r"^dev: bot -> 16505551234 interactive "))
    finally:
        assert first.process.stop() == 0
    folder = tmp_path / ".svc-dev"
    assert sorted(p.name for p in folder.iterdir() if not p.name.startswith("dev.db")) == [
        ".gitignore", "secrets.env", "svc.config.yaml",
    ]
    assert (folder / "dev.db").exists()
    assert stat.S_IMODE((folder / "secrets.env").stat().st_mode) == 0o600
    secrets = (folder / "secrets.env").read_text()
    second = start_dev(tmp_path, "--no-reload")
    try:
        assert second.token == first.token
        assert (folder / "secrets.env").read_text() == secrets
        # The secrets never reach the terminal.
        for line in secrets.splitlines():
            value = line.partition("=")[2]
            if not line.startswith("SVC_DEV_TOKEN="):
                assert all(value not in said for said in first.process.lines + second.process.lines)
    finally:
        second.process.stop()


def test_a_change_to_the_bot_restarts_it_with_the_same_token_and_store(tmp_path: Path) -> None:
    running = start_dev(tmp_path)
    try:
        _act(running.base, running.token, "hello")
        running.process.wait_for_line(re.compile(r"^dev: bot -> 16505551234 interactive "))
        bot = tmp_path / "bot.py"
        source = bot.read_text()
        time.sleep(0.5)
        bot.write_text(source.replace('f"You said *{update.text}*.', 'f"Reloaded: {update.text}.'))
        running.process.wait_for_line(re.compile(r"^svc dev: bot\.py changed; restarting\."))
        running.process.wait_for_line(re.compile(r"^svc: serving http://127\.0\.0\.1:"))
        _act(running.base, running.token, "again")
        running.process.wait_for_line(re.compile(r'"Reloaded: again\. Tea or coffee\?"'))
        state = httpx.get(
            f"{running.base}/dev/api/state", headers={"X-Svc-Dev-Token": running.token}
        )
        assert state.status_code == 200
    finally:
        running.process.stop()
