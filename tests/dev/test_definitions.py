"""``definition_of``: the Flow JSON or template definition a dev folder holds for a send."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

from svc import graph
from svc.dev._definitions import MAX_DEFINITION, definition_of

FLOW = {"version": "7.0", "screens": [{"id": "RATE", "layout": {"children": []}}]}


def _flow(**names: str) -> dict[str, Any]:
    return graph.build_interactive_flow_message(
        to="16505551234", body_text="Rate us", flow_cta="Rate", screen="RATE", **names
    )


def _template(name: str, language: str) -> dict[str, Any]:
    return graph.build_template_message(to="16505551234", name=name, language_code=language)


def _write(folder: Path, relative: str, text: str) -> None:
    path = folder / relative
    path.parent.mkdir(exist_ok=True)
    path.write_text(text)


def test_a_flow_is_found_by_id_then_by_name(tmp_path: Path) -> None:
    assert definition_of(tmp_path, _flow(flow_id="1234567890")) is None
    _write(tmp_path, "flows/1234567890.json", json.dumps(FLOW))
    assert definition_of(tmp_path, _flow(flow_id="1234567890")) == FLOW
    _write(tmp_path, "flows/rating.json", json.dumps({**FLOW, "version": "6.0"}))
    assert definition_of(tmp_path, _flow(flow_name="rating"))["version"] == "6.0"


def test_a_template_is_chosen_by_language(tmp_path: Path) -> None:
    english = {"name": "hello", "language": "en_US", "components": []}
    french = {"name": "hello", "language": "fr", "components": []}
    _write(tmp_path, "templates/hello.json", json.dumps([english, french]))
    assert definition_of(tmp_path, _template("hello", "fr")) == french
    assert definition_of(tmp_path, _template("hello", "de")) == english  # else the first
    _write(tmp_path, "templates/single.json", json.dumps(english))
    assert definition_of(tmp_path, _template("single", "fr")) == english


def test_other_sends_and_bad_files_have_no_definition(tmp_path: Path) -> None:
    text = graph.build_text_message(to="16505551234", text="hi")
    assert definition_of(tmp_path, text) is None
    assert definition_of(tmp_path, None) is None
    _write(tmp_path, "flows/broken.json", "{not json")
    assert definition_of(tmp_path, _flow(flow_name="broken")) is None
    _write(tmp_path, "flows/noscreens.json", json.dumps({"version": "7.0"}))
    assert definition_of(tmp_path, _flow(flow_name="noscreens")) is None
    _write(tmp_path, "flows/huge.json", json.dumps({**FLOW, "pad": "x" * MAX_DEFINITION}))
    assert definition_of(tmp_path, _flow(flow_name="huge")) is None
    (tmp_path / "secrets.json").write_text(json.dumps(FLOW))
    payload = _flow(flow_name="rating")
    payload["interactive"]["action"]["parameters"]["flow_name"] = "../secrets"
    assert definition_of(tmp_path, payload) is None


def test_the_docs_template_definition_is_found(tmp_path: Path) -> None:
    page = (Path(__file__).parents[2] / "docs" / "dev.md").read_text()
    block = re.search(r"```json\n(.*?)```", page, re.S)
    assert block is not None
    _write(tmp_path, "templates/order_receipt.json", block.group(1))
    found = definition_of(tmp_path, _template("order_receipt", "en_US"))
    assert found is not None
    assert [c["type"] for c in found["components"]] == ["HEADER", "BODY", "FOOTER", "BUTTONS"]
