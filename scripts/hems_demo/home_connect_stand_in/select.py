"""The dishwasher's "Selected program" select: program keys as options; choosing one selects it, not starts it."""

from __future__ import annotations

from homeassistant.components.select import SelectEntity
from homeassistant.core import HomeAssistant
from homeassistant.helpers.entity_platform import AddConfigEntryEntitiesCallback

from . import PROGRAMS, StandInConfigEntry
from .entity import StandInEntity

PARALLEL_UPDATES = 1


async def async_setup_entry(
    hass: HomeAssistant, entry: StandInConfigEntry, async_add_entities: AddConfigEntryEntitiesCallback
) -> None:
    """Add the select."""
    async_add_entities([ProgramSelect(entry.runtime_data, "BSH.Common.Root.SelectedProgram", "selected_program")])


class ProgramSelect(StandInEntity, SelectEntity):
    """The selected program."""

    _attr_options = PROGRAMS

    @property
    def current_option(self) -> str | None:
        """The selected program key."""
        return self.dishwasher.selected_program

    async def async_select_option(self, option: str) -> None:
        """Select ``option`` (the appliance does not start)."""
        self.dishwasher.selected_program = option
        self.dishwasher.changed()
