"""Typed facility defaults, read once from the package YAML (`catalog/data/facility_*.yaml`,
through `catalog.loader.package_yaml`).

The arithmetic modules take plain values; this module is the facility's one source of data, so a
caller (the spine, a test, a user with their own numbers) can pass its own `FacilityData`.
"""

from __future__ import annotations

from functools import lru_cache

from pydantic import BaseModel, ConfigDict, Field

from ..catalog.loader import normalize, package_yaml
from ..errors import InputError


class _Data(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)


class NetworkDevice(_Data):
    """A switch, appliance or server that is not a compute node."""

    id: str
    name: str
    max_power_w: float | None = Field(default=None, gt=0)
    typical_power_w: float | None = Field(default=None, gt=0)
    max_includes_optics: bool = Field(
        description="the max figure includes the power its ports feed to optics"
    )
    rack_units: int = Field(gt=0)
    source: str
    unverified: bool = False


class Transceiver(_Data):
    id: str
    name: str
    power_w: float = Field(gt=0)
    source: str
    unverified: bool = False


class StorageAssumption(_Data):
    rack_power_w: float = Field(gt=0)
    gpus_per_rack: int = Field(gt=0)
    rack_units_per_rack: int = Field(gt=0)
    source: str
    unverified: bool = False


class OverheadRatios(_Data):
    """Non-compute equipment per `per_gpus` GPUs, from a reference bill of materials."""

    per_gpus: int = Field(gt=0)
    storage_fabric_switches: float = Field(ge=0)
    inband_switches: float = Field(ge=0)
    oob_switches: float = Field(ge=0)
    ufm_appliances: float = Field(ge=0)
    management_servers: float = Field(ge=0)
    min_management_servers: int = Field(ge=0)
    source: str


class PueDefault(_Data):
    pue: float = Field(ge=1.0)
    source: str


class CoolingType(_Data):
    id: str
    name: str
    aliases: tuple[str, ...] = ()
    air_per_rack_w: float = Field(ge=0)
    liquid_per_rack_w: float = Field(ge=0)
    economic_air_per_rack_w: float | None = None
    all_heat_to_liquid: bool = False
    source: str
    unverified: bool = False


class Fluid(_Data):
    density_kg_per_m3: float = Field(gt=0)
    specific_heat_j_per_kg_k: float = Field(gt=0)
    delta_t_k: float = Field(gt=0)
    source: str
    name: str = ""
    ocp_l_per_min_per_kw: float | None = None
    ocp_range_l_per_min_per_kw: tuple[float, float] | None = None


class Cdu(_Data):
    id: str
    name: str
    capacity_w: float = Field(gt=0)
    placement: str
    source: str
    unverified: bool = False


class CduCatalog(_Data):
    default: str
    redundancy_extra_units: int = Field(ge=0)
    redundancy_source: str
    models: tuple[Cdu, ...]


class LiquidCapture(_Data):
    default_fraction: float = Field(gt=0, le=1)
    source: str
    unverified: bool = False


class FloorRule(_Data):
    m2_per_rack: float = Field(gt=0)
    support_space_multiplier: float = Field(ge=1)
    rack_width_m: float = Field(gt=0)
    rack_depth_m: float = Field(gt=0)
    usable_rack_units: int = Field(gt=0)
    network_rack_fill: float = Field(gt=0, le=1)
    source: str
    unverified: bool = False


class FacilityData(_Data):
    """Every facility default with its source; the arithmetic reads only what it is given."""

    network_devices: dict[str, NetworkDevice]
    transceivers: dict[str, Transceiver]
    storage: StorageAssumption
    reference_overheads: OverheadRatios
    pue_by_cooling: dict[str, PueDefault]
    cooling_types: dict[str, CoolingType]
    liquid_capture: LiquidCapture
    coolant: Fluid
    air: Fluid
    cdus: CduCatalog
    floor: FloorRule

    def cooling_type(self, value: str, field: str = "cooling") -> CoolingType:
        """Resolve a cooling name or alias ('liquid' -> dlc); InputError names what is allowed."""
        key = str(value).strip().lower().replace(" ", "-")
        for ct in self.cooling_types.values():
            if key == ct.id or key in ct.aliases or key.replace("_", "-") in ct.aliases:
                return ct
        allowed = ", ".join(sorted(self.cooling_types))
        raise InputError(field, value, f"a cooling type: one of {allowed} (or an alias such as 'liquid')")

    def device(self, device_id: str, field: str = "device") -> NetworkDevice:
        """Look a device up by id; '_' and '-' and case do not matter (catalog ids use '-')."""
        key = normalize(device_id)
        if key not in self.network_devices:
            raise InputError(field, device_id, f"a known device: {', '.join(sorted(self.network_devices))}")
        return self.network_devices[key]

    def cdu(self, cdu_id: str | None = None) -> Cdu:
        wanted = normalize(cdu_id or self.cdus.default)
        for model in self.cdus.models:
            if model.id == wanted:
                return model
        raise InputError("cdu", wanted, f"a known CDU: {', '.join(m.id for m in self.cdus.models)}")


@lru_cache(maxsize=1)
def facility_data() -> FacilityData:
    """The package defaults (cached; the model is frozen)."""
    power = package_yaml("facility_power.yaml")
    cooling = package_yaml("facility_cooling.yaml")
    return FacilityData(
        network_devices={d["id"]: NetworkDevice(**d) for d in power["network_devices"]},
        transceivers={t["id"]: Transceiver(**t) for t in power["transceivers"]},
        storage=StorageAssumption(**power["storage"]),
        reference_overheads=OverheadRatios(**power["reference_overheads"]),
        pue_by_cooling={k: PueDefault(**v) for k, v in power["pue_by_cooling"].items()},
        cooling_types={c["id"]: CoolingType(**c) for c in cooling["cooling_types"]},
        liquid_capture=LiquidCapture(**cooling["liquid_capture"]),
        coolant=Fluid(**cooling["coolant"]),
        air=Fluid(**cooling["air"]),
        cdus=CduCatalog(**cooling["cdus"]),
        floor=FloorRule(**cooling["floor"]),
    )
