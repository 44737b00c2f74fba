"""The user's configuration file and the remembered state: sources, validation, atomic writes."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from workbench.config import DEFAULTS, load_config


@pytest.fixture
def conf(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    path = tmp_path / "config.toml"
    monkeypatch.setenv("WORKBENCH_CONFIG", str(path))
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    return path


def test_no_file_means_the_defaults(conf: Path) -> None:
    cfg = load_config()
    assert cfg.values == DEFAULTS and set(cfg.sources.values()) == {"default"}
    assert cfg.problems == [] and cfg.keymap == {}


def test_file_values_and_keymap_name_their_source(conf: Path) -> None:
    conf.write_text(
        'theme = "gruvbox"\nbench_ms = 250\n[keys]\nrun = "ctrl+r, R"\n', encoding="utf-8"
    )
    cfg = load_config()
    assert cfg["theme"] == "gruvbox" and cfg.sources["theme"] == str(conf)
    assert cfg["bench_ms"] == 250.0 and cfg.sources["editor"] == "default"
    assert cfg.keymap == {"run": "ctrl+r,R"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("bench_ms = -3\n", "bench_ms: -3 is not a number of milliseconds"),
        ("bench_ms = nan\n", "bench_ms: nan is not a number of milliseconds"),
        ('editor = "vim"\n', "editor: 'vim' is not a command line with {file}"),
        ("colour = 1\n", "colour: unknown setting"),
        ("[keys]\nrun = 3\n", "[keys] run: 3 is not a key list"),
        ("theme = [[[", "not valid TOML"),
        ("x = " + "[" * 600 + "]" * 600 + "\n", "config.toml"),
    ],
)
def test_a_bad_value_is_one_line_naming_file_and_key_and_the_default_stays(
    conf: Path, text: str, problem: str
) -> None:
    conf.write_text(text, encoding="utf-8")
    cfg = load_config()
    (line,) = cfg.problems
    assert line.startswith(str(conf)) and problem in line
    assert cfg["bench_ms"] == DEFAULTS["bench_ms"] and cfg["editor"] == DEFAULTS["editor"]


def test_remembered_state_round_trips_and_the_file_wins_for_theme(conf: Path) -> None:
    cfg = load_config()
    odd = 'odd "name" C:\\k\nünïcode ✓'
    cfg.remember(theme="nord", corpus="/work/k", kernel=odd)
    assert not list(conf.parent.rglob(".*.tmp")), "no temporary file is left behind"
    again = load_config()
    assert again.remembered == {"theme": "nord", "corpus": "/work/k", "kernel": odd}
    assert again["theme"] == "nord" and again.sources["theme"].startswith("remembered in")
    conf.write_text('theme = "gruvbox"\n', encoding="utf-8")
    assert load_config()["theme"] == "gruvbox"


def test_remembering_no_corpus_forgets_the_last_one(conf: Path) -> None:
    # The UI remembers the shipped kernels as no corpus, so a start opens its own install's.
    load_config().remember(corpus="/work/k", kernel="a.wgsl:a")
    load_config().remember(corpus=None, kernel="b.wgsl:b")
    assert load_config().remembered == {"kernel": "b.wgsl:b"}


def test_the_config_command_shows_sources_and_exits_2_on_a_problem(conf: Path) -> None:
    conf.write_text('theme = "gruvbox"\nbench_ms = 0\n', encoding="utf-8")
    proc = subprocess.run(
        [sys.executable, "-m", "workbench", "config", "--json"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2
    out = json.loads(proc.stdout)
    assert out["settings"]["theme"] == {"value": "gruvbox", "source": str(conf)}
    assert out["settings"]["bench_ms"] == {"value": 100.0, "source": "default"}
    assert (
        proc.stderr.strip()
        == f"workbench: {conf}: bench_ms: 0 is not a number of milliseconds from 1 to 60,000; using the default"
    )
