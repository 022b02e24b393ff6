"""docs/graph.md examples marked ``graph-example`` run as written, against a recording upstream.

Each block runs as the body of one coroutine with ``client``, ``phone``, ``waba`` and
``group`` bound (and every name of ``svc.graph``); every request it sends must be an
operation of ``PLATFORM_OPERATIONS``.
"""

from __future__ import annotations

import re
import textwrap
from pathlib import Path
from typing import Any

import httpx
import pytest

import svc.graph
from svc.graph import (
    DEFAULT_API_VERSION,
    PLATFORM_OPERATIONS,
    GraphClient,
    GroupClient,
    PhoneNumberClient,
    WABAClient,
)

from ._admin_wire import answer_any

DOC = Path(__file__).resolve().parents[2] / "docs" / "graph.md"
_BLOCK = re.compile(r"<!-- graph-example: ([\w-]+) -->\n```python\n(.*?)```", re.S)
# answers with the shape an example reads back (everything else gets the sample answer)
_ANSWERS: dict[str, Any] = {
    "/business_compliance_info": {
        "data": [{"entity_name": "Lucky Shrub Private Limited", "entity_type": "PRIVATE_COMPANY"}]
    },
    "/verify_code": {"success": True, "id": "106540352242922"},
    "/invite_link": {"messaging_product": "whatsapp", "success": "true"},
}


def _examples() -> dict[str, str]:
    return dict(_BLOCK.findall(DOC.read_text(encoding="utf-8")))


def _operation_of(request: httpx.Request) -> str | None:
    path = request.url.path.removeprefix(f"/{DEFAULT_API_VERSION}")
    for operation in PLATFORM_OPERATIONS:
        pattern = "/".join(
            "[^/]+" if part.startswith("{") else re.escape(part)
            for part in operation.path.split("/")
        )
        if operation.method == request.method and re.fullmatch(pattern, path):
            return operation.key
    return None


def test_the_marked_examples_are_found() -> None:
    assert set(_examples()) == {
        "groups", "phone-setup", "usernames", "history", "waba-access", "portfolio",
        "solutions", "operations",
    }


@pytest.mark.parametrize("name", sorted(_examples()))
async def test_the_example_runs_and_sends_only_table_operations(name: str) -> None:
    requests: list[httpx.Request] = []

    def upstream(request: httpx.Request) -> httpx.Response:
        requests.append(request)
        for suffix, answer in _ANSWERS.items():
            if request.url.path.endswith(suffix):
                return httpx.Response(200, json=answer)
        return answer_any(request)

    client = GraphClient(access_token="test-token", transport=httpx.MockTransport(upstream))
    namespace: dict[str, Any] = {
        **{key: getattr(svc.graph, key) for key in svc.graph.__all__},
        "client": client,
        "phone": PhoneNumberClient(client, phone_number_id="106540352242922"),
        "waba": WABAClient(client, waba_id="102290129340398"),
        "group": GroupClient(client, group_id="Y2FwaV9ncm91cDoxNzA1"),
    }
    source = "async def __example__():\n" + textwrap.indent(_examples()[name], "    ")
    exec(compile(source, f"docs/graph.md:{name}", "exec"), namespace)  # noqa: S102 - our own docs
    await namespace["__example__"]()
    unknown = [f"{r.method} {r.url.path}" for r in requests if _operation_of(r) is None]
    assert unknown == []
    assert requests or name == "operations"
