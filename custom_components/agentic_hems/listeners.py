"""Change listeners of the shell's managers, in one small mixin.

The plan manager, device control and the assistant announce each change (a new plan, a gate decision, a run) to
their listeners: the entities write their state and the cards' websocket subscriptions send.
"""

from __future__ import annotations

from homeassistant.core import CALLBACK_TYPE, callback


class ChangeListeners:
    """``async_add_listener`` for whoever follows the changes, ``async_notify_listeners`` for the owner."""

    _change_listeners: list[CALLBACK_TYPE] | None = None  # created on the first listener

    @callback
    def async_add_listener(self, update: CALLBACK_TYPE) -> CALLBACK_TYPE:
        """Call ``update`` after each change; returns the callback that removes it."""
        if self._change_listeners is None:
            self._change_listeners = []
        listeners = self._change_listeners
        listeners.append(update)
        return lambda: listeners.remove(update)

    @callback
    def async_notify_listeners(self) -> None:
        """Call every listener (one may remove itself or another meanwhile)."""
        for update in list(self._change_listeners or ()):
            update()
