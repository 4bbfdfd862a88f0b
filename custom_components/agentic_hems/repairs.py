"""Fix flows for the integration's repair issues.

``audit_chain_broken_<entry_id>``: a confirm step, then :meth:`.grid_ha.audit_log.AuditLog.async_new_epoch`
archives the broken audit file and starts a new epoch that cites the last anchored head. The flow aborts with
``not_loaded`` when the entry's audit log is not loaded and with ``repair_failed`` when the files cannot be written.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from homeassistant.components.repairs import ConfirmRepairFlow, RepairsFlow
from homeassistant.core import HomeAssistant

from .grid_ha.audit_log import ISSUE_PREFIX, AuditLog, async_get_audit_log

if TYPE_CHECKING:
    # Version-specific (types only): HA 2026.10's repair flows return RepairsFlowResult; HA 2026.4 has no such name
    # (its flows return data_entry_flow.FlowResult), where the ignored import makes the annotations Any.
    from homeassistant.components.repairs import RepairsFlowResult  # type: ignore[attr-defined, unused-ignore]

REPAIR_REASON = "repair issue confirmed"


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


async def async_create_fix_flow(
    hass: HomeAssistant, issue_id: str, data: dict[str, str | int | float | None] | None
) -> RepairsFlow:
    """Return the fix flow of a fixable issue of this integration (only ``audit_chain_broken_<entry_id>`` today)."""
    if issue_id.startswith(ISSUE_PREFIX):
        entry_id = data.get("entry_id") if data else None
        return AuditChainRepairFlow(entry_id if isinstance(entry_id, str) else issue_id.removeprefix(ISSUE_PREFIX))
    return ConfirmRepairFlow()
