"""The docs describe the product as it is: no work diary, and the two long pages stay short.

History belongs in ``CHANGELOG.md`` and the git log; a page that speaks of the sessions, rounds
of work or issue numbers that produced it reads as a lab notebook, not as what svc guarantees.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
PAGES = sorted(
    [*(ROOT / "docs").glob("*.md"), ROOT / "README.md", ROOT / "bench" / "README.md"],
    key=lambda path: path.relative_to(ROOT).as_posix(),
)
LINE_CAPS = {"docs/performance.md": 300, "docs/decisions.md": 700}
GUIDES = {"docs/dev.md", "docs/testing.md"}
"""The bot author's guides; every other page of ``docs/`` is reference, under one budget."""
REFERENCE_CAP = 4500

_ORDINAL = (
    r"(?:first|second|third|fourth|fifth|sixth|seventh|eighth|ninth|tenth|eleventh|twelfth"
    r"|\d+(?:st|nd|rd|th))"
)
DIARY = re.compile(
    "|".join(
        [
            # "the ninth session", "same session", "session-wide", "sessions 3-5"
            rf"\b(?:{_ORDINAL}|same|this|that|previous|last|next|earlier|later|closing)"
            r"[\s-]+(?:work\s+)?sessions?\b",
            r"\bsession-wide\b",
            r"\bsessions?\s+\d",
            # "issue 25", "issues 20-24", "#13" (not PKCS#8, owner/repo#123 or URL fragments)
            r"\bissues?\s*#?\d",
            r"(?<![\w/.#-])#\d+\b",
            # "rounds of speed work", "the third round of review", "review round"
            rf"\b(?:{_ORDINAL}\s+)?rounds?\s+of\s+(?:\w+\s+)?(?:work|review|changes|fixes)\b",
            r"\breview\s+rounds?\b",
            # "Superseded in the seventh session", "this supersedes the fixed split"
            r"\bsupersed(?:ed|es|ing)\b",
        ]
    ),
    re.IGNORECASE,
)


def _name(path: Path) -> str:
    return path.relative_to(ROOT).as_posix()


def test_every_page_is_checked() -> None:
    names = {_name(page) for page in PAGES}
    assert {"README.md", "bench/README.md", *LINE_CAPS} <= names
    assert len(names) >= 15


@pytest.mark.parametrize("page", PAGES, ids=_name)
def test_no_page_reads_as_a_work_diary(page: Path) -> None:
    found = [
        f"{_name(page)}:{number}: {match.group(0)!r}"
        for number, line in enumerate(page.read_text(encoding="utf-8").splitlines(), start=1)
        for match in DIARY.finditer(line)
    ]
    assert found == []


@pytest.mark.parametrize(
    "text",
    [
        "Issue 25, ninth session: what is left",
        "Superseded in the seventh session: two generations",
        "measured in the same session",
        "0.63-0.67 in same-session A/B runs, and in the same sessions",
        "figures (issue 22, items 2-4)",
        "see http_bugs.md #3",
        "nine rounds of speed work on one ratio",
        "issues 20-24 made every delivery do more",
        "the session-wide scan",
    ],
)
def test_the_diary_pattern_finds_diary_words(text: str) -> None:
    assert DIARY.search(text)


@pytest.mark.parametrize(
    "text",
    [
        "resumable upload sessions: `create_upload_session(...)`",
        "map it to your user and session",
        "`session: {sdp_type: offer|answer, sdp}`",
        "the median of 3 rounds; rounds alternate; every round is in the JSON line",
        "PKCS#8 and pyca/cryptography#15359",
        "a database round trip",
    ],
)
def test_the_diary_pattern_leaves_product_words_alone(text: str) -> None:
    assert not DIARY.search(text)


@pytest.mark.parametrize(("name", "cap"), sorted(LINE_CAPS.items()))
def test_the_long_pages_stay_under_their_caps(name: str, cap: int) -> None:
    lines = (ROOT / name).read_text(encoding="utf-8").count("\n")
    assert lines <= cap, f"{name}: {lines} lines, the cap is {cap}"


def test_the_reference_pages_stay_under_their_budget() -> None:
    pages = [page for page in (ROOT / "docs").glob("*.md") if _name(page) not in GUIDES]
    lines = sum(page.read_text(encoding="utf-8").count("\n") for page in pages)
    assert {_name(page) for page in PAGES} >= GUIDES
    assert lines < REFERENCE_CAP, f"docs/ reference pages: {lines} lines ({REFERENCE_CAP} allowed)"
