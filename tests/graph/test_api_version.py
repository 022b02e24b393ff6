"""The Graph API version: spelled once in svc, the default everywhere, and what init writes."""

from __future__ import annotations

import re
from pathlib import Path

import yaml

from svc.cli._init import config_data, render_config
from svc.graph import DEFAULT_API_VERSION, GraphClient
from svc.http import Profile

ROOT = Path(__file__).resolve().parents[2]
_VERSION_LITERAL = re.compile(r"""["']v[0-9]+\.[0-9]+["']""")
_VERSION_IN_DOCS = re.compile(r"""(?:/|api_version=["']|`)(v[0-9]+\.[0-9]+)(?:/|["']|`)""")


def test_the_default_is_graph_v26() -> None:
    assert DEFAULT_API_VERSION == "v26.0"
    assert GraphClient(access_token="t").api_version == DEFAULT_API_VERSION
    assert Profile(phone_number_id="1").api_version == DEFAULT_API_VERSION


def test_svc_spells_a_graph_version_in_one_module_only() -> None:
    spelled = {
        str(path.relative_to(ROOT))
        for path in (ROOT / "svc").rglob("*.py")
        if _VERSION_LITERAL.search(path.read_text(encoding="utf-8"))
    }
    assert spelled == {"svc/graph/_client.py"}


def test_init_writes_the_default_version_into_new_configs() -> None:
    written = yaml.safe_load(render_config(config_data("default"), "yaml"))
    assert written["profiles"]["default"]["platform"]["apiVersion"] == DEFAULT_API_VERSION


def test_docs_show_the_default_version_wherever_they_show_one() -> None:
    for path in sorted((ROOT / "docs").glob("*.md")):
        if path.name == "decisions.md":  # the history of choices names older versions
            continue
        shown = set(_VERSION_IN_DOCS.findall(path.read_text(encoding="utf-8")))
        assert shown <= {DEFAULT_API_VERSION}, (path.name, shown)
