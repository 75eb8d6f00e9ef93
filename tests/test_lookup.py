"""The notebook API (fraglab.layout, fraglab.catalogue) agrees with the CLI and with itself."""

import json

import numpy as np
import pytest

from fraglab.layouts.resolve import for_output
from typer.testing import CliRunner

import fraglab
from fraglab.cli.main import app
from cli_errors import error_message
from fraglab.errors import AtlasError, InputError

runner = CliRunner(env={"COLUMNS": "200"})
CASES = [
    dict(frag="matrix_a", shape="m16n16k16", dtype="f16", api="wmma"),
    dict(frag="accumulator", shape="m32n8k16", dtype="f32", layout="col", api="wmma"),
    dict(frag="matrix_b", shape="m16n8k16", dtype="bf16", api="mma"),
    dict(frag="accumulator", shape="m64n32k16", dtype="f32", api="wgmma"),
    dict(shape="m8n8", dtype="b16", num=4, trans=True, api="ldmatrix"),
]


def _cli_args(case):
    args = ["--api", case["api"]]
    for name in ("frag", "shape", "dtype", "layout", "num"):
        if name in case:
            args += [f"--{name}", str(case[name])]
    if case.get("trans"):
        args.append("--trans")
    return args


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['api']}-{c.get('frag', 'matrix')}")
def test_to_dict_is_the_cli_json(case, no_gpu):
    found = fraglab.layout(**case, source="model")
    result = runner.invoke(app, ["layout", *_cli_args(case), "--source", "model", "--format", "json"])
    assert result.exit_code == 0, result.output
    # files carry the source without its note and with cleaned strings (issue 23): resolve.for_output
    assert for_output(found).to_dict() == json.loads(result.output)


@pytest.mark.parametrize("case", CASES, ids=lambda c: f"{c['api']}-{c.get('frag', 'matrix')}")
def test_numpy_holders_and_repr_agree(case, no_gpu):
    found = fraglab.layout(**case, source="model")
    arr = found.to_numpy()
    assert arr.shape == (found.threads, found.num_elements, 2) and arr.dtype.kind == "i"
    assert found.threads == found.spec.threads
    held = arr[..., 0] >= 0
    assert np.array_equal(held, arr[..., 1] >= 0)  # -1 in both or neither
    # holders(r, c) lists exactly the (thread, slot) pairs whose array entry is (r, c)
    for r, c in [(0, 0), (found.spec.rows - 1, found.spec.cols - 1), (found.spec.rows // 2, 1)]:
        expected = sorted(map(tuple, np.argwhere((arr[..., 0] == r) & (arr[..., 1] == c)).tolist()))
        assert found.holders(r, c) == expected and expected
    lines = repr(found).splitlines()
    assert 1 <= len(lines) <= 3 and found.spec.shape in lines[0]


def test_holders_outside_the_tile_names_the_argument():
    found = fraglab.layout("matrix_a", source="model")
    with pytest.raises(InputError, match="outside the 16x16 tile") as err:
        found.holders(16, 0)
    assert err.value.argument == "row"
    with pytest.raises(InputError) as err:
        found.holders(0, -1)
    assert err.value.argument == "col"


def test_table_and_figure_are_objects_people_can_show():
    from matplotlib.figure import Figure
    from rich.console import Console

    found = fraglab.layout("accumulator", shape="m16n16k16", dtype="f32", source="model")
    con = Console(record=True, width=100, color_system=None)
    con.print(found.table())
    assert "row" in con.export_text().lower() or "0" in con.export_text()
    fig = found.figure()
    assert isinstance(fig, Figure) and fig.axes


@pytest.mark.parametrize("kwargs, argument, choice", [
    (dict(frag="matrix_a", source="cloud"), "source", "atlas"),
    (dict(frag="matrix_a", api="tcgen"), "api", "wgmma"),
    (dict(frag="matrix_z"), "frag", "matrix_b"),
    (dict(frag="matrix_a", shape="m16n8k16", api="mma", method="load"), "method", "onehot"),
    (dict(frag="matrix_a", dtype="f32"), "dtype", "bf16"),
])
def test_bad_values_raise_naming_the_choices(kwargs, argument, choice):
    with pytest.raises(InputError) as err:
        fraglab.layout(**kwargs)
    assert err.value.argument == argument and choice in str(err.value)


@pytest.mark.parametrize("api", [None, "wmma", "mma", "ldmatrix", "wgmma"])
def test_catalogue_is_what_list_json_lists(api):
    result = runner.invoke(app, ["list", "--format", "json", *(["--api", api] if api else [])])
    assert result.exit_code == 0, result.output
    assert fraglab.catalogue(api) == json.loads(result.output)
    assert all(row["api"] == api for row in fraglab.catalogue(api)) or api is None


def test_help_lists_the_notebook_api():
    assert "fraglab.layout(" in fraglab.__doc__ and "fraglab.catalogue(" in fraglab.__doc__
    assert "layout" in dir(fraglab)


def test_layout_answers_from_a_captured_atlas_file(tmp_path, no_gpu):
    from fraglab.layouts.atlas import DATA_DIR

    doc = json.loads((DATA_DIR / "atlas_sm90.json").read_text())
    doc["provenance"]["gpu_name"] = "Test GPU 7"
    path = tmp_path / "mine.json"
    path.write_text(json.dumps(doc))
    found = fraglab.layout("matrix_a", atlas=str(path))
    assert found.source.kind == "atlas" and found.source.provenance["gpu_name"] == "Test GPU 7"
    result = runner.invoke(app, ["layout", "--frag", "matrix_a", "--atlas", str(path)])
    assert result.exit_code == 0 and "Test GPU 7" in result.output
    with pytest.raises(InputError, match="--source atlas or auto"):
        fraglab.layout("matrix_a", atlas=str(path), source="model")


@pytest.mark.parametrize("content, expected", [
    (b"not json at all", "not JSON"),
    (b'{"fraglab_atlas": 1, "provenance": {"compute_capability": 90}, "entries": {"wmma.matrix_q.m1n1k1.f16.row":'
     b' {"load": {"cells": [[0]], "reads": ["1"]}}}}', "matrix_q"),
    (b'[1, 2]', "not a JSON object"),
])
def test_a_file_that_is_not_an_atlas_gets_one_line_and_exit_2(tmp_path, content, expected, no_gpu):
    path = tmp_path / "broken.json"
    path.write_bytes(content)
    with pytest.raises(AtlasError):
        fraglab.layout("matrix_a", atlas=str(path))
    for args in (["layout", "--frag", "matrix_a", "--atlas", str(path)], ["atlas", "show", str(path)],
                 ["atlas", "diff", str(path), str(path)]):
        result = runner.invoke(app, args)
        assert result.exit_code == 2, (args, result.output)
        # the path is named, shortened when long (errors cut words over 64 characters, a path keeping its file name)
        message = error_message(result.output)
        assert path.name in message and str(path)[:8] in message and expected in message, (args, result.output)
