"""Validation of the performance models against published runs (../shared/calibration)."""
