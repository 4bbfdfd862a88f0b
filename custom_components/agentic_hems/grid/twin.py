"""The twins the tools run on: a network in MATPOWER's conventions plus its assets.

Two kinds:

- the **home twin**, built from the site: bus 1 is the grid connection (slack, 0.4 kV), bus 2 the main panel; the
  service cable between them is branch 1, rated at the main-fuse limit (``RATE_A`` = limit kW / 1000 MVA). PV, battery,
  EV charger, heat pump and the rest of the house are assets at the panel bus. Cable impedance: 25 m of 4x35 mm² Cu
  (0.524 ohm/km, 0.08 ohm/km) on a 0.1 MVA, 0.4 kV base, i.e. r = 0.00819 pu, x = 0.00125 pu;
- a **MATPOWER case** (version 2 ``.m`` or its JSON form): generators ``gen_<row>``, loads ``load_<bus>`` and
  branches ``branch_<row>`` (1-based rows) are the assets.

Asset power is in kW in the load convention: positive draws from the bus (load, EV, heat pump, battery charging),
negative injects (PV, battery discharging, a generator). Limits are keyed ``p_min_kw``/``p_max_kw`` (and
``capacity_kwh``, ``soc_min_pct``, ``soc_max_pct`` for a battery, ``rate_kva`` for a branch); a missing key is unknown.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

import numpy as np

from .network import (
    BASE_KV,
    BR_R,
    BR_STATUS,
    BR_X,
    BUS_I,
    BUS_TYPE,
    F_BUS,
    GEN_BUS,
    GEN_STATUS,
    PD,
    PG,
    PMAX,
    PMIN,
    QD,
    RATE_A,
    REF,
    T_BUS,
    VMAX,
    VMIN,
    Network,
    table,
)

HOME = "home"
GRID_BUS, PANEL_BUS = 1, 2
HOME_BASE_MVA = 0.1
CABLE_R_PU, CABLE_X_PU = 0.00819, 0.00125
V_LIMITS_PU = (0.9, 1.1)  # EN 50160: +-10 % of the nominal voltage


@dataclass(frozen=True)
class Asset:
    """An asset of the twin.

    It has a ``kind``, connection ``bus`` (external id), ``limits`` (see module docstring), free ``parameters`` and
    ``measurements`` (quantity -> HA entity id).
    """

    asset_id: str
    kind: str
    bus: int
    limits: Mapping[str, float] = field(default_factory=dict)
    parameters: Mapping[str, Any] = field(default_factory=dict)
    measurements: Mapping[str, str] = field(default_factory=dict)

    def as_dict(self) -> dict[str, Any]:
        """JSON-safe form."""
        return {
            "asset_id": self.asset_id,
            "kind": self.kind,
            "bus": self.bus,
            "limits": dict(self.limits),
            "parameters": dict(self.parameters),
            "measurements": dict(self.measurements),
        }


@dataclass(frozen=True)
class Twin:
    """A network with its assets. ``source`` names where it came from (``site`` or the case file's name)."""

    network_id: str
    network: Network
    assets: Mapping[str, Asset]
    source: str

    @property
    def is_home(self) -> bool:
        """The home twin (as opposed to a MATPOWER case)."""
        return self.network_id == HOME


@dataclass(frozen=True)
class HomeSite:
    """What the home twin is built from.

    The fuse limit (kW), optional PV peak (kW), battery (kWh, kW) and the flexible appliances
    ``(asset_id, kind, power_kw)``; ``entities`` maps ``asset_id.quantity`` to HA entity ids.
    """

    fuse_kw: float
    pv_peak_kw: float | None = None
    battery_kwh: float | None = None
    battery_kw: float | None = None
    battery_soc_min_pct: float = 10.0
    battery_soc_max_pct: float = 100.0
    appliances: tuple[tuple[str, str, float], ...] = ()
    entities: Mapping[str, str] = field(default_factory=dict)


def _home_network(fuse_kw: float) -> Network:
    """Return the two-bus home network: the grid bus feeds the panel through a cable rated ``fuse_kw`` (kW)."""
    fuse_mva = fuse_kw / 1000
    bus = np.zeros((2, 13))
    bus[:, BUS_I] = [GRID_BUS, PANEL_BUS]
    bus[:, BUS_TYPE] = [REF, 1]
    bus[:, 7] = 1.0  # VM
    bus[:, 6] = bus[:, 10] = 1  # area, zone
    bus[:, BASE_KV] = 0.4
    bus[:, VMAX], bus[:, VMIN] = V_LIMITS_PU[1], V_LIMITS_PU[0]
    gen = np.zeros((1, 21))
    gen[0, [GEN_BUS, 5, 6, GEN_STATUS, PMAX, PMIN]] = [GRID_BUS, 1.0, HOME_BASE_MVA, 1, fuse_mva, -fuse_mva]
    gen[0, 3], gen[0, 4] = fuse_mva, -fuse_mva  # QMAX, QMIN
    branch = np.zeros((1, 13))
    branch[0, [F_BUS, T_BUS, BR_R, BR_X, RATE_A, BR_STATUS]] = [
        GRID_BUS,
        PANEL_BUS,
        CABLE_R_PU,
        CABLE_X_PU,
        fuse_mva,
        1,
    ]
    branch[0, 11], branch[0, 12] = -360, 360
    return Network(HOME_BASE_MVA, bus, gen, branch, name="home twin")


def home_twin(site: HomeSite) -> Twin:
    """Return the home twin of ``site`` (see the module docstring); the panel carries no load until measured."""
    network = _home_network(site.fuse_kw)
    entities = site.entities

    def measured(asset_id: str, *quantities: str) -> dict[str, str]:
        return {q: entities[f"{asset_id}.{q}"] for q in quantities if entities.get(f"{asset_id}.{q}")}

    assets = [
        Asset(
            "grid",
            "grid_connection",
            GRID_BUS,
            {"p_min_kw": -site.fuse_kw, "p_max_kw": site.fuse_kw},
            {"voltage_kv": 0.4},
            measured("grid", "power"),
        ),
        Asset("main_fuse", "main_panel_fuse", PANEL_BUS, {"rate_kva": site.fuse_kw}, {"branch": 1}),
        Asset("house", "load", PANEL_BUS, {}, {}, measured("house", "power")),
    ]
    if site.pv_peak_kw is not None or entities.get("pv.power"):
        limits = {} if site.pv_peak_kw is None else {"p_min_kw": -site.pv_peak_kw, "p_max_kw": 0.0}
        assets.append(Asset("pv", "pv", PANEL_BUS, limits, {}, measured("pv", "power")))
    if site.battery_kwh is not None or entities.get("battery.power") or entities.get("battery.soc"):
        limits = {}
        if site.battery_kw is not None:
            limits |= {"p_min_kw": -site.battery_kw, "p_max_kw": site.battery_kw}
        if site.battery_kwh is not None:
            limits |= {
                "capacity_kwh": site.battery_kwh,
                "soc_min_pct": site.battery_soc_min_pct,
                "soc_max_pct": site.battery_soc_max_pct,
            }
        params = {"setpoint_entity": entities["battery.setpoint"]} if entities.get("battery.setpoint") else {}
        assets.append(Asset("battery", "battery", PANEL_BUS, limits, params, measured("battery", "power", "soc")))
    assets.extend(
        Asset(asset_id, kind, PANEL_BUS, {"p_min_kw": 0.0, "p_max_kw": power_kw}, {}, measured(asset_id, "power"))
        for asset_id, kind, power_kw in site.appliances
    )
    return Twin(HOME, network, {a.asset_id: a for a in assets}, "site")


def matpower_twin(network_id: str, network: Network, source: str) -> Twin:
    """Return a MATPOWER case as a twin: its generators, loads and branches are the assets."""
    assets = [
        Asset(
            f"gen_{row + 1}",
            "generator",
            int(gen[GEN_BUS]),
            {"p_min_kw": -float(gen[PMAX]) * 1000, "p_max_kw": -float(gen[PMIN]) * 1000},
            {"pg_mw": float(gen[PG]), "in_service": bool(gen[GEN_STATUS] > 0)},
        )
        for row, gen in enumerate(table(network.gen))
    ]
    assets += [
        Asset(
            f"load_{int(bus[BUS_I])}",
            "load",
            int(bus[BUS_I]),
            {},
            {"pd_mw": float(bus[PD]), "qd_mvar": float(bus[QD])},
        )
        for bus in table(network.bus)
        if bus[PD] or bus[QD]
    ]
    for row, br in enumerate(table(network.branch)):
        limits = {"rate_kva": float(br[RATE_A]) * 1000} if br[RATE_A] > 0 else {}
        assets.append(
            Asset(
                f"branch_{row + 1}",
                "branch",
                int(br[F_BUS]),
                limits,
                {"f_bus": int(br[F_BUS]), "t_bus": int(br[T_BUS]), "in_service": bool(br[BR_STATUS] > 0)},
            )
        )
    return Twin(network_id, network, {a.asset_id: a for a in assets}, source)


def with_injections(twin: Twin, power_kw: Mapping[str, float], outages: tuple[int, ...] = ()) -> Network:
    """Return the twin's network with asset powers set (kW, load convention) and branches (1-based rows) out of service.

    Home twin: the panel bus load is the sum of the panel assets' powers. MATPOWER: a generator's ``PG`` is set to
    ``-p_kw / 1000`` MW; a load's ``PD`` to ``p_kw / 1000`` MW. Assets not in ``power_kw`` keep the case's values.

    Raises:
        KeyError: an unknown asset id; IndexError: an unknown branch.

    """
    net = twin.network
    bus, gen, branch = net.bus.copy(), net.gen.copy(), net.branch.copy()
    if twin.is_home:
        total = sum(kw for asset_id, kw in power_kw.items() if twin.assets[asset_id].bus == PANEL_BUS)
        bus[net.index[PANEL_BUS], PD] = total / 1000
    else:
        for asset_id, kw in power_kw.items():
            asset = twin.assets[asset_id]
            if asset.kind == "generator":
                gen[int(asset_id.split("_")[1]) - 1, PG] = -kw / 1000
            elif asset.kind == "load":
                bus[net.index[asset.bus], PD] = kw / 1000
            else:
                raise KeyError(asset_id)
    for row in outages:
        if not 1 <= row <= len(branch):
            raise IndexError(row)
        branch[row - 1, BR_STATUS] = 0
    return replace(net, bus=bus, gen=gen, branch=branch)
