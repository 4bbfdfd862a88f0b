"""A program appliance's planned start: its steps through the gates, and a repair when it does not start.

At the plan's start the steps of :func:`..scheduling.program.start_steps` run one after the other, each a gated command
as ``source_agent="scheduler"``; the first that does not execute stops the rest. What the gates read back decides
(the select shows the program, the operation sensor shows it running). A run that did not start raises the repair
issue ``program_not_started_<appliance_id>``, which names the step that stopped and why, and says whether the program
was left selected; a remote start that is not allowed gets its own text (``program_remote_start_off``). A run that
starts removes both.
"""

from __future__ import annotations

from datetime import datetime
from typing import TYPE_CHECKING, Any

from homeassistant.core import Context, HomeAssistant
from homeassistant.helpers import issue_registry as ir

from ..const import DOMAIN, LOGGER
from ..gates.models import SOURCE_SCHEDULER, Outcome
from ..scheduling.appliance import Appliance
from ..scheduling.program import start_steps

if TYPE_CHECKING:
    from ..control.manager import ControlManager

ISSUE_PREFIX = "program_not_started_"


def issue_id(appliance: Appliance) -> str:
    """Return the repair issue id of the appliance's program that did not start."""
    return f"{ISSUE_PREFIX}{appliance.appliance_id}"


async def async_start_program(
    hass: HomeAssistant, control: ControlManager, appliance: Appliance, slot: datetime
) -> list[dict[str, Any]]:
    """Start the appliance's program for the plan slot ``slot`` (aware UTC); returns the gates' traces in order.

    A step that is blocked, fails, waits for a confirmation or only ran as a dry run stops the rest.
    """
    records: list[dict[str, Any]] = []
    for step in start_steps(appliance):
        record = dict(
            await control.async_evaluate(
                source_agent=SOURCE_SCHEDULER,
                raw_input=f"{step['intent']} {appliance.name}: start of the plan (slot {slot.isoformat()})",
                candidate=step,
                context=Context(),
                slot_start=slot,
            )
        )
        records.append(record)
        if record.get("outcome") != Outcome.EXECUTED:
            break
    _report(hass, appliance, records)
    return records


def _report(hass: HomeAssistant, appliance: Appliance, records: list[dict[str, Any]]) -> None:
    """Raise or remove the appliance's repair issue after its start steps ``records``."""
    last = records[-1] if records else None
    if last is None or last.get("outcome") in (Outcome.EXECUTED, Outcome.PENDING_CONFIRMATION, Outcome.DRY_RUN):
        ir.async_delete_issue(hass, DOMAIN, issue_id(appliance))
        return
    failed = next((r for r in last.get("gate_results") or [] if not r.get("passed")), None)
    reason = str(failed["reason"]) if failed else str(last.get("outcome"))
    interlock = (failed or {}).get("evidence", {}).get("requires_on") or {}
    off = [entity for entity, state in interlock.items() if state != "on"]
    selected = any(r.get("outcome") == Outcome.EXECUTED for r in records[:-1])
    LOGGER.warning(
        "%s did not start at its planned slot (%s)%s", appliance.name, reason, ": program left selected" * selected
    )
    entity = last.get("entity_id") or (last.get("candidate") or {}).get("device_alias")
    placeholders = {"appliance": appliance.name, "program": str(appliance.program), "entity": str(entity)}
    if off:
        key, placeholders = "program_remote_start_off", placeholders | {"sensor": ", ".join(off)}
    else:
        key = "program_selected_not_started" if selected else "program_not_started"
        placeholders |= {"reason": reason}
    ir.async_create_issue(
        hass,
        DOMAIN,
        issue_id(appliance),
        is_fixable=False,
        is_persistent=True,
        severity=ir.IssueSeverity.WARNING,
        translation_key=key,
        translation_placeholders=placeholders,
    )
