"""The whole-home plan as a tool of the entry's LLM API: read-only, for any assistant and MCP client."""

from __future__ import annotations

from typing import Any

from ..orchestrator.texts import language as text_language
from ..planning.home_view import home_answer
from ..service_helpers import invalid
from ..validation import vol
from .llm_base import EnergyTool
from .tools import HassTools


class GetHomePlan(EnergyTool):
    """The whole-home plan: its costs, what it stands on, and the next slots with why each battery acts."""

    name = "get_home_plan"
    description = (
        "The whole-home plan (battery, PV, grid): its cost, the cost without optimisation (baseline) and the saving, "
        "what it stands on (reason, detail, horizon_end), and for the next `slots` 15-minute slots the battery power "
        "(kW, + charging), state of charge (%), PV, house load, grid import and export (kW), and per battery its "
        "power, state of charge and one sentence per slot saying why it charges, discharges or idles."
    )
    parameters = vol.Schema(
        {
            vol.Optional("slots", default=8, description="how many 15-minute slots from the plan's start"): vol.All(
                vol.Coerce(int), vol.Range(min=1, max=96)
            )
        }
    )

    async def async_run(self, tools: HassTools, args: dict[str, Any]) -> dict[str, Any]:
        """Return the ``plan_home`` action's answer cut to ``slots`` slots (:func:`~..planning.home_view.home_answer`).

        Raises:
            ServiceValidationError: ``home_plan_not_configured`` when the entry has no battery and no PV forecast.

        """
        if (home := self.entry.runtime_data.home) is None:
            raise invalid("home_plan_not_configured")
        return home_answer(home, text_language(tools.hass.config.language), int(args["slots"]))
