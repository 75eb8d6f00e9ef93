"""The measurement's numpy side: the calibration's conversion, the address table, the probe's shape, Nsight
Compute's CSV, the search's ranking with measured candidates, and the verify verdicts."""

import numpy as np
import pytest

from fraglab.smem import measure
from fraglab.smem.access import AccessSpec, parse_access, raw_instruction
from fraglab.smem.counters import parse_csv
from fraglab.smem.verify import CASES, CaseRow, SmemCase


def test_cycles_become_wavefronts_through_the_calibration_line():
    # calibration 1 wf -> 2 cycles, 32 wf -> 33 cycles: 1 cycle per wavefront, offset 1
    cal = {1: 2.0, 2: 3.0, 32: 33.0}
    assert np.allclose(measure.wavefronts_from_cycles(np.array([2.0, 5.0, 33.0]), cal), [1, 4, 32])
    # cp.async.16's own points: 4 wf -> 5 cycles, 32 wf -> 33 cycles
    assert np.allclose(measure.wavefronts_from_cycles(np.array([19.0]), {4: 5.0, 32: 33.0}), [18])


def test_b32_calibration_ladder_has_the_wavefronts_it_claims():
    from fraglab.smem.model import model_instruction

    spec, addresses, wavefronts = measure.calibration_plan(parse_access("ldmatrix.x4"))
    assert spec.spelling == "ld.b32"
    got = [model_instruction(raw_instruction(spec, a)).wavefronts for a in addresses]
    assert got == list(wavefronts) == [1, 2, 4, 8, 16, 32]
    st, _, _ = measure.calibration_plan(parse_access("stmatrix.x2"))
    assert st.spelling == "st.b32"


def test_cp_async_calibrates_against_itself():
    from fraglab.smem.model import model_instruction

    for width in (4, 8, 16):
        spec = parse_access(f"cp.async.{width}")
        cal, addresses, wavefronts = measure.calibration_plan(spec)
        assert cal == spec
        assert [model_instruction(raw_instruction(spec, a)).wavefronts for a in addresses] == list(wavefronts)


def test_address_table_marks_unused_threads():
    ins = raw_instruction(parse_access("ldmatrix.x1"), np.arange(32) * 16)
    table = measure.address_table([ins])
    assert table.shape == (1, 32) and list(table[0, :8]) == list(range(0, 128, 16))
    assert (table[0, 8:] == measure.NO_ADDRESS).all()


def test_storing_warps_get_their_own_copy_of_the_tile():
    load = measure.probe_shape(AccessSpec("ld", 16), 16384)
    store = measure.probe_shape(AccessSpec("st", 4), 16384)
    assert load.shared == load.window == 16384 and load.warps == measure.MAX_WARPS
    assert store.shared == store.warps * store.window <= measure.SHARED_BUDGET and store.warps == 12


def test_wgmma_is_not_timed():
    from fraglab.errors import InputError

    with pytest.raises(InputError, match="descriptor"):
        measure.kernel_name(parse_access("wgmma"))


def test_ncu_csv_is_read_by_launch():
    text = ('==PROF== noise\n"ID","Kernel Name","Metric Name","Metric Unit","Metric Value"\n'
            '"0","bank_probe","l1tex__x.sum","","1,024"\n"1","bank_probe","l1tex__x.sum","","4"\n')
    assert parse_csv(text) == {0: {"l1tex__x.sum": 1024.0}, 1: {"l1tex__x.sum": 4.0}}


def test_verdicts():
    plain = SmemCase("x", "f16", "ld.b32", "(32,2):(64,1)")
    documented = SmemCase("y", "f16", "ld.b128", addresses=tuple([0] * 32), hardware=2)
    loose = SmemCase("z", "f16", "cp.async.4", "(32,2):(64,1)", tolerance=1.0)
    assert CaseRow(plain, 32, 1, 32, 1).verdict == "agrees"
    assert CaseRow(plain, 32, 1, 31, 1, 31.2).verdict == "DIFFERS"
    assert CaseRow(documented, 4, 1, 2, 1).verdict == "differs (documented)"
    assert CaseRow(documented, 4, 1, 3, 1).verdict == "DIFFERS"
    assert CaseRow(loose, 32, 1, 33, 1, 32.9).verdict.startswith("agrees")
    assert CaseRow(loose, 32, 1, 34, 1, 33.6).verdict == "DIFFERS"


def test_shipped_case_names_are_unique_and_every_form_is_covered():
    names = [c.name for c in CASES]
    assert len(names) == len(set(names))
    kinds = {parse_access(c.access).kind for c in CASES}
    assert kinds == {"ld", "st", "ldmatrix", "stmatrix", "cp.async", "wgmma"}


def test_search_ranks_measured_candidates_first(monkeypatch):
    from fraglab.runtime import gpu
    from fraglab.smem import search as search_mod
    from fraglab.smem.analysis import SmemReport

    monkeypatch.setattr(gpu, "available", lambda: (True, ""))
    real = search_mod.analyze

    def fake(layout, dtype, access, fragment=None, source="auto", **kw):
        report = real(layout, dtype, access, fragment=fragment, source="model")
        # pretend the hardware charges one extra wavefront per instruction to every swizzled layout
        extra = len(report.instructions) if report.layout.swizzle else 0
        report.measurement = type("M", (), {"wavefronts": np.array([m.wavefronts + (extra > 0)
                                                                    for m in report.models], dtype=float)})()
        return report

    monkeypatch.setattr(search_mod, "analyze", fake)
    ranked, note = search_mod.search("128x64", "f16", "ldmatrix.x4", source="gpu")
    assert "measured on the GPU" in note
    assert ranked[0].layout.spelling == "(128,64):(72,1)" and ranked[0].measured == 128
    measured = [c for c in ranked if c.measured is not None]
    assert ranked[:len(measured)] == measured and isinstance(SmemReport, type)
