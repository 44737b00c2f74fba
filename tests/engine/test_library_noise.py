"""wgpu-native's log lines never reach the terminal raw: they are kept for the tool to word."""

from __future__ import annotations

import logging

from workbench.gpu.adapters import LIBRARY_LOG, list_adapters

from .conftest import run_cli


def test_library_log_lines_are_kept_not_printed(capsys):
    list_adapters()
    message = 'indirect-validation error: ComputePipeline(Internal("not supported"))'
    logging.getLogger("wgpu").error(message)
    captured = capsys.readouterr()
    assert message not in captured.err and message not in captured.out
    assert LIBRARY_LOG[-1] == message


def test_adapters_and_list_print_only_the_tools_own_lines():
    for args in (("adapters",), ("list",), ("run", "gelu_inplace", "--dim", "seq=4")):
        proc = run_cli(*args)
        assert proc.returncode == 0, proc.stderr
        # Only the tool's own lines (e.g. the one saying it runs on a CPU adapter).
        assert all(ln.startswith("workbench: ") for ln in proc.stderr.splitlines()), proc.stderr
