"""Form fields that take YAML as text: the options' policy rules and network fee bands.

HA's YAML editor (the object selector) sends no value while its text does not parse, so a flow could not tell a typo
from a cleared field and stored nothing in place of the saved value. These fields are a multiline text box instead:
the flow always gets the text, parses it here and names the problem (with its line) in a translated error, while
the saved value stays. Only an empty text box clears the field.
"""

from __future__ import annotations

from typing import Any, Final

import yaml

from homeassistant.helpers.selector import TextSelector, TextSelectorConfig

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
        return yaml.safe_load(text)
    except yaml.MarkedYAMLError as err:
        mark = err.problem_mark or err.context_mark
        line = str(mark.line + 1) if mark is not None else "?"
        problem = err.problem or err.context or "not YAML"
        raise YamlFieldError({"line": line, "problem": problem}) from err
    except yaml.YAMLError as err:
        raise YamlFieldError({"line": "?", "problem": str(err)}) from err
    except RecursionError as err:  # nesting deeper than the parser's recursion allows
        raise YamlFieldError({"line": "?", "problem": "nested too deeply"}) from err
