"""The generic archetype: a data pipeline with a model given by FLOPs and bytes per sample."""
