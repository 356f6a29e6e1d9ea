"""The largest (and smallest) values the intake accepts, each with its reason.

A bound sits well beyond anything built or published (10x or more), so no real workload meets it,
and well inside what the arithmetic can carry, so no input reaches an overflow, an unbounded
search or a division by zero. A value outside is "out of range" (exit 2) naming the bound and
why, instead of an answer computed on a number nobody meant. The reasons are exported to the JSON
Schema beside each field (`"bounds"`), and the error message quotes them.
"""

from __future__ import annotations

from typing import Any

from pydantic import Field

MAX_GPUS = 1 << 20
GPUS = "2^20 GPUs: about five times the largest cluster announced (xAI Colossus, 200k GPUs, 2025)"
MAX_PARAMS = 1e15
PARAMS = "10^15 parameters: 500x the largest models described (~2T)"
MAX_LAYERS = 10_000
LAYERS = "10,000 layers: 50x the deepest published LLMs (~200)"
MAX_WIDTH = 1 << 20
WIDTH = "2^20: 40x the widest published hidden sizes (25,600, Megatron 1T)"
MAX_HEADS = 1 << 14
HEADS = "2^14 heads: 64x the most published (256)"
MAX_HEAD_DIM = 1 << 13
HEAD_DIM = "8,192: 16x the largest published head dimension (512)"
MAX_FFN = 1 << 22
FFN = "2^22: 40x the widest published FFNs (~100k)"
MAX_VOCAB = 1 << 24
VOCAB = "2^24 tokens: 60x the largest published vocabularies (256k)"
MAX_EXPERTS = 1 << 12
EXPERTS = "4,096 experts: 10x the most published (384, Kimi K2)"
MAX_TOKENS = 1e16
TOKENS = "10^16 tokens: 250x the largest published training runs (~36T)"
MAX_SEQ = 1 << 27
SEQ = "2^27 tokens: 13x the longest published context (10M, Llama 4 Scout)"
MAX_BATCH = 1 << 24
BATCH = "2^24 sequences: far beyond any published global batch (~10^4-10^5)"
MAX_MICRO_BATCH = 1 << 16
MICRO_BATCH = "2^16 sequences per GPU per micro-batch: 100x what fits in any GPU's memory"
MAX_DURATION = 100 * 365 * 86400.0
DURATION = "100 years: a plan, not a run"
MIN_DEADLINE = 60.0
DEADLINE = "a minute: shorter than any training job's start-up"
MAX_RATE = 1e8
RATE = "10^8 requests/s: 100x the busiest web services"
MAX_CONCURRENCY = 1 << 24
CONCURRENCY = "2^24 concurrent requests: 100x the largest published serving fleets"
MAX_LATENCY = 30 * 86400.0
LATENCY = "30 days: longer than any request may wait"
MAX_POWER = 1e10
POWER = "10 GW: twice the largest data-centre campus planned (~5 GW, Meta Hyperion)"
MAX_RACK_POWER = 2e6
RACK_POWER = "2 MW per rack: 3x the densest racks announced (~600 kW, NVIDIA Rubin Ultra NVL576)"
MAX_AREA = 1e7
AREA = "10 km^2: 10x the largest data-centre campus"
MAX_BYTES = 1e18
BYTES = "1 EB: 10x the largest storage systems built"
MAX_BANDWIDTH = 1e15
MIN_BANDWIDTH = 1e6
BANDWIDTH = {"ge": "1 MB/s: slower than any disk, file system or network port a cluster is built with",
             "le": "1 PB/s: 100x the fastest file systems built (~10 TB/s)"}
MIN_NIC_BITS = 1e9
MAX_NIC_BITS = 1.6e13
NIC_BITS = {"ge": "1 Gb/s: the slowest Ethernet port a server ships with",
            "le": "16 Tb/s: 10x the fastest NIC announced (1.6 Tb/s)"}
MAX_UNITS = 1e16
UNITS = "10^16 units: 1,000x the largest published simulations (~10^13 cells or atoms)"
MAX_STEPS = 1e15
STEPS = "10^15 steps: a run of 10^15 steps at 1 us each takes 30 years"
MAX_SIM_TIME = 1e18
SIM_TIME = "10^18 s: twice the age of the universe"
MAX_PER_UNIT = 1e18
PER_UNIT = "10^18 per unit per step: beyond any solver's work per cell, atom or row"
MAX_GLU_CLAMP = 1e4
GLU_CLAMP = "10^4: 1,000x the published limit (GPT-OSS: 7); a clamp costs the same kernels whatever its limit"
MAX_COUNT_SMALL = 1e6
MIN_COUNT_SMALL = 1e-3
COUNT_SMALL = {"ge": "10^-3: once in a thousand steps (a thousandth of a core); below that the term is nil",
               "le": "10^6: far beyond any published configuration"}
MAX_USD_HOUR = 1e4
USD_HOUR = "$10,000 per GPU-hour: 1,000x list prices"
MAX_CAPEX = 1e7
CAPEX = "$10M per GPU: 200x list prices"
MAX_YEARS = 50.0
YEARS = "50 years of amortization: longer than any data centre's life"
MAX_USD_KWH = 100.0
USD_KWH = "$100 per kWh: 300x retail electricity"
MAX_FAILURES_GPU_DAY = 1.0
FAILURES_GPU_DAY = "one failure per GPU per day: 1,000x published rates (Llama 3: ~1e-3 per GPU-day)"
MAX_FAILURES_NODE_DAY = 8.0
FAILURES_NODE_DAY = "8 failures per node per day: 1,000x published rates"
MAX_OVERSUBSCRIPTION = 64.0
OVERSUBSCRIPTION = "64:1: far beyond any compute fabric built (1:1 to 4:1)"
MAX_SAMPLES = 1e16
SAMPLES = "10^16 samples per pass: 2 million times LAION-5B's 5 x 10^9 images"
MAX_EPOCHS = 1e6
EPOCHS = "10^6 passes over the data: 10,000x the 90 epochs of the bundled ResNet-50 example (torchvision recipe)"
MAX_FLOPS_SAMPLE = 1e18
FLOPS_SAMPLE = "10^18 FLOPs per sample: 80x a 1T-parameter model's training FLOPs on a 2,048-token sequence"
MAX_SAMPLE_RATE = 1e12
MIN_SAMPLE_RATE = 1e-3
SAMPLE_RATE = {"ge": "10^-3 samples/s: one sample in 17 minutes, slower than any loader or GPU",
               "le": "10^12 samples/s from one core or one GPU: a sample per cycle at 1,000 GHz"}
MIN_EFFICIENCY = 1e-4
EFFICIENCY = {"ge": "10^-4 of the dense peak: below any kernel that does useful work", "le": "the peak itself"}
MAX_BATCH_PER_GPU = 1 << 24
BATCH_PER_GPU = "2^24 samples per GPU per step: 65,536x the 256 of the bundled ResNet-50 example"
MAX_TEXT = 500
TEXT = "500 characters"


def limited(default: Any = ..., *, why: str | dict[str, str], description: str = "", **constraints: Any) -> Any:
    """A pydantic Field with bounds (`le=`, `ge=` ...) and the reason for them in the schema: one
    reason for the upper bound, or one per bound ({"ge": ..., "le": ...})."""
    reasons: Any = dict(why) if isinstance(why, dict) else why
    return Field(default, description=description or None, json_schema_extra={"bounds": reasons}, **constraints)


def text(default: Any = None, *, description: str = "") -> Any:
    """A text field of at most MAX_TEXT characters."""
    return limited(default, why=TEXT, description=description, max_length=MAX_TEXT)
