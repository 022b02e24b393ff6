"""docs/webhooks.md examples of the typed updates run as written (issue 23)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

DOC = Path(__file__).resolve().parents[2] / "docs" / "webhooks.md"


def example(name: str) -> dict[str, Any]:
    """Execute the python block that follows ``<!-- webhooks-example: name -->``."""
    match = re.search(
        rf"<!-- webhooks-example: {name} -->\n```python\n(.*?)```", DOC.read_text(), re.S
    )
    assert match, name
    namespace: dict[str, Any] = {"__name__": f"webhooks_doc_{name}"}
    exec(compile(match.group(1), f"docs/webhooks.md:{name}", "exec"), namespace)  # noqa: S102 - our own docs
    return namespace


@pytest.mark.parametrize(
    "name", ["message-extras", "account-details", "coexistence", "business-agent"]
)
def test_the_example_runs_and_its_assertions_hold(name: str) -> None:
    namespace = example(name)
    assert "normalize" in namespace  # the block ran to its end, assertions included


def test_the_account_example_saw_every_change() -> None:
    assert len(example("account-details")["seen"]) == 3
