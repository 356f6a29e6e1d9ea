"""The bottleneck view: where a training step's time goes and why MFU is what it is.

Seed 001 asks it as "we see 40% MFU on H100s — where does the bottleneck live?". The answer is a
waterfall from the dense peak down to the effective rate over the whole run:

    peak x (model FLOPs / GEMM-equivalent work at peak)         -> compute efficiency
         x (compute share of the step)                          -> memory-bound work, exposed TP/DP/EP/CP
                                                                   communication, pipeline bubble, optimizer
         = MFU (per step)
         x goodput (checkpoint stalls, work lost to failures, restarts)
         = effective MFU over the run
Data loading is checked against the storage tier: it costs time only when the demanded read
bandwidth exceeds what the tier delivers.
"""

from __future__ import annotations

from typing import Any

LABELS = {
    "compute": "GEMM and attention kernels",
    "memory_bound": "memory-bound kernels (norms, activations, casts)",
    "tp_comm": "exposed tensor-parallel communication",
    "cp_comm_exposed": "exposed context-parallel communication",
    "ep_comm": "expert-parallel all-to-all",
    "pp_bubble": "pipeline bubble",
    "pp_p2p": "pipeline point-to-point sends",
    "dp_comm_exposed": "exposed data-parallel gradient communication",
    "optimizer": "optimizer step",
    "offload_exposed": "exposed activation copies to and from host memory",
}


def largest_step_terms(breakdown: dict[str, float], n: int = 3) -> str:
    """'largest terms of the step: compute 74%, memory_bound 10%, tp_comm 8%'."""
    total = sum(breakdown.values()) or 1.0
    ranked = sorted(breakdown.items(), key=lambda kv: -kv[1])
    return "largest terms of the step: " + ", ".join(f"{k} {v / total:.0%}" for k, v in ranked[:n] if v > 0)


def bottleneck_view(compute: dict[str, Any], storage: dict[str, Any] | None,
                    reliability: dict[str, Any] | None) -> dict[str, Any]:
    """Shares of the step, the MFU waterfall and a one-line verdict, from the compiled layers."""
    step = float(compute["step_time_s"])
    terms = {k: float(v) for k, v in compute["step_breakdown_s"].items()}
    shares = {k: v / step for k, v in terms.items() if step > 0}
    mfu = float(compute["mfu"])
    compute_share = shares.get("compute", 0.0)
    kernel_eff = mfu / compute_share if compute_share > 0 else 0.0
    goodput = float(reliability["goodput"]) if reliability else 1.0
    losses: list[dict[str, Any]] = [
        {"cause": LABELS.get(k, k), "share_of_step": s} for k, s in sorted(shares.items(), key=lambda kv: -kv[1])
        if k != "compute" and s > 0.005]
    if reliability:
        over = reliability.get("overheads", {})
        for key, label in (("checkpoint", "checkpoint stalls"), ("lost_work", "work lost to failures"),
                           ("restart", "restarts after failures")):
            if over.get(key, 0.0) > 0.0005:
                losses.append({"cause": label, "share_of_run": float(over[key])})
    data_bound = False
    if storage:
        data_bound = float(storage["read_bytes_per_s"]) > float(storage["tier_read_bytes_per_s"])
        if data_bound:
            losses.append({"cause": "data loading (read demand above the storage tier)", "share_of_run": None})
    largest = losses[0]["cause"] if losses else "none"
    verdict = (f"MFU {mfu:.0%}: the kernels run at {kernel_eff:.0%} of peak while computing, and compute is "
               f"{compute_share:.0%} of the step; the largest other term is {largest}. Over the run, goodput "
               f"{goodput:.1%} gives an effective {mfu * goodput:.0%} of peak.")
    return {"step_shares": shares, "kernel_efficiency": kernel_eff, "mfu": mfu, "goodput": goodput,
            "effective_mfu": mfu * goodput, "data_loading_bound": data_bound, "losses": losses,
            "verdict": verdict}
