"""Model architecture arithmetic: the resolved architecture, parameters, FLOPs, KV cache, HF import."""

from .model import MlpKind, ModelArch

__all__ = ["MlpKind", "ModelArch"]
