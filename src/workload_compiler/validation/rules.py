"""Per-source facts the calibration records leave implicit: framework defaults, FLOP definitions.

These describe how each *source* ran (its framework's defaults, how it counts FLOPs); they are not
fitted and never hold a correction factor. Groups are source families; the leave-one-group-out
check in tools/fit_training.py holds out one group at a time.
"""

from __future__ import annotations

from dataclasses import dataclass, field

GROUPS = ("narayanan2021", "korthikanti2022", "megatron_core", "llama3", "nemo2407", "nemo2502",
          "nemo_longseq", "mbridge", "dgxc", "torchtitan", "ibm_fsdp")


@dataclass(frozen=True, kw_only=True)
class GroupRule:
    zero: int                          # 0 plain DP, 1 distributed optimizer, 3 FSDP (see Layout)
    flops_definition: str | None       # how the source's TFLOP/s figure counts (flops_definitions.py)
    recompute_default: int = 0         # when the record does not say
    vp_default: int = 1                # interleaving depth when pp > 1 and the record does not say
    sequence_parallel: bool = True     # whether TP > 1 runs implied sequence parallelism
    scale_out_bits_per_node: dict[str, float] = field(default_factory=dict)  # system override
    flash_attention: bool = True       # False: Megatron-LM 2021-22 unfused softmax attention


# NVIDIA performance recipes (NeMo, Megatron-Bridge, DGX Cloud) on H100: distributed optimizer.
_NVIDIA = GroupRule(zero=1, flops_definition=None)
GROUP_RULES: dict[str, GroupRule] = {
    # 2021 Megatron-LM: fp32 gradient all-reduce, no distributed optimizer, no sequence parallel.
    "narayanan2021": GroupRule(zero=0, flops_definition="narayanan_eq3", sequence_parallel=False,
                               flash_attention=False),
    # 2022 Megatron-LM (the paper that introduced sequence parallelism): still no distributed
    # optimizer and unfused softmax attention.
    "korthikanti2022": GroupRule(zero=0, flops_definition=None, flash_attention=False),
    # Megatron-Core README weak scaling: distributed optimizer and overlap flags on (record notes);
    # Megatron's selective recompute (--recompute-activations) assumed.
    "megatron_core": GroupRule(zero=1, flops_definition="megatron_model", recompute_default=1),
    # Llama 3 paper: FSDP sharding optimizer state and gradients = ZeRO-2; interleaved 1F1B.
    "llama3": GroupRule(zero=2, flops_definition="chowdhery", vp_default=2),
    "nemo2407": _NVIDIA,
    "nemo2502": _NVIDIA,
    "nemo_longseq": GroupRule(zero=1, flops_definition="nemo_noncausal"),
    "mbridge": _NVIDIA,
    "dgxc": _NVIDIA,
    # torchtitan: FSDP2 (ZeRO-3); its interleaved schedules build two stages per rank
    # (torchtitan parallelisms/pipeline.py, as in tests/unit/test_memory_calibration.py).
    "torchtitan": GroupRule(zero=3, flops_definition=None, vp_default=2),
    # IBM fms-fsdp blog: 400 Gb/s (A100) and 800 Gb/s (H100) inter-node per node.
    "ibm_fsdp": GroupRule(zero=3, flops_definition=None, sequence_parallel=False,
                          scale_out_bits_per_node={"a100-sxm-80gb": 400e9, "h100-sxm": 800e9}),
}

SKIP_IDS: dict[str, str] = {
    "narayanan2021_eq4_gpt3_175b": "time-to-train estimate from Eq. 4, not a measurement",
    "narayanan2021_eq4_gpt_1t": "time-to-train estimate from Eq. 4, not a measurement",
    "korthikanti2022_530b_2240gpu_abstract": "global and micro-batch size not stated",
    "korthikanti2022_table4_22b_layer_timing": "one-layer timing, not a training step",
    "megatron_readme_2022_mfu_hfu": "duplicate of korthikanti2022 Table 5",
    "megatron_core_h100_strong_gpt3_96gpu": "parallel layout not published (strong-scaling endpoint)",
    "megatron_core_h100_strong_gpt3_4608gpu": "parallel layout not published (strong-scaling endpoint)",
    "llama3_405b_table4_row3": "dp as printed (4) contradicts the GPU count and batch (record notes)",
}

# Whole setups the model does not express, by id prefix.
SKIP_PREFIXES: dict[str, str] = {
    "narayanan2021_t2_zero3": (
        "DeepSpeed ZeRO-3 (2021): throughput falls 3.3x from 384 to 1,536 GPUs at a fixed batch "
        "(144 -> 44 TFLOP/s), far beyond its bandwidth cost; per-collective overheads of that "
        "implementation are not modeled"),
}

# Interleaving depth stated in a record's notes: "Interleaved pipeline (m=3) for 175B and 530B".
VP_FROM_NOTES: dict[str, int] = {
    "torchtitan_2412_t5_3d_1f1b": 1,   # the schedule named in the record id: plain 1F1B
    "korthikanti2022_t5_175b_present": 3, "korthikanti2022_t5_175b_fullrecompute": 3,
    "korthikanti2022_t5_530b_present": 3, "korthikanti2022_t5_530b_fullrecompute": 3,
}


def group_of(record_id: str) -> str:
    """The source family a record belongs to (its id prefix)."""
    for g in sorted(GROUPS, key=len, reverse=True):
        if record_id.startswith(g):
            return g
    if record_id.startswith("ibm_"):
        return "ibm_fsdp"
    return record_id.split("_")[0]
