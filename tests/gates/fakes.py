"""A fake :class:`HaView` for the gate tests: a small house with plain data, no Home Assistant."""

from __future__ import annotations

import asyncio
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from typing import Any

from custom_components.agentic_hems.gates.execution import ActuationError, state_matches
from custom_components.agentic_hems.gates.device_resolved import ResolverIndex
from custom_components.agentic_hems.gates.models import GateContext, RequestedAction, RequestReader
from custom_components.agentic_hems.gates.pipeline import make_context
from custom_components.agentic_hems.gates.tables import expected_state
from custom_components.agentic_hems.gates.view import AreaInfo, EntityInfo, StateInfo
from custom_components.agentic_hems.orchestrator.intent import known_devices, requested_actions
from custom_components.agentic_hems.orchestrator.offline import ApplianceRef

NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)

DEFAULT_SERVICES = {
    ("light", "turn_on"), ("light", "turn_off"), ("switch", "turn_on"), ("switch", "turn_off"),
    ("input_boolean", "turn_on"), ("input_boolean", "turn_off"), ("climate", "set_temperature"),
    ("climate", "set_hvac_mode"), ("lock", "lock"), ("lock", "unlock"), ("cover", "open_cover"),
    ("cover", "close_cover"), ("number", "set_value"), ("input_number", "set_value"), ("button", "press"),
    ("fan", "turn_on"), ("fan", "turn_off"), ("vacuum", "start"), ("vacuum", "stop"),
}


@dataclass
class FakeView:
    """Entities, areas and states in dicts; every entity is exposed unless listed in ``unexposed``."""

    entities: dict[str, EntityInfo] = field(default_factory=dict)
    states: dict[str, StateInfo] = field(default_factory=dict)
    area_list: list[AreaInfo] = field(default_factory=list)
    services: set[tuple[str, str]] = field(default_factory=lambda: set(DEFAULT_SERVICES))
    unexposed: set[str] = field(default_factory=set)
    own: set[str] = field(default_factory=set)
    appliances: set[str] = field(default_factory=set)

    def add(
        self, entity: EntityInfo, state: str = "off", *, age: timedelta = timedelta(seconds=1),
        friendly_name: str | None = None, **attributes: Any,
    ) -> EntityInfo:
        self.entities[entity.entity_id] = entity
        if friendly_name:
            attributes["friendly_name"] = friendly_name
        stamp = NOW - age
        self.states[entity.entity_id] = StateInfo(
            entity_id=entity.entity_id, state=state, attributes=attributes, last_updated=stamp, last_reported=stamp
        )
        return entity

    def entity_ids(self) -> Iterable[str]:
        return list(self.entities)

    def entity(self, entity_id: str) -> EntityInfo | None:
        return self.entities.get(entity_id)

    def areas(self) -> Iterable[AreaInfo]:
        return list(self.area_list)

    def state(self, entity_id: str) -> StateInfo | None:
        return self.states.get(entity_id)

    def has_service(self, domain: str, service: str) -> bool:
        return (domain, service) in self.services

    def should_expose(self, entity_id: str) -> bool:
        return entity_id in self.entities and entity_id not in self.unexposed

    def own_entity_ids(self) -> frozenset[str]:
        return frozenset(self.own)

    def appliance_entity_ids(self) -> frozenset[str]:
        return frozenset(self.appliances)


def house() -> FakeView:
    """Living room (alias "lounge"), kitchen, garage, hall; one entity of each interesting kind."""
    view = FakeView(
        area_list=[
            AreaInfo("living_room", "Living Room", frozenset({"Lounge"})),
            AreaInfo("kitchen", "Kitchen"),
            AreaInfo("garage", "Garage"),
            AreaInfo("hall", "Hall"),
        ]
    )
    view.add(EntityInfo(entity_id="light.living_main", name="Main light", aliases=frozenset({"ceiling"}),
                        area_id="living_room", supported_color_modes=frozenset({"brightness"})), "on",
             friendly_name="Living Room Main light")
    view.add(EntityInfo(entity_id="light.kitchen_main", name="Main light", area_id="kitchen",
                        supported_color_modes=frozenset({"onoff"})), friendly_name="Kitchen Main light")
    view.add(EntityInfo(entity_id="switch.kettle", name="Kettle", area_id="kitchen"))
    view.add(EntityInfo(entity_id="climate.living", device_name="Thermostat", area_id="living_room",
                        supported_features=1, capabilities={"min_temp": 16, "max_temp": 28,
                                                            "hvac_modes": ["off", "heat"]}), "heat",
             friendly_name="Living Thermostat")
    view.add(EntityInfo(entity_id="lock.front_door", name="Front door", area_id="hall"), "locked")
    view.add(EntityInfo(entity_id="cover.garage_door", name="Garage door", area_id="garage", device_class="garage",
                        supported_features=3), "closed")
    view.add(EntityInfo(entity_id="number.boiler_setpoint", name="Boiler setpoint", area_id="kitchen",
                        capabilities={"min": 40, "max": 70, "step": 0.5}), "55")
    view.add(EntityInfo(entity_id="switch.dishwasher", device_name="Dishwasher", area_id="kitchen"))
    view.add(EntityInfo(entity_id="sensor.agentic_hems_last_decision", name="Main light", area_id="living_room"))
    view.add(EntityInfo(entity_id="light.hidden", name="Hidden lamp", area_id="hall",
                        supported_color_modes=frozenset({"brightness"})))
    view.unexposed = {"light.hidden", "switch.dishwasher"}
    view.own = {"sensor.agentic_hems_last_decision"}
    view.appliances = {"switch.dishwasher"}
    return view



def reader(view: FakeView) -> RequestReader:
    """The shell's request reader over ``view`` (intent binding): the resolver's names and areas, the dishwasher."""
    appliances = [ApplianceRef("Dishwasher", "dishwasher")]

    def read(text: str) -> frozenset[RequestedAction]:
        devices = known_devices(ResolverIndex.build(view), {"switch.dishwasher": "Dishwasher"})
        return requested_actions(text, devices, appliances)

    return read


def context(candidate: dict[str, Any] | None, view: FakeView | None = None, raw_input: str = "", **kw: Any) -> GateContext:
    """A context over ``house()`` (or ``view``) at NOW from source ``test``."""
    return make_context(view or house(), source_agent="test", raw_input=raw_input, candidate=candidate, now=NOW,
                        trace_id="t1", **kw)


def through(ctx: GateContext, *gates: Any) -> GateContext:
    """Run ``gates`` in order, asserting each passes (to set up a later gate's inputs)."""
    for gate in gates:
        result = gate(ctx)
        assert result.passed, result
    return ctx


@dataclass
class RecordingActuator:
    """Records every service call and applies it to ``view`` like a device would.

    Entities in ``phantom`` accept calls and do nothing; entities in ``failing`` raise :class:`ActuationError`.
    ``clock`` stamps the new states (default: ``NOW``).
    """

    view: FakeView
    calls: list[tuple[str, str, str, dict[str, Any]]] = field(default_factory=list)
    phantom: set[str] = field(default_factory=set)
    failing: set[str] = field(default_factory=set)
    clock: Any = None

    async def async_call(self, domain: str, service: str, entity_id: str, data: Mapping[str, Any]) -> None:
        self.calls.append((domain, service, entity_id, dict(data)))
        await asyncio.sleep(0)  # a real call yields to the loop
        if entity_id in self.failing:
            raise ActuationError(f"{entity_id} did not answer")
        if entity_id in self.phantom:
            return
        expected = expected_state(domain, service, data)
        old = self.view.states[entity_id]
        state = expected.get("states", [old.state])[0]
        if "numeric_state" in expected:
            state = str(expected["numeric_state"])
        stamp = self.clock() if self.clock else NOW
        self.view.states[entity_id] = StateInfo(
            entity_id=entity_id, state=state, attributes={**old.attributes, **expected.get("attributes", {})},
            last_updated=stamp, last_reported=stamp,
        )

    async def async_wait_for(self, entity_id: str, expected: Mapping[str, Any], timeout_s: float) -> StateInfo | None:
        state = self.view.states.get(entity_id)
        return state if state_matches(expected, state) else None
