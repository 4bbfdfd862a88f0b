"""Fix flows for the integration's repair issues.

``assist_exposed_<entry_id>_<entity_id>`` (:mod:`.control.assist_exposure`): a confirm step that says why HA's own
Assist can act on the device before the gates see it; on confirmation the entity is un-exposed from Assist
(``async_expose_entity``) and, when ``keep_gated`` is ticked (the default), added to the entry's ``gated_entities``
option, so Agentic HEMS's agent can still reach it through the gates (the entry reloads); unticked, it is taken
out of that option too. It aborts with
``entry_missing`` when the entry is gone.

``audit_chain_broken_<entry_id>``: a confirm step, then :meth:`.grid_ha.audit_log.AuditLog.async_new_epoch`
archives the broken audit file and starts a new epoch that cites the last anchored head. The flow aborts with
``not_loaded`` when the entry's audit log is not loaded and with ``repair_failed`` when the files cannot be written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from homeassistant.components.homeassistant.exposed_entities import async_expose_entity
from homeassistant.components.repairs import ConfirmRepairFlow, RepairsFlow
from homeassistant.core import HomeAssistant
from homeassistant.helpers import issue_registry as ir
from homeassistant.helpers.selector import BooleanSelector

from .const import CONF_GATED_ENTITIES
from .control.assist_exposure import ISSUE_PREFIX as EXPOSED_PREFIX
from .control.ha_view import ASSISTANT
from .grid_ha.audit_log import ISSUE_PREFIX, AuditLog, async_get_audit_log
from .validation import vol

if TYPE_CHECKING:
    # Version-specific (types only): HA 2026.10's repair flows return RepairsFlowResult; HA 2026.4 has no such name
    # (its flows return data_entry_flow.FlowResult), where the ignored import makes the annotations Any.
    from homeassistant.components.repairs import RepairsFlowResult  # type: ignore[attr-defined, unused-ignore]

REPAIR_REASON = "repair issue confirmed"
KEEP_GATED = "keep_gated"


class AuditChainRepairFlow(ConfirmRepairFlow):
    """Confirm, then start a new audit epoch for one entry."""

    def __init__(self, entry_id: str) -> None:
        """Create the flow for the entry ``entry_id``."""
        self.entry_id = entry_id

    def _log(self) -> AuditLog | None:
        return async_get_audit_log(self.hass, self.entry_id)

    async def async_step_init(self, user_input: dict[str, str] | None = None) -> RepairsFlowResult:
        """Abort at once when the entry's audit log is not loaded; otherwise ask for confirmation."""
        if self._log() is None:
            return self.async_abort(reason="not_loaded")
        return await self.async_step_confirm()

    async def async_step_confirm(self, user_input: dict[str, str] | None = None) -> RepairsFlowResult:
        """Show the problem (the issue's placeholders); on confirmation archive and start the new epoch."""
        if user_input is None:
            return await super().async_step_confirm()
        if (log := self._log()) is None:
            return self.async_abort(reason="not_loaded")
        try:
            await log.async_new_epoch(REPAIR_REASON)
        except OSError as err:
            return self.async_abort(reason="repair_failed", description_placeholders={"error": str(err)})
        return self.async_create_entry(data={})


class AssistExposureRepairFlow(RepairsFlow):
    """Confirm, then un-expose one entity from Assist (and keep it reachable through the gates if asked)."""

    def __init__(self, entry_id: str, entity_id: str) -> None:
        """Create the flow for ``entity_id`` of the entry ``entry_id``."""
        self.entry_id = entry_id
        self.entity_id = entity_id

    async def async_step_init(self, user_input: dict[str, bool] | None = None) -> RepairsFlowResult:
        """Go to the confirm step."""
        return await self.async_step_confirm()

    async def async_step_confirm(self, user_input: dict[str, bool] | None = None) -> RepairsFlowResult:
        """Show why (the issue's placeholders) and the ``keep_gated`` choice; on submit un-expose the entity."""
        if (entry := self.hass.config_entries.async_get_entry(self.entry_id)) is None:
            return self.async_abort(reason="entry_missing")
        if user_input is None:
            issue = ir.async_get(self.hass).async_get_issue(self.handler, self.issue_id)
            return self.async_show_form(
                step_id="confirm",
                data_schema=vol.Schema({vol.Required(KEEP_GATED, default=True): BooleanSelector()}),
                description_placeholders=dict(issue.translation_placeholders or {}) if issue else None,
            )
        gated = list(entry.options.get(CONF_GATED_ENTITIES) or [])
        wanted = [e for e in gated if e != self.entity_id] + ([self.entity_id] if user_input.get(KEEP_GATED) else [])
        if set(wanted) != set(gated):  # unticked: no longer gated either, as the box says
            options = {**entry.options, CONF_GATED_ENTITIES: wanted}
            self.hass.config_entries.async_update_entry(entry, options=options)  # the entry reloads with it
        async_expose_entity(self.hass, ASSISTANT, self.entity_id, False)
        return self.async_create_entry(data={})


async def async_create_fix_flow(
    hass: HomeAssistant, issue_id: str, data: dict[str, str | int | float | None] | None
) -> RepairsFlow:
    """Return the fix flow of a fixable issue of this integration (see the module docstring)."""
    if issue_id.startswith(EXPOSED_PREFIX) and data and isinstance(data.get("entity_id"), str):
        return AssistExposureRepairFlow(str(data.get("entry_id")), str(data["entity_id"]))
    if issue_id.startswith(ISSUE_PREFIX):
        entry_id = data.get("entry_id") if data else None
        return AuditChainRepairFlow(entry_id if isinstance(entry_id, str) else issue_id.removeprefix(ISSUE_PREFIX))
    return ConfirmRepairFlow()
