"""Acceptance targets for the sized system: what a healthy cluster must measure before the sizing's
numbers can be trusted (seed 001: what "healthy" looks like at thousands of GPUs).

Each target is the rate the sizing itself assumed, so a measurement below it means the sizing
is optimistic for that machine:

    NCCL all-reduce   busbw = S / t x 2(n-1)/n, t from perf/collectives.py (alpha-beta, hierarchical
                      across scale-up domains) at the job's message size S on each tier (a generic
                      DDP job: its gradient bucket, min(params x gradient bytes, 25 MiB))
    NCCL all-to-all   busbw = S / t x (n-1)/n (a fabric health figure where the job does none: ep 1)
    GEMM              peak x gemm_efficiency(2 x 8192^3 FLOP) (perf/efficiency.py, fitted constants)
    HBM bandwidth     datasheet x the BabelStream share the sizing used
Where a rate was measured on the sized machine (`measured`, `wkc calibrate`), the sizing used it,
so the target is that rate and its source says measured.
    storage           the tier's aggregate and per-node read and the checkpoint write bandwidth; a
                      serving fleet's checkpoint load per node
    HPL (HPC)         GPUs x min(gemm_fraction x FP64 matrix peak, FLOP/J x TDP) (hpc/roofline.py)
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

from ..arch.model import ModelArch
from ..catalog.loader import Catalog
from ..catalog.schema import Accelerator
from ..generic.resolve import GRADIENT_BYTES
from ..hpc.classes import Kernel
from ..hpc.device import hpc_device
from ..hpc.fitted import FITTED as HPC_FITTED
from ..hpc.roofline import compute_rate
from ..perf import collectives as coll
from ..perf.efficiency import HBM_EFFICIENCY, gemm_efficiency
from ..perf.fitted import FITTED
from ..perf.layout import MeasuredRates
from ..quantity import Unit, quantity, quantity_in
from ..spine.doc import Doc
from .view import get_path, number

ACCEPTANCE_GEMM = 8192   # M = N = K of the GEMM acceptance run: large enough to sit on the plateau
FALLBACK_MESSAGE_BYTES = 2.0**30
NVLINK_SOURCE = ("perf/collectives.py NVLINK_EFFICIENCY 0.80: NCCL NVLink4 ring ~370 of 450 GB/s (nccl-tests #212); "
                 "8x A100 all-reduce 231.6 of 300 GB/s (Azure AI-benchmarking-guide)")
NIC_SOURCE = "perf/collectives.py NIC_EFFICIENCY 0.92: NCCL reaches 46-48 of 50 GB/s per NDR NIC (nccl-tests #290)"
GEMM_SOURCE = (f"perf/fitted.py gemm_e_max {FITTED.gemm_e_max:.3f}, fitted on the published training runs "
               "(calibration/training_public.yaml, training_added.yaml), and kernel overhead "
               f"{FITTED.gemm_kernel_overhead_s:.2e} s, AIConfigurator's measured FP8 GEMM fixed cost")
PRECISIONS = ("bf16", "fp16", "fp8", "fp4", "tf32")
# PyTorch DistributedDataParallel(bucket_cap_mb=25): gradients are all-reduced in buckets of 25 MiB
# (torch.nn.parallel.DistributedDataParallel docs), so that is the message NCCL sees.
DDP_BUCKET_BYTES = 25 * 2.0**20
MEASURED_SOURCE = "measured on the sized {kind} {id} (the `measured` section names the run): the sizing used it"


class AcceptanceTarget(Doc):
    test: str
    tier: str | None = None
    ranks: int | None = quantity("count", "ranks (GPUs) the test runs on", default=None)
    message_bytes: float | None = quantity("B", "message size", default=None)
    precision: str | None = None
    expected: float = quantity_in("unit", "pass when the measurement is at least this (unit in `unit`)")
    unit: Unit
    peak: float | None = quantity_in("unit", "the line rate or datasheet peak it is a fraction of", default=None)
    fraction_of_peak: float | None = quantity("fraction", "expected / peak", default=None)
    fraction_source: str
    sized_for: str = Field(description="what in the sizing this rate stands for")
    tool: str
    command: str | None = Field(default=None, description="how to run it at the target's size")
    readiness_check: str | None = Field(default=None, description="the software.readiness item it gives a number")


class AcceptanceTargets(Doc):
    targets: list[AcceptanceTarget]
    note: str = ("pass = measured >= expected on the accelerator being sized; a lower figure means the sizing's "
                 "time and throughput are optimistic for this machine")


def _collective_tool(doc: dict[str, Any]) -> str:
    """The vendor's collective test suite ('nccl-tests', 'rccl-tests', ...) from the software layer."""
    for c in get_path(doc, "software.stack") or []:
        if isinstance(c, dict) and c.get("role") == "collective_test":
            return str(c.get("name")).split(" (")[0]
    return "nccl-tests"


def _messages(doc: dict[str, Any], arch: ModelArch | None) -> tuple[float, str, float, str]:
    """(scale-up message, what it is, scale-out message, what it is): the job's collective sizes."""
    par = get_path(doc, "compute.parallelism") or {}
    tp, pp, cp = int(par.get("tp", 1)), int(par.get("pp", 1)), int(par.get("cp", 1))
    params = number(doc, "objective.params")
    if doc.get("kind") == "training" and arch is not None and params:
        mbs = int(par.get("micro_batch_size", 1))
        seq = number(doc, "objective.seq_len") or 0
        act = mbs * seq / cp * arch.hidden_size * 2
        grads = params / (tp * pp) * 2
        what = f"TP all-reduce of one micro-batch's activations ({mbs} x {seq:.0f}/{cp} x {arch.hidden_size} x 2 B)"
        up = (act, what) if tp > 1 else (grads, "the data-parallel gradient reduction inside a node")
        return up[0], up[1], grads, f"gradient reduction of params/(tp x pp) x 2 B (tp {tp}, pp {pp})"
    if doc.get("kind") == "inference" and arch is not None:
        batch = number(doc, "inference.batch_size") or 1.0
        size = batch * arch.hidden_size * 2
        return size, f"decode TP all-reduce: batch {batch:.0f} x hidden {arch.hidden_size} x 2 B", \
            FALLBACK_MESSAGE_BYTES, "fabric health at 1 GiB (the service's replicas do not all-reduce across nodes)"
    if doc.get("kind") == "generic" and number(doc, "compute.gpus"):
        per_param = GRADIENT_BYTES.get(str(get_path(doc, "compute.precision")), 2)
        grads = (number(doc, "objective.params") or 0.0) * per_param
        if grads > 0:
            size = min(grads, DDP_BUCKET_BYTES)
            what = f"DDP gradient bucket: min(params x {per_param} B = {grads / 1e6:,.1f} MB, bucket_cap_mb 25)"
            return size, what, size, what
        return FALLBACK_MESSAGE_BYTES, "bandwidth plateau (1 GiB): model.params not given", FALLBACK_MESSAGE_BYTES, \
            "bandwidth plateau (1 GiB): model.params not given"
    return FALLBACK_MESSAGE_BYTES, "bandwidth plateau (1 GiB)", FALLBACK_MESSAGE_BYTES, "bandwidth plateau (1 GiB)"


def nccl_targets(doc: dict[str, Any], catalog: Catalog, arch: ModelArch | None) -> list[AcceptanceTarget]:
    acc, system = str(get_path(doc, "compute.accelerator")), str(get_path(doc, "compute.system"))
    hw = catalog.hardware(acc, system)
    gpus = int(number(doc, "compute.gpus") or 1)
    tool = _collective_tool(doc)
    up_msg, up_why, out_msg, out_why = _messages(doc, arch)
    tech = get_path(doc, "fabric.scale_out.technology") or "scale-out NICs"
    out: list[AcceptanceTarget] = []
    domain = min(hw.scale_up_domain_gpus, gpus)
    tiers: list[tuple[str, int, float, str, float, str]] = []
    if domain > 1:
        tiers.append((f"scale-up ({domain} GPUs, NVLink)", domain, up_msg, up_why,
                      hw.scale_up_bandwidth_bytes_per_s, NVLINK_SOURCE))
    if gpus > hw.scale_up_domain_gpus:
        # A hierarchical all-reduce's bus bandwidth is bound by the NICs of one domain together.
        tiers.append((f"scale-out ({gpus:,} GPUs, {tech})", gpus, out_msg, out_why,
                      hw.scale_out_bandwidth_bytes_per_s * domain,
                      f"{NIC_SOURCE}; {NVLINK_SOURCE} inside each domain; peak: all-reduce the NICs of one domain, "
                      "all-to-all one GPU's NIC"))
    ep = int((get_path(doc, "compute.parallelism") or {}).get("ep", 1) or 1)
    a2a_why = f"the expert dispatch (ep {ep}) at the same size" if ep > 1 else \
        "a fabric health figure: this job does no all-to-all (ep 1)"
    for tier, n, size, why, line, source in tiers:
        t_ar = float(coll.group_all_reduce_s(size, n, 1, hw))
        t_a2a = float(coll.group_all_to_all_s(size, n, 1, hw))
        # an all-to-all's traffic to other domains leaves through each GPU's own NIC
        a2a_line = hw.scale_out_bandwidth_bytes_per_s if tier.startswith("scale-out") else line
        level = "scale_out" if tier.startswith("scale-out") else "scale_up"
        for test, t, factor, op, peak, collective, sized_for in (
                ("NCCL all-reduce bus bandwidth", t_ar, 2 * (n - 1) / n, "all_reduce_perf", line, "all_reduce", why),
                ("NCCL all-to-all bus bandwidth", t_a2a, (n - 1) / n, "alltoall_perf", a2a_line, "all_to_all",
                 a2a_why)):
            busbw = size / t * factor
            measured = hw.measured.bus_bandwidth(level, collective) is not None
            out.append(AcceptanceTarget(
                test=test, tier=tier, ranks=n, message_bytes=size, expected=busbw, unit="B/s", peak=peak,
                fraction_of_peak=busbw / peak if peak else None, sized_for=sized_for,
                fraction_source=MEASURED_SOURCE.format(kind="node", id=system) + f" ({level} {collective})"
                if measured else source,
                tool=f"{tool} {op}", command=f"{op} -b {size:.0f} -e {size:.0f} -g 1, {n} ranks (one per GPU)",
                readiness_check="collective_tests"))
    return out


def gemm_targets(acc: Accelerator, job_precision: str | None, kind: str,
                 measured: MeasuredRates | None = None) -> list[AcceptanceTarget]:
    flops = 2.0 * ACCEPTANCE_GEMM**3
    rates = measured or MeasuredRates()
    out: list[AcceptanceTarget] = []
    for p in PRECISIONS:
        peak = getattr(acc.peak_flops, p)
        if peak is None:
            continue
        e_max, t0 = rates.gemm_constants(p, FITTED.gemm_e_max, FITTED.gemm_kernel_overhead_s)
        eff = float(gemm_efficiency(flops, peak_flops=peak, e_max=e_max, kernel_overhead_s=t0))
        extrapolated = p in ("fp4", "tf32", "fp16")
        note = "; the same share assumed at this precision (no calibration run)"
        source = GEMM_SOURCE + (note if extrapolated else "")
        if (e_max, t0) != (FITTED.gemm_e_max, FITTED.gemm_kernel_overhead_s):
            source = MEASURED_SOURCE.format(kind="accelerator", id=acc.id) + f" (gemm e_max {e_max:.3f}, t0 {t0:.2e} s)"
        out.append(AcceptanceTarget(
            test="GEMM throughput", tier="per GPU", precision=p + (" (the job's)" if p == job_precision else ""),
            expected=peak * eff, unit="FLOP/s", peak=peak, fraction_of_peak=eff, fraction_source=source,
            sized_for=f"dense {ACCEPTANCE_GEMM}^3 GEMM at the fitted large-GEMM efficiency",
            tool="vendor BLAS matmul benchmark", command=f"M = N = K = {ACCEPTANCE_GEMM}, {p}, one GPU at a time",
            readiness_check="gpu_diagnostics"))
    if kind == "hpc" and acc.peak_flops.fp64_tensor:
        share = HPC_FITTED.gemm_fraction
        out.append(AcceptanceTarget(
            test="GEMM throughput", tier="per GPU", precision="fp64", expected=share * acc.peak_flops.fp64_tensor,
            unit="FLOP/s", peak=acc.peak_flops.fp64_tensor, fraction_of_peak=share,
            fraction_source="hpc/fitted.py gemm_fraction, fitted on HPL per GPU and DGEMM records "
                            "(calibration/hpc_public.yaml)", sized_for="FP64 DGEMM", tool="DGEMM benchmark (FP64)",
            readiness_check="gpu_diagnostics"))
    return out


def hbm_target(acc: Accelerator, kind: str, measured: MeasuredRates | None = None) -> AcceptanceTarget | None:
    if acc.memory_bandwidth_bytes_per_s is None:
        return None
    share = HPC_FITTED.stream_fraction if kind == "hpc" else HBM_EFFICIENCY
    source = ("hpc/fitted.py stream_fraction (BabelStream/node-burn, calibration/hpc_public.yaml)" if kind == "hpc"
              else "perf/efficiency.py HBM_EFFICIENCY 0.86: BabelStream triad 1.70/2.039 TB/s A100, 2.97/3.35 H100 "
              "(Azure AI-benchmarking-guide)")
    if measured is not None and measured.hbm_bytes_per_s is not None:
        share = measured.hbm_bytes_per_s / acc.memory_bandwidth_bytes_per_s
        source = MEASURED_SOURCE.format(kind="accelerator", id=acc.id)
    return AcceptanceTarget(
        test="HBM bandwidth", tier="per GPU", expected=share * acc.memory_bandwidth_bytes_per_s, unit="B/s",
        peak=acc.memory_bandwidth_bytes_per_s, fraction_of_peak=share, fraction_source=source,
        sized_for="memory-bound kernels of the step", tool="BabelStream (triad)", readiness_check="gpu_diagnostics")


def storage_targets(doc: dict[str, Any]) -> list[AcceptanceTarget]:
    out: list[AcceptanceTarget] = []
    tier = get_path(doc, "storage.tier")
    nodes = int(number(doc, "compute.nodes") or 1)
    gds = bool(get_path(doc, "storage.gds"))
    tier_source = (f"DGX H100 RA Table 6, '{tier}' tier scaled per GPU (storage/tiers.py)" if tier else
                   "the storage layer's own figure: no catalog tier was chosen (an HPC job's scratch, "
                   "hpc/io.py scratch_plan)")
    for test, path, why in (
            ("storage aggregate read", "storage.tier_read_bytes_per_s", "the tier chosen for the dataset read"),
            ("storage aggregate write", "storage.checkpoint_write_bytes_per_s", "the write the checkpoint assumes"),
            ("scratch write", "storage.scratch_write_bandwidth_bytes_per_s", "the solver's output and checkpoint I/O")):
        value = number(doc, path)
        if not value:
            continue
        out.append(AcceptanceTarget(
            test=test, tier=f"aggregate over {nodes} nodes", expected=value, unit="B/s", fraction_source=tier_source,
            sized_for=why, tool="fio / elbencho / IOR", command=f"large sequential I/O from all {nodes} nodes at once",
            readiness_check="gpudirect_storage" if gds else None))
    node_load = number(doc, "storage.node_read_bytes_per_s")
    if node_load:   # a serving fleet: the cold load of its checkpoint (storage/serving.py)
        out.append(AcceptanceTarget(
            test="checkpoint load per node", tier="one node", expected=node_load, unit="B/s",
            fraction_source=tier_source + (" or the host bounce path" if not gds else ""),
            sized_for="one replica's cold load (storage.replica_load_s)", tool="fio / elbencho",
            command="sequential read of the served checkpoint's files from one node, page cache dropped",
            readiness_check="gpudirect_storage" if gds else None))
    demand = number(doc, "storage.read_bytes_per_s")
    if demand:
        out.append(AcceptanceTarget(
            test="storage read at the job's demand", tier=f"aggregate over {nodes} nodes", expected=demand, unit="B/s",
            fraction_source="the sizing's read demand (storage.read_bytes_per_s)",
            sized_for="samples or tokens per second x bytes per item", tool="the data loader's own read benchmark"))
    return out


def hpl_target(doc: dict[str, Any], catalog: Catalog) -> AcceptanceTarget | None:
    if doc.get("kind") != "hpc":
        return None
    device = hpc_device(catalog, str(get_path(doc, "compute.accelerator")), str(get_path(doc, "compute.system")))
    if not (device.peak_fp64_matrix or device.peak_fp64):
        return None
    rate = compute_rate(device, Kernel(name="hpl", flops_per_unit=1.0, bytes_per_unit=0.0, compute="gemm"), "fp64")
    gpus = int(number(doc, "compute.gpus") or 1)
    peak = device.peak_fp64_matrix or device.peak_fp64 or 0.0
    return AcceptanceTarget(
        test="HPL Rmax", tier=f"{gpus} GPUs", ranks=gpus, precision="fp64", expected=rate * gpus, unit="FLOP/s",
        peak=peak * gpus, fraction_of_peak=rate / peak if peak else None,
        fraction_source="hpc/fitted.py: min(gemm_fraction x FP64 matrix peak, gemm_fp64_flops_per_j x TDP), fitted on "
                        "HPL per GPU (H100 8-GPU node 45.7 TF; Lockwood H100 36-43 TF/GPU at scale)",
        sized_for="an upper bound: HPL at scale loses a few percent more to communication",
        tool="NVIDIA HPC-Benchmarks HPL (or rocHPL)", readiness_check="gpu_diagnostics")


def acceptance_targets(doc: dict[str, Any], catalog: Catalog, arch: ModelArch | None) -> AcceptanceTargets | None:
    if not number(doc, "compute.gpus") or not get_path(doc, "compute.system"):
        return None
    acc = catalog.accelerator(str(get_path(doc, "compute.accelerator")))
    kind = str(doc.get("kind"))
    job_precision = get_path(doc, "objective.precision") or get_path(doc, "compute.precision") or \
        get_path(doc, "compute.gemm_precision")
    rates = catalog.measured_rates(acc.id, str(get_path(doc, "compute.system")))
    targets = nccl_targets(doc, catalog, arch) + gemm_targets(acc, job_precision, kind, rates)
    for extra in (hbm_target(acc, kind, rates), hpl_target(doc, catalog)):
        if extra is not None:
            targets.append(extra)
    targets += storage_targets(doc)
    return AcceptanceTargets(targets=targets)


__all__ = ["AcceptanceTarget", "AcceptanceTargets", "acceptance_targets"]
