"""Latency of the gate pipeline (gates 1-7, through DryRun) on a house of 5,000 entities in 200 areas.

Run: ``.venv/bin/python benchmarks/bench_gates.py``. Builds a plain-data view (no Home Assistant) of 5,000 entities
(lights, switches, covers, climate, locks, numbers, sensors) spread over 200 areas with names, aliases and device
names, then evaluates a fixed mix of commands (resolvable by room and alias, by alias alone, by entity_id, ambiguous,
unknown, stale, denied) with a prebuilt resolver index, as the HA shell does. Prints p50, p99 and decisions per
second, beside the same commands with no index (the index rebuilt per call: what a registry change costs once), and
checks that both give identical traces first. Exit status 1 when p99 > 1 ms. Not a test: pytest never collects this.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path
import statistics
import sys
import time
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))  # run as a script from anywhere

from custom_components.agentic_hems.gates.device_resolved import ResolverIndex
from custom_components.agentic_hems.gates.dry_run import IdempotencyLedger
from custom_components.agentic_hems.gates.pipeline import evaluate
from custom_components.agentic_hems.gates.tables import DEFAULT_POLICY, INTENT_SERVICES
from custom_components.agentic_hems.gates.view import AreaInfo, EntityInfo, StateInfo

NOW = datetime(2026, 1, 5, 12, 0, tzinfo=UTC)
ENTITIES, AREAS = 5000, 200
TARGET_P99_MS = 1.0
KINDS = ["light", "switch", "cover", "climate", "lock", "number", "sensor", "input_boolean", "fan", "button"]
NAMES = ["main light", "lamp", "plug", "blind", "thermostat", "door", "setpoint", "temperature", "fan", "button"]


@dataclass
class BenchView:
    """The same shape as the tests' fake view: dicts, every entity exposed."""

    entities: dict[str, EntityInfo] = field(default_factory=dict)
    states: dict[str, StateInfo] = field(default_factory=dict)
    area_list: list[AreaInfo] = field(default_factory=list)
    services: set[tuple[str, str]] = field(default_factory=set)

    def entity_ids(self) -> Iterable[str]:
        return self.entities.keys()

    def entity(self, entity_id: str) -> EntityInfo | None:
        return self.entities.get(entity_id)

    def areas(self) -> Iterable[AreaInfo]:
        return self.area_list

    def state(self, entity_id: str) -> StateInfo | None:
        return self.states.get(entity_id)

    def has_service(self, domain: str, service: str) -> bool:
        return (domain, service) in self.services

    def should_expose(self, entity_id: str) -> bool:
        return entity_id in self.entities

    def own_entity_ids(self) -> frozenset[str]:
        return frozenset()

    def appliance_entity_ids(self) -> frozenset[str]:
        return frozenset()


def big_house() -> BenchView:
    view = BenchView(services={(d, s) for d, intents in INTENT_SERVICES.items() for s in intents.values()})
    view.area_list = [AreaInfo(f"area_{a}", f"Room {a}", frozenset({f"Zone {a}"})) for a in range(AREAS)]
    for i in range(ENTITIES):
        kind = i % len(KINDS)
        domain, base = KINDS[kind], NAMES[kind]
        area = (i // len(KINDS)) % AREAS
        entity_id = f"{domain}.e{i}"
        caps: dict[str, Any] = {}
        if domain == "climate":
            caps = {"min_temp": 7, "max_temp": 30, "hvac_modes": ["off", "heat"]}
        elif domain == "number":
            caps = {"min": 0, "max": 100, "step": 0.5}
        view.entities[entity_id] = EntityInfo(
            entity_id=entity_id,
            name=f"{base} {i // (len(KINDS) * AREAS)}",  # unique within an area
            aliases=frozenset({f"{base} alias {i}"}),
            area_id=f"area_{area}",
            device_name=f"Device {i}",
            device_class="garage" if domain == "cover" and i % 3 == 0 else None,
            supported_features={"climate": 1, "cover": 3, "fan": 48}.get(domain, 0),
            supported_color_modes=frozenset({"brightness"}) if domain == "light" else frozenset(),
            capabilities=caps,
        )
        age = timedelta(seconds=2 if i % 7 else 600)  # every 7th is stale for risk >= 2
        view.states[entity_id] = StateInfo(
            entity_id=entity_id, state={"cover": "closed", "lock": "locked", "number": "10"}.get(domain, "off"),
            attributes={"friendly_name": f"Room {area} {base} {i}"}, last_updated=NOW - age, last_reported=NOW - age,
        )
    return view


def commands() -> list[dict[str, Any]]:
    """A mix that reaches every gate's pass and fail paths."""
    out: list[dict[str, Any]] = []
    for i in range(0, ENTITIES, 97):
        kind = i % len(KINDS)
        domain, base = KINDS[kind], NAMES[kind]
        area = (i // len(KINDS)) % AREAS
        intent = {"light": "set_brightness", "climate": "set_temperature", "number": "set_value", "cover": "open",
                  "lock": "unlock", "button": "press", "sensor": "turn_on"}.get(domain, "turn_on")
        params = {"set_brightness": {"brightness": 40}, "set_temperature": {"temperature": 21},
                  "set_value": {"value": 12.5}}.get(intent, {})
        name = f"{base} {i // (len(KINDS) * AREAS)}"
        out.append({"intent": intent, "room": f"Room {area}", "device_alias": name, "params": params})
        out.append({"intent": intent, "device_alias": f"{base} alias {i}", "params": params})
        out.append({"intent": intent, "device_alias": f"{domain}.e{i}", "params": params})
    out.append({"intent": "turn_on", "device_alias": "lamp 0"})  # ambiguous across 200 areas
    out.append({"intent": "turn_on", "room": "Zone 3", "device_alias": "no such thing"})  # unknown
    return out


def percentile(samples: list[float], q: float) -> float:
    ordered = sorted(samples)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


def main() -> int:
    view = big_house()
    began = time.perf_counter()
    index = ResolverIndex.build(view)
    build_ms = (time.perf_counter() - began) * 1e3
    mix = commands()
    ledger = IdempotencyLedger()

    def one(candidate: dict[str, Any], with_index: bool) -> Any:
        return evaluate(view, source_agent="bench", candidate=candidate, now=NOW, rules=DEFAULT_POLICY,
                        trace_id="bench", index=index if with_index else None, ledger=ledger)

    outcomes: dict[str, int] = {}
    for candidate in mix[:40]:  # identical traces with and without the index
        a, b = one(candidate, True), one(candidate, False)
        assert a.as_dict() == b.as_dict(), candidate
    for candidate in mix:
        trace = one(candidate, True)
        key = str(trace.outcome) if trace.failed_gate is None else f"blocked at {trace.failed_gate}"
        outcomes[key] = outcomes.get(key, 0) + 1

    for candidate in mix:  # warm-up
        one(candidate, True)
    samples = []
    rounds = 20
    for _ in range(rounds):
        for candidate in mix:
            t0 = time.perf_counter()
            one(candidate, True)
            samples.append(time.perf_counter() - t0)
    reference = []
    for candidate in mix[:30]:
        t0 = time.perf_counter()
        one(candidate, False)
        reference.append(time.perf_counter() - t0)

    p50, p99 = percentile(samples, 0.5) * 1e3, percentile(samples, 0.99) * 1e3
    rate = len(samples) / sum(samples)
    print(f"house: {ENTITIES} entities, {AREAS} areas; index built in {build_ms:.1f} ms")
    print(f"mix: {len(mix)} commands x {rounds} rounds = {len(samples)} decisions; outcomes {dict(sorted(outcomes.items()))}")
    print(f"{'case':<40} {'p50 ms':>9} {'p99 ms':>9} {'decisions/s':>12}")
    print(f"{'gates 1-7 with the resolver index':<40} {p50:>9.3f} {p99:>9.3f} {rate:>12.0f}")
    ref_med = statistics.median(reference) * 1e3
    print(f"{'reference: no index (rebuilt per call)':<40} {ref_med:>9.3f} {percentile(reference, 0.99) * 1e3:>9.3f} "
          f"{len(reference) / sum(reference):>12.0f}")
    ok = p99 <= TARGET_P99_MS
    print(f"target p99 <= {TARGET_P99_MS:g} ms: {'pass' if ok else 'FAIL'}")
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
