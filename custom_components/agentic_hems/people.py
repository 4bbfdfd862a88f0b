"""Who is an administrator, and who may see what: the one rule for every path where a person decides.

- **Administrator**: an active HA user in the admin group (``User.is_admin and User.is_active``). Nothing else is:
  a call without a user (an automation, a script, the scheduler, an agent: ``context.user_id is None``), a user id HA
  does not know (a deleted user), an inactive admin and every other user are refused where a person must decide
  (confirm or reject a command, turn "Allow device control" on, approve or deny an authorization request, verify
  the audit chain).
- **Privacy between household members**: a trace belongs to the user who asked (its ``history[0].user_id``), a run
  to its ``user_id``. Administrators see everything; other users only what they own. A trace or run without a user
  (the scheduler, an automation) is visible to administrators only. A caller without a user (an automation or a
  script that an administrator set up) reads like the system: everything.
- **Grid toolkit scopes** follow the same reading of a caller (:func:`async_viewer`): no user is the system, an
  administrator gets every tenant scope, any other user (also an id HA does not know) the scopes the options grant;
  acknowledging an incident needs an active user with the incident scope.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from typing import Any

from homeassistant.auth.models import User
from homeassistant.core import Context, HomeAssistant
from homeassistant.exceptions import ServiceValidationError

from .const import DOMAIN


def is_admin(user: User | None) -> bool:
    """Tell whether ``user`` is an administrator: an active user in the admin group."""
    return user is not None and user.is_active and user.is_admin


async def async_active_user(hass: HomeAssistant, user_id: str | None) -> User | None:
    """Return the active HA user with this id, or None (no user, unknown or inactive)."""
    user = await hass.auth.async_get_user(user_id) if user_id else None
    return user if user is not None and user.is_active else None


async def async_admin(hass: HomeAssistant, user_id: str | None) -> User | None:
    """Return the administrator with this id, or None (no user, unknown, inactive or not an admin)."""
    user = await async_active_user(hass, user_id)
    return user if is_admin(user) else None


async def async_non_admin_users(hass: HomeAssistant) -> list[User]:
    """Return the active people who are not administrators (system-generated users are not people).

    An administrator may grant them grid toolkit scopes.
    """
    return [
        user
        for user in await hass.auth.async_get_users()
        if not user.system_generated and user.is_active and not is_admin(user)
    ]


async def async_require_admin(hass: HomeAssistant, context: Context, translation_key: str) -> User:
    """Return the context's administrator, else raise a translated :class:`ServiceValidationError`.

    It is a validation error, not ``Unauthorized``: over REST a 401 counts as a failed login towards an IP ban.
    """
    if (user := await async_admin(hass, context.user_id)) is None:
        raise ServiceValidationError(translation_domain=DOMAIN, translation_key=translation_key)
    return user


@dataclass(frozen=True, slots=True)
class Viewer:
    """Who reads traces or runs: ``user_id`` None is the system (an automation or script), which sees all."""

    user_id: str | None
    admin: bool

    @property
    def sees_all(self) -> bool:
        """Tell whether every record is visible (the system or an administrator)."""
        return self.user_id is None or self.admin

    def may_see(self, owner: str | None) -> bool:
        """Whether a record owned by ``owner`` (None: no user asked) is visible."""
        return self.sees_all or (owner is not None and owner == self.user_id)

    def may_see_trace(self, record: Mapping[str, Any]) -> bool:
        """Tell whether the trace ``record`` is visible."""
        return self.may_see(trace_owner(record))

    def may_see_run(self, run: Mapping[str, Any]) -> bool:
        """Tell whether the assistant's ``run`` is visible."""
        owner = run.get("user_id")
        return self.may_see(owner if isinstance(owner, str) else None)


def viewer_for_user(user: User) -> Viewer:
    """Return a logged-in user (a websocket connection) as a viewer."""
    return Viewer(user.id, is_admin(user))


async def async_viewer(hass: HomeAssistant, context: Context) -> Viewer:
    """Return the context's caller as a viewer (no user: the system)."""
    if context.user_id is None:
        return Viewer(None, False)
    return Viewer(context.user_id, await async_admin(hass, context.user_id) is not None)


def trace_owner(record: Mapping[str, Any]) -> str | None:
    """Return the user who asked for a traced command (``history[0].user_id``), or None (scheduler, automation)."""
    history = record.get("history")
    if not isinstance(history, list) or not history or not isinstance(history[0], Mapping):
        return None
    owner = history[0].get("user_id")
    return owner if isinstance(owner, str) else None
