"""The user's configuration file and the terminal UI's remembered state, with where each value came from.

Configuration (read, never written by the tool): `$WORKBENCH_CONFIG` when set, else
`$XDG_CONFIG_HOME/workbench/config.toml` (`~/.config/workbench/config.toml`):

    theme = "gruvbox"              # any Textual theme name
    adapter = "gpu"                # as --adapter: index, backend, gpu/cpu or a name part
    bench_ms = 100                 # time budget of the UI's bench (`b`), in ms
    warmup_ms = 1000               # warm-up before each of the UI's timings, in ms (default 1 s)
    editor = "nvim +{line} {file}" # `e`: {file} and {line} are filled in; default $VISUAL/$EDITOR
    fixtures = "~/fixtures"        # where `f` saves fixtures (default: the corpus's fixtures folder)

    [keys]                         # rebind any action by its binding id (help lists the ids)
    run = "ctrl+r"
    bench = "B,ctrl+b"

State (written atomically by the UI, read on start): `$XDG_STATE_HOME/workbench/state.toml`
(`~/.local/state/workbench/state.toml`), the workbench's own folder whatever `$WORKBENCH_CONFIG`
says (a `state.toml` of the user's beside their configuration is never touched): the last theme,
corpus and kernel. A value set in the configuration file wins over a remembered one.

Nothing here raises for a bad file: each bad value becomes one line naming the file and the key, the
default is used instead, and the caller shows the lines (the UI as a notice, `workbench config` on
stderr).
"""

from __future__ import annotations

import math
import os
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from workbench.errors import UserError
from workbench.safewrite import toml_text, write_text

DEFAULTS: dict[str, Any] = {
    "theme": "textual-dark",
    "adapter": "",
    "bench_ms": 100.0,
    # None: the engine's default warm-up (workbench.session.DEFAULT_WARMUP_MS, below this layer).
    "warmup_ms": None,
    "editor": "",
    "fixtures": "",
}
# What each key holds, for validation and for `workbench config`.
KINDS: dict[str, str] = {
    "theme": "a Textual theme name",
    "adapter": "an adapter selector (index, backend, gpu/cpu or a name part)",
    "bench_ms": "a number of milliseconds from 1 to 60,000",
    "warmup_ms": "a number of milliseconds from 0 to 60,000",
    "editor": "a command line with {file} and optionally {line}",
    "fixtures": "a folder for the fixtures saved from the UI",
}
REMEMBERED = ("theme", "corpus", "kernel")
DEFAULT = "default"


@dataclass
class Config:
    """Effective settings, the source of each (`default`, a file path, or `remembered in PATH`),
    the keymap (binding id -> keys), and the problems met while reading."""

    values: dict[str, Any] = field(default_factory=lambda: dict(DEFAULTS))
    sources: dict[str, str] = field(default_factory=lambda: dict.fromkeys(DEFAULTS, DEFAULT))
    keymap: dict[str, str] = field(default_factory=dict)
    remembered: dict[str, str] = field(default_factory=dict)
    config_path: Path = field(default_factory=lambda: config_path())
    state_path: Path = field(default_factory=lambda: state_path())
    problems: list[str] = field(default_factory=list)

    def __getitem__(self, key: str) -> Any:
        return self.values[key]

    def remember(self, **values: str | None) -> None:
        """Keep the theme, corpus or kernel for the next start (atomic write; failures are quiet
        problems, since remembering is a convenience); None forgets one."""
        for key, value in values.items():
            if key not in REMEMBERED:
                continue
            if value is None:
                self.remembered.pop(key, None)
            else:
                self.remembered[key] = value
        try:
            write_state(self.state_path, self.remembered)
        except UserError as exc:
            self.problems.append(f"could not remember settings: {exc}")


def config_path() -> Path:
    env = os.environ.get("WORKBENCH_CONFIG")
    if env:
        return Path(env)
    base = os.environ.get("XDG_CONFIG_HOME") or str(Path.home() / ".config")
    return Path(base) / "workbench" / "config.toml"


def state_path() -> Path:
    base = os.environ.get("XDG_STATE_HOME") or str(Path.home() / ".local" / "state")
    return Path(base) / "workbench" / "state.toml"


def load_config() -> Config:
    """The effective configuration: defaults, then remembered state, then the configuration file."""
    cfg = Config()
    state = _read_toml(cfg.state_path, cfg.problems)
    for key in REMEMBERED:
        value = state.get(key)
        if isinstance(value, str) and value:
            cfg.remembered[key] = value
    if "theme" in cfg.remembered:
        cfg.values["theme"] = cfg.remembered["theme"]
        cfg.sources["theme"] = f"remembered in {cfg.state_path}"
    data = _read_toml(cfg.config_path, cfg.problems)
    for key, value in data.items():
        where = f"{cfg.config_path}: {key}"
        if key == "keys":
            cfg.keymap = _keymap(value, f"{cfg.config_path}: [keys]", cfg.problems)
        elif key not in DEFAULTS:
            known = ", ".join([*DEFAULTS, "[keys]"])
            cfg.problems.append(f"{where}: unknown setting (known: {known})")
        else:
            checked = _checked(key, value)
            if checked is None:
                cfg.problems.append(f"{where}: {value!r} is not {KINDS[key]}; using the default")
            else:
                cfg.values[key] = checked
                cfg.sources[key] = str(cfg.config_path)
    return cfg


def write_state(path: Path, values: dict[str, str]) -> None:
    """Write the remembered values atomically (workbench.safewrite); UserError if it cannot."""
    text = toml_text(
        dict(sorted(values.items())), "remembered by workbench between runs; safe to delete"
    )
    write_text(path, text, overwrite=True)


def _read_toml(path: Path, problems: list[str]) -> dict[str, Any]:
    """A TOML file as a table; missing is empty; anything wrong is one problem line."""
    try:
        if not path.exists():
            return {}
        if not path.is_file():
            problems.append(f"{path}: not a regular file; using the defaults")
            return {}
        return tomllib.loads(path.read_text(encoding="utf-8"))
    except tomllib.TOMLDecodeError as exc:
        problems.append(f"{path}: not valid TOML ({exc}); using the defaults")
    except (OSError, UnicodeDecodeError) as exc:
        problems.append(f"{path}: cannot be read ({exc}); using the defaults")
    except RecursionError:
        problems.append(f"{path}: nested too deeply to read; using the defaults")
    return {}


def _checked(key: str, value: Any) -> Any:
    """The value if it is valid for `key`, else None."""
    if key in ("theme", "adapter", "fixtures"):
        return value if isinstance(value, str) and value.strip() else None
    if key == "editor":
        return value if isinstance(value, str) and "{file}" in value else None
    if key in ("bench_ms", "warmup_ms"):
        ok = isinstance(value, int | float) and not isinstance(value, bool)
        low = 1 if key == "bench_ms" else 0
        return float(value) if ok and math.isfinite(value) and low <= value <= 60_000 else None
    return None


def _keymap(table: Any, where: str, problems: list[str]) -> dict[str, str]:
    if not isinstance(table, dict):
        problems.append(f'{where}: must be a table of binding id = "keys"')
        return {}
    keymap = {}
    for binding_id, keys in table.items():
        if isinstance(keys, str) and keys.strip():
            keymap[binding_id] = ",".join(k.strip() for k in keys.split(",") if k.strip())
        else:
            problems.append(f'{where} {binding_id}: {keys!r} is not a key list such as "ctrl+r"')
    return keymap
