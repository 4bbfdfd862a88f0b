"""The assistant's own sentences in English and German, keyed by message id (pure core: no ``homeassistant``).

:func:`say` fills one message in a language; :func:`language` maps a language code ("de", "de-CH", "en-GB", None)
to ``en`` or ``de`` (anything not German is English). Outcome sentences (:mod:`.outcomes`), the offline planner's
summaries, the loop's stop messages and the out-of-scope refusal come from here, and the German placeholders of
translated errors (:func:`rejection`, :func:`window`); provider failures are the shell's translations
(``exceptions`` in translations/).

Gate reasons are the gates' own English sentences (kept verbatim in traces and English summaries). German summaries
say the reasons listed in :data:`REASONS_DE` (identified by :func:`.outcomes.reason_id`) and leave other reasons to
the trace.
"""

from __future__ import annotations

import re
from typing import Any

from ..security import DEFINITE, MAX_CHARS, MAX_WORDS, OUT_OF_SCOPE_MESSAGE, Assessment

LANGUAGES = ("en", "de")

TEXTS: dict[str, tuple[str, str]] = {
    "command.executed": ("{what}: executed.", "{what}: ausgeführt."),
    "command.pending_confirmation": (
        "{what}: waits for an administrator to confirm.",
        "{what}: wartet auf die Bestätigung durch einen Administrator.",
    ),
    "command.dry_run": ("{what}: not executed (dry run{why}).", "{what}: nicht ausgeführt (Probelauf{why})."),
    "command.failed": ("{what}: failed{why}.", "{what}: fehlgeschlagen{why}."),
    "command.cancelled": ("{what}: cancelled.", "{what}: abgebrochen."),
    "command.rejected": ("{what}: rejected.", "{what}: abgelehnt."),
    "command.expired": ("{what}: expired.", "{what}: abgelaufen."),
    "command.invalid": (
        "{what}: not run, the command was invalid{why}.",
        "{what}: nicht ausgeführt, der Befehl war ungültig{why}.",
    ),
    "command.blocked": (
        "{what}: blocked by the {gate} check{why}.",
        "{what}: von der Prüfung „{gate}“ blockiert{why}.",
    ),
    "command.other": ("{what}: {state}.", "{what}: {state}."),
    "appliance.started": ("{appliance}: switched on now.", "{appliance}: jetzt eingeschaltet."),
    "appliance.started_withdrawn": (
        "{appliance}: switched on now. This run replaces its planned run ({start} to {end}), which is withdrawn.",
        (
            "{appliance}: jetzt eingeschaltet. Dieser Lauf ersetzt den geplanten Lauf ({start} bis {end}), der "
            "zurückgezogen ist."
        ),
    ),
    "appliance.plan_stands": (
        "The planned run of {appliance} ({start} to {end}) still stands.",
        "Der geplante Lauf von {appliance} ({start} bis {end}) bleibt bestehen.",
    ),
    "appliance.already_on": ("{appliance}: already on.", "{appliance}: ist schon eingeschaltet."),
    "appliance.next_run": (
        "Its next run is planned for {start} to {end}.",
        "Der nächste Lauf ist für {start} bis {end} geplant.",
    ),
    "plan.cleared": ("{appliance}: plan cleared.", "{appliance}: Plan gelöscht."),
    "plan.kept": (
        "{appliance}: the plan you set stays ({start} to {end}); name it to plan it again.",
        "{appliance}: Der von dir gesetzte Plan bleibt ({start} bis {end}); nenne das Gerät, um es neu zu planen.",
    ),
    "plan.window": (
        "{appliance}: {start} to {end}, {cost} ({note}).",
        "{appliance}: {start} bis {end}, {cost} ({note}).",
    ),
    "plan.window_only": ("{appliance}: {start} to {end}, {cost}.", "{appliance}: {start} bis {end}, {cost}."),
    "plan.saves": ("saves {savings}", "spart {savings}"),
    "plan.doubtful": ("planned on doubtful prices", "auf zweifelhaften Preisen geplant"),
    "plan.shared_fuse": (
        "{extra} more than starting now: the main fuse is shared with the other plans",
        "{extra} mehr als ein Start jetzt: die Hauptsicherung wird mit den anderen Plänen geteilt",
    ),
    "plan.not_planned": ("{appliance}: not planned{why}.", "{appliance}: nicht geplant{why}."),
    "refusal": ("{what}: refused{why}.", "{what}: abgelehnt{why}."),
    "authorization.pending": (
        "Grid plan request {request_id}: waits for an administrator to approve it.",
        "Netzplan-Anfrage {request_id}: wartet auf die Freigabe durch einen Administrator.",
    ),
    "authorization.denied": (
        "Grid plan request {request_id}: denied{why}.",
        "Netzplan-Anfrage {request_id}: abgelehnt{why}.",
    ),
    "nothing_done": ("Nothing was done.", "Es wurde nichts ausgeführt."),
    "stop.budget": (
        "Stopped: the {budget} s budget is spent.",
        "Abgebrochen: Das Zeitbudget von {budget} s ist aufgebraucht.",
    ),
    "stop.iterations": (
        "Stopped after {iterations} iterations without finishing.",
        "Nach {iterations} Schritten ohne Abschluss abgebrochen.",
    ),
    "offline.unknown": (
        (
            "I did not understand the request, so nothing was done. I can plan your appliances ({names}) and tell "
            "the prices."
        ),
        (
            "Ich habe die Anfrage nicht verstanden, daher wurde nichts ausgeführt. Ich kann deine Geräte planen "
            "({names}) und die Preise nennen."
        ),
    ),
    "offline.switch_all": (
        (
            'Nothing was switched on and no plan was changed: I switch on only devices you name ("turn on the '
            'dishwasher now"). To plan all appliances, say "schedule all appliances".'
        ),
        (
            "Es wurde nichts eingeschaltet und kein Plan geändert: Ich schalte nur Geräte ein, die du nennst "
            "(„schalte die Spülmaschine jetzt ein“). Um alle Geräte zu planen, sag „plane alle Geräte“."
        ),
    ),
    "offline.no_appliances": ("no appliances yet", "noch keine Geräte"),
    "offline.price_now": ("Price now: {price} {unit}.", "Preis jetzt: {price} {unit}."),
    "offline.cheapest": (
        "Cheapest slot: {start} at {price} {unit}; prices from {low} to {high} {unit}.",
        "Günstigster Zeitraum: {start} zu {price} {unit}; Preise von {low} bis {high} {unit}.",
    ),
    "offline.error": ("{action} failed: {error}.", "{action} fehlgeschlagen: {error}."),
    "offline.nothing": ("Nothing to do.", "Nichts zu tun."),
    "offline.why": ("{device}: {now} until {until}, then {then}.", "{device}: {now} bis {until}, danach {then}."),
    "offline.why_all": ("{device}: {now} to the plan's end.", "{device}: {now} bis zum Ende des Plans."),
    "out_of_scope": (
        OUT_OF_SCOPE_MESSAGE,
        (
            "Ich kann nur bei Aufgaben des Energiemanagements im Haus helfen, etwa beim Planen von Geräten\n"
            "(Waschmaschine, Geschirrspüler, E-Auto, Wärmepumpe) und beim Optimieren des Energieverbrauchs.\n"
            "Frag mich nach der Planung deiner flexiblen Lasten oder nach den Strompreisen."
        ),
    ),
}

# German for the gate and plan reasons a summary names; the English is the gate's or planner's own sentence.
REASONS_DE: dict[str, str] = {
    "nothing_requested": "die Anfrage verlangt keine Geräteaktion",
    "not_requested": "die Anfrage verlangt nicht „{command}“",
    "value_not_requested": "die Anfrage verlangt {asked}, nicht {proposed}",
    "value_not_planned": "der Plan sieht {asked} vor, nicht {proposed}",
    "plan_no_value": "der Plan sieht keinen Wert für {target} vor",
    "grid_setpoint": "ein Netz-Sollwert: nur eine genehmigte Freigabeanfrage setzt ihn",
    "control_off": "die Gerätesteuerung ist aus",
    "dry_run_requested": "ein Probelauf wurde verlangt",
    "pending_limit": "zu viele Befehle warten schon auf Bestätigung",
    "policy_deny": "die Richtlinie verbietet es",
    "plan_not_requested": "die Anfrage verlangt das nicht",
    "window_too_short": "das Zeitfenster ist für den Lauf zu kurz",
    "no_prices": "im Zeitfenster sind keine Preise bekannt",
    "power_limit": "die Hauptsicherung lässt keinen Platz",
    "invalid": "die Last ist ungültig",
    "agent_not_requested": "die Anfrage nennt {target} nicht",
    "grid_not_requested": "die Anfrage verlangt keine Netz- oder Batterieaktion",
    "incident_not_requested": "die Anfrage verlangt keine Vorfallmeldung",
}
# English for the gate reasons a summary names in words (the gate's own sentence names the entity id and intent).
REASONS_EN: dict[str, str] = {
    "nothing_requested": "the request asks for no device action",
    "not_requested": "the request does not ask to {command}",
    "value_not_requested": "the request asks for {asked}, not {proposed}",
    "value_not_planned": "the plan sets {asked}, not {proposed}",
    "plan_no_value": "the plan sets no value for {target}",
    "grid_setpoint": "a grid setpoint: only an approved authorization request sets it",
    "control_off": "device control is off",
    "dry_run_requested": "a dry run was asked for",
    "pending_limit": "too many commands already wait for confirmation",
    "policy_deny": "the policy denies it",
}
# German for why the security layer rejected a request (the English is ``Assessment.reason``) and for the rate
# limits' windows: placeholders of the translated errors ``request_rejected`` and ``rate_limited``.
REJECTIONS_DE = {
    "empty": "leere Anfrage",
    "too_long": "länger als {maximum} Zeichen",
    "too_many_words": "mehr als {maximum} Wörter",
    "injection": "Injektionsversuch: {flags}",
    "nothing_left": "nach der Bereinigung bleibt nichts übrig",
}
# An action the orchestrator refused (its type) in words, English and German; {target} is what it was for.
REFUSED_ACTIONS: dict[str, tuple[str, str]] = {
    "REQUEST_AUTHORIZATION": ("Asking an administrator to approve a grid plan", "Freigabe eines Netzplans anfragen"),
    "CREATE_INCIDENT": ("Reporting an incident", "Vorfall melden"),
    "CALL_AGENT": ("Asking the specialist for {target}", "Fachagent für {target} fragen"),
}
# The offline planner's steps (action types) and their error codes in words, English and German; another error is
# the tool's own message, as it is.
STEP_WORDS: dict[str, tuple[str, str]] = {
    "GET_PRICES": ("Looking up the prices", "Preisabfrage"),
    "GET_CALENDAR_CONSTRAINT": ("Reading the calendar", "Kalenderabfrage"),
    "CALCULATE_WINDOW_SUMS": ("Comparing time windows", "Vergleich der Zeitfenster"),
    "SCHEDULE": ("Planning", "Planung"),
    "EVALUATE_COMMAND": ("Checking the device command", "Prüfung des Gerätebefehls"),
    "EXPLAIN_DEVICE": ("Explaining the device", "Erklärung des Geräts"),
}
STEP_ERRORS: dict[str, tuple[str, str]] = {
    "no_prices": ("no prices are known yet", "noch keine Preise bekannt"),
    "home_plan_not_configured": ("no whole-home plan is set up", "kein Hausplan eingerichtet"),
    "not_requested": ("the request does not ask for it", "die Anfrage verlangt das nicht"),
}
WINDOWS_DE = {"minute": "Minute", "hour": "Stunde", "day": "Tag"}
GATES_EN = {
    "input_guard": "input",
    "schema": "command",
    "device_resolved": "device",
    "capability": "capability",
    "freshness": "freshness",
    "policy": "policy",
    "dry_run": "dry-run",
    "execution": "execution",
}
GATES_DE = {
    "input_guard": "Eingabeprüfung",
    "schema": "Schema",
    "device_resolved": "Gerät gefunden",
    "capability": "Fähigkeit",
    "freshness": "Aktualität",
    "policy": "Richtlinie",
    "dry_run": "Probelauf",
    "execution": "Ausführung",
}
_WEEKDAYS_DE = {"Mon": "Mo", "Tue": "Di", "Wed": "Mi", "Thu": "Do", "Fri": "Fr", "Sat": "Sa", "Sun": "So"}


def language(code: str | None) -> str:
    """``de`` for a German language code ("de", "de-AT", "de_CH"), else ``en``."""
    return "de" if (code or "").replace("_", "-").split("-")[0].casefold() == "de" else "en"


def say(key: str, lang: str, **placeholders: Any) -> str:
    """Message ``key`` in ``lang`` (``en`` or ``de``; see :func:`language`) with ``placeholders`` filled in.

    Raises:
        KeyError: an unknown ``key`` or a missing placeholder.

    """
    return TEXTS[key][1 if lang == "de" else 0].format(**placeholders)


def number(value: Any, lang: str) -> str:
    """``value`` as written in ``lang``: a German decimal comma for numbers; anything else unchanged."""
    text = str(value)
    return text.replace(".", ",") if lang == "de" and isinstance(value, int | float) else text


def decimal_commas(text: str, lang: str) -> str:
    """Return ``text`` with its decimal points as decimal commas in German ("21.5°" → "21,5°")."""
    return re.sub(r"(?<=\d)\.(?=\d)", ",", text) if lang == "de" else text


def money(value: Any, currency: Any, lang: str) -> str:
    """Return an amount in cents with its currency: ``0.9158, "EUR"`` → "0.92 EUR" (German "0,92 EUR").

    A value that is no number is written as it is ("None EUR").
    """
    amount = f"{value:.2f}" if isinstance(value, int | float) else str(value)
    return f"{amount.replace('.', ',') if lang == 'de' else amount} {currency}"


def local_time(text: Any, lang: str) -> str:
    """Return a local time as the tools write it ("Mon 02:00") in ``lang``: German weekday abbreviations for ``de``."""
    day, sep, rest = str(text).partition(" ")
    return f"{_WEEKDAYS_DE.get(day, day)}{sep}{rest}" if lang == "de" else str(text)


def rejection(assessment: Assessment, lang: str) -> str:
    """Why the security layer rejected a request, in ``lang``: the assessment's own ``reason`` in English."""
    if lang != "de":
        return assessment.reason
    flags = assessment.flags
    definite = [f for f in flags if f in DEFINITE]
    if definite:
        return REJECTIONS_DE["injection"].format(flags=", ".join(definite))
    for flag, maximum in (("empty", 0), ("too_long", MAX_CHARS), ("too_many_words", MAX_WORDS)):
        if flag in flags:
            return REJECTIONS_DE[flag].format(maximum=maximum)
    return REJECTIONS_DE["nothing_left"]


def window(name: str, lang: str) -> str:
    """Return a rate limit's window (``minute``, ``hour``, ``day``) in ``lang``."""
    return WINDOWS_DE.get(name, name) if lang == "de" else name
