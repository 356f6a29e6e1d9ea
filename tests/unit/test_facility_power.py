"""Facility power chain against the DGX SuperPOD reference architectures.

What each RA publishes, and so what each test compares:
- DGX H100 4-SU (RA-11333-001 V11): no SuperPOD power total at all. It publishes the bill
  (Table 7: 127 DGX, 48 + 16 QM9700, 8 SN4600C, 8 SN2201, 4 UFM, 4 BCM; Table 8: 1,536 switch
  transceivers) and "power consumption per rack exceeds 40 kW" with 4 DGX per rack (p. 7).
  The tests check the bill and the rack figure; the IT total has no published number to meet.
- DGX GB200 SU (GB200 RA, dgx-superpod-architecture page): "Each SU requires a Thermal Design
  Power (TDP) of 1.2 Megawatts". That is IT power (no PUE), so IT power is compared, within 5%.
- DGX B200 SU (NVIDIA "Data Center Best Practices with DGX B200" deck): "One SU draws 458 kW" for
  32 DGX B200 (compute only), two per rack at 28.6 kW.
"""

from __future__ import annotations

import pytest

from workload_compiler.errors import Infeasible, InputError
from workload_compiler.facility import (
    SystemUnit,
    device_equipment,
    facility_data,
    facility_power_w,
    it_budget_w,
    it_power,
    size_facility,
)

DATA = facility_data()

# DGX H100: 10.2 kW max (DGX H100/H200 user guide), 8U, 8 compute NICs, air-cooled.
DGX_H100 = SystemUnit(id="dgx-h100", name="DGX H100", gpus=8, nodes=1, power_w=10_200.0,
                      power_basis="node max power", rack_units=8, liquid_fraction=0.0, compute_ports=8)
# DGX B200: 14.3 kW max, 10U (DGX B200 user guide).
DGX_B200 = SystemUnit(id="dgx-b200", name="DGX B200", gpus=8, nodes=1, power_w=14_300.0,
                      power_basis="node max power", rack_units=10, liquid_fraction=0.0, compute_ports=8)


def gb200(rack_w: float) -> SystemUnit:
    """GB200 NVL72 rack: 72 GPUs, 18 trays x 4 CX-7 = 72 compute ports; 85% liquid (assumed)."""
    return SystemUnit(id="gb200-nvl72", name="GB200 NVL72", gpus=72, nodes=18, power_w=rack_w,
                      power_basis="rack power", rack_scale=True, liquid_fraction=0.85, compute_ports=72)


def _count(layer, label: str) -> int:
    return sum(line.count for line in layer.breakdown.power.lines if line.name.endswith(f"[{label}]"))


def test_dgx_h100_4su_bill_matches_ra_table_7():
    f = size_facility(DGX_H100, 127)
    assert _count(f, "compute fabric") == 48       # Table 7: 48 QM9700 compute
    assert _count(f, "storage fabric") == 16       # 16 QM9700 storage
    assert _count(f, "in-band") == 8               # 8 SN4600C
    assert _count(f, "out-of-band") == 8           # 8 SN2201
    assert _count(f, "fabric manager") == 4        # 4 UFM appliances
    assert _count(f, "management") == 4            # 4 BCM management servers
    optics = sum(line.optics_count for line in f.breakdown.power.lines)
    assert optics == pytest.approx(1536, rel=0.01)  # Table 8: 1,536 switch OSFP transceivers


def test_dgx_h100_4su_power_breakdown_and_rack_power():
    f = size_facility(DGX_H100, 127)
    p = f.breakdown.power
    assert p.compute_w == pytest.approx(127 * 10_200.0)
    assert p.it_power_w == pytest.approx(p.compute_w + p.network_w + p.storage_w + p.management_w)
    # QM9700 at its 1.72 kW max with active cables: 64 x 1.72 kW of the network power
    assert p.network_w >= 64 * 1_720.0
    assert 0.05 < (p.it_power_w - p.compute_w) / p.it_power_w < 0.15  # overheads are a minority
    # RA p.7: 4 DGX per rack, "power consumption per rack exceeds 40 kW"
    assert f.breakdown.racks.units_per_rack == 4
    assert f.rack_power_w > 40_000.0
    assert f.facility_power_w == pytest.approx(f.it_power_w * f.pue)
    assert any(a.field == "facility.pue" for a in f.assumptions)  # PUE is an assumption, not a given


def test_gb200_su_it_power_within_5pct_of_ra_1_2_mw():
    # Rack provisioned at 132 kW = 8 x 33 kW power shelves, the top of the catalog's published range.
    f = size_facility(gb200(132_000.0), 8)
    assert f.it_power_w == pytest.approx(1.2e6, rel=0.05)
    assert f.racks >= 8 and f.breakdown.racks.compute_racks == 8
    assert f.cooling == "dlc" and f.cdus >= 2


def test_gb200_su_at_nominal_120kw_undershoots_the_ra():
    # The RA's 1.2 MW implies more than the 120 kW nominal rack: at 120 kW the SU is >5% short,
    # which is why facility provisioning takes the top of the published rack-power range.
    f = size_facility(gb200(120_000.0), 8)
    assert f.it_power_w < 0.95 * 1.2e6


def test_dgx_b200_su_matches_best_practices_deck():
    f = size_facility(DGX_B200, 32, units_per_rack_pin=2)
    assert f.breakdown.power.compute_w == pytest.approx(458e3, rel=0.01)   # "One SU draws 458 kW"
    assert f.rack_power_w == pytest.approx(28.6e3)                        # two per rack at 28.6 kW
    assert f.breakdown.racks.compute_racks == 16   # B200 RA Figure 3.1: 16 racks of 2 DGX B200 per SU


def test_four_b200_per_rack_needs_more_than_air():
    # The deck's 4-per-rack profile is 57.2 kW "for high-density sites only": above the air cap.
    with pytest.raises(Infeasible):
        size_facility(DGX_B200, 32, cooling="air", units_per_rack_pin=4)
    f = size_facility(DGX_B200, 32, cooling="rdhx", units_per_rack_pin=4)
    assert f.rack_power_w == pytest.approx(57.2e3)


def test_optics_are_not_counted_twice_for_max_rated_switches():
    qm = DATA.device("quantum2-qm9700")
    optic = DATA.transceivers["osfp-2x400g-mm"]
    with_optics = device_equipment(qm, 10, "network", transceivers=320, transceiver=optic)
    bare = device_equipment(qm, 10, "network")
    assert with_optics.power_w == bare.power_w == 10 * 1_720.0
    assert with_optics.optics_w_included == 320 * 15.0
    sn = DATA.device("sn4600c")  # only typical power published: optics are added
    line = device_equipment(sn, 2, "network", transceivers=4, transceiver=optic)
    assert line.power_w == 2 * 466.0 + 4 * 15.0


def test_pue_chain_and_reverse():
    assert facility_power_w(1e6, 1.3) == pytest.approx(1.3e6)
    assert it_budget_w(100e6, 1.2) == pytest.approx(83.333e6, rel=1e-4)  # infrastructure.md §6.1 example
    for bad in (0.9, float("nan"), 5.0):
        with pytest.raises(InputError):
            facility_power_w(1e6, bad)


def test_bad_input_is_input_error():
    with pytest.raises(InputError):
        it_power(units=-1, unit_power_w=10e3)
    with pytest.raises(InputError):
        it_power(units=4, unit_power_w=0.0)
    with pytest.raises(InputError, match="cooling"):
        size_facility(DGX_H100, 4, cooling="peltier")
    with pytest.raises(InputError):
        size_facility(DGX_H100, 0)


def test_provenance_names_formulas_and_assumptions():
    f = size_facility(DGX_H100, 16, cooling="air", pue=1.4)
    assert f.provenance["facility.pue"].source == "given"
    assert f.provenance["facility.it_power_w"].formula
    assert f.provenance["facility.facility_power_w"].formula == "IT power x PUE"
    fields = {a.field for a in f.assumptions}
    assert {"facility.floor_area_m2", "facility.breakdown.power.lines"} <= fields
    assert all(a.why for a in f.assumptions)
