"""The allow-listed HA actions: integration services the gates may call for a command, and nothing else.

An entity's own domain services (``tables.INTENT_SERVICES``) target the entity. A few integrations start their
devices through actions that target a *device* instead: HA core's ``home_connect`` starts a program with
``home_connect.set_program_and_options`` (``device_id``, ``affects_to``, ``program``, program options such as
``b_s_h_common_option_start_in_relative`` in seconds) or ``home_connect.start_selected_program`` (``device_id`` and
the same delay options). This table names each such action once: the intent that asks for it, the service, the
integration whose entities it may act through, the fields it fixes and how each param becomes a field. A command's
target is still one entity (the appliance's program select); its ``device_id`` is that entity's device in HA's
registry, never a caller's. Any other integration service is not in the vocabulary, so the Schema gate refuses it.
Nothing here imports Home Assistant.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field
from typing import Any

from .view import EntityInfo

START_IN = "b_s_h_common_option_start_in_relative"  # home_connect's "start in" program option, s


@dataclass(frozen=True, kw_only=True)
class AllowedAction:
    """One allow-listed integration action.

    Attributes:
        domain: the service's domain (the integration, ``home_connect``).
        service: the service name.
        fixed: service fields the action always sends (``affects_to: active_program``).
        fields: param name -> service field (``program`` -> ``program``, ``start_in_s`` -> :data:`START_IN`).

    """

    domain: str
    service: str
    fixed: Mapping[str, Any] = field(default_factory=dict)
    fields: Mapping[str, str] = field(default_factory=dict)


# intent -> the action; the params' types are the Schema gate's (``schema.PARAMS``).
ACTIONS: dict[str, AllowedAction] = {
    "start_program": AllowedAction(
        domain="home_connect",
        service="set_program_and_options",
        fixed={"affects_to": "active_program"},
        fields={"program": "program", "start_in_s": START_IN},
    ),
    "start_selected_program": AllowedAction(
        domain="home_connect", service="start_selected_program", fields={"start_in_s": START_IN}
    ),
}
ACTION_DOMAINS: frozenset[str] = frozenset(a.domain for a in ACTIONS.values())


def action_for(entity: EntityInfo, intent: str) -> AllowedAction | None:
    """Return the action ``intent`` asks for on ``entity``, or None.

    None when ``intent`` is no allow-listed action, or ``entity`` is not the action's integration's (its registry
    ``platform``) or belongs to no device.
    """
    action = ACTIONS.get(intent)
    if action is None or entity.platform != action.domain or not entity.device_id:
        return None
    return action


def action_data(action: AllowedAction, entity: EntityInfo, params: Mapping[str, Any]) -> dict[str, Any]:
    """Return the service data of ``action`` on ``entity``'s device: ``device_id``, the fixed fields, the params."""
    mapped = {action.fields[name]: value for name, value in params.items() if name in action.fields}
    return {"device_id": entity.device_id, **action.fixed, **mapped}
