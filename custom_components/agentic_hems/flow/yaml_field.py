"""Form fields that take YAML as text: the options' policy rules and network fee bands.

HA's YAML editor (the object selector) sends no value while its text does not parse, so a flow could not tell a typo
from a cleared field and stored nothing in place of the saved value. These fields are a multiline text box instead:
the flow always gets the text, parses it here and names the problem (with its line) in a translated error, while
the saved value stays. Only an empty text box clears the field. A key given twice in one mapping is an error too
(PyYAML keeps the last one silently: ``action: deny`` then ``action: allow`` would save an allowing rule), and a
clock time such as ``17:00`` stays text (YAML 1.1 reads it as the base-60 number 1020).
"""

from __future__ import annotations

from typing import Any, Final

import yaml

from homeassistant.helpers.selector import TextSelector, TextSelectorConfig


class _FieldLoader(yaml.SafeLoader):  # type: ignore[misc, unused-ignore]
    """PyYAML's safe loader that refuses a key given twice in one mapping and reads ``HH:MM`` as text."""

    def construct_mapping(self, node: yaml.MappingNode, deep: bool = False) -> dict[Any, Any]:
        """Return the mapping of ``node``; raises ConstructorError (with the line) for a key it gives twice."""
        seen: set[Any] = set()
        for key_node, _ in node.value:
            if key_node.tag == "tag:yaml.org,2002:merge":  # "<<": merged keys may be overridden
                continue
            key = self.construct_object(key_node, deep=True)
            try:
                duplicate = key in seen
            except TypeError:  # unhashable: the base method names it
                break
            if duplicate:
                raise yaml.constructor.ConstructorError(
                    "while constructing a mapping", node.start_mark, f"found duplicate key {key!r}", key_node.start_mark
                )
            seen.add(key)
        return dict(super().construct_mapping(node, deep=deep))


def _sexagesimal_as_text(loader: _FieldLoader, node: yaml.ScalarNode) -> Any:
    """Return a YAML 1.1 base-60 number (``17:00``) as the text it is; any other number as its int or float."""
    if ":" in str(node.value):
        return loader.construct_scalar(node)
    if node.tag.endswith(":int"):
        return loader.construct_yaml_int(node)
    return loader.construct_yaml_float(node)


_FieldLoader.add_constructor("tag:yaml.org,2002:int", _sexagesimal_as_text)
_FieldLoader.add_constructor("tag:yaml.org,2002:float", _sexagesimal_as_text)

MAX_YAML_CHARS: Final = 20_000
"""Characters of one YAML field: a rule list or band schedule fills a few hundred; more is refused unparsed."""


class YamlFieldError(ValueError):
    """The text of a YAML field does not parse, or is too long (``too_long``); ``placeholders`` fill its form error.

    The form's error is ``yaml_invalid`` with ``line`` (counted from 1) and ``problem`` (PyYAML's English words), or
    ``yaml_too_long`` with ``maximum`` (characters).
    """

    def __init__(self, placeholders: dict[str, str], *, too_long: bool = False) -> None:
        """Keep the placeholders and whether the text was too long."""
        super().__init__(placeholders)
        self.placeholders = placeholders
        self.too_long = too_long


def yaml_selector() -> TextSelector:
    """Return the multiline text box of a YAML field."""
    return TextSelector(TextSelectorConfig(multiline=True))


def as_yaml_text(value: Any) -> str | None:
    """Return a stored value as the text its field shows (block style, keys in stored order); None for none."""
    if value in (None, "", [], {}):
        return None
    if isinstance(value, str):  # text a person typed that has not been saved yet
        return value
    return str(yaml.safe_dump(value, sort_keys=False, allow_unicode=True, default_flow_style=False))


def parse_yaml_text(text: Any) -> Any:
    """Return the value the YAML ``text`` holds; None for an empty (or blank) text: the field was cleared.

    Raises:
        YamlFieldError: the text is longer than :data:`MAX_YAML_CHARS` or is not YAML (the line of the problem).

    """
    if text is None or not str(text).strip():
        return None
    text = str(text)
    if len(text) > MAX_YAML_CHARS:
        raise YamlFieldError({"maximum": str(MAX_YAML_CHARS)}, too_long=True)
    try:
        return yaml.load(text, Loader=_FieldLoader)  # noqa: S506 - a safe loader
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = str(mark.line + 1) if mark is not None else "?"
        problem = err.problem or err.context or "not YAML"
        raise YamlFieldError({"line": line, "problem": problem}) from err
    except yaml.YAMLError as err:
        raise YamlFieldError({"line": "?", "problem": str(err)}) from err
    except RecursionError as err:  # nesting deeper than the parser's recursion allows
        raise YamlFieldError({"line": "?", "problem": "nested too deeply"}) from err
