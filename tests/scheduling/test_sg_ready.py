"""SG Ready's states and switching order against enumerations: every contact order, every block pattern."""

from __future__ import annotations

from itertools import product

from hypothesis import given, strategies as st
import pytest

from custom_components.agentic_hems.scheduling.sg_ready import (
    BLOCKED,
    CONTACTS,
    FORCED,
    NORMAL,
    RECOMMENDED,
    sg_states,
    state_of,
    state_text,
    switching_order,
)


def test_the_contacts_are_the_bwp_terminal_states() -> None:
    """1:0 blocked, 0:0 normal, 0:1 recommended, 1:1 forced (contact 1:contact 2), written out."""
    assert [state_of(a, b) for a, b in ((True, False), (False, False), (False, True), (True, True))] == [1, 2, 3, 4]
    assert state_text(RECOMMENDED) == "SG Ready 3, switch-on recommended"
    assert state_text(BLOCKED, "de") == "SG Ready 1, gesperrt"


@pytest.mark.parametrize(("current", "target"), list(product(product((False, True), repeat=2), (1, 2, 3, 4))))
def test_each_change_passes_only_through_normal_or_recommended(current: tuple[bool, bool], target: int) -> None:
    """Applying the commands in order reaches the target with one command per differing contact, and every state on
    the way is 2 or 3: a change never passes through 1 (blocked) or 4 (forced)."""
    contacts = list(current)
    order = switching_order(current, target)
    assert len(order) == sum(a != b for a, b in zip(current, CONTACTS[target], strict=True))
    for step, (contact, on) in enumerate(order):
        assert contacts[contact] != on
        contacts[contact] = on
        if step < len(order) - 1:
            assert state_of(*contacts) in (NORMAL, RECOMMENDED), (current, target, order)
    assert state_of(*contacts) == target


def test_three_to_one_turns_contact_2_off_before_contact_1_on() -> None:
    assert switching_order(CONTACTS[RECOMMENDED], BLOCKED) == [(1, False), (0, True)]
    assert switching_order(CONTACTS[NORMAL], FORCED) == [(1, True), (0, True)]
    assert switching_order(CONTACTS[FORCED], NORMAL) == [(0, False), (1, False)]


def valid(blocked: tuple[bool, ...], cap: int, before: int, free: int) -> bool:
    """Block runs of at most ``cap`` slots (a run going on from before counts its slots), at least ``cap`` slots
    without a block between two runs (and before the first, counting ``free`` slots before the horizon)."""
    run, gap = before, (0 if before else free)
    for b in blocked:
        if b:
            if run == 0 and gap < cap:
                return False
            run, gap = run + 1, 0
            if run > cap:
                return False
        else:
            run, gap = 0, gap + 1
    return True


def oracle_blocks(can: list[bool], cap: int, before: int, free: int) -> tuple[bool, ...]:
    """The lexicographically largest valid block pattern within ``can``: blocking as early and long as allowed."""
    slots = [i for i, c in enumerate(can) if c]
    best: tuple[bool, ...] = tuple(False for _ in can)
    for chosen in product((False, True), repeat=len(slots)):
        pattern = [False] * len(can)
        for i, c in zip(slots, chosen, strict=True):
            pattern[i] = c
        if valid(tuple(pattern), cap, before, free) and tuple(pattern) > best:
            best = tuple(pattern)
    return best


@given(
    flags=st.lists(st.tuples(st.booleans(), st.booleans(), st.booleans(), st.booleans()), min_size=1, max_size=11),
    forced=st.booleans(),
    cap=st.integers(0, 4),
    before=st.integers(0, 5),
    free=st.integers(0, 6),
)
def test_states_follow_the_rule_and_block_as_an_enumeration_does(
    flags: list[tuple[bool, bool, bool, bool]], forced: bool, cap: int, before: int, free: int
) -> None:
    running = [f[0] for f in flags]
    surplus, negative = [f[1] for f in flags], [f[2] for f in flags]
    can = [f[3] and not f[0] for f in flags]
    states = sg_states(
        running, surplus, negative, can, forced=forced, max_block_slots=cap, blocked_before=before, free_before=free
    )
    for i, state in enumerate(states):
        if running[i]:
            assert state == (FORCED if forced and (surplus[i] or negative[i]) else RECOMMENDED)
        else:
            assert state in (BLOCKED, NORMAL)
    assert tuple(s == BLOCKED for s in states) == oracle_blocks(can, cap, before if before < cap else cap, free)


def test_a_long_off_period_blocks_two_hours_then_releases_two_hours() -> None:
    """Slots of 15 min, a cap of 8 (2 h): 8 blocked, 8 normal, then blocked again; never forced unless enabled."""
    n = 20
    states = sg_states([False] * n, [False] * n, [False] * n, [True] * n, forced=False, max_block_slots=8)
    assert states == [BLOCKED] * 8 + [NORMAL] * 8 + [BLOCKED] * 4
    assert sg_states([True], [True], [False], [False], forced=False, max_block_slots=8) == [RECOMMENDED]
    assert sg_states([True], [False], [True], [False], forced=True, max_block_slots=8) == [FORCED]
    assert sg_states([False] * 3, [False] * 3, [False] * 3, [True] * 3, forced=True, max_block_slots=0) == [NORMAL] * 3
