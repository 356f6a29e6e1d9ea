"""Dataset size and the read bandwidth that keeps the GPUs fed.

Text: bytes = tokens x bytes per token, where a token id is stored as uint16 (vocabulary
< 65,500) or int32 (Megatron-LM indexed dataset, DType.optimal_dtype); read rate = tokens/s x
bytes per token. Images / video / other samples: bytes = samples x mean sample size; read rate =
samples/s x sample size (MLPerf Storage: required bandwidth = samples/s per accelerator x sample
size). The read rate is the steady-state demand of training; the tier check (tiers.py) compares
it with the reference architecture's storage tiers.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, ConfigDict

from ..catalog.loader import package_yaml
from ..fabric._base import assume, require_int, require_positive
from ..provenance import Assumption


class DatasetDemand(BaseModel):
    model_config = ConfigDict(extra="forbid", frozen=True)

    dataset_bytes: float
    read_bytes_per_s: float
    read_bytes_per_s_per_gpu: float
    bytes_per_item: float          # per token (text) or per sample


def bytes_per_token(vocab_size: int | None) -> tuple[int, Assumption]:
    """Bytes of one stored token id, from the vocabulary size (Megatron-LM optimal_dtype)."""
    rule: dict[str, Any] = package_yaml("storage_tiers.yaml")["defaults"]["bytes_per_token"]
    if vocab_size is None:
        size = int(rule["unknown_vocab_bytes"])
        why = f"vocabulary unknown; {rule['why']}"
    else:
        vocab = require_int("model.vocab_size", vocab_size)
        small = vocab < int(rule["small_vocab_limit"])
        size = int(rule["small_vocab_bytes"] if small else rule["large_vocab_bytes"])
        why = f"vocabulary {vocab} {'<' if small else '>='} {rule['small_vocab_limit']}: {rule['why']}"
    return size, assume("storage.bytes_per_token", size, why, unit="B/token")


def text_demand(*, dataset_tokens: float, tokens_per_s: float, gpus: int,
                token_bytes: float) -> DatasetDemand:
    """Text: dataset_bytes = tokens x bytes/token; read = tokens/s x bytes/token."""
    tokens = require_positive("storage.dataset_tokens", dataset_tokens)
    rate = require_positive("compute.tokens_per_s", tokens_per_s, allow_zero=True)
    size = require_positive("storage.bytes_per_token", token_bytes)
    gpus = require_int("compute.gpus", gpus)
    return DatasetDemand(dataset_bytes=tokens * size, read_bytes_per_s=rate * size,
                         read_bytes_per_s_per_gpu=rate * size / gpus, bytes_per_item=size)


def sample_demand(*, samples: float, sample_bytes: float, samples_per_s: float, gpus: int) -> DatasetDemand:
    """Images, video, other samples: dataset_bytes = samples x size; read = samples/s x size."""
    count = require_positive("storage.dataset_samples", samples)
    size = require_positive("storage.sample_bytes", sample_bytes)
    rate = require_positive("compute.samples_per_s", samples_per_s, allow_zero=True)
    gpus = require_int("compute.gpus", gpus)
    return DatasetDemand(dataset_bytes=count * size, read_bytes_per_s=rate * size,
                         read_bytes_per_s_per_gpu=rate * size / gpus, bytes_per_item=size)
