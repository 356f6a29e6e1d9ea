"""The parallel layout of one serving replica, scalar or grid (NumPy arrays that broadcast).

tp shards every layer (Megatron tensor parallelism); pp splits the layers into stages; ep shards
the routed experts. With ep <= tp the experts live inside the TP group (ep x etp = tp, "MoE
parallel folding"); with ep > tp the attention runs data-parallel over dp_attn = ep / tp groups
of tp GPUs and the experts are spread over all ep GPUs (DeepSeek-style wide EP, attention DP).
A replica holds tp x dp_attn x pp GPUs.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

import numpy as np

from ..perf.layout import IntArray


@dataclass(frozen=True, kw_only=True)
class ServingLayout:
    tp: IntArray
    pp: IntArray
    ep: IntArray

    @classmethod
    def of(cls, tp: Any = 1, pp: Any = 1, ep: Any = 1) -> ServingLayout:
        return cls(tp=np.asarray(tp, dtype=np.int64), pp=np.asarray(pp, dtype=np.int64),
                   ep=np.asarray(ep, dtype=np.int64))

    @property
    def dp_attn(self) -> IntArray:
        """Attention data-parallel groups: ep / tp when the experts span more GPUs than TP."""
        return np.asarray(np.maximum(1, self.ep // self.tp))

    @property
    def moe_group(self) -> IntArray:
        """GPUs the routed experts of one stage are spread over: max(tp, ep)."""
        return np.asarray(np.maximum(self.tp, self.ep))

    @property
    def etp(self) -> IntArray:
        """Tensor parallelism inside one expert: tp / ep when ep < tp, else 1."""
        return np.asarray(np.maximum(1, self.tp // np.maximum(self.ep, 1)))

    @property
    def gpus(self) -> IntArray:
        return np.asarray(self.tp * self.dp_attn * self.pp)

    @property
    def shape(self) -> tuple[int, ...]:
        return np.broadcast_shapes(self.tp.shape, self.pp.shape, self.ep.shape)
