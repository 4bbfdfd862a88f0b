"""What a home battery does in each slot of a whole-home plan, and why.

:func:`battery_mode` names a slot's planned power (charge, discharge, idle): the mode a select-driven battery is set
to, the mode the automation triggers and conditions follow.
"""

from __future__ import annotations

from typing import Final

CHARGE: Final = "charge"
DISCHARGE: Final = "discharge"
IDLE: Final = "idle"
MODES: Final = (CHARGE, DISCHARGE, IDLE)
MODE_THRESHOLD_KW: Final = 0.05  # below this much planned power (either way) a battery idles


def battery_mode(kw: float) -> str:
    """Return the mode of a planned battery power in kW (+ charging): charge, discharge or idle.

    ``charge`` above ``MODE_THRESHOLD_KW``, ``discharge`` below ``-MODE_THRESHOLD_KW``, else ``idle``.
    """
    if kw > MODE_THRESHOLD_KW:
        return CHARGE
    if kw < -MODE_THRESHOLD_KW:
        return DISCHARGE
    return IDLE
