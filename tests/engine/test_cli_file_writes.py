"""Issue 27, "files that are not the tool's to touch": every file workbench writes goes through one
writer (workbench.safewrite): a temporary file beside it, renamed into place, removed on any signal;
never through a symbolic link, never over an existing file without --force (or the UI's confirmed
overwrite); the UI's own state in its own XDG folder."""

from __future__ import annotations

import os
import resource
import signal
import subprocess
import sys
import time
from pathlib import Path

import numpy as np
import pytest

from workbench.cli import main
from workbench.config import load_config

from .conftest import REPO

KERNEL = ["swiglu_combine", "--dim", "seq=2"]
RUN = ["run", *KERNEL, "--reps", "0"]
# A generous bound for what must happen; reaching it fails the test, it times nothing.
PATIENCE_S = 120


def _err_line(capsys: pytest.CaptureFixture[str]) -> str:
    lines = [
        ln
        for ln in capsys.readouterr().err.splitlines()
        if ln.startswith("workbench: ") and "no GPU found" not in ln
    ]
    assert len(lines) == 1, lines
    return lines[0]


def _temporaries(folder: Path) -> list[Path]:
    return [p for p in folder.rglob(".*") if p.name.endswith(".tmp")]


def test_save_outputs_overwrites_existing_files_only_with_force(tmp_path, capsys) -> None:
    out = tmp_path / "so"
    out.mkdir()
    (out / "hidden.npy").write_bytes(b"the user's own file")
    assert main([*RUN, "--save-outputs", str(out)]) == 2
    assert "hidden.npy already exists" in _err_line(capsys)
    assert (out / "hidden.npy").read_bytes() == b"the user's own file"
    assert main([*RUN, "--save-outputs", str(out), "--force"]) == 0
    assert np.load(out / "hidden.npy").shape != () and not _temporaries(out)


def test_save_outputs_never_writes_through_a_symlink(tmp_path, capsys) -> None:
    out = tmp_path / "so2"
    out.mkdir()
    notes = tmp_path / "notes.txt"
    notes.write_text("my notes\n", encoding="utf-8")
    (out / "hidden.npy").symlink_to(notes)
    for force in ([], ["--force"]):
        assert main([*RUN, "--save-outputs", str(out), *force]) == 2
        assert "is a symbolic link" in _err_line(capsys)
        assert notes.read_text(encoding="utf-8") == "my notes\n"
        assert (out / "hidden.npy").is_symlink()


def _limit_file_size() -> None:
    # A file may grow to 8 KiB, no further: the write fails as on a full disk (EFBIG; Python
    # ignores SIGXFSZ), deterministically.
    resource.setrlimit(resource.RLIMIT_FSIZE, (8192, 8192))


def test_save_outputs_on_a_full_disk_keeps_the_old_file(tmp_path) -> None:
    out = tmp_path / "full"
    out.mkdir()
    (out / "hidden.npy").write_bytes(b"the old outputs")
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", *RUN, "--save-outputs", str(out), "--force"],
        capture_output=True,
        text=True,
        cwd=REPO,
        timeout=PATIENCE_S,
        preexec_fn=_limit_file_size,
    )
    assert (out / "hidden.npy").read_bytes() == b"the old outputs"
    assert not _temporaries(out)
    assert proc.returncode == 2, proc.stderr
    assert "Traceback" not in proc.stderr and "cannot write" in proc.stderr


def test_save_outputs_empty_is_refused(capsys) -> None:
    assert main([*RUN, "--save-outputs", ""]) == 2
    assert "--save-outputs: give a folder" in _err_line(capsys)


def test_record_out_folder_writes_the_default_name_into_it(tmp_path, monkeypatch, capsys) -> None:
    monkeypatch.chdir(tmp_path)
    assert main(["record", *KERNEL, "--out", "rec/"]) == 0, capsys.readouterr().err
    assert not (tmp_path / "rec.toml").exists()
    assert (tmp_path / "rec" / "swiglu_combine-seq2-d_ff3072.toml").is_file()
    assert (tmp_path / "rec" / "swiglu_combine-seq2-d_ff3072.npz").is_file()
    # An existing folder named without the slash is a folder too.
    (tmp_path / "rec2").mkdir()
    assert main(["record", *KERNEL, "--out", "rec2", "--dim", "seq=3"]) == 0
    assert (tmp_path / "rec2" / "swiglu_combine-seq3-d_ff3072.toml").is_file()


def test_replay_junit_is_atomic_and_never_overwrites_without_force(tmp_path, capsys) -> None:
    assert main(["record", *KERNEL, "--out", str(tmp_path / "fx" / "one")]) == 0
    report = tmp_path / "report.xml"
    report.write_text("the previous report", encoding="utf-8")
    replay = ["replay", str(tmp_path / "fx"), "--junit", str(report)]
    capsys.readouterr()
    assert main(replay) == 2
    assert "report.xml already exists" in _err_line(capsys)
    assert report.read_text(encoding="utf-8") == "the previous report"
    assert main([*replay, "--force"]) == 0
    assert report.read_text(encoding="utf-8").startswith("<?xml")
    assert not _temporaries(tmp_path)


def test_the_ui_state_never_replaces_a_state_toml_beside_workbench_config(
    tmp_path, monkeypatch
) -> None:
    config = tmp_path / "mine" / "config.toml"
    config.parent.mkdir()
    theirs = config.with_name("state.toml")
    theirs.write_text("# the user's own file\n", encoding="utf-8")
    monkeypatch.setenv("WORKBENCH_CONFIG", str(config))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "xdg-state"))
    cfg = load_config()
    cfg.remember(theme="nord")
    assert cfg.problems == []
    assert theirs.read_text(encoding="utf-8") == "# the user's own file\n"
    assert cfg.state_path == tmp_path / "xdg-state" / "workbench" / "state.toml"
    assert load_config().remembered == {"theme": "nord"}


def test_ui_exports_overwrite_only_when_confirmed_and_never_through_a_link(
    tmp_path, session
) -> None:
    from workbench.errors import UserError
    from workbench.viewmodel.takeaway import CASE, save_arrays

    run = session.run(session.case("swiglu_combine", dims={"seq": 2}), reps=0)
    path = tmp_path / "case.npz"
    path.write_bytes(b"kept")
    with pytest.raises(UserError, match="already exists"):
        save_arrays(path, run, CASE)
    assert path.read_bytes() == b"kept"
    save_arrays(path, run, CASE, True)
    assert "outputs.hidden" in np.load(path)
    link = tmp_path / "link.npz"
    link.symlink_to(tmp_path / "elsewhere.npz")
    with pytest.raises(UserError, match="symbolic link"):
        save_arrays(link, run, CASE, True)
    assert not (tmp_path / "elsewhere.npz").exists()


# The record, held still just before its first file reaches the disk: os.fsync (which the writer
# calls on the temporary once its bytes are written) sleeps instead, so SIGTERM arrives while the
# temporary exists, every time.
_HELD_RECORD = """
import os, sys, time
os.fsync = lambda fd: time.sleep(3600)
from workbench.cli import main
sys.exit(main(sys.argv[1:]))
"""


def test_sigterm_during_record_leaves_no_temporary(tmp_path) -> None:
    out = tmp_path / "fx"
    proc = subprocess.Popen(
        [sys.executable, "-c", _HELD_RECORD, "record", *KERNEL, "--out", str(out / "held")],
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        cwd=REPO,
        env=dict(os.environ, PYTHONPATH=str(REPO)),
    )
    try:
        deadline = time.monotonic() + PATIENCE_S
        while not (out.is_dir() and _temporaries(out)):
            assert proc.poll() is None, proc.stderr.read() if proc.stderr else ""
            assert time.monotonic() < deadline, "the record never began writing"
            time.sleep(0.05)
        proc.send_signal(signal.SIGTERM)
        proc.communicate(timeout=PATIENCE_S)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == -signal.SIGTERM
    assert not _temporaries(out), _temporaries(out)
    assert not list(out.glob("held.*"))
