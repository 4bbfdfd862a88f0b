"""Repairs for devices the policy protects while HA's own Assist can act on them directly.

With "Prefer handling commands locally" (on by default), HA's built-in intents act on every entity exposed to Assist
before any conversation agent sees the request, so the gates cannot protect it. :class:`AssistExposureRepairs` raises
the fixable issue ``assist_exposed_<entry_id>_<entity_id>`` for every entity that is exposed to Assist
(``async_should_expose(hass, "conversation", ...)``) and on which the entry's policy holds or refuses some intent
(:func:`.gates.policy.guarded_intents`); the issue's fix flow (:mod:`..repairs`) un-exposes it. An issue is deleted
when its entity is no longer exposed, no longer protected or gone, and all of them when the entry unloads. Exposure
and registry changes, and states that appear, disappear or are renamed, trigger a check one second later; a check
still pending is cancelled when the entry unloads or HA stops (no timer outlives HA).
:func:`async_follow_gated_renames` keeps the ``gated_entities`` option on an entity whose entity_id changes.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from homeassistant.components.homeassistant.const import DATA_EXPOSED_ENTITIES
from homeassistant.components.homeassistant.exposed_entities import async_listen_entity_updates, async_should_expose
from homeassistant.const import EVENT_HOMEASSISTANT_STOP, EVENT_STATE_CHANGED
from homeassistant.core import CALLBACK_TYPE, Event, EventStateChangedData, HomeAssistant, callback
from homeassistant.helpers import entity_registry as er, issue_registry as ir
from homeassistant.helpers.debounce import Debouncer

from ..const import CONF_GATED_ENTITIES, DOMAIN, LOGGER
from ..gates.models import PolicyAction
from ..gates.policy import guarded_intents
from ..gates.tables import INTENT_SERVICES, PolicyRule, risk_level
from .ha_view import ASSISTANT, HassView

ISSUE_PREFIX = "assist_exposed_"
KEY_CONFIRM = "assist_exposed_confirm"  # some intents wait for an administrator, none is refused
KEY_DENY = "assist_exposed_deny"  # some intents are refused
CHECK_DELAY_S = 1.0


def issue_id(entry_id: str, entity_id: str) -> str:
    """Return the issue id of ``entity_id`` for the entry ``entry_id``."""
    return f"{ISSUE_PREFIX}{entry_id}_{entity_id}"


@callback
def async_follow_gated_renames(hass: HomeAssistant, entry_id: str) -> CALLBACK_TYPE:
    """Keep the entry's ``gated_entities`` option on a gated entity whose entity_id changes in the registry.

    HA keeps the entity's (hidden) exposure under its new id; the option follows it (the entry reloads), so the old
    id, which another entity may take later, is no longer gated. Returns the callback that stops listening.
    """

    @callback
    def _renamed(event: Event[er.EventEntityRegistryUpdatedData]) -> None:
        data = event.data
        if data["action"] != "update" or "old_entity_id" not in data:
            return
        old, new = data["old_entity_id"], data["entity_id"]
        entry = hass.config_entries.async_get_entry(entry_id)
        gated = list(entry.options.get(CONF_GATED_ENTITIES) or []) if entry is not None else []
        if entry is not None and old in gated:
            renamed = list(dict.fromkeys(new if e == old else e for e in gated))
            hass.config_entries.async_update_entry(entry, options={**entry.options, CONF_GATED_ENTITIES: renamed})

    return hass.bus.async_listen(er.EVENT_ENTITY_REGISTRY_UPDATED, _renamed)


@callback
def _appeared_gone_or_renamed(event_data: EventStateChangedData) -> bool:
    old, new = event_data["old_state"], event_data["new_state"]
    return old is None or new is None or old.name != new.name


class AssistExposureRepairs:
    """The entry's ``assist_exposed_*`` issues, kept in step with exposure, the registry and the policy.

    ``rules`` returns the entry's effective policy; ``view`` gives the entities, their device classes, the
    appliances' entities and the integration's own (never checked: the gates never act on them).
    """

    def __init__(
        self, hass: HomeAssistant, entry_id: str, view: HassView, rules: Callable[[], Sequence[PolicyRule]]
    ) -> None:
        """Check nothing yet; :meth:`async_start` checks and starts listening."""
        self.hass = hass
        self.entry_id = entry_id
        self.view = view
        self.rules = rules
        self.raised: set[str] = set()  # issue ids this entry raised
        self._debouncer = Debouncer(hass, LOGGER, cooldown=CHECK_DELAY_S, immediate=False, function=self.async_check)

    @callback
    def async_start(self) -> CALLBACK_TYPE:
        """Check now and after each relevant change; returns the callback that stops and deletes every issue.

        HA's stop cancels a pending check (the entry is not unloaded then); the issues stay for the next start's check.
        """
        unsubs = [
            self.hass.bus.async_listen(EVENT_HOMEASSISTANT_STOP, self._stopping),
            self.hass.bus.async_listen(er.EVENT_ENTITY_REGISTRY_UPDATED, self._changed),
            self.hass.bus.async_listen(EVENT_STATE_CHANGED, self._changed, event_filter=_appeared_gone_or_renamed),
        ]
        if DATA_EXPOSED_ENTITIES in self.hass.data:
            unsubs.append(async_listen_entity_updates(self.hass, ASSISTANT, self._changed))
        self.async_check()

        @callback
        def _stop() -> None:
            for unsub in unsubs:
                unsub()
            self._debouncer.async_shutdown()
            for raised in self.raised:
                ir.async_delete_issue(self.hass, DOMAIN, raised)
            self.raised.clear()

        return _stop

    @callback
    def _stopping(self, _: Event) -> None:
        self._debouncer.async_shutdown()

    @callback
    def _changed(self, *_: Any) -> None:
        self._debouncer.async_schedule_call()

    def exposed_protected(self) -> dict[str, dict[str, PolicyAction]]:
        """Return entity_id -> its guarded intents, for every protected entity exposed to Assist."""
        if DATA_EXPOSED_ENTITIES not in self.hass.data:
            return {}
        rules, appliances, own = self.rules(), self.view.appliance_entity_ids(), self.view.own_entity_ids()
        found: dict[str, dict[str, PolicyAction]] = {}
        for entity_id in sorted(set(self.view.entity_ids()) - own):
            domain = entity_id.split(".", 1)[0]
            if domain not in INTENT_SERVICES or (entity := self.view.entity(entity_id)) is None:
                continue
            appliance = entity_id in appliances
            risk = risk_level(domain, entity.device_class, appliance=appliance)
            guarded = guarded_intents(rules, domain, risk, appliance=appliance)
            if guarded and async_should_expose(self.hass, ASSISTANT, entity_id):
                found[entity_id] = guarded
        return found

    @callback
    def async_check(self) -> None:
        """Raise an issue for each exposed protected entity; delete this entry's others."""
        found = self.exposed_protected()
        wanted = {issue_id(self.entry_id, entity_id) for entity_id in found}
        for stale in self.raised - wanted:
            ir.async_delete_issue(self.hass, DOMAIN, stale)
        entry = self.hass.config_entries.async_get_entry(self.entry_id)
        for entity_id, guarded in found.items():
            denied = sorted(i for i, a in guarded.items() if a is PolicyAction.DENY)
            state = self.hass.states.get(entity_id)
            placeholders: dict[str, Any] = {
                "name": state.name if state is not None else entity_id,
                "entity_id": entity_id,
                "actions": ", ".join(i.replace("_", " ") for i in denied or sorted(guarded)),  # the rules' words
                "entry_title": entry.title if entry is not None else self.entry_id,
            }
            ir.async_create_issue(
                self.hass,
                DOMAIN,
                issue_id(self.entry_id, entity_id),
                is_fixable=True,
                is_persistent=False,  # checked again at every start
                severity=ir.IssueSeverity.ERROR,
                translation_key=KEY_DENY if denied else KEY_CONFIRM,
                translation_placeholders=placeholders,
                data={"entry_id": self.entry_id, "entity_id": entity_id},
            )
        self.raised = wanted
