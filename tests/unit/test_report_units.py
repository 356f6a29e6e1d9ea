"""An assumed value prints in its unit even where its field is not a result field that declares
one (issue 12 item 3: units in the types, never from a key's spelling): the storage plan's write
bandwidth, the facility's rack limit, the dataset's bytes per token."""

from __future__ import annotations

from shared_data import REPO_ROOT
from workload_compiler import compile_workload
from workload_compiler.report.summary import assumption_text, lookup

EXAMPLES = REPO_ROOT / "examples"


def test_assumptions_outside_the_result_types_carry_their_unit() -> None:
    spec = compile_workload(EXAMPLES / "deepseek-v3-deadline.yaml")
    by_field = {a.field: a for a in spec.assumptions}
    expected = {"storage.write_bytes_per_s": ("B/s", "GB/s"), "facility.rack_power_limit_w": ("W", "kW"),
                "storage.bytes_per_token": ("B/token", "B/token"), "storage.fill_fraction": ("fraction", "%"),
                "storage.checkpoint_bytes_per_param": ("B", " B")}
    for field, (unit, shown) in expected.items():
        a = by_field[field]
        assert lookup(spec, field)[1] is None        # the result types do not declare it...
        assert a.unit == unit                        # ...so the assumption carries it
        assert shown in assumption_text(spec, a.field, a.value, a.unit)


def test_every_numeric_assumption_of_the_examples_prints_with_a_unit_or_is_a_plain_count() -> None:
    """No assumed byte rate, power or fraction prints as a bare number ('1,937,500,000')."""
    plain_counts = {"fabric.scale_out.node_ports_per_transceiver", "fabric.scale_out.switch_ports_per_transceiver",
                    "fabric.su_nodes", "training.moe_load_imbalance",
                    # an intake key the user's own sheet marks assumed (the image-classifier example): it
                    # prints as the user wrote it
                    "pipeline.gpu_efficiency"}
    for path in sorted(EXAMPLES.glob("*.yaml")):
        if path.name.startswith("offers-"):
            continue
        spec = compile_workload(path)
        for a in spec.assumptions:
            if isinstance(a.value, int | float) and not isinstance(a.value, bool) and a.field not in plain_counts:
                assert a.unit or lookup(spec, a.field)[1], (path.name, a.field)
