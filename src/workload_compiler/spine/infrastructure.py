"""Layers 3-6 for a compiled layout: fabric, storage and reliability, software, facility.

Each layer's arithmetic lives in its own package (fabric/, storage/, reliability.py, software/,
facility/); this module only gathers their inputs from the upstream layers and the intake, and
records what each result assumed and derived in the trace.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from ..arch.counts import param_counts
from ..arch.model import ModelArch
from ..catalog.loader import Catalog
from ..catalog.schema import Switch, System
from ..errors import CatalogGap, InputError
from ..fabric import FabricLayer, NetworkRule, default_network_rules, plan_fabric_for_system
from ..fabric.generations import Generation, generation, generation_of_switch, infiniband_for_nic
from ..facility import (
    Equipment,
    FacilityData,
    FacilityLayer,
    SystemUnit,
    bill_from_counts,
    facility_data,
    reference_equipment,
    size_facility,
)
from ..facility.hall_fit import EquipmentFor
from ..intake.infrastructure import FabricIntake, InfrastructureIntake
from ..provenance import Assumption, Trace
from ..reliability import ReliabilityLayer
from ..software import SoftwareLayer, plan_software
from ..storage.plan import StorageLayer, plan_storage_and_reliability
from ..units import counted
from .fabric_pins import compute_switch
from .result import NotSized

# DGX SuperPOD RAs (H100 RA-11333-001 V11; B200): 32 nodes per scalable unit of 8-GPU nodes.
# GB200 RA: 8 NVL72 racks (144 compute trays) per SU. reference/infrastructure.md §1.1.
SU_NODES_8GPU = 32
SU_TRAYS_NVL72 = 144


def default_switch(system: System, catalog: Catalog, fabric: FabricIntake, trace: Trace) -> Switch:
    switch = compute_switch(fabric, system, catalog)
    if fabric.switch is not None:
        trace.given("fabric.switch", switch.id)
    elif fabric.transport == "roce":
        trace.assumed("fabric.switch", switch.id, "RoCE: the Spectrum-X Ethernet reference switch "
                      "(catalog/data/fabric_transport.yaml)")
    else:
        nic = fabric.nic_bandwidth or system.scale_out_nic_bits_per_s
        trace.assumed("fabric.switch", switch.id,
                      f"InfiniBand of the node's NIC speed ({nic / 1e9:g}G: {infiniband_for_nic(nic).technology}): "
                      "HDR QM8790 for 200G, NDR QM9700 for 400G, XDR Q3400 for 800G (the DGX SuperPOD RA of "
                      "each generation; catalog/data/fabric_generations.yaml)")
    return switch


def storage_rule(gen: Generation, catalog: Catalog) -> dict[str, NetworkRule]:
    """The network rules with the storage fabric in the compute fabric's generation (the H100 RA's
    port ratios, on the generation's storage switch and link speed)."""
    rules = default_network_rules()
    switch = catalog.switch(gen.storage_switch)
    ndr = rules["storage"]
    rules["storage"] = ndr.model_copy(update={
        "name": f"storage fabric ({switch.technology})", "switch": switch.id, "switch_ports": switch.ports,
        "switch_port_bits_per_s": switch.port_bits_per_s, "link_bits_per_s": gen.storage_link_bits_per_s,
        "source": f"{ndr.source}; switch and speed of the {gen.technology} generation: {gen.source}"})
    return rules


def _record(trace: Trace, assumptions: list[Assumption], formulas: dict[str, str]) -> None:
    for a in assumptions:
        trace.assumed(a.field, a.value, a.why, a.unit)
    for path, formula in formulas.items():
        trace.derived(path, None, formula)


def ep_all_to_all_bytes_per_step(arch: ModelArch, layout: dict[str, int], seq_len: int, global_batch: int) -> float:
    """MoE dispatch + combine bytes one GPU sends per step, forward and backward (4 all-to-alls per
    MoE layer): micro-batches x MoE layers on the stage x tokens per GPU x top_k x hidden x 2 B
    x (ep - 1) / ep (the share that leaves the GPU). Megatron-Core token dispatcher, bf16 tokens."""
    if not arch.is_moe or layout["ep"] <= 1:
        return 0.0
    micro = global_batch / (layout["dp"] * layout["micro_batch_size"])
    tokens = layout["micro_batch_size"] * seq_len / (layout["cp"] * layout["tp"])
    layers = arch.moe_blocks / layout["pp"]
    ep = layout["ep"]
    return float(micro * layers * 4 * tokens * arch.moe_top_k * arch.hidden_size * 2 * (ep - 1) / ep)


def build_fabric(system: System, catalog: Catalog, intake: InfrastructureIntake, *, gpus: int,
                 layout: dict[str, int], trace: Trace,
                 ep_bytes_per_step: float | None = None) -> tuple[FabricLayer, Switch]:
    switch = default_switch(system, catalog, intake.fabric, trace)
    gen = generation_of_switch(switch)
    rack_scale = system.nodes_per_scale_up_domain > 1
    nodes = -(-gpus // system.gpus_per_node)
    su_full = SU_TRAYS_NVL72 if rack_scale else gen.su_nodes
    if intake.fabric.su_nodes is not None:
        su = trace.given("fabric.su_nodes", intake.fabric.su_nodes)
    elif nodes < su_full:
        su = trace.assumed("fabric.su_nodes", nodes, "less than one scalable unit: only the populated nodes "
                           "are cabled (the RA's full-SU build applies from one SU up)")
    else:
        su = su_full
        trace.assumed("fabric.su_nodes", su, f"DGX SuperPOD scalable unit of the {gen.technology} generation: "
                      f"{gen.su_nodes} nodes, or 8 NVL72 racks (144 trays) ({gen.source})")
    # The RA's convention (catalog/data/fabric_generations.yaml): 8-GPU DGX nodes of the NDR and XDR
    # generations cable their compute ports through twin-port transceivers, HDR ones one port per
    # QSFP56. (The H100 RA's UFM ports belong to the 31-node SUs of its Table 4; the 32-node SUs
    # built here follow Table 3, which has none.)
    ports_per_tx = gen.node_ports_per_transceiver if system.gpus_per_node == 8 else 1
    # The scale-up bandwidth per GPU is the system's where it sets one, else the accelerator's.
    scale_up = (system.scale_up_bandwidth_bytes_per_s
                or catalog.accelerator(system.accelerator).scale_up_bandwidth_bytes_per_s)
    fabric = plan_fabric_for_system(
        system, switch, gpus=gpus, tp=layout["tp"], pp=layout["pp"], dp=layout["dp"], cp=layout["cp"],
        ep=layout["ep"], etp=layout["etp"], su_nodes=su, node_ports_per_transceiver=ports_per_tx,
        scale_up_bytes_per_s_per_gpu=scale_up,
        oversubscription=intake.fabric.oversubscription or 1.0, ep_rdma_bytes_per_step=ep_bytes_per_step,
        switch_ports_per_transceiver=gen.switch_ports_per_transceiver, network_rules=storage_rule(gen, catalog),
        rail_optimized=intake.fabric.rail_optimized is not False,
        nic_bits_per_s=intake.fabric.nic_bandwidth or system.scale_out_nic_bits_per_s)
    fabric = fabric.model_copy(update={"generation": gen.technology, "nic": system.scale_out_nic,
                                       "fabric_manager": gen.fabric_manager})
    for key in ("nic_bandwidth", "rail_optimized", "transport", "adaptive_routing", "oversubscription"):
        if getattr(intake.fabric, key) is not None:
            trace.given(f"fabric.{key}", getattr(intake.fabric, key))
    _record(trace, fabric.assumptions, fabric.formulas)
    trace.assumed("fabric.generation", gen.technology, f"the compute switch's generation; storage fabric, "
                  f"fabric manager and transceivers follow it ({gen.source})")
    return fabric, switch


def fabric_bill(fabric: FabricLayer | None, switch: Switch | None, gpus: int,
                data: FacilityData, trace: Trace | None = None) -> list[Equipment] | None:
    """The network gear counted by the fabric layer, billed, with the fabric manager of its
    generation; None without a fabric (one node) or with a switch that has no published power (the
    facility layer's reference bill applies, and `trace` records the stand-in)."""
    if fabric is None or switch is None:
        return None
    so, nets = fabric.scale_out, fabric.networks
    gen = generation(fabric.generation)
    optic = {"transceiver": gen.transceiver} if gen is not None else {}
    try:
        return bill_from_counts(gpus=gpus, data=data, **optic, switches=[
            ("compute fabric", switch.id, so.switches, so.transceivers.switch),
            ("storage fabric", nets.storage.switch, nets.storage.switches, 0),
            ("in-band", nets.in_band.switch, nets.in_band.switches, 0),
            ("out-of-band", nets.out_of_band.switch, nets.out_of_band.switches, 0)],
            fabric_manager=fabric.fabric_manager)
    except InputError as exc:   # a device without a published power: the reference bill stands in
        if trace is not None:
            trace.assumed("facility.breakdown.power.stand_in", exc.value,
                          f"no published power for {exc.value} ({fabric.generation}); the facility bill uses "
                          "the reference NDR bill (QM9700 fat tree, NDR UFM) as a stand-in until the catalog "
                          "has the figure")
        return None


def hall_equipment(system: System, catalog: Catalog, intake: InfrastructureIntake) -> EquipmentFor:
    """The gear `n` units of `system` need, as the forward facility layer bills it (fabric sized for
    their GPUs), so that what a hall is said to hold is what the compiled facility layer fits."""
    data = facility_data()

    def equipment(unit: SystemUnit, n: int) -> list[Equipment]:
        gpus = n * unit.gpus
        bill = None
        if gpus > system.gpus_per_node:
            layout = {"tp": 1, "pp": 1, "dp": gpus, "cp": 1, "ep": 1, "etp": 1}
            try:
                fabric, switch = build_fabric(system, catalog, intake, gpus=gpus, layout=layout, trace=Trace())
                bill = fabric_bill(fabric, switch, gpus, data)
            except InputError:   # a switch without published power: the reference bill; an Infeasible
                bill = None      # fabric (beyond the largest fat tree) is the hall fit's binding limit
        return bill or reference_equipment(gpus=gpus, compute_ports=n * unit.compute_ports, data=data, units=n)

    return equipment


def build_facility(system: System, fabric: FabricLayer | None, switch: Switch | None,
                   intake: InfrastructureIntake, *, gpus: int, trace: Trace) -> FacilityLayer | NotSized:
    """Layer 6 for `gpus` GPUs of `system`. The bill of network gear comes from the fabric layer's
    counts; without a fabric (one node), or with a switch that has no published power, the
    facility layer's reference bill is used and recorded as an assumption. A system without a
    published node (or rack) power leaves the layer not sized, with the reason."""
    data = facility_data()
    try:
        unit = SystemUnit.from_system(system, data)
    except CatalogGap as gap:
        return NotSized.from_gap(gap)
    units = -(-gpus // unit.gpus)
    equipment = fabric_bill(fabric, switch, gpus, data, trace)
    f = intake.facility
    layer = size_facility(unit, units, equipment=equipment, cooling=f.cooling, pue=f.pue,
                          rack_power_limit_w=f.rack_power, data=data)
    powered = units * unit.gpus
    if powered > gpus:   # the hardware comes whole: say what is powered beyond the job
        kind = "rack" if unit.rack_scale else "node"
        layer.notes.append(f"{counted(gpus, 'GPU')} asked; {system.id} comes in {kind}s of "
                           f"{counted(unit.gpus, 'GPU')}: {counted(units, kind)} ({counted(powered, 'GPU')}) "
                           f"powered, {powered - gpus:,} idle or for other work")
    for a in layer.assumptions:
        trace.assumed(a.field, a.value, a.why, a.unit)
    for path, prov in layer.provenance.items():
        trace.provenance.setdefault(path, prov)
    return layer


def build_software(intake: InfrastructureIntake, accelerator_vendor: str, kind: str, *, fabric: FabricLayer | None,
                   multi_node: bool, trace: Trace) -> SoftwareLayer:
    """The software & access layer; the RDMA transport follows the compute fabric when there is one."""
    infiniband = fabric is None or "infiniband" in fabric.scale_out.technology.lower()
    software = plan_software(accelerator_vendor=accelerator_vendor, workload_kind=kind,
                             access_model=intake.software.access_model,
                             transport="infiniband" if infiniband else "ethernet", multi_node=multi_node,
                             gpudirect_storage=intake.storage.gpudirect_storage)
    for a in software.assumptions:
        trace.assumed(a.field, a.value, a.why, a.unit)
    return software


@dataclass(frozen=True, kw_only=True)
class Infrastructure:
    fabric: FabricLayer
    storage: StorageLayer
    reliability: ReliabilityLayer
    software: SoftwareLayer
    facility: FacilityLayer | NotSized


def build_training_infrastructure(
    intake: InfrastructureIntake, catalog: Catalog, *, system_id: str, accelerator_vendor: str, gpus: int,
    layout: dict[str, int], arch: ModelArch, seq_len: int, global_batch: int, tokens: float, tokens_per_s: float,
    time_to_train_s: float, trace: Trace,
) -> Infrastructure:
    system = catalog.system(system_id)
    fabric, switch = _training_fabric(intake, catalog, system, gpus=gpus, layout=layout, arch=arch,
                                      seq_len=seq_len, global_batch=global_batch, trace=trace)
    storage, reliability = _storage_and_reliability(intake, system, fabric, gpus=gpus, layout=layout, arch=arch,
                                                    tokens=tokens, tokens_per_s=tokens_per_s,
                                                    time_to_train_s=time_to_train_s)
    for layer in (storage, reliability):
        _record(trace, layer.assumptions, layer.formulas)
    s = intake.storage
    for key, value in (("tier", s.tier), ("checkpoint_mode", s.checkpoint_mode)):
        if value is not None:
            trace.given(f"storage.{key}", value)
    software = build_software(intake, accelerator_vendor, "training", fabric=fabric,
                              multi_node=gpus > system.gpus_per_node, trace=trace)
    facility = build_facility(system, fabric, switch, intake, gpus=gpus, trace=trace)
    return Infrastructure(fabric=fabric, storage=storage, reliability=reliability, software=software,
                          facility=facility)


def training_goodput(intake: InfrastructureIntake, catalog: Catalog, *, system_id: str, gpus: int,
                     layout: dict[str, int], arch: ModelArch, seq_len: int, global_batch: int, tokens: float,
                     tokens_per_s: float) -> float:
    """The reliability layer's goodput of a layout on `gpus` GPUs, as `build_training_infrastructure`
    computes it (the same fabric, storage and failure model; traced nowhere): what the deadline walk
    divides each count's steady-state time to train by."""
    system = catalog.system(system_id)
    fabric, _ = _training_fabric(intake, catalog, system, gpus=gpus, layout=layout, arch=arch, seq_len=seq_len,
                                 global_batch=global_batch, trace=Trace())
    _, reliability = _storage_and_reliability(intake, system, fabric, gpus=gpus, layout=layout, arch=arch,
                                              tokens=tokens, tokens_per_s=tokens_per_s,
                                              time_to_train_s=tokens / tokens_per_s)
    return reliability.goodput


def _training_fabric(intake: InfrastructureIntake, catalog: Catalog, system: System, *, gpus: int,
                     layout: dict[str, int], arch: ModelArch, seq_len: int, global_batch: int,
                     trace: Trace) -> tuple[FabricLayer, Switch]:
    ep_bytes = ep_all_to_all_bytes_per_step(arch, layout, seq_len, global_batch)
    if ep_bytes:
        trace.derived("fabric.ep_bytes_per_gpu_per_step", ep_bytes,
                      "micro-batches x MoE layers/pp x 4 all-to-alls x tokens x top_k x h x 2 B x (ep-1)/ep")
    return build_fabric(system, catalog, intake, gpus=gpus, layout=layout, trace=trace,
                        ep_bytes_per_step=ep_bytes or None)


def _storage_and_reliability(intake: InfrastructureIntake, system: System, fabric: FabricLayer, *, gpus: int,
                             layout: dict[str, int], arch: ModelArch, tokens: float, tokens_per_s: float,
                             time_to_train_s: float) -> tuple[StorageLayer, ReliabilityLayer]:
    counts = param_counts(arch)
    s, r = intake.storage, intake.reliability
    return plan_storage_and_reliability(
        gpus=gpus, gpus_per_node=system.gpus_per_node, params=counts.total, expert_params=counts.expert_params,
        tp=layout["tp"], pp=layout["pp"], dp=layout["dp"], cp=layout["cp"], ep=layout["ep"], etp=layout["etp"],
        zero=layout["zero_stage"],
        dataset_tokens=None if s.dataset_samples else (s.dataset_tokens or tokens),
        tokens_per_s=None if s.dataset_samples else tokens_per_s,
        vocab_size=arch.vocab_size, token_bytes=s.token_bytes,
        dataset_samples=s.dataset_samples, sample_bytes=s.sample_size,
        samples_per_s=(tokens_per_s if s.dataset_samples else None),
        tier=s.tier, write_bytes_per_s=s.write_bandwidth, checkpoint_mode=s.checkpoint_mode,
        gds=s.gpudirect_storage, retained_checkpoints=s.retained_checkpoints,
        node_network_bytes_per_s=fabric.networks.storage.per_node_bytes_per_s,
        restart_s=r.restart_time, failure_rate=r.failure_rate, per_gpu_day=r.failures_per_gpu_day,
        per_node_day=r.failures_per_node_day, checkpoint_interval_s=r.checkpoint_interval,
        time_to_train_s=time_to_train_s)


def layer_dict(layer: Any) -> dict[str, Any]:
    """A layer as the document holds it: plain values; its assumptions and formulas live in the trace."""
    data: dict[str, Any] = layer.model_dump(mode="json", exclude={"assumptions", "provenance", "formulas"})
    return data
