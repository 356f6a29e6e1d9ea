"""Measured, not assumed: the profiling exercise (`wkc profile`), GPU calibration (`wkc calibrate`),
node readiness (`wkc node-check`), and how a measurement enters a compile (apply.py): bound to the
machine it was taken on, applied to that machine only. The analysis is pure; only probe modules
read the machine."""
