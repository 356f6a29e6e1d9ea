"""HPC and simulation workloads: solver classes, roofline, scaling, scratch I/O and host sizing.

`compile_hpc(workload, catalog, trace)` (hpc/compile.py) turns a `kind: hpc` intake into the
result sections; the arithmetic lives in small pure modules beside it.
"""
