"""`kind: hpc` intake -> compile_hpc result sections: keys, provenance, targets, bad input."""

import dataclasses
from pathlib import Path
from typing import Any

import pytest

from workload_compiler.catalog.loader import load_catalog
from workload_compiler.errors import InputError
from workload_compiler.hpc.compile import compile_hpc
from workload_compiler.intake.hpc import parse_size
from workload_compiler.intake.load import load_workload, parse_workload
from workload_compiler.provenance import Source, Trace
from workload_compiler.units import parse_duration as parse_sim_time

EXAMPLES = sorted((Path(__file__).parents[2] / "examples").glob("hpc-*.yaml"))
CAT = load_catalog()


def _compile(data: dict[str, Any]) -> tuple[dict[str, Any], Trace]:
    trace = Trace()
    return compile_hpc(parse_workload({"kind": "hpc", **data}), CAT, trace), trace  # type: ignore[arg-type]


MD = {"application": {"class": "molecular_dynamics"}, "problem": {"size": "1M", "unit": "atoms"},
      "precision": "mixed", "steps": 50_000_000, "compute": {"accelerator": "h100-sxm"}}


def test_one_example_per_class_compiles_with_the_required_keys() -> None:
    classes = set()
    for path in EXAMPLES:
        trace = Trace()
        r = compile_hpc(load_workload(path), CAT, trace)  # type: ignore[arg-type]
        classes.add(r["objective"]["solver_class"])
        h = r["hpc"]
        assert h["time_per_step_s"] > 0 and h["time_to_solution_s"] > 0
        assert h["bound"] in ("compute", "memory", "network", "io")
        assert r["compute"]["gpus"] >= 1
        assert r["compute"]["cpu_cores_per_gpu"] > 0 and r["compute"]["host_memory_per_gpu_bytes"] > 0
        assert r["storage"]["scratch_capacity_bytes"] >= 0
        assert h["scaling"]["strong"] and h["scaling"]["weak"]
        assert trace.provenance["hpc.time_per_step_s"].formula
    assert classes == {"cfd_lbm", "cfd_fv", "molecular_dynamics", "weather_climate", "fft_spectral",
                       "dense_linear_algebra"}


def test_class_defaults_are_listed_as_assumptions_and_given_values_are_not() -> None:
    _, trace = _compile(MD)
    fields = {a.field for a in trace.assumptions}
    assert {"hpc.flops_per_unit_step", "hpc.bytes_per_unit_step", "hpc.memory_per_unit_bytes"} <= fields
    _, trace = _compile({**MD, "profile": {"flops_per_unit_step": 3000, "bytes_per_unit_step": 600}})
    assert trace.provenance["hpc.flops_per_unit_step"].source == Source.GIVEN
    assert "hpc.flops_per_unit_step" not in {a.field for a in trace.assumptions}


def test_target_picks_the_fewest_gpus_that_meet_it() -> None:
    loose, _ = _compile({**MD, "target": {"time_to_solution": "30d"}})
    tight, _ = _compile({**MD, "target": {"time_to_solution": "12h"}})
    assert loose["feasible"] and tight["feasible"]
    assert tight["compute"]["gpus"] > loose["compute"]["gpus"]
    assert tight["hpc"]["time_to_solution_s"] <= 12 * 3600


def test_unreachable_target_names_the_saturation() -> None:
    """STMV-class MD cannot run 1 us/day: strong scaling saturates (Amdahl + communication)."""
    r, _ = _compile({**MD, "steps": None, "simulated_time": "1us", "timestep": "2fs",
                     "target": {"time_to_solution": "24h"}})
    assert r["feasible"] is False and r["binding_constraint"] == "strong_scaling"
    assert "saturates at" in r["hpc"]["target_detail"]
    assert r["hpc"]["target"]["saturation_gpus"] == r["compute"]["gpus"]


def test_pinned_gpus_that_miss_the_target_is_infeasible() -> None:
    r, _ = _compile({**MD, "compute": {"accelerator": "h100-sxm", "gpus": 1},
                     "target": {"time_to_solution": "6h"}})
    assert r["feasible"] is False and r["binding_constraint"] == "compute.gpus"


def test_ns_per_day_target_and_rate() -> None:
    r, _ = _compile({**MD, "steps": None, "simulated_time": "100ns", "target": {"ns_per_day": 100}})
    assert r["hpc"]["rates"]["ns_per_day"] >= 100
    assert r["objective"]["timestep_s"] == pytest.approx(2e-15)


def test_bad_input_is_clear() -> None:
    with pytest.raises(InputError, match=r"application\.class: 'plasma' is not allowed; one of: cfd_lbm"):
        _compile({**MD, "application": {"class": "plasma"}})
    with pytest.raises(InputError, match=r"problem\.size: 0 is not allowed; more than 0"):
        _compile({**MD, "problem": {"size": 0}})
    with pytest.raises(InputError, match=r"problem\.unit"):
        _compile({**MD, "problem": {"size": "1M", "unit": "cells"}})
    with pytest.raises(InputError, match="steps"):
        _compile({**MD, "steps": 10, "simulated_time": "1ns", "timestep": "2fs"})


def test_fp64_cut_on_b300_is_a_warning() -> None:
    r, _ = _compile({"application": {"class": "dense_linear_algebra"}, "problem": {"size": "200k"},
                     "compute": {"accelerator": "b300"}})
    assert any("FP64" in w for w in r["compute"]["warnings"])


def test_a_peak_the_catalog_lacks_leaves_compute_not_sized_and_keeps_the_objective() -> None:
    """Gaudi 3 publishes no FP64 rate (catalog null): the compute layer is not sized, the reason
    names the catalog field, the objective (FLOPs, bytes) is still there; nothing is raised."""
    r, _ = _compile({"application": {"class": "cfd_fv"}, "problem": {"size": "10M"}, "precision": "fp64",
                     "steps": 100, "compute": {"accelerator": "gaudi3"}})
    assert r["feasible"] is False and "accelerators.gaudi3.peak_flops.fp64" in r["binding_constraint"]
    assert "accelerators.gaudi3.peak_flops.fp64" in r["compute"]["missing"]
    assert r["compute"]["not_sized"].startswith("not sized")
    assert r["objective"]["total_flops"] > 0 and r["objective"]["total_bytes"] > 0
    assert all(r[layer]["not_sized"] for layer in ("hpc", "storage", "fabric", "software", "facility"))


def test_unknown_gpu_to_gpu_bandwidth_limits_to_one_gpu_with_a_warning() -> None:
    acc = CAT.accelerators["mi250x-gcd"]
    unknown = acc.model_copy(update={"scale_up_bandwidth_bytes_per_s": None})
    cat = dataclasses.replace(CAT, accelerators={**CAT.accelerators, acc.id: unknown})
    r = compile_hpc(parse_workload({"kind": "hpc", **MD, "compute": {"accelerator": "mi250x-gcd"},  # type: ignore[arg-type]
                                    "target": {"time_to_solution": "1h"}}), cat, Trace())
    assert r["compute"]["gpus"] == 1 and any("scale-up" in w for w in r["compute"]["warnings"])


def test_sizes_and_simulated_times_parse() -> None:
    assert parse_size("512^3") == 512**3
    assert parse_size("1024x512x256") == 1024 * 512 * 256
    assert parse_size("1.5M") == 1.5e6
    assert parse_sim_time("2fs") == pytest.approx(2e-15)
    assert parse_sim_time("100ns") == pytest.approx(1e-7)
    assert parse_sim_time("1y") == 365 * 86400


def test_pinned_slow_scratch_makes_the_step_io_bound() -> None:
    r, _ = _compile({"application": {"class": "cfd_lbm"}, "problem": {"size": "512^3"}, "steps": 1000,
                     "io": {"output_bytes_per_unit": 16, "output_every_n_steps": 1,
                            "scratch_write_bandwidth_per_node": "100MB/s"}})
    assert r["hpc"]["bound"] == "io" and r["hpc"]["step_breakdown_s"]["io"] > 0


def test_class_options_not_given_are_assumptions_with_their_default() -> None:
    _, trace = _compile(MD)
    cutoff = next(a for a in trace.assumptions if a.field == "hpc.application.cutoff_nm")
    assert cutoff.value == 1.2


@pytest.mark.parametrize(("name", "solver_class"), [("Lattice-Boltzmann", "cfd_lbm"), ("MD", "molecular_dynamics"),
                                                   ("HPL", "dense_linear_algebra"), ("finite volume", "cfd_fv")])
def test_a_class_is_taken_by_the_name_people_use(name: str, solver_class: str) -> None:
    w = parse_workload({"kind": "hpc", **MD, "application": {"class": name}})
    assert w.application.solver_class == solver_class  # type: ignore[attr-defined]


def test_a_class_no_one_uses_is_refused_with_the_classes() -> None:
    with pytest.raises(InputError) as err:
        parse_workload({"kind": "hpc", **MD, "application": {"class": "quantum_chemistry"}})
    assert err.value.field == "application.class" and "cfd_lbm" in str(err.value)
