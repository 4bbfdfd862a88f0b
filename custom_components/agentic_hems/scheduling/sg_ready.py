"""SG Ready: the four operating states of a heat pump's two relay contacts, what each slot asks and the switching order.

The contacts follow the BWP "SG Ready" label (Bundesverband Wärmepumpe; the terminal notation contact 1:contact 2):

====  =========  ============================================================================================
state contacts   meaning
====  =========  ============================================================================================
1     1:0        blocked: the utility lock (EVU-Sperre), at most 2 hours of "hard" lock
2     0:0        normal: energy-efficient normal operation
3     0:1        recommended: a switch-on recommendation, the controller raises its setpoints
4     1:1        forced: a definite start command, as far as the controller's settings allow
====  =========  ============================================================================================

What a slot asks (:func:`sg_states`), from the whole-home plan's heat pump power:

- 4 (forced) where the plan runs the heat pump and the person enabled "forced", and the slot has a PV surplus (the
  PV the plan keeps covers the house's base load and the heat pump) or a negative import price;
- 3 (recommended) where the plan runs the heat pump otherwise;
- 1 (blocked) where the plan keeps it off and the store stays at least :data:`BLOCK_MARGIN_C` above the comfort floor
  at the slot's end, for at most ``max_block_slots`` slots in a row, and only after at least as many slots without a
  block since the last one (the release time the old utility locks kept; 0 slots never blocks);
- 2 (normal) otherwise.

The switching order (:func:`switching_order`) turns contacts off before it turns any on, contact 1 off before
contact 2 and contact 2 on before contact 1: every state in between is 2 (normal) or 3 (recommended), so no change
passes through 1 (blocked) or 4 (forced) on its way elsewhere.
"""

from __future__ import annotations

from collections.abc import Sequence

BLOCKED, NORMAL, RECOMMENDED, FORCED = 1, 2, 3, 4
# state -> (contact 1 on, contact 2 on)
CONTACTS: dict[int, tuple[bool, bool]] = {
    BLOCKED: (True, False),
    NORMAL: (False, False),
    RECOMMENDED: (False, True),
    FORCED: (True, True),
}
BLOCK_MARGIN_C = 0.5  # K above the comfort floor the store keeps at a blocked slot's end
STATE_TEXTS: dict[str, dict[int, str]] = {
    "en": {
        BLOCKED: "SG Ready 1, blocked",
        NORMAL: "SG Ready 2, normal operation",
        RECOMMENDED: "SG Ready 3, switch-on recommended",
        FORCED: "SG Ready 4, forced on",
    },
    "de": {
        BLOCKED: "SG Ready 1, gesperrt",
        NORMAL: "SG Ready 2, Normalbetrieb",
        RECOMMENDED: "SG Ready 3, Einschaltempfehlung",
        FORCED: "SG Ready 4, Anlaufbefehl",
    },
}


def state_of(contact_1: bool, contact_2: bool) -> int:
    """Return the SG Ready state (1-4) of the two contacts (True: closed, on)."""
    return next(s for s, pair in CONTACTS.items() if pair == (contact_1, contact_2))


def state_text(state: int, language: str = "en") -> str:
    """Return the state in plain words ("SG Ready 3, switch-on recommended"); German for ``language`` "de"."""
    return STATE_TEXTS["de" if language == "de" else "en"][state]


def switching_order(current: tuple[bool, bool], state: int) -> list[tuple[int, bool]]:
    """Return the contact commands that take ``current`` (contact 1 on, contact 2 on) to ``state``, in order.

    Each is ``(contact, on)`` with ``contact`` 0 or 1: turns off first (contact 1 before contact 2), then turns on
    (contact 2 before contact 1). Empty when the contacts already are ``state``'s.
    """
    target = CONTACTS[state]
    offs = [(c, False) for c in (0, 1) if current[c] and not target[c]]
    ons = [(c, True) for c in (1, 0) if target[c] and not current[c]]
    return offs + ons


def sg_states(
    running: Sequence[bool],
    surplus: Sequence[bool],
    negative: Sequence[bool],
    can_block: Sequence[bool],
    *,
    forced: bool,
    max_block_slots: int,
    blocked_before: int = 0,
    free_before: int | None = None,
) -> list[int]:
    """Return the SG Ready state per slot (see the module docstring); all sequences have one flag per slot.

    ``running``: the plan runs the heat pump; ``surplus``: the slot has a PV surplus; ``negative``: its import price
    is below 0; ``can_block``: the plan keeps the heat pump off and the store stays above the floor's margin.
    ``blocked_before`` counts the slots blocked right before the first slot (0 when the heat pump was not blocked),
    ``free_before`` the slots without a block since the last one (None: none for long enough).
    """
    states = []
    free = 0 if blocked_before else (max_block_slots if free_before is None else free_before)
    run = blocked_before
    for i, on in enumerate(running):
        if on:
            state = FORCED if forced and (surplus[i] or negative[i]) else RECOMMENDED
        elif can_block[i] and (0 < run < max_block_slots or (run == 0 and 0 < max_block_slots <= free)):
            state = BLOCKED  # a block goes on below its cap, or starts after its release time
        else:
            state = NORMAL
        if state == BLOCKED:
            run, free = run + 1, 0
        else:
            run, free = 0, free + 1
        states.append(state)
    return states
