"""The resolved model architecture: every field filled, plain numbers, no intake sugar.

Intake (preset, HF config.json or explicit fields) is translated into a `ModelArch` at the edge;
everything downstream (parameters, FLOPs, memory, step time, KV cache) reads only this.
"""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

MlpKind = Literal["gelu", "relu", "squared_relu", "swiglu", "geglu"]
GATED_MLPS: frozenset[str] = frozenset({"swiglu", "geglu"})


class ModelArch(BaseModel):
    """A decoder-only transformer, dense or MoE, with MHA/GQA/MLA attention."""

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
    tied_embeddings: bool = False
    # Mixture of experts (experts = 0 means dense).
    moe_experts: int = Field(default=0, ge=0)
    moe_top_k: int = Field(default=0, ge=0)
    moe_ffn_hidden_size: int = Field(default=0, ge=0, description="intermediate size of one routed expert")
    moe_shared_experts: int = Field(default=0, ge=0)
    moe_shared_ffn_hidden_size: int = Field(default=0, ge=0, description="per shared expert; 0 = expert size")
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
    def moe_layers(self) -> int:
        """Number of layers whose MLP is a mixture of experts."""
        if not self.is_moe:
            return 0
        return len(range(self.moe_dense_layers, self.layers, self.moe_layer_interval))

    @property
    def dense_mlp_layers(self) -> int:
        return self.layers - self.moe_layers
