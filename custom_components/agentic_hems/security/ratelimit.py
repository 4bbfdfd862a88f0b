"""Rate limits for ``ask``: global daily and hourly limits, and a per-user per-minute limit."""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from datetime import datetime, timedelta

WINDOWS = {"day": timedelta(days=1), "hour": timedelta(hours=1), "minute": timedelta(minutes=1)}


@dataclass
class RateLimiter:
    """Sliding windows: at most ``daily`` and ``hourly`` requests in total and ``per_user_minute`` per user.

    Requests without a user (automations) share the user key ``None``. Only accepted requests count.
    """

    daily: int = 200
    hourly: int = 50
    per_user_minute: int = 20
    _all: deque[datetime] = field(default_factory=deque)
    _users: dict[str | None, deque[datetime]] = field(default_factory=dict)

    def check(self, user_id: str | None, now: datetime) -> str | None:
        """None and the request is counted, or the exceeded window (``day``, ``hour`` or ``minute``)."""
        while self._all and now - self._all[0] >= WINDOWS["day"]:
            self._all.popleft()
        mine = self._users.setdefault(user_id, deque())
        while mine and now - mine[0] >= WINDOWS["minute"]:
            mine.popleft()
        if len(self._all) >= self.daily:
            return "day"
        if sum(1 for at in self._all if now - at < WINDOWS["hour"]) >= self.hourly:
            return "hour"
        if len(mine) >= self.per_user_minute:
            return "minute"
        self._all.append(now)
        mine.append(now)
        return None
