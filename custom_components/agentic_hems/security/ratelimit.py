"""Rate limits as sliding windows: per user per minute, and per day and hour for all users together or per user.

``ask`` (the site's model costs) counts its day and hour for all users together; the LLM API's tools count them per
user (``shared=False``), so one person's calls never use up another's. An administrator may be exempt from the day
and hour windows in either (``ask``'s model cost stays bounded by the daily cost cap).
A refusal says which window is full and when a call is possible again.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta

WINDOWS = {"day": timedelta(days=1), "hour": timedelta(hours=1), "minute": timedelta(minutes=1)}


@dataclass(frozen=True)
class Refusal:
    """A request past a limit: the full ``window`` (``day``, ``hour`` or ``minute``) and ``retry_at``.

    ``retry_at`` (aware UTC) is the first moment at which the same caller is admitted again, when nothing else is
    counted meanwhile: the latest over all full windows.
    """

    window: str
    retry_at: datetime


def _free_at(stamps: deque[datetime], now: datetime, span: timedelta, limit: int) -> datetime | None:
    """Return when the window of ``span`` before ``now`` holds fewer than ``limit`` of ``stamps``; None if it does now.

    ``stamps`` are ascending; a stamp leaves the window ``span`` after it.
    """
    recent = [at for at in stamps if now - at < span]
    if len(recent) < limit:
        return None
    return recent[len(recent) - limit] + span if limit > 0 else now + span


@dataclass
class RateLimiter:
    """At most ``daily`` and ``hourly`` requests, and ``per_user_minute`` per user, in sliding windows.

    ``shared`` (the default) counts the day and hour windows for all users together; otherwise each user has their own.
    Requests without a user (automations, scripts) share the user key ``None``. Only accepted requests count.
    """

    daily: int = 200
    hourly: int = 50
    per_user_minute: int = 20
    shared: bool = True
    _all: deque[datetime] = field(default_factory=deque)
    _users: dict[str | None, deque[datetime]] = field(default_factory=dict)

    def check(self, user_id: str | None, now: datetime, *, exempt: bool = False) -> Refusal | None:
        """Return None and count the request, or the :class:`Refusal` of a full window (nothing counted).

        ``exempt`` (an administrator) lifts the day and hour windows, so no one else's calls can lock them out; the
        minute window holds for everyone, and in a ``shared`` limiter their calls still count toward the others'
        day and hour.
        """
        while self._all and now - self._all[0] >= WINDOWS["day"]:
            self._all.popleft()
        mine = self._users.setdefault(user_id, deque())
        while mine and now - mine[0] >= WINDOWS["day"]:
            mine.popleft()
        counted = self._all if self.shared else mine
        limits = [("minute", mine, self.per_user_minute)]
        if not exempt:
            limits += [("day", counted, self.daily), ("hour", counted, self.hourly)]
        full = [
            Refusal(name, free)
            for name, stamps, limit in limits
            if (free := _free_at(stamps, now, WINDOWS[name], limit)) is not None
        ]
        if full:
            return max(full, key=lambda refusal: refusal.retry_at)
        if self.shared:
            self._all.append(now)
        mine.append(now)
        return None
