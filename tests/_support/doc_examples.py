"""The python examples of a documentation page, run as written.

A page marks each runnable block with ``<!-- PREFIX-example: NAME -->`` on the line
before its fence; ``doc_example`` executes it in a fresh namespace and returns it, so
a test can check what the example defined.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

DOCS = Path(__file__).resolve().parents[2] / "docs"


def doc_example(page: str, prefix: str, name: str) -> dict[str, Any]:
    """Execute the python block that follows ``<!-- {prefix}-example: {name} -->`` in ``page``."""
    text = (DOCS / page).read_text()
    match = re.search(rf"<!-- {prefix}-example: {name} -->\n```python\n(.*?)```", text, re.S)
    assert match, f"{page}: no example {name}"
    namespace: dict[str, Any] = {"__name__": f"{prefix}_doc_{name}"}
    exec(compile(match.group(1), f"docs/{page}:{name}", "exec"), namespace)  # noqa: S102 - our own docs
    return namespace
