"""fraglab explain: parsing real nvdisasm/cuobjdump/PTX text of fraglab's own kernels, the instructions each
kernel was written with named back, the layout commands valid, the CLI's lines and exit codes."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from cli_errors import error_message
from fraglab import explain
from fraglab.explain.instructions import classify_ptx, classify_sass, registers
from fraglab.explain.parse import ptx_lines, sass_lines, split_operands
from fraglab.runtime import disassemble

DATA = Path(__file__).parent / "data"


def _nvrtc_or_skip():
    try:
        import cuda.bindings.nvrtc  # noqa: F401
    except ImportError as exc:
        pytest.skip(f"offline NVRTC unavailable: {exc} (pip install -e .[dev])")


def _disassembler_or_skip():
    try:
        disassemble.disassembler()
    except disassemble.ToolUnavailable as exc:
        pytest.skip(f"{exc}")


# ---- parsing saved real disassembly (nvdisasm 13.5 / cuobjdump 13.5 of fraglab's probes, sm_90) -------

def test_sass_of_a_sparse_probe_names_shape_types_selector_and_registers():
    found = explain.build_explanation("x", "cubin", "sass", (DATA / "mma_sp_sm90.nvdisasm.txt").read_text())
    k32 = [f for f in found.findings if "m16n8k32_f32_f16ELi1E" in f.line.kernel]
    assert len(k32) == 1
    f = k32[0]
    assert (f.api, f.shape, f.types) == ("mma_sp", "m16n8k32", "f32 = f16 x f16 + f32, sel 1")
    ops = dict(f.operands)
    # k32 f16 sparse: A packed 16x16 halves = 4 registers, B 32x8 halves = 4, D and C 4 floats, E one word
    assert all(re.fullmatch(r"R\d+\.\.R\d+", ops[r]) for r in ("D", "A", "B", "C"))
    assert [int(ops[r].split("..")[1][1:]) - int(ops[r].split("..")[0][1:]) for r in "DABC"] == [3, 3, 3, 3]
    assert re.fullmatch(r"R\d+", ops["E"]) and ops["sel"] == "0x1"


def test_an_fp8_sparse_mma_is_two_f16_sparse_mmas_in_sm90_sass():
    # ptxas lowers mma.sp m16n8k64 e4m3 to unpacks and two HMMA.SP.16832 reading selectors 0 and 1
    found = explain.build_explanation("x", "cubin", "sass", (DATA / "mma_sp_sm90.nvdisasm.txt").read_text())
    fp8 = [f for f in found.findings if "e4m3" in f.line.kernel]
    assert [f.line.mnemonic for f in fp8] == ["HMMA.SP.16832.F32", "HMMA.SP.16832.F32"]
    assert sorted(dict(f.operands)["sel"] for f in fp8) == ["0x0", "0x1"]


def test_cuobjdump_text_of_stmatrix_and_movmatrix():
    found = explain.build_explanation("x", "cubin", "sass", (DATA / "ldmatrix_sm90.cuobjdump.txt").read_text())
    got = {(f.line.kernel, f.api, f.types) for f in found.findings}
    # the movmatrix probe loads its matrix with an ldmatrix .x1 first
    assert got == {("_Z14stmatrix_probeILi4ELb1EEvPKjPKiPt", "stmatrix", "b16 x4 .trans"),
                   ("_Z15movmatrix_probeILb1EEvPKtPKiPKjPj", "movmatrix", "b16 x1 .trans"),
                   ("_Z15movmatrix_probeILb1EEvPKtPKiPKjPj", "ldmatrix", "b16 x1")}
    st = next(f for f in found.findings if f.api == "stmatrix")
    assert dict(st.operands) == {"addr": "[R6]", "src": "R8..R11"}


def test_hgmma_of_the_wgmma_gemm():
    found = explain.build_explanation("x", "cubin", "sass", (DATA / "gemm_wgmma_sm90a.nvdisasm.txt").read_text())
    assert {(f.api, f.shape, f.types) for f in found.findings} == {("wgmma", "m64n256k16", "f32 = f16 x f16 + f32")}
    d = dict(found.findings[0].operands)["D"]
    assert d == "R24..R151"       # 64x256 f32 over 128 threads: 128 registers each


def test_qgmma_igmma_and_register_a_hgmma_of_the_wgmma_probes():
    found = explain.build_explanation("x", "cubin", "sass", (DATA / "wgmma_probe_sm90a.nvdisasm.txt").read_text())
    got = {(f.line.kernel.split("Op_")[1].split("_t00")[0], f.shape, f.types) for f in found.findings}
    assert got == {("ss_m64n32k32_f32_e4m3", "m64n32k32", "f32 = e4m3 x e4m3 + f32"),
                   ("ss_m64n96k32_s32_s8", "m64n96k32", "s32 = s8 x s8 + s32"),
                   ("rs_m64n16k16_f32_bf16", "m64n16k16", "f32 = bf16 x bf16 + f32"),
                   ("rs_m64n8k8_f32_tf32", "m64n8k8", "f32 = tf32 x tf32 + f32")}
    register_a = {f.shape: dict(f.operands) for f in found.findings if "Op_rs" in f.line.kernel}
    assert register_a["m64n16k16"]["A"] == "R32..R35"      # 64x16 bf16 over 128 threads: 4 registers
    assert register_a["m64n8k8"]["A"] == "R28..R31"        # 64x8 tf32: 4 registers
    roles = {role for f in found.findings if "Op_ss" in f.line.kernel for role, _ in f.fragments}
    assert roles == {"C/D"}                                # shared-memory A and B: only the accumulator's command
    # fraglab catalogues the accumulator at k16 (its layout depends on N only) and register A at n8
    commands = {k.shape: {lay.role: lay for lay in k.layouts} for k in found.kinds}
    assert "--shape m64n32k16 --dtype f32" in commands["m64n32k32"]["C/D"].command
    assert "same register layout" in commands["m64n32k32"]["C/D"].why
    assert "--shape m64n8k16 --dtype bf16" in commands["m64n16k16"]["A"].command
    assert all(len(line) <= 80 for line in found.to_text(80).splitlines())


def test_operand_splitting_and_register_ranges():
    assert split_operands("R8, {R1, R2}, [R6+0x10], 0x0") == ("R8", "{R1, R2}", "[R6+0x10]", "0x0")
    assert registers("R12.reuse", 4) == "R12..R15" and registers("RZ", 4) == "RZ"
    assert registers("gdesc[UR4]", 2) == "gdesc[UR4]"


# ---- fraglab's own kernels through NVRTC: the explanation names what they were written with -------------

@pytest.fixture(scope="module")
def mma_ptx():
    _nvrtc_or_skip()
    from fraglab.apis import mma

    return explain.explain_build(mma.kernel_builds()[0], arch="sm_90", level="ptx")


def test_every_mma_probe_shows_its_instruction_in_the_ptx(mma_ptx):
    from fraglab.apis import mma

    for inst in mma.INSTRUCTIONS:
        mine = [f for f in mma_ptx.findings if f"{len(inst.name)}{inst.name}E" in f.line.kernel]
        assert len(mine) == 1, inst.name
        f = mine[0]
        assert (f.api, f.shape) == ("mma", inst.shape), inst.name
        assert f.types == f"{inst.acc} = {inst.ab} x {inst.ab} + {inst.acc}", inst.name
        assert f.line.mnemonic == inst.ptx, inst.name


def test_every_mma_sp_probe_shows_its_instruction_and_selector():
    _nvrtc_or_skip()
    from fraglab.apis import mma_sp

    found = explain.explain_build(mma_sp.kernel_builds()[0], arch="sm_90", level="ptx")
    for inst in mma_sp.INSTRUCTIONS:
        for selector in range(inst.selectors):
            for ordered in inst.orderings:
                tag = f"{inst.name}{'' if ordered else '_unordered'}ELi{selector}E"
                mine = [f for f in found.findings if tag in f.line.kernel]
                assert len(mine) == 1, tag
                assert mine[0].line.mnemonic == inst.ptx(ordered), tag
                assert mine[0].types.endswith(f", sel {selector}"), tag
                assert mine[0].shape == inst.shape and mine[0].api == "mma_sp"


def test_sass_of_the_sparse_probes_is_native_except_fp8():
    _nvrtc_or_skip()
    _disassembler_or_skip()
    from fraglab.apis import mma_sp

    found = explain.explain_build(mma_sp.kernel_builds()[0], arch="sm_90", level="sass")
    assert found.tool in disassemble.DISASSEMBLERS
    for inst in mma_sp.INSTRUCTIONS:
        mine = [f for f in found.findings if f"{inst.name}ELi0E" in f.line.kernel]
        if inst.ab in ("e4m3", "e5m2"):
            assert [f.shape for f in mine] == ["m16n8k32", "m16n8k32"], inst.name
            continue
        assert len(mine) == 1 and mine[0].shape == inst.shape, inst.name
        assert mine[0].line.mnemonic.startswith("HMMA.SP." if inst.ab in ("f16", "bf16") else "IMMA.SP."), inst.name
        assert mine[0].types == f"{inst.acc} = {inst.ab} x {inst.ab} + {inst.acc}, sel 0", inst.name


def test_sass_of_the_gemms_and_the_moves():
    _nvrtc_or_skip()
    _disassembler_or_skip()
    from fraglab.apis import ldmatrix
    from fraglab.gemm import wgmma, wmma

    gw = explain.explain_build(wgmma.all_builds()[0], level="sass")
    assert {k.api for k in gw.kinds} == {"wgmma"} and all(m.startswith("HGMMA.64x") for m in gw.mnemonics())
    gm = explain.explain_build(wmma.all_builds()[0], level="sass")
    assert {(k.api, k.shape) for k in gm.kinds} >= {("mma", "m16n8k16"), ("ldmatrix", "m8n8")}
    gm_ptx = explain.explain_build(wmma.all_builds()[0], level="ptx")   # written with wmma.load/mma/store
    assert {k.api for k in gm_ptx.kinds} == {"wmma"}
    moves = explain.explain_build(ldmatrix.kernel_builds()[0], level="sass")
    for f in moves.findings:
        written = re.search(r"(ldmatrix|stmatrix)_probeILi(\d)ELb(\d)E", f.line.kernel)
        if written and f.api in ("ldmatrix", "stmatrix"):
            assert (f.api, f.types) == (written[1], f"b16 x{written[2]}{' .trans' if written[3] == '1' else ''}")


def test_every_layout_command_runs(no_gpu, mma_ptx):
    from typer.testing import CliRunner

    from fraglab.cli.main import app

    commands = {lay.command for k in mma_ptx.kinds for lay in k.layouts}
    assert None not in commands and len(commands) > 40
    for command in sorted(commands)[::7]:           # a spread of them, answered from the atlas or the model
        args = command.split()[2:] + ["--format", "json"]
        result = CliRunner().invoke(app, ["layout", *args])
        assert result.exit_code == 0, (command, result.output)


def test_a_users_cu_file_through_the_cli(tmp_path):
    _nvrtc_or_skip()
    from typer.testing import CliRunner

    from fraglab.cli.main import app

    source = tmp_path / "mine.cu"
    source.write_text('extern "C" __global__ void k(const unsigned* a, float* d) {\n'
                      '  float x0, x1, x2, x3;\n'
                      '  asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0,%1,%2,%3}, '
                      '{%4,%5,%6,%7}, {%4,%5}, {%8,%8,%8,%8};" : "=f"(x0), "=f"(x1), "=f"(x2), "=f"(x3) : '
                      '"r"(a[0]), "r"(a[1]), "r"(a[2]), "r"(a[3]), "f"(0.f));\n'
                      '  d[threadIdx.x] = x0 + x1 + x2 + x3;\n}\n')
    result = CliRunner().invoke(app, ["explain", str(source), "--level", "ptx", "--arch", "sm_90"])
    assert result.exit_code == 0, result.output
    assert all(len(line) <= 80 for line in result.output.splitlines()), result.output
    assert "mma m16n8k16 f32 = bf16 x bf16 + f32" in result.output
    assert "fraglab layout --api mma --frag matrix_a --shape m16n8k16 --dtype bf16" in result.output
    as_json = CliRunner().invoke(app, ["explain", str(source), "--level", "ptx", "--arch", "sm_90", "--format", "json"])
    doc = json.loads(as_json.output)
    assert doc["instructions"][0]["kernel"] == "k" and doc["kinds"][0]["api"] == "mma"


def test_without_a_disassembler_the_ptx_is_shown_and_a_cubin_refused(tmp_path, monkeypatch):
    _nvrtc_or_skip()
    from typer.testing import CliRunner

    from fraglab.cli.main import app

    monkeypatch.setattr(disassemble, "find_tool", lambda name: None)
    source = tmp_path / "mine.cu"
    source.write_text('extern "C" __global__ void k(unsigned* d) { unsigned x;\n'
                      '  asm volatile("movmatrix.sync.aligned.m8n8.trans.b16 %0, %1;" : "=r"(x) : "r"(d[0]));\n'
                      '  d[threadIdx.x] = x; }\n')
    result = CliRunner().invoke(app, ["explain", str(source), "--arch", "sm_90"])
    assert result.exit_code == 0, result.output
    assert "no disassembler found" in result.output and "fraglab[explain]" in result.output
    assert "-> PTX" in result.output and "movmatrix m8n8" in result.output
    cubin = tmp_path / "k.cubin"
    cubin.write_bytes(b"\x7fELF" + bytes(60))
    refused = CliRunner().invoke(app, ["explain", str(cubin)])
    assert refused.exit_code == 1 and "no disassembler found" in error_message(refused.output)


@pytest.mark.parametrize("args,argument", [
    (["explain", "/no/such/file.cu"], "no file"),
    (["explain", "--api", "mma", "--level", "both"], "--level"),
    (["explain", "--api", "mma", "--arch", "hopper"], "--arch"),
    (["explain", "--api", "mma", "--format", "csv"], "--format"),
    (["explain", "--api", "nope"], "--api"),
    (["explain"], "a file"),
])
def test_bad_input_is_one_line_and_exit_2(args, argument):
    from typer.testing import CliRunner

    from fraglab.cli.main import app

    result = CliRunner().invoke(app, args)
    assert result.exit_code == 2, result.output
    assert argument in result.output and "Traceback" not in result.output


def test_a_text_file_that_is_neither_is_refused(tmp_path):
    from typer.testing import CliRunner

    from fraglab.cli.main import app

    notes = tmp_path / "notes.txt"
    notes.write_text("hello")
    result = CliRunner().invoke(app, ["explain", str(notes)])
    assert result.exit_code == 2 and ".cu, a .ptx or a cubin" in result.output


def test_strings_from_the_file_never_reach_the_terminal_raw(tmp_path):
    from typer.testing import CliRunner

    from fraglab.cli.main import app

    ptx = tmp_path / "evil.ptx"
    ptx.write_text(".version 8.5\n.target sm_90\n.address_size 64\n.visible .entry k(\n)\n{\n"
                   "ldmatrix.sync.aligned.m8n8.x2.shared.b16 {%r1\x1b[2J, %r2}, [%rd1\x07];\n}\n")
    result = CliRunner().invoke(app, ["explain", str(ptx)])
    assert result.exit_code == 0, result.output
    assert "\x1b" not in result.output and "\x07" not in result.output
    assert "ldmatrix m8n8 b16 x2" in result.output


def test_ptx_lines_keep_the_kernel_and_skip_directives():
    text = (".version 8.5\n.target sm_90\n.visible .entry first(\n)\n{\n.reg .b32 %r<4>;\n"
            "mov.u32 %r1, %r2;\nmovmatrix.sync.aligned.m8n8.trans.b16 %r1, %r2;\n}\n"
            ".visible .entry second()\n{\nstmatrix.sync.aligned.m8n8.x4.trans.shared.b16 [%r1], {%r1, %r2, %r3, %r4};\n}\n")
    found = [classify_ptx(ln) for ln in ptx_lines(text)]
    kept = [(f.line.kernel, f.api, f.types) for f in found if f is not None]
    assert kept == [("first", "movmatrix", "b16 x1 .trans"), ("second", "stmatrix", "b16 x4 .trans")]
    assert classify_sass(sass_lines("        /*0010*/                   IADD3 R1, R2, R3, RZ ;")[0]) is None


# ---- on the GPU: the running GPU's own cubin ---------------------------------------------------------

@pytest.mark.gpu
def test_gpu_explains_a_probe_built_for_the_running_gpu():
    from fraglab.apis import mma_sp
    from fraglab.runtime import gpu

    _disassembler_or_skip()
    arch = explain.default_arch()
    assert arch.startswith(f"sm_{gpu.compute_capability()}")
    found = explain.explain_build(mma_sp.kernel_builds()[0], arch=arch, level="sass")
    assert found.arch == arch and found.findings
    assert {"HMMA.SP.16816.F32", "IMMA.SP.16864.S8.S8"} <= found.mnemonics()
    assert all(len(line) <= 80 for line in found.to_text(80).splitlines())
