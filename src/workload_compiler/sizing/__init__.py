"""Sizing: one collision engine for every limit and archetype, the recompiled alternatives, and the
sensitivity of the answer to every assumed value.

- `limits.py`     the limits an intake states (targets and pinned infrastructure) and how a spec meets them
- `engine.py`     collisions, alternatives as full recompiles, the ranking
- `levers_*.py`   the alternatives each archetype offers (training, inference, HPC)
- `hall.py`       how many GPUs of a system a pinned hall holds (every archetype)
- `sensitivity.py` the tornado over the assumptions
- `result.py`     the typed result sections

Kept free of imports here so that `sizing.result` loads without the engine.
"""
