"""Translation checks, without a running Home Assistant.

* ``de.json`` mirrors ``en.json``: the same key paths and, string by string, the same ``{placeholders}``.
* Every translation key the code uses has a string in ``en.json``. The code is read with ``ast`` (never imported):
  exception keys (raised with ``translation_domain``, or ``translation_key`` class attributes of exception
  classes), entity keys per platform, service actions and fields from ``services.yaml``, and the config, options
  and appliance subentry flows (steps, form field labels, errors, abort reasons, selector options).

When a check cannot follow a key statically it fails and says where, rather than passing silently.
"""

from __future__ import annotations

import ast
import builtins
import json
import re
from collections import defaultdict
from collections.abc import Iterator
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path
from typing import Any

import pytest
import yaml

PACKAGE = Path(__file__).resolve().parents[1] / "custom_components" / "agentic_hems"
TRANSLATIONS = PACKAGE / "translations"
ENTITY_PLATFORMS = ("sensor", "binary_sensor", "switch", "time")
PLACEHOLDER = re.compile(r"\{(\w+)\}")
VOL_MARKERS = {"Required", "Optional", "Exclusive", "Inclusive"}
# Abort reasons Home Assistant raises by itself from these flow helpers.
ALREADY_CONFIGURED_HELPERS = {"_abort_if_unique_id_configured", "_async_abort_entries_match"}
UPDATE_AND_ABORT_HELPERS = {"async_update_reload_and_abort", "async_update_and_abort"}


# --------------------------------------------------------------------------------------------- strings


def _no_duplicate_keys(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    keys = [key for key, _ in pairs]
    duplicates = sorted({key for key in keys if keys.count(key) > 1})
    assert not duplicates, f"duplicate JSON keys {duplicates}"
    return dict(pairs)


@cache
def strings(lang: str) -> dict[str, Any]:
    """translations/<lang>.json, refusing duplicate keys (json.loads would keep the last silently)."""
    text = (TRANSLATIONS / f"{lang}.json").read_text(encoding="utf-8")
    return json.loads(text, object_pairs_hook=_no_duplicate_keys)


def leaves(node: Any, path: tuple[str, ...] = ()) -> Iterator[tuple[tuple[str, ...], Any]]:
    """(key path, value) for every non-dict value."""
    if isinstance(node, dict):
        for key, value in node.items():
            yield from leaves(value, (*path, key))
    else:
        yield path, node


def placeholders(text: str) -> set[str]:
    return set(PLACEHOLDER.findall(text))


def en(*path: str) -> Any:
    """The en.json node at ``path``, or None."""
    node: Any = strings("en")
    for key in path:
        if not isinstance(node, dict) or key not in node:
            return None
        node = node[key]
    return node


def dotted(path: tuple[str, ...] | list[str]) -> str:
    return ".".join(path)


# ---------------------------------------------------------------------------------------------- source


def sources() -> list[Path]:
    return sorted(p for p in PACKAGE.rglob("*.py") if "__pycache__" not in p.parts)


@cache
def parse(path: Path) -> ast.Module:
    return ast.parse(path.read_text(encoding="utf-8"), filename=str(path))


def where(path: Path, node: ast.AST) -> str:
    return f"{path.relative_to(PACKAGE.parent.parent)}:{getattr(node, 'lineno', '?')}"


def own_nodes(scope: ast.AST) -> Iterator[ast.AST]:
    """Nodes of ``scope`` without descending into nested functions and classes."""
    stack = list(ast.iter_child_nodes(scope))
    while stack:
        node = stack.pop()
        yield node
        if not isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef, ast.ClassDef)):
            stack.extend(ast.iter_child_nodes(node))


def scopes(module: ast.Module) -> Iterator[ast.AST]:
    """The module and every function in it."""
    yield module
    for node in ast.walk(module):
        if isinstance(node, (ast.FunctionDef, ast.AsyncFunctionDef)):
            yield node


def local_values(scope: ast.AST) -> dict[str, list[ast.expr]]:
    """Expressions assigned to each plain name in ``scope``."""
    values: dict[str, list[ast.expr]] = defaultdict(list)
    for node in own_nodes(scope):
        if isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name):
                    values[target.id].append(node.value)
                elif isinstance(target, ast.Tuple) and isinstance(node.value, ast.Tuple):
                    for t, v in zip(target.elts, node.value.elts, strict=False):
                        if isinstance(t, ast.Name):
                            values[t.id].append(v)
        elif isinstance(node, (ast.AnnAssign, ast.NamedExpr)) and isinstance(node.target, ast.Name) and node.value:
            values[node.target.id].append(node.value)
    return values


def call_name(call: ast.Call) -> str | None:
    if isinstance(call.func, ast.Name):
        return call.func.id
    if isinstance(call.func, ast.Attribute):
        return call.func.attr
    return None


def keywords(call: ast.Call) -> dict[str, ast.expr]:
    return {k.arg: k.value for k in call.keywords if k.arg is not None}


def base_name(node: ast.expr) -> str:
    if isinstance(node, ast.Name):
        return node.id
    if isinstance(node, ast.Attribute):
        return node.attr
    if isinstance(node, ast.Subscript):
        return base_name(node.value)
    return ""


class Unresolved(ValueError):
    """An expression that is not a literal."""


def literal(node: ast.expr, env: dict[str, Any]) -> Any:
    """Value of a literal expression; names resolve through ``env``, then homeassistant.const strings."""
    if isinstance(node, ast.Constant):
        return node.value
    if isinstance(node, ast.Name):
        if node.id in env:
            return env[node.id]
        import homeassistant.const as ha_const

        if isinstance(value := getattr(ha_const, node.id, None), str):
            return value
        raise Unresolved(node.id)
    if isinstance(node, (ast.List, ast.Tuple, ast.Set)):
        return [literal(e, env) for e in node.elts]
    if isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            raise Unresolved("** in dict")
        pairs = zip(node.keys, node.values, strict=True)
        return {literal(k, env): literal(v, env) for k, v in pairs}  # type: ignore[arg-type]
    raise Unresolved(ast.dump(node))


def module_constants(module: ast.Module, env: dict[str, Any] | None = None) -> dict[str, Any]:
    """Module-level names bound to literals (and to other such names)."""
    consts = dict(env or {})
    for node in module.body:
        if isinstance(node, ast.Assign) and len(node.targets) == 1 and isinstance(node.targets[0], ast.Name):
            name, value = node.targets[0].id, node.value
        elif isinstance(node, ast.AnnAssign) and isinstance(node.target, ast.Name) and node.value is not None:
            name, value = node.target.id, node.value
        else:
            continue
        try:
            consts[name] = literal(value, consts)
        except Unresolved:
            pass
    return consts


@cache
def constants(path: Path) -> dict[str, Any]:
    """const.py's constants plus the module's own (for config_flow.py: those of the flow's modules)."""
    module = flow_module() if path == CONFIG_FLOW else parse(path)
    return module_constants(module, module_constants(parse(PACKAGE / "const.py")))


def resolve_str(node: ast.expr, path: Path) -> str:
    value = literal(node, constants(path))
    if not isinstance(value, str):
        raise Unresolved(ast.dump(node))
    return value


# ---------------------------------------------------------------------------------------- de vs en


def test_en_and_de_have_the_same_key_paths() -> None:
    en_paths = {path for path, _ in leaves(strings("en"))}
    de_paths = {path for path, _ in leaves(strings("de"))}
    assert not en_paths - de_paths, f"missing in de.json: {sorted(map(dotted, en_paths - de_paths))}"
    assert not de_paths - en_paths, f"only in de.json: {sorted(map(dotted, de_paths - en_paths))}"


@pytest.mark.parametrize("lang", ["en", "de"])
def test_every_string_is_plain_non_empty_text(lang: str) -> None:
    bad = [dotted(p) for p, v in leaves(strings(lang)) if not isinstance(v, str) or not v.strip()]
    assert not bad, f"{lang}.json: not a non-empty string: {bad}"
    # [%key:...%] references are resolved by core's build script only, never for custom integrations.
    refs = [dotted(p) for p, v in leaves(strings(lang)) if "[%key:" in v]
    assert not refs, f"{lang}.json: unresolvable [%key:...%] references at {refs}"


def test_en_and_de_have_the_same_placeholders_per_string() -> None:
    de = dict(leaves(strings("de")))
    differ = {
        dotted(path): (sorted(placeholders(text)), sorted(placeholders(de[path])))
        for path, text in leaves(strings("en"))
        if path in de and placeholders(text) != placeholders(de[path])
    }
    assert not differ, f"placeholders differ (en, de): {differ}"


def test_de_is_translated() -> None:
    """Most strings differ from English (names like 'Nord Pool' or 'Name' may stay)."""
    de = dict(leaves(strings("de")))
    same = [dotted(p) for p, text in leaves(strings("en")) if de.get(p) == text]
    assert len(same) < len(de) // 10, f"untranslated in de.json: {same}"


# -------------------------------------------------------------------------------------- exceptions


@dataclass(frozen=True)
class KeyUse:
    """One place that raises an exception with a translation key."""

    key: str
    where: str
    placeholders: frozenset[str] | None  # the placeholders passed there; None when not known statically


def _is_exception_base(name: str) -> bool:
    import homeassistant.exceptions as ha_exceptions

    for namespace in (builtins, ha_exceptions):
        obj = getattr(namespace, name, None)
        if isinstance(obj, type) and issubclass(obj, BaseException):
            return True
    return name.endswith(("Error", "Exception", "Failed", "NotReady"))


@cache
def exception_class_keys() -> dict[str, str]:
    """``translation_key = "..."`` class attributes of the package's exception classes: key → where."""
    classes: dict[str, tuple[ast.ClassDef, Path]] = {}
    for path in sources():
        for node in ast.walk(parse(path)):
            if isinstance(node, ast.ClassDef):
                classes[node.name] = (node, path)
    exceptions: set[str] = set()
    grew = True
    while grew:
        grew = False
        for name, (node, _) in classes.items():
            bases = [base_name(b) for b in node.bases]
            if name not in exceptions and any(b in exceptions or _is_exception_base(b) for b in bases):
                exceptions.add(name)
                grew = True
    keys: dict[str, str] = {}
    for name in exceptions:
        node, path = classes[name]
        for stmt in node.body:
            target = stmt.targets[0] if isinstance(stmt, ast.Assign) and len(stmt.targets) == 1 else None
            if isinstance(stmt, ast.AnnAssign):
                target = stmt.target
            value = getattr(stmt, "value", None)
            if isinstance(target, ast.Name) and target.id == "translation_key" and value is not None:
                keys[resolve_str(value, path)] = where(path, stmt)
    return keys


def _placeholder_names(node: ast.expr | None, kwarg: str | None) -> frozenset[str] | str | None:
    """Placeholders given by a ``translation_placeholders=`` value: a set, "CALLER" for ``**kwargs``, or None."""
    if node is None or (isinstance(node, ast.Constant) and node.value is None):
        return frozenset()
    if isinstance(node, ast.Dict) and all(isinstance(k, ast.Constant) for k in node.keys):
        return frozenset(k.value for k in node.keys)  # type: ignore[union-attr]
    if kwarg and any(isinstance(n, ast.Name) and n.id == kwarg for n in ast.walk(node)):
        return "CALLER"
    return None


def _key_candidates(expr: ast.expr, values: dict[str, list[ast.expr]], seen: set[str]) -> tuple[set[str], bool]:
    """String keys an expression can evaluate to, and whether it can be an exception's ``.translation_key``."""
    if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
        return {expr.value}, False
    if isinstance(expr, ast.Attribute) and expr.attr in ("translation_key", "key"):  # ``.key``: a grid ToolError
        return set(), True
    parts: list[ast.expr] = []
    if isinstance(expr, ast.IfExp):
        parts = [expr.body, expr.orelse]
    elif isinstance(expr, ast.BoolOp):
        parts = expr.values
    elif isinstance(expr, ast.Name) and expr.id in values and expr.id not in seen:
        seen.add(expr.id)
        parts = values[expr.id]
    else:
        raise Unresolved(ast.dump(expr))
    keys: set[str] = set()
    from_class = False
    for part in parts:
        k, c = _key_candidates(part, values, seen)
        keys |= k
        from_class |= c
    return keys, from_class


def tool_error_uses(problems: list[str]) -> list[KeyUse]:
    """``ToolError("key", status, **placeholders)`` of the grid toolkit: the shell raises them translated by key."""
    uses: list[KeyUse] = []
    for path in sources():
        for call in (n for n in ast.walk(parse(path)) if isinstance(n, ast.Call)):
            if not (isinstance(call.func, ast.Name) and call.func.id == "ToolError"):
                continue
            key = call.args[0] if call.args else None
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                problems.append(f"{where(path, call)}: ToolError without a literal key")
                continue
            given = None if any(k.arg is None for k in call.keywords) else frozenset(k.arg for k in call.keywords)
            uses.append(KeyUse(key.value, where(path, call), given))  # type: ignore[arg-type]
    return uses


@cache
def exception_uses() -> tuple[list[KeyUse], list[str]]:
    """Every exception translation key the package uses, and the places that could not be followed."""
    uses = [KeyUse(key, at, None) for key, at in exception_class_keys().items()]
    problems: list[str] = []
    # Helpers such as ``def _invalid(key, **placeholders)`` that pass a parameter on as translation_key.
    helpers: dict[str, tuple[int, str, frozenset[str] | str | None]] = {}
    for path in sources():
        for scope in scopes(parse(path)):
            args = getattr(scope, "args", None)
            params = [a.arg for a in args.posonlyargs + args.args] if args else []
            kwarg = args.kwarg.arg if args and args.kwarg else None
            values = local_values(scope)
            for call in (n for n in own_nodes(scope) if isinstance(n, ast.Call)):
                kw = keywords(call)
                if "translation_domain" not in kw or "translation_key" not in kw:
                    continue
                given = _placeholder_names(kw.get("translation_placeholders"), kwarg)
                key = kw["translation_key"]
                is_function = isinstance(scope, ast.FunctionDef | ast.AsyncFunctionDef)
                if isinstance(key, ast.Name) and key.id in params and is_function:
                    helpers[scope.name] = (params.index(key.id), key.id, given)
                    continue
                try:
                    keys, from_class = _key_candidates(key, values, set())
                except Unresolved:
                    problems.append(f"{where(path, call)}: translation_key is not traceable")
                    continue
                known = given if isinstance(given, frozenset) else None
                uses += [KeyUse(k, where(path, call), known) for k in keys]
                if from_class:
                    uses += [KeyUse(k, where(path, call), known) for k in exception_class_keys()]
                    uses += tool_error_uses(problems)
    for path in sources():  # ``NAME_TEXT_KEYS = {code: "key", ...}``: exceptions texts shown by key (not raised)
        for node in parse(path).body:
            target = node.target if isinstance(node, ast.AnnAssign) else None
            if isinstance(target, ast.Name) and target.id.endswith("_TEXT_KEYS") and isinstance(node.value, ast.Dict):
                uses += [KeyUse(resolve_str(v, path), where(path, v), frozenset()) for v in node.value.values]
    for path in sources():
        for call in (n for n in ast.walk(parse(path)) if isinstance(n, ast.Call)):
            if not isinstance(call.func, ast.Name) or call.func.id not in helpers:
                continue
            index, name, given = helpers[call.func.id]
            kw = keywords(call)
            key = call.args[index] if index < len(call.args) else kw.get(name)
            if not (isinstance(key, ast.Constant) and isinstance(key.value, str)):
                problems.append(f"{where(path, call)}: {call.func.id}() without a literal translation key")
                continue
            if given == "CALLER":
                spread = any(k.arg is None for k in call.keywords)
                given = None if spread else frozenset(k for k in kw if k != name)
            uses.append(KeyUse(key.value, where(path, call), given if isinstance(given, frozenset) else None))
    return uses, problems


def test_exception_translation_keys_can_be_followed() -> None:
    uses, problems = exception_uses()
    assert not problems, problems
    assert uses, "found no exception translation keys at all; the parser no longer matches the code"


def test_exception_translation_keys_exist() -> None:
    uses, _ = exception_uses()
    missing = sorted({f"{u.key} ({u.where})" for u in uses if not (en("exceptions", u.key) or {}).get("message")})
    assert not missing, f"exceptions.<key>.message missing in en.json: {missing}"


def test_exception_messages_get_their_placeholders() -> None:
    uses, _ = exception_uses()
    unfilled = sorted(
        f"{u.key} at {u.where}: message needs {sorted(needed)}, code gives {sorted(u.placeholders)}"
        for u in uses
        if u.placeholders is not None
        and (message := (en("exceptions", u.key) or {}).get("message")) is not None
        and not (needed := placeholders(message)) <= u.placeholders
    )
    assert not unfilled, unfilled


def test_no_unused_exception_strings() -> None:
    uses, _ = exception_uses()
    unused = set(en("exceptions") or {}) - {u.key for u in uses}
    assert not unused, f"exceptions in en.json that no code raises: {sorted(unused)}"


# ---------------------------------------------------------------------------------------- entities


@cache
def entity_keys(platform: str) -> dict[str, str]:
    """Entity translation keys of a platform module: key → where.

    The last positional string argument of a constructor of a class defined there (or of its
    ``super().__init__``), ``translation_key="..."`` keywords of non-exception calls, and
    ``_attr_translation_key = "..."`` class attributes.
    """
    path = PACKAGE / f"{platform}.py"
    module = parse(path)
    classes = {n.name for n in ast.walk(module) if isinstance(n, ast.ClassDef)}
    keys: dict[str, str] = {}
    for node in ast.walk(module):
        if isinstance(node, ast.Call):
            func = node.func
            constructor = (isinstance(func, ast.Name) and func.id in classes) or (
                isinstance(func, ast.Attribute)
                and func.attr == "__init__"
                and isinstance(func.value, ast.Call)
                and call_name(func.value) == "super"
            )
            last = node.args[-1] if node.args else None
            if constructor and isinstance(last, ast.Constant) and isinstance(last.value, str):
                keys[last.value] = where(path, node)
            kw = keywords(node)
            if "translation_key" in kw and "translation_domain" not in kw:
                keys[resolve_str(kw["translation_key"], path)] = where(path, node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                if isinstance(target, ast.Name) and target.id == "_attr_translation_key":
                    try:
                        keys[resolve_str(node.value, path)] = where(path, node)
                    except Unresolved:
                        pass  # e.g. ``self._attr_translation_key = key`` in a base class
    return keys


@pytest.mark.parametrize("platform", ENTITY_PLATFORMS)
def test_entity_translation_keys_exist(platform: str) -> None:
    keys = entity_keys(platform)
    assert keys, f"found no entity translation keys in {platform}.py; the parser no longer matches the code"
    missing = sorted(f"{k} ({at})" for k, at in keys.items() if not (en("entity", platform, k) or {}).get("name"))
    assert not missing, f"entity.{platform}.<key>.name missing in en.json: {missing}"


def test_no_unused_entity_strings() -> None:
    unused = []
    for platform, names in (en("entity") or {}).items():
        if not (PACKAGE / f"{platform}.py").exists():
            unused.append(f"entity.{platform} (no {platform}.py)")
            continue
        unused += [f"entity.{platform}.{k}" for k in set(names) - set(entity_keys(platform))]
    assert not unused, f"entity strings in en.json that no entity uses: {sorted(unused)}"


# ---------------------------------------------------------------------------------------- services


@cache
def services_yaml() -> dict[str, Any]:
    return yaml.safe_load((PACKAGE / "services.yaml").read_text(encoding="utf-8")) or {}


def _yaml_fields(spec: dict[str, Any] | None) -> dict[str, Any]:
    """A service's fields, looking into collapsible sections."""
    fields: dict[str, Any] = {}
    for name, value in ((spec or {}).get("fields") or {}).items():
        if isinstance(value, dict) and "fields" in value:
            fields |= _yaml_fields(value)
        else:
            fields[name] = value
    return fields


def test_services_have_names_and_descriptions() -> None:
    missing = []
    for service, spec in services_yaml().items():
        strings_ = en("services", service) or {}
        missing += [f"services.{service}.{a}" for a in ("name", "description") if not strings_.get(a)]
        for name in _yaml_fields(spec):
            texts = (strings_.get("fields") or {}).get(name) or {}
            missing += [f"services.{service}.fields.{name}.{a}" for a in ("name", "description") if not texts.get(a)]
        for section, value in ((spec or {}).get("fields") or {}).items():
            is_section = isinstance(value, dict) and "fields" in value
            if is_section and not en("services", service, "sections", section, "name"):
                missing.append(f"services.{service}.sections.{section}.name")
    assert not missing, f"missing in en.json: {missing}"


def test_no_strings_for_unknown_services_or_fields() -> None:
    extra = []
    for service, texts in (en("services") or {}).items():
        if service not in services_yaml():
            extra.append(f"services.{service}")
            continue
        fields = _yaml_fields(services_yaml()[service])
        extra += [f"services.{service}.fields.{f}" for f in set(texts.get("fields") or {}) - set(fields)]
    assert not extra, f"en.json has strings for what services.yaml does not define: {sorted(extra)}"


# ------------------------------------------------------------------------------------- config flow

CONFIG_FLOW = PACKAGE / "config_flow.py"
FLOW_MODULES = (CONFIG_FLOW, *sorted((PACKAGE / "flow").glob("*.py")))  # the flow classes and their helpers


@cache
def flow_module() -> ast.Module:
    """config_flow.py and the flow package's modules as one module: flows call helpers (schemas, checks) across
    them by name."""
    return ast.Module(body=[node for path in FLOW_MODULES for node in parse(path).body], type_ignores=[])


@dataclass
class Form:
    step_id: str
    where: str
    method: str
    fields: set[str]
    placeholders: frozenset[str] | None


@dataclass
class Facts:
    """What one function or method of config_flow.py shows, reports and aborts with."""

    forms: list[Form] = field(default_factory=list)
    errors: dict[str, str] = field(default_factory=dict)
    aborts: dict[str, str] = field(default_factory=dict)
    calls: set[str] = field(default_factory=set)
    problems: list[str] = field(default_factory=list)
    error_functions: set[str] = field(default_factory=set)  # functions whose result is assigned to ``errors``
    returned: dict[int, ast.expr] = field(default_factory=dict)  # values of dicts this function returns


def _called(call: ast.Call) -> str | None:
    """The name of the function ``call`` runs: ``f(...)``, or ``f`` of ``hass.async_add_executor_job(f, ...)``."""
    if isinstance(call.func, ast.Name):
        return call.func.id
    if call_name(call) == "async_add_executor_job" and call.args and isinstance(call.args[0], ast.Name):
        return call.args[0].id
    return None


def _is_errors(node: ast.expr) -> bool:
    """``errors``, ``self._errors`` and the like."""
    return base_name(node).lstrip("_").endswith("errors")


def _is_marker(call: ast.Call) -> bool:
    """``vol.Required(...)`` and friends."""
    func = call.func
    return (isinstance(func, ast.Attribute) and func.attr in VOL_MARKERS) or (
        isinstance(func, ast.Name) and func.id in VOL_MARKERS
    )


def _schema_fields(
    expr: ast.expr | ast.stmt,
    values: dict[str, list[ast.expr]],
    functions: dict[str, ast.FunctionDef | ast.AsyncFunctionDef],
    seen: set[str],
    problems: list[str],
) -> set[str]:
    """Keys of the voluptuous schema ``expr`` builds, following local names and module-level schema functions."""
    fields: set[str] = set()
    for node in ast.walk(expr):
        if isinstance(node, ast.Call) and _is_marker(node) and node.args:
            try:
                fields.add(resolve_str(node.args[0], CONFIG_FLOW))
            except Unresolved:
                problems.append(f"{where(CONFIG_FLOW, node)}: schema key is not a constant")
        elif isinstance(node, ast.Name) and node.id not in seen:
            if node.id in functions:
                seen.add(node.id)
                inner = local_values(functions[node.id])
                for stmt in functions[node.id].body:
                    fields |= _schema_fields(stmt, inner, functions, seen, problems)
            elif node.id in values:
                seen.add(node.id)
                for value in values[node.id]:
                    fields |= _schema_fields(value, values, functions, seen, problems)
    return fields


def _facts(func: ast.FunctionDef | ast.AsyncFunctionDef, functions: dict[str, Any]) -> Facts:
    facts = Facts()
    values = local_values(func)

    def text(node: ast.expr) -> str | None:
        try:
            return resolve_str(node, CONFIG_FLOW)
        except Unresolved:
            facts.problems.append(f"{where(CONFIG_FLOW, node)}: not a constant string in {func.name}")
            return None

    for node in own_nodes(func):
        if isinstance(node, ast.Call):
            name = call_name(node)
            kw = keywords(node)
            if (called := _called(node)) in functions:
                facts.calls.add(str(called))
            if name == "async_show_form":
                if "step_id" not in kw:
                    facts.problems.append(f"{where(CONFIG_FLOW, node)}: async_show_form without step_id")
                elif (step_id := text(kw["step_id"])) is not None:
                    schema = kw.get("data_schema")
                    fields = _schema_fields(schema, values, functions, set(), facts.problems) if schema else set()
                    given = _placeholder_names(kw.get("description_placeholders"), None)
                    known = given if isinstance(given, frozenset) else None
                    facts.forms.append(Form(step_id, where(CONFIG_FLOW, node), func.name, fields, known))
                if isinstance(errors := kw.get("errors"), ast.Dict):
                    for value in errors.values:
                        if (reason := text(value)) is not None:
                            facts.errors[reason] = where(CONFIG_FLOW, value)
            elif name == "async_abort":
                reason_node = kw.get("reason") or (node.args[0] if node.args else None)
                if reason_node is not None and (reason := text(reason_node)) is not None:
                    facts.aborts[reason] = where(CONFIG_FLOW, node)
            elif name in ALREADY_CONFIGURED_HELPERS:
                facts.aborts["already_configured"] = where(CONFIG_FLOW, node)
            elif name == "_abort_if_unique_id_mismatch":
                reason = text(kw["reason"]) if "reason" in kw else "unique_id_mismatch"
                if reason:
                    facts.aborts[reason] = where(CONFIG_FLOW, node)
            elif name in UPDATE_AND_ABORT_HELPERS:
                if "reason" in kw:
                    reason = text(kw["reason"])
                elif "reauth" in func.name:
                    reason = "reauth_successful"
                elif "reconfigure" in func.name:
                    reason = "reconfigure_successful"
                else:
                    reason = None
                    facts.problems.append(f"{where(CONFIG_FLOW, node)}: {name} outside a reauth/reconfigure step")
                if reason:
                    facts.aborts[reason] = where(CONFIG_FLOW, node)
        elif isinstance(node, ast.Assign):
            for target in node.targets:
                # errors[...] = "reason"
                subscript = isinstance(target, ast.Subscript) and _is_errors(target.value)
                if subscript and (reason := text(node.value)) is not None:
                    facts.errors[reason] = where(CONFIG_FLOW, node)
                # errors = {"field": "reason"}; errors = validate(...); errors, cleaned = validate(...)
                first = target.elts[0] if isinstance(target, ast.Tuple) and target.elts else target
                if not isinstance(first, ast.Subscript) and _is_errors(first):
                    value = node.value.value if isinstance(node.value, ast.Await) else node.value
                    if isinstance(value, ast.Dict):
                        for item in value.values:
                            if (reason := text(item)) is not None:
                                facts.errors[reason] = where(CONFIG_FLOW, item)
                    elif isinstance(value, ast.Call) and (called := _called(value)) is not None:
                        facts.error_functions.add(called)
        elif isinstance(node, ast.Return) and node.value is not None:
            value = node.value.elts[0] if isinstance(node.value, ast.Tuple) and node.value.elts else node.value
            if isinstance(value, ast.Dict):
                facts.returned.update({id(v): v for v in value.values})
        elif isinstance(node, ast.Dict):
            # {"base": "reason"}
            for key, value in zip(node.keys, node.values, strict=True):
                if isinstance(key, ast.Constant) and key.value == "base" and (reason := text(value)) is not None:
                    facts.errors[reason] = where(CONFIG_FLOW, value)
    return facts


@dataclass
class Flow:
    name: str
    section: tuple[str, ...]  # where its strings live in en.json
    facts: Facts
    step_methods: dict[str, Facts]


@cache
def flows() -> tuple[list[Flow], list[str]]:
    """Config, options and subentry flow classes of the flow modules, with the facts of the helpers they call."""
    module = flow_module()
    functions = {n.name: n for n in module.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)}
    function_facts = {name: _facts(func, functions) for name, func in functions.items()}
    problems = [p for f in function_facts.values() for p in f.problems]
    # Dicts returned by a function whose result a flow assigns to ``errors`` map fields to error reasons.
    error_functions: set[str] = set()
    for func in (n for n in ast.walk(module) if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
        error_functions |= _facts(func, functions).error_functions
    for name in error_functions & set(function_facts):
        for value in function_facts[name].returned.values():
            try:
                function_facts[name].errors[resolve_str(value, CONFIG_FLOW)] = where(CONFIG_FLOW, value)
            except Unresolved:
                problems.append(f"{where(CONFIG_FLOW, value)}: error reason returned by {name}() is not constant")
    classes = [n for n in module.body if isinstance(n, ast.ClassDef)]

    subentry_types: dict[str, str] = {}
    for cls in classes:
        for node in ast.walk(cls):
            if isinstance(node, ast.FunctionDef) and node.name == "async_get_supported_subentry_types":
                for ret in (n for n in ast.walk(node) if isinstance(n, ast.Return) and isinstance(n.value, ast.Dict)):
                    for key, value in zip(ret.value.keys, ret.value.values, strict=True):  # type: ignore[union-attr]
                        if key is not None and isinstance(value, ast.Name):
                            subentry_types[value.id] = resolve_str(key, CONFIG_FLOW)

    result: list[Flow] = []
    reached: set[str] = set()
    for cls in classes:
        bases = {base_name(b) for b in cls.bases}
        if "ConfigFlow" in bases:
            section: tuple[str, ...] = ("config",)
        elif any(b.startswith("OptionsFlow") for b in bases):
            section = ("options",)
        elif "ConfigSubentryFlow" in bases:
            if cls.name not in subentry_types:
                problems.append(f"{cls.name} is not returned by async_get_supported_subentry_types")
                continue
            section = ("config_subentries", subentry_types[cls.name])
        else:
            continue
        merged = Facts()
        step_methods: dict[str, Facts] = {}
        for method in (n for n in cls.body if isinstance(n, ast.FunctionDef | ast.AsyncFunctionDef)):
            facts = _facts(method, functions)
            if method.name.startswith("async_step_"):
                step_methods[method.name] = facts
            todo = list(facts.calls)
            while todo:  # module-level helpers (validate_appliance, _validate_entsoe, ...) belong to their callers
                name = todo.pop()
                if name in reached and name in merged.calls:
                    continue
                reached.add(name)
                merged.calls.add(name)
                helper = function_facts[name]
                facts.errors |= helper.errors
                facts.aborts |= helper.aborts
                facts.forms += helper.forms
                todo += [c for c in helper.calls if c not in merged.calls]
            merged.forms += facts.forms
            merged.errors |= facts.errors
            merged.aborts |= facts.aborts
            problems += facts.problems
        result.append(Flow(cls.name, section, merged, step_methods))
    for name, facts in function_facts.items():
        if (facts.errors or facts.aborts or facts.forms) and name not in reached:
            problems.append(f"{name}() reports errors/aborts but no flow class calls it; cannot tell their section")
    return result, problems


def test_config_flow_can_be_followed() -> None:
    found, problems = flows()
    assert not problems, problems
    sections = {f.section[0] for f in found}
    assert "config" in sections, "found no ConfigFlow class in config_flow.py"


def test_flow_steps_have_a_title_or_description() -> None:
    found, _ = flows()
    missing = []
    for flow in found:
        for form in flow.facts.forms:
            step = en(*flow.section, "step", form.step_id) or {}
            if not (step.get("title") or step.get("description")):
                missing.append(f"{dotted(flow.section)}.step.{form.step_id} ({form.where})")
    assert not missing, f"steps without title or description in en.json: {missing}"


def test_step_methods_show_their_own_step_id() -> None:
    """A form's answer goes to ``async_step_<step_id>``, so a step method must show its own step id."""
    found, _ = flows()
    wrong = [
        f"{flow.name}.{method} shows step_id {form.step_id!r} ({form.where})"
        for flow in found
        for method, facts in flow.step_methods.items()
        for form in facts.forms
        if form.method == method and f"async_step_{form.step_id}" != method
    ]
    assert not wrong, wrong


def test_flow_form_fields_have_labels() -> None:
    found, _ = flows()
    missing, extra = [], []
    for flow in found:
        fields_by_step: dict[str, set[str]] = defaultdict(set)
        for form in flow.facts.forms:
            fields_by_step[form.step_id] |= form.fields
        for step_id, fields in fields_by_step.items():
            step = en(*flow.section, "step", step_id) or {}
            prefix = f"{dotted(flow.section)}.step.{step_id}"
            sections = step.get("sections") or {}  # a section is labelled by its name, its fields within it
            labelled = set(step.get("data") or {}) | set(sections)
            for name, part in sections.items():
                labelled |= set(part.get("data") or {})
                extra += [f"{prefix}.sections.{name}.data.{f}" for f in sorted(set(part.get("data") or {}) - fields)]
            missing += [f"{prefix}.data.{f}" for f in sorted(fields - labelled)]
            extra += [f"{prefix}.data.{f}" for f in sorted(set(step.get("data") or {}) - fields)]
            described = set(step.get("data_description") or {})
            extra += [f"{prefix}.data_description.{f}" for f in sorted(described - fields)]
    assert not missing, f"form fields without a label in en.json: {missing}"
    assert not extra, f"labels in en.json for fields the form does not have: {extra}"


def test_flow_step_placeholders_are_given() -> None:
    found, _ = flows()
    unfilled = []
    for flow in found:
        for form in flow.facts.forms:
            step = en(*flow.section, "step", form.step_id) or {}
            needed = set().union(*(placeholders(step.get(k) or "") for k in ("title", "description")))
            if form.placeholders is not None and not needed <= form.placeholders:
                given = sorted(form.placeholders)
                unfilled.append(f"{form.where}: step {form.step_id} needs {sorted(needed)}, gets {given}")
    assert not unfilled, unfilled


@pytest.mark.parametrize("kind", ["error", "abort"])
def test_flow_errors_and_abort_reasons_exist(kind: str) -> None:
    found, _ = flows()
    missing = []
    for flow in found:
        reasons = flow.facts.errors if kind == "error" else flow.facts.aborts
        section = en(*flow.section, kind) or {}
        prefix = f"{dotted(flow.section)}.{kind}"
        missing += [f"{prefix}.{r} ({at})" for r, at in sorted(reasons.items()) if r not in section]
    assert not missing, f"missing in en.json: {missing}"


def test_no_unused_flow_errors_or_aborts() -> None:
    """Every error and abort string in en.json is one the flow can produce (a stale one hints at a renamed key)."""
    found, _ = flows()
    unused = []
    for flow in found:
        for kind, reasons in (("error", flow.facts.errors), ("abort", flow.facts.aborts)):
            unused += [f"{dotted(flow.section)}.{kind}.{r}" for r in set(en(*flow.section, kind) or {}) - set(reasons)]
    assert not unused, f"error/abort strings in en.json that the flow never uses: {sorted(unused)}"


def test_subentry_types_have_their_labels() -> None:
    found, _ = flows()
    missing = []
    for flow in (f for f in found if f.section[0] == "config_subentries"):
        texts = en(*flow.section) or {}
        if not texts.get("entry_type"):
            missing.append(f"{dotted(flow.section)}.entry_type")
        for source in ("user", "reconfigure"):
            if f"async_step_{source}" in flow.step_methods and not (texts.get("initiate_flow") or {}).get(source):
                missing.append(f"{dotted(flow.section)}.initiate_flow.{source}")
    assert not missing, f"missing in en.json: {missing}"


def test_selector_options_have_labels() -> None:
    """``SelectSelectorConfig(options=..., translation_key=...)`` options have labels under ``selector``."""
    problems = []
    for path in sources():
        for call in (n for n in ast.walk(parse(path)) if isinstance(n, ast.Call)):
            kw = keywords(call)
            if "translation_key" not in kw or "options" not in kw or "translation_domain" in kw:
                continue
            if isinstance(call.func, ast.Name) and call.func.id.endswith("EntityDescription"):
                continue  # an enum sensor's options are its states, labelled under entity.<platform>.<key>.state
            try:
                key = resolve_str(kw["translation_key"], path)
                options = literal(kw["options"], constants(path))
            except Unresolved:
                problems.append(f"{where(path, call)}: selector options or translation_key not constant")
                continue
            values = {o["value"] if isinstance(o, dict) else o for o in options}
            labels = set(en("selector", key, "options") or {})
            if values != labels:
                problems.append(
                    f"{where(path, call)}: selector.{key}.options: "
                    f"code has {sorted(values)}, en.json has {sorted(labels)}"
                )
    assert not problems, problems
