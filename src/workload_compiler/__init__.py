"""Workload Compiler: size GPU infrastructure from the workload up."""
