"""Default non-compute equipment for N GPUs, when the fabric layer has not counted it.

Compute fabric: a full-bisection fat tree over the compute ports (one port per NIC), radix k:
  1 switch while ports <= k:     every port on one non-blocking switch, no uplinks
  2 tiers while ports <= k^2/2:  leaves = ceil(ports / (k/2)), spines = ceil(leaves / 2)
  3 tiers above:                 leaves = ceil(ports / (k/2)), spines = leaves, cores = ceil(leaves / 2)
(reference/infrastructure.md §3.1; reproduces DGX H100 RA Tables 3-4: 1,016 ports -> 32 + 16,
4,096 -> 128 + 128 + 64). Switch-side optics: one twin-port OSFP per two switch ports in use.
One node (or one rack-scale system) has no compute fabric: its GPUs meet in the scale-up domain,
as the fabric layer sizes none for it, and without a compute fabric there is no fabric manager.

Storage fabric, in-band, out-of-band, UFM and management servers scale with the GPU count at the
ratios of the DGX H100 4-SU bill of materials (RA-11333-001 Table 7), and storage is one assumed
rack per 1,024 GPUs (rounded up), its share of one below half a rack's worth (8 GPUs: 117 W and
2 U, not a 15 kW rack: a whole rack had put one DGX's service at 52 kW of facility power). All
of it is an ASSUMPTION the compiler replaces with the fabric and storage layers' own counts when
it has them (pass `equipment=` to the facility functions).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from pydantic import BaseModel, ConfigDict

from ..errors import InputError
from .data import FacilityData
from .power import Equipment, device_equipment

COMPUTE_SWITCH = "quantum2-qm9700"
FABRIC_MANAGER = "ufm-enterprise-ndr"   # the reference bill's generation (DGX H100 RA)
SWITCH_OPTIC = "osfp-2x400g-mm"


class FatTree(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    ports: int
    radix: int
    leaves: int
    spines: int
    cores: int
    switch_ports_used: int

    @property
    def switches(self) -> int:
        return self.leaves + self.spines + self.cores


def fat_tree(ports: int, radix: int = 64) -> FatTree:
    """Switch counts of a rail/leaf-spine(-core) full fat tree for `ports` endpoint ports."""
    if ports < 0 or radix < 4 or radix % 2:
        raise InputError("fabric.ports", (ports, radix), "ports >= 0 and an even switch radix >= 4")
    if ports <= radix:    # one switch holds every port, non-blocking
        return FatTree(ports=ports, radix=radix, leaves=1 if ports else 0, spines=0, cores=0,
                       switch_ports_used=ports)
    down = radix // 2
    leaves = math.ceil(ports / down)
    if ports <= radix * radix // 2:
        spines, cores = math.ceil(leaves / 2), 0
    else:
        spines, cores = leaves, math.ceil(leaves / 2)
    # every endpoint port uses one leaf port; each uplink uses one port at each end
    uplinks = ports + (ports if cores else 0)
    return FatTree(
        ports=ports,
        radix=radix,
        leaves=leaves,
        spines=spines,
        cores=cores,
        switch_ports_used=ports + 2 * uplinks,
    )


def _ratio(gpus: int, per: float, per_gpus: int) -> int:
    return math.ceil(gpus * per / per_gpus) if gpus > 0 else 0


def _label(line: Equipment, label: str) -> Equipment:
    return line.model_copy(update={"name": f"{line.name} [{label}]"})


def bill_from_counts(
    *,
    gpus: int,
    switches: Sequence[tuple[str, str, int, int]],
    data: FacilityData,
    transceiver: str = SWITCH_OPTIC,
    fabric_manager: str | None = FABRIC_MANAGER,
) -> list[Equipment]:
    """The bill from counted switches plus ratio-based management and storage.

    `fabric_manager`: the UFM appliance of the fabric's generation (None: an Ethernet fabric).

    `switches`: (label, device id, count, switch-side transceivers) per network, e.g. from the
    fabric layer: ("compute fabric", "quantum2-qm9700", 48, 1536), ("in-band", "sn4600c", 8, 0).
    UFM appliances, management servers and storage racks follow the reference ratios.
    """
    if gpus < 0:
        raise InputError("compute.gpus", gpus, "a non-negative GPU count")
    optic = data.transceivers[transceiver]
    lines = [
        _label(
            device_equipment(
                data.device(device_id, f"fabric.{label}.switch"),
                count,
                "network",
                transceivers=tx,
                transceiver=optic,
            ),
            label,
        )
        for label, device_id, count, tx in switches
    ]
    r = data.reference_overheads
    managers = []
    compute = sum(count for label, _, count, _ in switches if label == "compute fabric")
    if fabric_manager is not None and compute > 0:   # an Ethernet fabric, or none, has no UFM appliance
        ufm = device_equipment(
            data.device(fabric_manager), _ratio(gpus, r.ufm_appliances, r.per_gpus), "management"
        )
        managers.append(_label(ufm, "fabric manager"))
    servers = max(r.min_management_servers, _ratio(gpus, r.management_servers, r.per_gpus)) if gpus else 0
    mgmt = device_equipment(data.device("management-server"), servers, "management")
    return [
        *lines,
        *managers,
        _label(mgmt, "management"),
        _label(storage_racks(gpus, data), "storage"),
    ]


def reference_equipment(
    *,
    gpus: int,
    compute_ports: int,
    data: FacilityData,
    units: int | None = None,
    compute_switch: str = COMPUTE_SWITCH,
    radix: int = 64,
) -> list[Equipment]:
    """The default bill for `gpus` GPUs with `compute_ports` compute-fabric ports (all assumed) on
    `units` nodes or rack-scale systems: one has no compute fabric."""
    if gpus < 0 or compute_ports < 0:
        raise InputError("compute.gpus", (gpus, compute_ports), "non-negative GPU and port counts")
    r = data.reference_overheads
    tree = fat_tree(0 if units == 1 else compute_ports, radix)
    switches = [
        ("compute fabric", compute_switch, tree.switches, math.ceil(tree.switch_ports_used / 2)),
        ("storage fabric", compute_switch, _ratio(gpus, r.storage_fabric_switches, r.per_gpus), 0),
        ("in-band", "sn4600c", _ratio(gpus, r.inband_switches, r.per_gpus), 0),
        ("out-of-band", "sn2201", _ratio(gpus, r.oob_switches, r.per_gpus), 0),
    ]
    return bill_from_counts(gpus=gpus, switches=switches, data=data)


STORAGE_SHARE_MIN_U = 2   # the smallest storage a share is drawn as: one 2U server


def storage_racks(gpus: int, data: FacilityData) -> Equipment:
    """Storage as whole racks at the assumed per-rack power (one per `gpus_per_rack` GPUs, rounded
    up); below half a rack's worth of GPUs, that rack's share of power and rack units (at least a 2U
    server): a small cluster's storage is a server or two, not a rack."""
    s = data.storage
    if 0 < gpus < s.gpus_per_rack / 2:
        share = gpus / s.gpus_per_rack
        return Equipment(
            name="storage (partner-specific), a share of one rack",
            role="storage",
            count=1,
            power_w_each=s.rack_power_w * share,
            rack_units_each=max(STORAGE_SHARE_MIN_U, math.ceil(s.rack_units_per_rack * share)),
            basis="assumed",
            source=f"{s.source}; {gpus} GPUs take {share:.2%} of one rack's power and rack units",
        )
    return Equipment(
        name="storage rack (partner-specific)",
        role="storage",
        count=math.ceil(gpus / s.gpus_per_rack) if gpus > 0 else 0,
        power_w_each=s.rack_power_w,
        rack_units_each=s.rack_units_per_rack,
        whole_rack=True,
        basis="assumed",
        source=s.source,
    )
