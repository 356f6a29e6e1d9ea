"""Production inference: serving memory, the step-time model (fitted on the TensorRT-LLM tables),
queueing, the SLO search and cost. Entry point: `compile_inference` (inference/compile.py)."""
