"""Shared-memory layouts: CuTe's spelling parsed and printed back, the swizzle as CuTe defines it, the wgmma
canonical tiles, and the validator's refusals."""

import numpy as np
import pytest

from fraglab.errors import InputError
from fraglab.smem.layout import Swizzle, parse_layout, row_major, wgmma_canonical


@pytest.mark.parametrize("text", [
    "Sw<3,3,3> o (8,64):(64,1)", "(64,64):(72,1)", "Sw<2,4,3> o ((8,8),(64,2)):((64,512),(1,4096))",
    "Sw<1,2,5> o (32,32):(32,1)", "(16,(8,2)):(8,(1,128))",
])
def test_parse_print_round_trip(text):
    layout = parse_layout(text, "f16")
    assert layout.spelling == text
    assert parse_layout(layout.spelling, "f16") == layout


def test_cute_static_integers_and_spaces_are_read():
    assert parse_layout(" Sw<3, 3, 3> o (_8,_64) : (_64,_1) ").spelling == "Sw<3,3,3> o (8,64):(64,1)"


def test_swizzle_is_cutes_xor_of_high_bits_into_low():
    # Sw<3,3,3>: bits 6-8 of the element offset XOR into bits 3-5. Offset 64*r + c for row r of a 64-wide tile:
    # row 1 (offset 64, bit 6 set) moves column 0 to element 8 (bit 3), column 8 to 0.
    sw = Swizzle(3, 3, 3)
    assert sw.apply(64) == 72 and sw.apply(72) == 64 and sw.apply(7 * 64 + 5) == 7 * 64 + 56 + 5
    off = parse_layout("Sw<3,3,3> o (8,64):(64,1)").offsets()
    assert sorted(off.ravel().tolist()) == list(range(512))        # a permutation of the tile
    assert [int(off[r, 0]) for r in range(8)] == [64 * r + 8 * r for r in range(8)]


def test_nested_modes_read_colexicographically():
    # ((8,2)):((1,64)) along columns: col 9 = (1, 1) -> 1 + 64
    layout = parse_layout("(4,(8,2)):(8,(1,64))")
    assert layout.rows == 4 and layout.cols == 16 and int(layout.offsets()[2, 9]) == 16 + 1 + 64


def test_wgmma_canonical_128B_k_major_is_the_sw128_atom_tiled():
    # CuTe's Layout_K_SW128_Atom<half>: Sw<3,4,3> on bytes = Sw<3,3,3> on halves, atom 8 x 64 halves
    atom = wgmma_canonical("f16", "128B", "k")
    assert atom.spelling == "Sw<3,3,3> o (8,64):(64,1)"
    tile = wgmma_canonical("f16", "128B", "k", 64, 64)
    assert tile.spelling == "Sw<3,3,3> o ((8,8),64):((64,512),1)"
    # rows 8-15 are the next atom, 1024 bytes on
    assert int(tile.byte_offsets()[8, 0]) == 1024


def test_wgmma_canonical_interleave_and_mn_major():
    inter = wgmma_canonical("f16", "interleave", "k", 16, 16)
    # core matrices of 8 rows x 16 bytes (128 contiguous bytes); the next 8 rows at +128 B; K's next 8 at +256 B
    assert int(inter.byte_offsets()[1, 0]) == 16 and int(inter.byte_offsets()[8, 0]) == 128
    assert int(inter.byte_offsets()[0, 8]) == 256
    mn = wgmma_canonical("f16", "64B", "mn", 64, 16)
    assert mn.spelling == "Sw<2,3,3> o ((32,2),(8,2)):((1,256),(32,512))"
    assert mn.swizzle == Swizzle(2, 3, 3)


def test_padding_is_a_row_stride():
    assert row_major(64, 64, "f16", pad=8).spelling == "(64,64):(72,1)"


@pytest.mark.parametrize("text,needle", [
    ("Sw<3,3,3> o (8,60):(60,1)", "does not fit"),
    ("Sw<3,3,2> o (8,64):(64,1)", "S >= B"),
    ("(8,8):(4,1)", "share one address"),
    ("(8,8,8):(64,8,1)", "two modes"),
    ("((8,2),8):(8,1)", "same nesting"),
    ("(256,256):(256,1)", "at most 65536"),
    ("(128,264):(264,1)", "spans 67584 bytes"),
    ("", "empty"),
    ("Sw<3,3> o (8,64):(64,1)", "spelled Sw<B,M,S>"),
])
def test_bad_layouts_are_refused_in_one_line(text, needle):
    with pytest.raises(InputError, match=needle.replace("(", r"\(").replace(")", r"\)")) as info:
        parse_layout(text, "f16")
    assert "\n" not in str(info.value) and info.value.argument == "layout"


def test_a_padded_tile_refuses_a_swizzle_that_lands_in_its_padding():
    with pytest.raises(InputError, match="does not fit"):
        parse_layout("Sw<3,3,3> o (8,64):(72,1)")
    assert np.array_equal(parse_layout("(8,64):(72,1)").offsets()[1], 72 + np.arange(64))
