"""fraglab.files.write_output / write_many: the one writer's rules (issue 10, item 4), and the CLI using it."""

import os
import stat

import pytest
from typer.testing import CliRunner

from fraglab.cli.main import app
from cli_errors import error_message
from fraglab.errors import FraglabError, InputError
from fraglab.files import check_suffix, format_from_suffix, write_many, write_output

runner = CliRunner()


def _mode(path) -> int:
    return stat.S_IMODE(os.stat(path).st_mode)


def test_new_file_gets_the_umask_mode(tmp_path):
    old = os.umask(0o027)
    try:
        path = write_output(tmp_path / "a.json", "{}\n", default_name="x.json")
    finally:
        os.umask(old)
    assert path.read_text() == "{}\n" and _mode(path) == 0o640  # 0o666 less 0o027, not mkstemp's 0o600


def test_folder_and_trailing_slash_take_the_default_name(tmp_path):
    assert write_output(tmp_path, b"x", default_name="d.bin") == tmp_path / "d.bin"
    made = write_output(f"{tmp_path}/new/", "y", default_name="d.txt")
    assert made == tmp_path / "new" / "d.txt" and made.read_text() == "y"


def test_symlink_is_followed_and_kept(tmp_path):
    target = tmp_path / "real.json"
    target.write_text("old")
    link = tmp_path / "link.json"
    link.symlink_to(target)
    write_output(link, "new", default_name="x")
    assert link.is_symlink() and target.read_text() == "new"


def test_fifo_is_written_not_replaced(tmp_path):
    import threading

    fifo = tmp_path / "pipe"
    os.mkfifo(fifo)
    got = []
    reader = threading.Thread(target=lambda: got.append(open(fifo, "rb").read()))
    reader.start()
    write_output(fifo, "through", default_name="x")
    reader.join(5)
    assert got == [b"through"] and stat.S_ISFIFO(os.stat(fifo).st_mode)


def test_a_failure_leaves_nothing_behind(tmp_path, monkeypatch):
    import fraglab.files as files

    def broken(*args, **kwargs):
        raise OSError(28, "No space left on device")

    monkeypatch.setattr(files.os, "replace", broken)
    with pytest.raises(FraglabError, match="No space left"):
        write_output(tmp_path / "deep" / "er" / "a.json", "{}", default_name="x")
    assert list(tmp_path.iterdir()) == []  # no temp file, no empty folders


def test_write_many_is_all_or_nothing(tmp_path):
    out = tmp_path / "figs"
    with pytest.raises(RuntimeError):
        with write_many(out) as files:
            files.write("a.svg", "<svg/>")
            raise RuntimeError("drawing failed")
    assert not out.exists()
    with write_many(out) as files:
        files.write("a.svg", "<svg/>")
        files.write("b.svg", "<svg/>")
    assert sorted(p.name for p in out.iterdir()) == ["a.svg", "b.svg"]


def test_suffix_rules(tmp_path):
    assert format_from_suffix("a.png") == "png" and format_from_suffix("a.out") is None
    check_suffix("a.json", "json")
    check_suffix("-", "png")
    check_suffix(tmp_path, "png")  # a folder gets the default name
    with pytest.raises(InputError, match=r"its suffix \.png is for png, but this writes json; use a name ending in \.json"):
        check_suffix("a.png", "json")


def test_cli_suffix_contradicting_format_is_one_line_exit_2(no_gpu, tmp_path):
    result = runner.invoke(app, ["layout", "--frag", "matrix_a", "--format", "png", "--out", str(tmp_path / "a.json")])
    assert result.exit_code == 2 and error_message(result.output)
    assert not (tmp_path / "a.json").exists()


def test_cli_suffix_chooses_the_format(no_gpu, tmp_path):
    result = runner.invoke(app, ["layout", "--frag", "matrix_a", "--out", str(tmp_path / "a.csv")])
    assert result.exit_code == 0, result.output
    assert (tmp_path / "a.csv").read_text().startswith("# fraglab ")


def test_cli_out_dash_is_stdout(no_gpu):
    result = runner.invoke(app, ["layout", "--frag", "matrix_a", "--format", "json", "--out", "-"])
    assert result.exit_code == 0 and result.output.lstrip().startswith("{")


@pytest.mark.parametrize("fmt, suffix", [("json", "json"), ("csv", "csv"), ("svg", "svg")])
def test_cli_out_with_a_trailing_slash_writes_inside_a_new_folder(no_gpu, tmp_path, fmt, suffix):
    folder = tmp_path / "new"
    result = CliRunner().invoke(app, ["layout", "--frag", "matrix_a", "--format", fmt, "--out", f"{folder}/"])
    assert result.exit_code == 0, result.output
    assert folder.is_dir() and [p.name for p in folder.iterdir()] == [f"wmma_matrix_a_m16n16k16_f16_row_load.{suffix}"]
