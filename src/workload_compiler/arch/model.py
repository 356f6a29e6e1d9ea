"""The resolved model architecture: every field filled, plain numbers, no intake sugar.

Intake (preset, HF config.json or explicit fields) is translated into a `ModelArch` at the edge;
everything downstream (parameters, FLOPs, memory, step time, KV cache) reads only this.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

MlpKind = Literal["gelu", "relu", "squared_relu", "swiglu", "geglu"]
GATED_MLPS: frozenset[str] = frozenset({"swiglu", "geglu"})
# Megatron-Core's hybrid layer pattern (megatron/core/ssm/mamba_hybrid_layer_allocation.py Symbols):
# one character per layer, each layer one block: a Mamba-2 mixer, self-attention, an MLP or a
# mixture of experts; and ours, G, a Gated DeltaNet mixer (Qwen3-Next, Qwen3.5: Yang et al. 2024,
# arXiv:2412.06464), the other linear-recurrence mixer, described by the same fields (below).
# "-" last: the set is also a regex character class.
MAMBA, GATED_DELTA, ATTENTION, MOE_BLOCK, MLP_BLOCK = "M", "G", "*", "E", "-"
HYBRID_SYMBOLS = MAMBA + GATED_DELTA + ATTENTION + MOE_BLOCK + MLP_BLOCK


class ModelArch(BaseModel):
    """A decoder-only transformer, dense or MoE, with MHA/GQA/MLA attention; or a hybrid of Mamba-2
    or Gated DeltaNet, attention, MLP and MoE blocks (`hybrid_pattern`)."""

    model_config = ConfigDict(extra="forbid", frozen=True)

    name: str
    layers: int = Field(gt=0)
    hidden_size: int = Field(gt=0)
    attention_heads: int = Field(gt=0)
    kv_heads: int = Field(gt=0, description="key/value heads; = attention_heads for MHA")
    head_dim: int = Field(gt=0, description="per-head dimension of q/k/v (hidden/heads unless set)")
    ffn_hidden_size: int = Field(ge=0, description="intermediate size of the dense MLP")
    vocab_size: int = Field(gt=0)
    mlp: MlpKind = "gelu"
    # A clamp on the gated MLP's inputs before its activation (GPT-OSS: swiglu_limit 7.0, the gate
    # clamped above and the linear half both ways); 0 = none. Megatron-Core runs it as separate
    # PyTorch ops beside the fused activation kernel, memory-bound traffic perf/step_time.py counts.
    glu_clamp: float = Field(default=0.0, ge=0, description="clamp limit on the gated MLP's inputs "
                             "(swiglu_limit); 0 = none")
    tied_embeddings: bool = False
    # Mixture of experts (experts = 0 means dense).
    moe_experts: int = Field(default=0, ge=0)
    moe_top_k: int = Field(default=0, ge=0)
    moe_ffn_hidden_size: int = Field(default=0, ge=0, description="intermediate size of one routed expert")
    moe_shared_experts: int = Field(default=0, ge=0)
    moe_shared_ffn_hidden_size: int = Field(default=0, ge=0, description="per shared expert; 0 = expert size")
    # Latent MoE (Nemotron 3 Super): tokens are projected from the hidden width down to a latent width
    # before the routed experts (dispatched, multiplied and combined at that width) and back up after.
    moe_latent_size: int = Field(default=0, ge=0, description="width of the routed experts' input and "
                                 "output (latent MoE); 0 = the hidden size")
    moe_dense_layers: int = Field(default=0, ge=0, description="leading layers with a dense MLP")
    moe_layer_interval: int = Field(default=1, ge=1, description="every n-th layer (after the dense ones) is MoE")
    # Group-limited routing (DeepSeek-V3 n_group / topk_group): the experts form groups and a token's
    # top-k are taken from its best `moe_router_group_top_k` groups only; 0 = not limited.
    moe_router_groups: int = Field(default=0, ge=0, description="expert groups of group-limited routing (n_group)")
    moe_router_group_top_k: int = Field(default=0, ge=0,
                                        description="groups a token's experts may come from (topk_group)")
    # Multi-head latent attention (DeepSeek V2/V3); kv_lora_rank = 0 means no MLA.
    mla_q_lora_rank: int = Field(default=0, ge=0)
    mla_kv_lora_rank: int = Field(default=0, ge=0)
    mla_qk_nope_head_dim: int = Field(default=0, ge=0)
    mla_qk_rope_head_dim: int = Field(default=0, ge=0)
    mla_v_head_dim: int = Field(default=0, ge=0)
    # Sliding-window attention: `sliding_window_layers` of the layers attend to a window.
    sliding_window: int = Field(default=0, ge=0)
    sliding_window_layers: int = Field(default=0, ge=0)
    mtp_layers: int = Field(default=0, ge=0, description="multi-token-prediction modules (DeepSeek V3)")
    # DeepSeek Sparse Attention (DeepSeek-V3.2-Exp technical report, DSA): a lightning indexer of `indexer_heads`
    # heads of `indexer_head_dim` scores every earlier token in FP8 and each query attends to the top
    # `sparse_attention_topk` of them; 0 = dense attention.
    sparse_attention_topk: int = Field(default=0, ge=0, description="keys each query attends to (DSA index_topk)")
    indexer_heads: int = Field(default=0, ge=0, description="lightning indexer heads (DSA index_n_heads)")
    indexer_head_dim: int = Field(default=0, ge=0, description="lightning indexer head size (DSA index_head_dim)")
    attention_output_gate: bool = Field(default=False, description="a sigmoid gate on each head's output, "
                                        "projected by q_proj beside the queries (Qwen3-Next, Qwen3.5)")
    # Hybrid Mamba-2 / attention models (Nemotron-H): `hybrid_pattern` names each layer's one block
    # (HYBRID_SYMBOLS, as Megatron-Core's --hybrid-override-pattern); None = a transformer, whose
    # every layer is attention + MLP. The Mamba-2 mixer (Dao & Gu 2024, arXiv:2405.21060): heads x
    # head_dim inner channels, `mamba_groups` groups of B/C of `mamba_state_dim` each. A Gated
    # DeltaNet mixer (G) is read through the same fields: heads and head_dim its value heads and
    # their size, groups its key heads and state_dim their size (its state: value heads x value dim
    # x key dim, as Mamba-2's heads x head_dim x d_state); a model has one kind of linear mixer.
    hybrid_pattern: str | None = Field(default=None, pattern=f"^[{HYBRID_SYMBOLS}]+$",
                                       description="one of M (Mamba-2), G (Gated DeltaNet), * (attention), "
                                       "E (MoE), - (MLP) per layer")
    mamba_heads: int = Field(default=0, ge=0, description="Mamba-2 heads (inner width = heads x head_dim)")
    mamba_head_dim: int = Field(default=64, gt=0)
    mamba_state_dim: int = Field(default=128, gt=0, description="SSM state per head channel (d_state)")
    mamba_groups: int = Field(default=8, gt=0, description="groups sharing B and C (n_groups)")
    mamba_conv_kernel: int = Field(default=4, gt=0, description="depthwise causal conv1d width")
    mamba_chunk_size: int = Field(default=128, gt=0, description="SSD chunk length (Megatron-Core MambaMixer "
                                  "chunk_size, 128 by default)")
    # The published checkpoint's weight format (a name from arch/weight_formats.py), where the
    # model ships quantized: gpt-oss stores its MoE experts in MXFP4. None = not stated (16-bit).
    weight_format: str | None = Field(default=None, description="checkpoint weight format; None = not stated")
    weight_format_scope: Literal["all", "experts"] = Field(
        default="all", description="weights the format covers; 'experts' = routed experts only, rest 16-bit")
    source: str = Field(default="given", description="where the architecture numbers come from")

    @property
    def is_moe(self) -> bool:
        return self.moe_experts > 0

    @property
    def is_mla(self) -> bool:
        return self.mla_kv_lora_rank > 0

    @property
    def gated(self) -> bool:
        return self.mlp in GATED_MLPS

    @property
    def clamps_glu(self) -> bool:
        """The gated MLP's inputs are clamped (`glu_clamp`); a clamp on an MLP without a gate is none."""
        return self.glu_clamp > 0 and self.gated

    @property
    def moe_layers(self) -> int:
        """Layers of the MoE kind: a transformer's layers whose MLP is a mixture of experts; every
        layer of a hybrid with MoE blocks (each holds `moe_share` of one, arch.model shares)."""
        if not self.is_moe:
            return 0
        return len(range(self.moe_dense_layers, self.layers, self.moe_layer_interval))

    @property
    def moe_width(self) -> int:
        """Width of a routed expert's input and output: the latent width of a latent MoE, else hidden."""
        return self.moe_latent_size or self.hidden_size

    @property
    def moe_blocks(self) -> int:
        """Mixtures of experts in the model: one per MoE layer, the 'E' of a hybrid pattern."""
        return self._blocks(MOE_BLOCK, self.moe_layers)

    @property
    def moe_share(self) -> float:
        """MoE blocks per MoE-kind layer: 1 in a transformer, E / layers in a hybrid."""
        return self.moe_blocks / self.moe_layers if self.moe_layers else 0.0

    @property
    def dense_mlp_layers(self) -> int:
        return self.layers - self.moe_layers

    @property
    def is_hybrid(self) -> bool:
        return self.hybrid_pattern is not None

    def _blocks(self, symbol: str, transformer: int) -> int:
        return self.hybrid_pattern.count(symbol) if self.hybrid_pattern is not None else transformer

    @property
    def attention_layers(self) -> int:
        """Layers with self-attention: all of a transformer's, the '*' of a hybrid pattern."""
        return self._blocks(ATTENTION, self.layers)

    @property
    def mamba_layers(self) -> int:
        """Linear-recurrence mixers: the M (Mamba-2) or G (Gated DeltaNet) blocks of a hybrid."""
        return self._blocks(MAMBA, 0) + self._blocks(GATED_DELTA, 0)

    @property
    def gated_delta(self) -> bool:
        """The linear mixers are Gated DeltaNet (G), not Mamba-2."""
        return self.hybrid_pattern is not None and GATED_DELTA in self.hybrid_pattern

    @property
    def mlp_blocks(self) -> int:
        """Dense MLPs: one per dense layer of a transformer, the '-' of a hybrid pattern."""
        return self._blocks(MLP_BLOCK, self.dense_mlp_layers)

    @property
    def attention_share(self) -> float:
        """Attention blocks per layer, averaged over the layers (1 for a transformer). The
        performance model charges every layer this share of an attention block (and the MLP and
        Mamba shares below): a pipeline stage of n layers holds n x the shares, exact for the whole
        model and within one block of any stage's own mix."""
        return self.attention_layers / self.layers

    @property
    def mlp_share(self) -> float:
        """Dense MLP blocks per layer of the layer's kind: 1 in a transformer's dense layers, - / layers
        in every layer of a hybrid."""
        return 1.0 if not self.is_hybrid else self.mlp_blocks / self.layers

    @property
    def mamba_share(self) -> float:
        return self.mamba_layers / self.layers

    @property
    def blocks_per_layer(self) -> float:
        """Pre-norm residual blocks per layer: attention + MLP in a transformer, one in a hybrid."""
        return 1.0 if self.is_hybrid else 2.0

    @property
    def mamba_inner(self) -> int:
        """Mamba-2 inner channels (d_inner = heads x head_dim; 2 x hidden in Nemotron-H)."""
        return self.mamba_heads * self.mamba_head_dim

    @property
    def mamba_conv_channels(self) -> int:
        """Channels of the causal conv1d: x, B and C (d_inner + 2 x groups x d_state)."""
        return self.mamba_inner + 2 * self.mamba_groups * self.mamba_state_dim

    @property
    def mamba_in_proj_width(self) -> int:
        """Outputs of the input projection: Mamba-2's z, x, B, C and dt (2 d_inner + 2 G N + heads);
        Gated DeltaNet's z, v, q, k and its two gates b and a (2 d_inner + 2 G N + 2 heads)."""
        per_head = 2 if self.gated_delta else 1
        return 2 * self.mamba_inner + 2 * self.mamba_groups * self.mamba_state_dim + per_head * self.mamba_heads

    @property
    def ssd_scan_elements(self) -> float:
        """HBM traffic per token of one Mamba-2 layer's chunked scan forward (mamba_ssm ssd_combined:
        chunk_state, state_passing, bmm_chunk, chunk_scan), in 2-byte units: x read twice and y
        written (3 d_inner), B and C read twice (4 G N), the chunk states written, read and written
        by the state passing and read by the scan (4 accesses of d_inner x d_state / chunk, fp32:
        8 units), the C B^T scores written and read (2 G chunk, fp32: 4 units)."""
        inner, gn, q = self.mamba_inner, self.mamba_groups * self.mamba_state_dim, self.mamba_chunk_size
        return float(3 * inner + 4 * gn + 8 * inner * self.mamba_state_dim / q
                     + 4 * self.mamba_groups * q) if self.mamba_layers else 0.0


def mamba_default(field: str) -> int:
    """A Mamba-2 shape field's default (ModelArch's), for the intake and the HF reader."""
    value = ModelArch.model_fields[field].default
    assert isinstance(value, int)
    return value
