"""The fused attention core's rate by GPU: the measured gap between GPUs and the softmax exponentials."""

from __future__ import annotations

from typing import Any

import pytest

from workload_compiler.arch.model import ModelArch
from workload_compiler.arch.presets import preset_arch
from workload_compiler.catalog.loader import load_catalog
from workload_compiler.perf.attention_rate import attention_speed, flops_per_exp, softmax_bound
from workload_compiler.perf.layout import Layout, TrainingSetup
from workload_compiler.perf.step_time import training_step

CAT = load_catalog()


def test_the_exponentials_bind_blackwell_below_head_dim_128_and_nothing_else() -> None:
    """Per SM and clock: 16 exponentials (CUDA C++ Programming Guide, arithmetic instruction
    throughput) against 8,192 dense BF16 tensor FLOPs on Blackwell, 4,096 on Hopper; Blackwell Ultra
    doubles the exponentials (NVIDIA blog, 'Making Softmax More Efficient with NVIDIA Blackwell
    Ultra'). A forward pass does 4 x head_dim FLOPs per exponential; the backward 2.5x that."""
    b200, h100, gb300 = (CAT.hardware(g) for g in ("b200", "h100-sxm", "gb300"))
    assert (b200.tensor_flops_per_exp, h100.tensor_flops_per_exp, gb300.tensor_flops_per_exp) == (512, 256, 256)
    assert softmax_bound(b200, 4 * 64) == 2.0                 # GPT-OSS's head dim 64: twice its FLOP time
    assert softmax_bound(b200, 4 * 128) == 1.0                # where the kernel ceilings were measured
    assert softmax_bound(b200, 2.5 * 4 * 64) == 1.0           # the backward is tensor-bound
    assert softmax_bound(h100, 4 * 64) == softmax_bound(gb300, 4 * 64) == 1.0
    assert softmax_bound(CAT.hardware("mi300x"), 4 * 64) == 1.0   # not known: no bound


def test_flops_per_exponential_follow_the_head_dims() -> None:
    """DeepSeek-V3's MLA: q/k 128 + 64 (rope), v 128 (config.json) -> 2 x (192 + 128)."""
    assert flops_per_exp(preset_arch("deepseek-v3")) == 640.0
    assert flops_per_exp(preset_arch("llama3-70b")) == 512.0


def test_a_head_dim_64_model_pays_the_bound_on_b200_only_in_its_forward_attention() -> None:
    """Halving the head dim at the same attention FLOPs (twice the heads) leaves Hopper's step as it
    was and lengthens Blackwell's by one forward attention pass (the backward stays tensor-bound)."""
    base = preset_arch("llama3-8b")
    narrow = base.model_copy(update={"head_dim": 64, "attention_heads": 2 * base.attention_heads,
                                     "kv_heads": 2 * base.kv_heads})
    setup = TrainingSetup(seq_len=8192, global_batch_size=64, precision="bf16")
    lay = Layout.of(tp=1, pp=1, dp=8, cp=1, ep=1, etp=1, vp=1, mbs=1, recompute=0, sp=False, zero=1)

    def compute(arch: ModelArch, gpu: str) -> float:
        return float(training_step(arch, setup, lay, CAT.hardware(gpu)).breakdown_s["compute"])

    assert compute(narrow, "h100-sxm") == pytest.approx(compute(base, "h100-sxm"), rel=1e-9)
    assert compute(narrow, "b200") > compute(base, "b200") * 1.02


def test_measured_attention_ceilings_order_the_gpus() -> None:
    """AIConfigurator's context-attention ceilings (catalog kernel_ceilings.yaml): GB300 0.532 > H100
    0.490 > GB200 0.438 of the BF16 peak, each over the median GPU's."""
    gb300, h100, gb200 = (attention_speed(CAT.hardware(g)) for g in ("gb300", "h100-sxm", "gb200"))
    assert gb300 > h100 > 1.0 > gb200
    assert gb300 / gb200 == pytest.approx(0.532 / 0.438, rel=1e-9)


def test_a_gpu_without_measured_kernels_says_it_runs_at_the_median() -> None:
    """AIConfigurator measured no MI300X kernels (kernel_ceilings.yaml lists NVIDIA GPUs only): its
    GEMMs and attention take the median measured GPU's share, and the compile lists that assumption;
    an H100 (measured) has none."""
    from workload_compiler import compile_workload
    from workload_compiler.provenance import Source

    def spec(acc: str) -> Any:
        return compile_workload({"kind": "training", "model": {"preset": "llama3.1-8b"},
                                 "training": {"tokens": "1B", "seq_len": 4096, "global_batch_size": 64,
                                              "precision": "bf16"},
                                 "compute": {"accelerator": acc, "gpus": 8}})

    assert spec("mi300x").provenance["compute.kernel_efficiency"].source == Source.ASSUMED
    assert "compute.kernel_efficiency" not in spec("h100-sxm").provenance
    assert attention_speed(CAT.hardware("mi300x")) == 1.0
