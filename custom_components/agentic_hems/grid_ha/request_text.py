"""The persistent notification of an authorization request that waits, in HA's language (English or German)."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import date, datetime
from typing import Any

from homeassistant.util import dt as dt_util

from ..const import DOMAIN

TEXTS: dict[str, dict[str, str]] = {
    "en": {
        "title": "Agentic HEMS: authorization requested",
        "plan": "A grid plan",
        "message": "{summary}\n\nRequest `{request_id}` for {start} to {end} waits for an administrator: "
        "`{domain}.approve_authorization` or `{domain}.deny_authorization` (expires {expires}).",
    },
    "de": {
        "title": "Agentic HEMS: Freigabe angefragt",
        "plan": "Ein Netzplan",
        "message": "{summary}\n\nAnfrage `{request_id}` für {start} bis {end} wartet auf einen Administrator: "
        "`{domain}.approve_authorization` oder `{domain}.deny_authorization` (läuft {expires} ab).",
    },
}


def local_moment(moment: datetime, lang: str, today: date) -> str:
    """Return ``moment`` in local time: ``HH:MM`` on ``today``, else with its date (``en`` ISO, ``de`` ``dd.mm.yyyy``).

    ``lang`` is ``en`` or ``de``.
    """
    local = dt_util.as_local(moment)
    if local.date() == today:
        return local.strftime("%H:%M")
    return local.strftime("%d.%m.%Y %H:%M" if lang == "de" else "%Y-%m-%d %H:%M")


def request_note(request: Mapping[str, Any], lang: str, now: datetime) -> tuple[str, str]:
    """Return the notification's title and Markdown message for a stored ``request`` in ``lang`` (``en``/``de``).

    Its summary (else "A grid plan"), id, window and expiry; times local, with their date when not on ``now``'s day.
    Raises KeyError for another ``lang``.
    """
    texts, today = TEXTS[lang], dt_util.as_local(now).date()
    window = request["requested_window"]
    start, end, expires = (
        local_moment(datetime.fromisoformat(text), lang, today)
        for text in (window["start"], window["end"], request["expires_at"])
    )
    message = texts["message"].format(
        summary=request.get("summary") or texts["plan"],
        request_id=request["request_id"],
        start=start,
        end=end,
        expires=expires,
        domain=DOMAIN,
    )
    return texts["title"], message
