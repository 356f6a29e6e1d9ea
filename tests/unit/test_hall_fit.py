"""Reverse mode ("watts to weights"): what fits in a hall and what binds.

Cross-check against reference/infrastructure.md §6.1: "100 MW facility, PUE 1.2 -> 83.3 MW IT ->
~40,000 GB200 GPUs (~69 SUs of 576)", from the GB200 RA's 1.2 MW per 576-GPU SU (2.08 kW/GPU all-in).
"""

from __future__ import annotations

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from pydantic import ValidationError

from workload_compiler.catalog.loader import load_catalog
from workload_compiler.errors import InputError
from workload_compiler.facility import Hall, SystemUnit, fit_hall, size_facility

DGX_H100 = SystemUnit(id="dgx-h100", name="DGX H100", gpus=8, nodes=1, power_w=10_200.0,
                      power_basis="node max power", rack_units=8, liquid_fraction=0.0, compute_ports=8)
NVL72 = SystemUnit(id="gb200-nvl72", name="GB200 NVL72", gpus=72, nodes=18, power_w=132_000.0,
                   power_basis="rack power", rack_scale=True, liquid_fraction=0.85, compute_ports=72)


def test_100mw_liquid_hall_holds_about_40k_gb200():
    hall = Hall(power_w=100e6, rack_power_w=150e3, cooling="liquid", pue=1.2)
    (fit,) = fit_hall(hall, [NVL72])
    assert fit.feasible and fit.binding == "power"
    assert fit.gpus == pytest.approx(40_000, rel=0.05)
    assert fit.it_power_w <= 100e6 / 1.2
    assert fit.facility_power_w == pytest.approx(fit.it_power_w * 1.2)


def test_2mw_air_hall_at_40kw_per_rack():
    hall = Hall(power_w=2e6, rack_power_w=40e3, cooling="air")
    h100, nvl = fit_hall(hall, [DGX_H100, NVL72])
    assert h100.feasible and h100.binding == "power"
    assert h100.units_per_rack == 3                       # 4 x 10.2 = 40.8 kW > 40 kW
    assert h100.facility_power_w <= 2e6
    # one more node would not fit: the answer is the largest N
    more = size_facility(DGX_H100, h100.units + 1, cooling="air", pue=h100.pue, rack_power_limit_w=40e3)
    assert more.facility_power_w > 2e6
    assert not nvl.feasible and nvl.gpus == 0
    assert nvl.detail.startswith("infeasible: rack limit 40 kW < rack 132 kW")
    assert "liquid" in nvl.detail                         # and it cannot be air-cooled either


def test_floor_space_can_bind():
    hall = Hall(power_w=50e6, rack_power_w=40e3, cooling="air", floor_area_m2=500.0)
    (fit,) = fit_hall(hall, [DGX_H100])
    assert fit.binding == "floor space"
    assert fit.floor_area_m2 is not None and fit.floor_area_m2 <= 500.0


def test_it_basis_skips_pue():
    it = fit_hall(Hall(power_w=1e6, power_basis="it", rack_power_w=45e3, cooling="air"), [DGX_H100])[0]
    fac = fit_hall(Hall(power_w=1e6, rack_power_w=45e3, cooling="air"), [DGX_H100])[0]
    assert it.it_power_w <= 1e6 and it.units > fac.units


def test_rack_limit_below_node_is_an_infeasible_entry():
    (fit,) = fit_hall(Hall(power_w=2e6, rack_power_w=8e3, cooling="air"), [DGX_H100])
    assert not fit.feasible and fit.binding == "rack power"
    assert fit.detail == "infeasible: rack limit 8 kW < node 10.2 kW"


def test_hall_too_small_for_one_node_plus_overheads():
    (fit,) = fit_hall(Hall(power_w=20e3, rack_power_w=40e3, cooling="air"), [DGX_H100])
    assert not fit.feasible and fit.binding == "power" and fit.detail.startswith("infeasible")


@pytest.mark.parametrize(("field", "hall"), [
    ("hall.power_w", Hall(power_w=0.0, rack_power_w=40e3, cooling="air")),
    ("hall.rack_power_w", Hall(power_w=1e6, rack_power_w=0.0, cooling="air")),
    ("hall.cooling", Hall(power_w=1e6, rack_power_w=40e3, cooling="vapour")),
    ("hall.floor_area_m2", Hall(power_w=1e6, rack_power_w=40e3, cooling="air", floor_area_m2=0.0)),
    ("hall.pue", Hall(power_w=1e6, rack_power_w=40e3, cooling="air", pue=0.8)),
])
def test_bad_hall_is_input_error(field: str, hall: Hall):
    with pytest.raises(InputError) as exc:
        fit_hall(hall, [DGX_H100])
    assert exc.value.field == field


def test_hall_accepts_unit_strings_and_rejects_negative_power():
    hall = Hall(power_w="2.5MW", rack_power_w="40kW", cooling="air")
    assert (hall.power_w, hall.rack_power_w) == (2.5e6, 40e3)
    with pytest.raises(ValidationError):
        Hall(power_w="-1MW", rack_power_w="40kW", cooling="air")


def test_system_without_published_power_is_reported_not_sized():
    # A generic MI300X platform: node power depends on the OEM and is not published (catalog null).
    platform = load_catalog().systems["mi300x-oam-8"]
    (fit,) = fit_hall(Hall(power_w=2e6, rack_power_w=60e3, cooling="air"), [platform])
    assert not fit.feasible and fit.binding == "unknown power"
    assert fit.detail.startswith("not sized") and "systems.mi300x-oam-8.node_max_power_w" in fit.detail


def test_catalog_systems_and_gpu_filter():
    cat = load_catalog()
    systems = [cat.systems[s] for s in ("dgx-h100", "dgx-b200", "gb200-nvl72")]
    fits = fit_hall(Hall(power_w=10e6, rack_power_w=140e3, cooling="dlc"), systems)
    by_id = {f.system: f for f in fits}
    assert by_id["gb200-nvl72"].units_per_rack == 1 and by_id["gb200-nvl72"].gpus % 72 == 0
    assert by_id["dgx-b200"].units_per_rack == 2          # residual air 30 kW / 14.3 kW
    assert all(f.feasible for f in fits)
    only = fit_hall(Hall(power_w=10e6, rack_power_w=140e3, cooling="dlc", gpu="h100-sxm"), systems)
    assert [f.system for f in only] == ["dgx-h100"]


@settings(max_examples=20, deadline=None)
@given(st.floats(0.2e6, 30e6))
def test_more_power_never_fits_fewer_gpus(power_w: float):
    a = fit_hall(Hall(power_w=power_w, rack_power_w=50e3, cooling="air"), [DGX_H100])[0]
    b = fit_hall(Hall(power_w=power_w * 1.25, rack_power_w=50e3, cooling="air"), [DGX_H100])[0]
    assert b.gpus >= a.gpus
    assert a.facility_power_w <= power_w + 1e-6
