"""Parameters held per GPU on each representative pipeline rank (first, busiest middle, last).

Non-expert parameters / tp: the rank's decoder layers, the embedding on the first rank, the output
head (or, with pp > 1, the tied embedding's copy) and the final norm on the last, the dense part of
the MTP modules where they sit (Megatron-LM theoretical_memory_usage.py counts the most loaded
shard the same way). Routed experts / (ep * etp) (Megatron-LM PR #4687: dividing experts by tp
under-reports MoE memory whenever ep * etp != tp).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np

from ..arch.counts import dense_layer_params, param_counts
from ..arch.model import ModelArch
from .layout import FloatArray, Layout
from .stages import Stages

Ranks = tuple[FloatArray, FloatArray, FloatArray]


@dataclass(frozen=True)
class RankParams:
    dense: Ranks                    # non-expert parameters per GPU, per rank
    expert: Ranks                   # routed-expert parameters per GPU, per rank
    not_gemm: Ranks                 # of `dense`, the ones no GEMM reads in low precision
    has_head: Ranks                 # 1.0 on the rank holding the head and the loss
    dense_layer: FloatArray         # parameters per GPU of the largest layer (non-expert part)
    expert_layer: FloatArray        # routed-expert parameters per GPU of one MoE layer
    ep_etp: FloatArray


def rank_params(arch: ModelArch, layout: Layout, st: Stages, single: FloatArray) -> RankParams:
    """Per-GPU parameter counts of the three ranks; `single` is 1.0 where pp == 1."""
    c = param_counts(arch)
    f8 = np.float64
    h, moe = float(arch.hidden_size), arch.is_moe
    inv_tp = 1.0 / layout.tp.astype(f8)
    dense_layer = dense_layer_params(arch)      # a hybrid's layers averaged (arch.model shares)
    untied_head = c.embedding * float(c.output_head > 0)
    mtp_expert = arch.mtp_layers * c.moe_routed_per_layer if moe else 0.0
    mtp_dense_per = (c.mtp - mtp_expert) / max(arch.mtp_layers, 1)
    mtp_expert_per = mtp_expert / max(arch.mtp_layers, 1)
    # a MoE-kind layer's non-expert weights; a hybrid's every layer, with its share of a MoE block
    moe_layer = (dense_layer + arch.moe_share * (c.moe_shared_per_layer + c.router_per_layer) if arch.is_hybrid
                 else c.attention_per_layer + c.moe_shared_per_layer + c.router_per_layer + 2 * h)
    head = single * untied_head + (1.0 - single) * c.embedding    # on the rank holding the head
    has_emb = (1.0, 0.0, 0.0)
    has_head = (single, 0.0 * single, 1.0 - single)
    ep_etp = (layout.ep * layout.etp).astype(f8)
    inv_ee = 1.0 / ep_etp
    router = arch.moe_share * c.router_per_layer if moe else 0.0
    routed = arch.moe_share * c.moe_routed_per_layer
    dense, expert, not_gemm = [], [], []
    for k in range(3):
        n, mtp, moe_n = st.layers[k], st.mtp[k], st.moe_layers[k]
        body = n * dense_layer + moe_n * (moe_layer - dense_layer)
        dense.append((body + has_emb[k] * c.embedding + has_head[k] * (head + h) + mtp * mtp_dense_per) * inv_tp)
        expert.append((moe_n * routed + mtp * mtp_expert_per) * inv_ee if moe else 0.0 * n)
        not_gemm.append((n * arch.blocks_per_layer * h + moe_n * router + has_emb[k] * c.embedding
                         + has_head[k] * (single * untied_head + h)) * inv_tp)
    largest = max(dense_layer, moe_layer if moe else 0.0) * inv_tp
    return RankParams(dense=(dense[0], dense[1], dense[2]), expert=(expert[0], expert[1], expert[2]),
                      not_gemm=(not_gemm[0], not_gemm[1], not_gemm[2]),
                      has_head=(np.asarray(has_head[0]), np.asarray(has_head[1]), np.asarray(has_head[2])),
                      dense_layer=largest, expert_layer=c.moe_routed_per_layer * inv_ee, ep_etp=ep_etp)
