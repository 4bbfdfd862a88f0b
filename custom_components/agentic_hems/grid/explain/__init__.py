"""Plain-language and structured explanations of a dispatch plan (the ``generate_explanation`` tool).

Deterministic: no model, no clock, no locale; the same plan, audience and language give the same text. The plan is
the dict the ``optimize_dispatch`` tool produces (``plan_id``, ``objective``, ``step_min``, ``currency``, ``solver``,
``solver_status``, ``cost``, ``baseline_value``, ``gap``, ``constraints``, ``assets``, ``schedule``, ``conflicts``,
``assumptions``, ...). Times in the plan are ISO 8601; the text prints them as ``HH:MM UTC`` (no time zone is known
here). Powers are kW, energies kWh, prices currency/kWh, money in the plan's currency (EUR by default).

Audiences: ``operator`` (which steps charge or discharge at what power, the SoC path, peak import against the import
limit), ``manager`` (cost, idle-battery baseline, savings; one or two sentences), ``auditor`` (provenance and what can
be checked: plan id, solver, status, gap, objective, the cost recomputed from the schedule, constraints, assumptions,
creation time). Languages: ``en`` (decimal point) and ``de`` (decimal comma, ``1.234,56``).

The rejected alternatives are computed from the plan's own numbers, with grid limits not applied (a breach is named
in the reason): ``idle_battery`` (the plan's ``baseline_value``, or, when it is missing, every battery idle priced from
the schedule) and ``charge_immediately`` (every battery charged at full power from the first step until
``soc_max_kwh``, then idle; the charge efficiency is the asset's or 0.95).

The package reads the plan (:mod:`.inputs`), works out its numbers and the alternatives (:mod:`.analysis`) and writes
them for the audience (:mod:`.structured`, :mod:`.render`). The wording is in ``strings/en.json`` and
``strings/de.json`` beside the code (:mod:`.text`), not in the integration's ``translations/``: this package is part
of the core, which never imports Home Assistant and also answers outside it (the grid tools, the benchmarks), while
HA's translation files hold only the categories HA itself loads (entities, flows, exceptions, services). The
JSON files are flat (message id -> ``str.format`` template), the same ids and placeholders in both, so a translator
edits one file and adds a language by adding one (and its code to :data:`LANGUAGES`).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from .analysis import figures, read_plan
from .render import auditor_lines, infeasible_lines, manager_lines, operator_lines
from .structured import assumption_texts, rejected_alternatives, structured_result, trade_off_texts

__all__ = ["AUDIENCES", "LANGUAGES", "explain"]

AUDIENCES = ("operator", "manager", "auditor")
LANGUAGES = ("en", "de")


def explain(plan: Mapping[str, Any], audience: str, lang: str) -> dict[str, Any]:
    """Explain a dispatch plan to ``audience`` in ``lang``.

    ``plan``: the ``optimize_dispatch`` plan dict (see the module docstring; missing keys are tolerated and shown as
    n/a). ``audience``: one of :data:`AUDIENCES`; ``lang``: one of :data:`LANGUAGES`.

    Returns ``{"text": str, "structured": {...}}`` where ``structured`` holds ``assumptions`` and ``trade_offs``
    (lists of strings in ``lang``), ``rejected_alternatives`` (a list of ``{"name", "label", "cost", "delta",
    "reason"}``: ``name`` is the stable id ``idle_battery`` or ``charge_immediately``, ``label`` and ``reason`` are in
    ``lang``, ``cost`` is in the plan's currency over the horizon and ``delta`` = alternative cost - plan cost, positive
    when the plan is cheaper, ``None`` when either is unknown) and ``figures`` (language-independent: ``cost``,
    ``baseline_value``, ``savings`` = baseline - cost, ``savings_pct`` = savings / baseline x 100 (only for a positive
    baseline), ``peak_import_kw``, ``energy_charged_kwh`` and ``energy_discharged_kwh`` summed over the batteries;
    ``None`` when unknown). Deterministic: the same arguments give the same result.

    Raises ValueError for an unknown audience or language, or a schedule time that is not ISO 8601.
    """
    if audience not in AUDIENCES:
        raise ValueError(f"unknown audience {audience!r}; expected one of {', '.join(AUDIENCES)}")
    if lang not in LANGUAGES:
        raise ValueError(f"unknown language {lang!r}; expected one of {', '.join(LANGUAGES)}")
    view = read_plan(plan, lang)
    assumptions = assumption_texts(view)
    structured = structured_result(assumptions, trade_off_texts(view), rejected_alternatives(view), figures(view))
    if audience == "auditor":
        text = "\n".join(auditor_lines(view, assumptions))
    elif view.infeasible:
        text = "\n".join(infeasible_lines(view, audience))
    elif audience == "manager":
        text = " ".join(manager_lines(view))
    else:
        text = "\n".join(operator_lines(view))
    return {"text": text, "structured": structured}
