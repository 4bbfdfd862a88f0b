"""The explanations' message files (grid/explain/strings/{en,de}.json): the same ids and placeholders in both, every
id the code asks for present, and no id that the code never asks for.

The code is read with ``ast`` (never imported): ids are the string constants passed to ``Fmt.t`` and ``Fmt.has``,
and the prefixes of the ids it builds with an f-string (``f"op.{action}"``, ``f"obj.{name}"``); placeholders are read with
``string.Formatter``, a second reading beside the regular expression of tests/test_translations.py.
"""

from __future__ import annotations

import ast
import json
from pathlib import Path
import re
import string
from typing import Any

import pytest

PACKAGE = Path(__file__).resolve().parents[2] / "custom_components" / "agentic_hems" / "grid" / "explain"
LANGUAGES = ("en", "de")


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    assert len(keys) == len(set(keys)), f"duplicate ids {sorted({k for k in keys if keys.count(k) > 1})}"
    return dict(pairs)


def table(lang: str) -> dict[str, str]:
    text = (PACKAGE / "strings" / f"{lang}.json").read_text(encoding="utf-8")
    loaded: dict[str, str] = json.loads(text, object_pairs_hook=_no_duplicates)
    return loaded


def fields(template: str) -> set[str]:
    return {name for _, name, _, _ in string.Formatter().parse(template) if name is not None}


def used_ids() -> tuple[set[str], set[str]]:
    """Return the ids the code passes literally to ``t``/``has`` and the prefixes of the ids it builds (``f"op.{x}"``)."""
    literal: set[str] = set()
    prefixes: set[str] = set()
    for path in PACKAGE.glob("*.py"):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.JoinedStr) and isinstance(head := node.values[0], ast.Constant):
                if re.fullmatch(r"[a-z_]+\.", str(head.value)):
                    prefixes.add(str(head.value))
            if not (isinstance(node, ast.Call) and isinstance(node.func, ast.Attribute) and node.args):
                continue
            if node.func.attr in {"t", "has"}:
                first = node.args[0]
                for arg in [first.body, first.orelse] if isinstance(first, ast.IfExp) else [first]:
                    if isinstance(arg, ast.Constant) and isinstance(arg.value, str):
                        literal.add(arg.value)
    return literal, prefixes


def test_both_languages_have_the_same_ids_and_placeholders() -> None:
    en, de = table("en"), table("de")
    assert len(en) > 70
    assert sorted(en) == sorted(de)
    differing = {key: (fields(en[key]), fields(de[key])) for key in en if fields(en[key]) != fields(de[key])}
    assert differing == {}


@pytest.mark.parametrize("lang", LANGUAGES)
def test_every_template_formats_with_its_own_placeholders(lang: str) -> None:
    for key, template in table(lang).items():
        text = template.format(**dict.fromkeys(fields(template), "X"))
        assert "{" not in text
        assert "}" not in text, key


def test_every_id_the_code_asks_for_exists_and_every_id_is_asked_for() -> None:
    en = table("en")
    literal, prefixes = used_ids()
    assert {"na", "alt.no_limits", "src.plan", "src.schedule"} <= literal  # the walk found the calls
    assert {"op.", "as.", "to.", "obj.", "status.", "value."} <= prefixes
    assert sorted(literal - set(en)) == []
    assert sorted(key for key in en if key not in literal and not key.startswith(tuple(prefixes))) == []


def test_english_values_are_the_producers_own_wording() -> None:
    """``value.<text>`` translates a producer's wording: English keeps it as it is, German translates it."""
    en, de = table("en"), table("de")
    values = [key for key in en if key.startswith("value.")]
    assert values
    assert all(en[key] == key.removeprefix("value.") for key in values)
    assert all(de[key] != en[key] for key in values)
