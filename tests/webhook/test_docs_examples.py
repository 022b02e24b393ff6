"""docs/webhooks.md examples of the typed updates run as written (issue 23)."""

from __future__ import annotations

from typing import Any

import pytest

from tests._support import doc_example


def example(name: str) -> dict[str, Any]:
    return doc_example("webhooks.md", "webhooks", name)


@pytest.mark.parametrize(
    "name", ["message-extras", "account-details", "coexistence", "business-agent"]
)
def test_the_example_runs_and_its_assertions_hold(name: str) -> None:
    namespace = example(name)
    assert "normalize" in namespace  # the block ran to its end, assertions included


def test_the_account_example_saw_every_change() -> None:
    assert len(example("account-details")["seen"]) == 3
