"""The README and the documentation site (docs/, mkdocs.yml) hold together, offline.

- Every page of docs/ is in mkdocs.yml's nav and linked from the index; every relative link and image of the README
  and the pages resolves to a file, and every anchor to a heading of it (as ``mkdocs build --strict`` checks, which
  ``scripts/docs`` runs in CI), and its lists are lists to Python-Markdown too. The README stays short and names its
  install link and its two commands.
- Every service-action example validates against the schema its action is registered with: the YAML examples
  (``action: agentic_hems.x`` with its ``data``) and the REST examples (``curl`` to ``/api/services/agentic_hems/x``
  with a JSON body) each name only fields the action has and every field it requires; an example without templates
  passes the whole schema, as Home Assistant would check it on the call.
"""

from __future__ import annotations

import itertools
import json
from pathlib import Path
import re
import textwrap
import unicodedata
from typing import Any

import pytest
import voluptuous as vol
import yaml

ROOT = Path(__file__).parent.parent
DOCS = ROOT / "docs"
PAGES = sorted(path.relative_to(DOCS).as_posix() for path in DOCS.rglob("*.md"))
# Each Markdown file (README.md and the docs pages) by its path from the repository's root.
TEXTS = {name: (ROOT / name).read_text(encoding="utf-8") for name in ["README.md", *(f"docs/{p}" for p in PAGES)]}
LINK = re.compile(r"!?\[(?:[^\[\]]|\[[^\]]*\])*\]\(([^)\s]+)\)")
HEADING = re.compile(r"^#{1,6} (.+?)\s*$", re.MULTILINE)
FENCE = re.compile(r"^( *)```(yaml|bash)\n(.*?)^\1```", re.MULTILINE | re.DOTALL)
CURL = re.compile(r"/api/services/agentic_hems/(\w+)\?return_response\" \\\n\s*-d '(.*?)'", re.DOTALL)


def _schemas() -> dict[str, vol.Schema]:
    from custom_components.agentic_hems.assistant.services import ASK_SCHEMA, RUNS_SCHEMA
    from custom_components.agentic_hems.control.services import DECIDE_SCHEMA, EVALUATE_SCHEMA, TRACES_SCHEMA
    from custom_components.agentic_hems.grid.tools import TOOLS
    from custom_components.agentic_hems.grid_ha import services as grid
    from custom_components.agentic_hems.planning.services import (
        CLEAR_SCHEMA, LOAD_SCHEMA, PLAN_HOME_SCHEMA, SCHEDULE_SCHEMA,
    )

    return {
        "plan": LOAD_SCHEMA, "schedule": SCHEDULE_SCHEMA, "clear_schedule": CLEAR_SCHEMA, "plan_home": PLAN_HOME_SCHEMA,
        "evaluate_command": EVALUATE_SCHEMA, "confirm": DECIDE_SCHEMA, "reject": DECIDE_SCHEMA,
        "get_traces": TRACES_SCHEMA, "ask": ASK_SCHEMA, "get_runs": RUNS_SCHEMA,
        **{name: grid.service_schema(name) for name in TOOLS},
        "approve_authorization": grid.DECIDE_SCHEMA, "deny_authorization": grid.DECIDE_SCHEMA,
        "acknowledge_incident": grid.ACKNOWLEDGE_SCHEMA, "verify_audit_chain": grid.VERIFY_SCHEMA,
    }


def examples() -> list[tuple[str, str, dict[str, Any]]]:
    """(where, action, data) of every example in the README and the docs that calls one of the integration's actions."""
    found = []
    for name, text in TEXTS.items():
        for match in FENCE.finditer(text):
            line = text[: match.start()].count("\n") + 1
            body = textwrap.dedent(match.group(3))
            if match.group(2) == "bash":
                found += [(f"{name}:{line} curl", action, json.loads(data)) for action, data in CURL.findall(body)]
                continue
            documents = list(yaml.safe_load_all(body))  # a card's block may hold several documents
            items = [item for doc in documents for item in (doc if isinstance(doc, list) else [doc])]
            for item in items:
                action = item.get("action", "") if isinstance(item, dict) else ""
                if action.startswith("agentic_hems."):
                    found.append((f"{name}:{line}", action.split(".", 1)[1], item.get("data") or {}))
    return found


EXAMPLES = examples()


def _templated(value: Any) -> bool:
    if isinstance(value, dict):
        return any(_templated(v) for v in value.values())
    if isinstance(value, list):
        return any(_templated(v) for v in value)
    return isinstance(value, str) and "{{" in value


def test_the_docs_have_examples_of_the_actions() -> None:
    """The examples found include the gate pipeline's (YAML and REST), the planner's and the grid toolkit's."""
    names = {name for _, name, _ in EXAMPLES}
    assert {"evaluate_command", "plan", "inspect_grid_state", "approve_authorization"} <= names, names
    assert any(where.endswith("curl") for where, _, _ in EXAMPLES)


@pytest.mark.parametrize(("where", "name", "data"), EXAMPLES, ids=[f"{w}:{n}" for w, n, _ in EXAMPLES])
def test_each_example_validates(where: str, name: str, data: dict[str, Any]) -> None:
    schema = _schemas()[name]
    fields = {str(key): key for key in schema.schema}
    assert set(data) <= set(fields), (where, sorted(set(data) - set(fields)))
    required = {str(k) for k in schema.schema if isinstance(k, vol.Required) and k.default is vol.UNDEFINED}
    assert required <= set(data), (where, name, sorted(required - set(data)))
    if not _templated(data):
        schema(data)  # raises vol.Invalid with the field, as the call would


def test_the_appliance_table_states_the_forms_ranges() -> None:
    """Installation step 5 names each number's range as the appliance form checks it (a Power "0.01 to 100" there
    once met a form that refuses anything above 50 kW)."""
    from custom_components.agentic_hems.flow.schemas import APPLIANCE_LIMITS

    installation = TEXTS["docs/user/installation.md"]
    rows = dict(re.findall(r"^\| (Power|Duration|Energy) \| (.*) \|$", installation, re.MULTILINE))
    for label, key in (("Power", "power_kw"), ("Duration", "duration_min"), ("Energy", "energy_kwh")):
        low, high = (f"{v:g}" for v in APPLIANCE_LIMITS[key][:2])
        assert f"({low} to {high}" in rows[label], (label, rows[label], low, high)


# ------------------------------------------------------------------------------------------------- the site


def _nav_pages(node: Any) -> list[str]:
    """The page paths of mkdocs.yml's nav, in order (a nav entry is a path, a {title: path} or a {title: [...]})."""
    if isinstance(node, str):
        return [node]
    if isinstance(node, list):
        return [page for item in node for page in _nav_pages(item)]
    return [page for value in node.values() for page in _nav_pages(value)]


def _prose(text: str) -> str:
    """The text without its fenced code blocks and inline code, where a link or a heading is only an example."""
    text = re.sub(r"^( *)```.*?^\1```", "", text, flags=re.MULTILINE | re.DOTALL)
    return re.sub(r"`[^`\n]*`", "", text)


def _anchors(text: str) -> set[str]:
    """The ids the headings of a page get, as Python-Markdown's toc extension makes them (mkdocs's default)."""
    slugs = set()
    for title in HEADING.findall(_prose(text)):
        plain = re.sub(r"\[([^\]]*)\]\([^)]*\)", r"\1", title).replace("*", "")
        ascii_ = unicodedata.normalize("NFKD", plain).encode("ascii", "ignore").decode("ascii")
        slugs.add(re.sub(r"[-\s]+", "-", re.sub(r"[^\w\s-]", "", ascii_).strip().lower()))
    return slugs


def _links(name: str) -> list[str]:
    return [target for target in LINK.findall(_prose(TEXTS[name])) if not re.match(r"[a-z]+:", target)]


def test_every_page_is_in_the_nav_once() -> None:
    nav = _nav_pages(yaml.safe_load((ROOT / "mkdocs.yml").read_text(encoding="utf-8"))["nav"])
    assert sorted(nav) == PAGES, sorted(set(nav) ^ set(PAGES))
    assert len(nav) == len(set(nav))


def test_every_page_is_linked_from_the_index() -> None:
    linked = {target.split("#")[0] for target in _links("docs/index.md")}
    assert set(PAGES) - {"index.md"} <= linked, sorted(set(PAGES) - {"index.md"} - linked)


@pytest.mark.parametrize("name", list(TEXTS))
def test_every_relative_link_resolves(name: str) -> None:
    """Each relative link or image names a file (inside docs/ for a page, as mkdocs needs), and its anchor a heading
    of that file."""
    folder = (ROOT / name).parent
    for target in _links(name):
        path, _, anchor = target.partition("#")
        resolved = (folder / path).resolve() if path else ROOT / name
        assert resolved.is_file(), (name, target)
        if name.startswith("docs/"):
            assert resolved.is_relative_to(DOCS), (name, target)
        if anchor:
            assert anchor in _anchors(resolved.read_text(encoding="utf-8")), (name, target)


@pytest.mark.parametrize("page", PAGES)
def test_lists_render_as_lists(page: str) -> None:
    """Python-Markdown, unlike GitHub, reads a list right after a paragraph line as that paragraph's text, and nests
    a list (or a list item's code block) only when it is indented by four spaces."""
    fences = re.findall(r"^( *)```", TEXTS[f"docs/{page}"], re.MULTILINE)
    assert {len(indent) for indent in fences} <= {0, 4, 8}, (page, "a code block indented by 1-3 spaces")
    lines = _prose(TEXTS[f"docs/{page}"]).split("\n")
    for number, (before, line) in enumerate(itertools.pairwise(lines), start=2):
        item = re.match(r"( *)(?:[-*] |\d+\. )", line)
        if not item:
            continue
        assert len(item.group(1)) in (0, 4, 8), (page, number, line)
        after_paragraph = before.strip() and not before.startswith((" ", "|")) and not re.match(r"[-*] |\d+\. ", before)
        assert not (after_paragraph and not item.group(1)), (page, number, line)


def test_the_readme_fits_on_a_screen_or_two() -> None:
    """At most about 12 KB; the HACS link opens this repository (manifest.json's issue tracker's), and the manifest's
    documentation URL is the site's (mkdocs.yml); the Development heading keeps the two commands, the test command
    that .ci/run calls among them."""
    readme = TEXTS["README.md"]
    assert len(readme.encode()) <= 12 * 1024, len(readme.encode())
    manifest = json.loads((ROOT / "custom_components/agentic_hems/manifest.json").read_text(encoding="utf-8"))
    owner, repository = manifest["issue_tracker"].removeprefix("https://github.com/").split("/")[:2]
    site = re.search(r"^site_url: (\S+)$", (ROOT / "mkdocs.yml").read_text(encoding="utf-8"), re.MULTILINE)
    assert site is not None and manifest["documentation"] == site[1] == f"https://{owner}.github.io/{repository}/"
    assert (f"https://my.home-assistant.io/redirect/hacs_repository/?owner={owner}&repository={repository}"
            "&category=integration") in readme
    development = readme.split("\n## Development\n", 1)[1]
    commands = [line.split()[0] for line in re.findall(r"```bash\n(.*?)```", development, re.DOTALL)[0].splitlines()]
    assert commands == ["scripts/demo", "scripts/test"]
    assert "scripts/test" in (ROOT / ".ci/run").read_text(encoding="utf-8")
