"""The command line as a scripting surface: `--version`, and with `--json` an error is a JSON object on
stdout (as well as the one line on stderr), so a script reading stdout always gets an object."""

from __future__ import annotations

import json

from workbench import __version__

from .conftest import run_cli


def test_version():
    proc = run_cli("--version")
    assert proc.returncode == 0
    assert proc.stdout.strip() == f"workbench {__version__}"


def test_a_json_command_that_fails_prints_an_error_object():
    proc = run_cli("run", "no_such_kernel", "--json")
    assert proc.returncode == 2
    err = json.loads(proc.stdout)
    assert err["exit"] == 2 and "no kernel named 'no_such_kernel'" in err["error"]
    assert proc.stderr.splitlines()[-1].startswith("workbench: no kernel named")


def test_without_json_an_error_is_only_the_line_on_stderr():
    proc = run_cli("run", "no_such_kernel")
    assert proc.returncode == 2 and proc.stdout == ""


def test_run_shows_uniform_values_not_the_kind_twice():
    proc = run_cli("run", "rope_q", "--dim", "seq=8", "--reps", "0")
    assert proc.returncode == 0, proc.stderr
    assert "uniform uniform" not in proc.stdout
    # dims = (seq, n_heads, head_dim, pos_offset) as the kernel reads it.
    assert "dims           uniform (8, 12, 64, 0)" in proc.stdout
