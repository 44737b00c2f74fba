"""`workbench config`: the effective configuration, and where each value came from."""

from __future__ import annotations

import argparse
import sys

from workbench.cli.common import print_json
from workbench.config import load_config
from workbench.session import DEFAULT_WARMUP_MS

# Settings left unset by the configuration module (which sits below the engine) whose default is
# the engine's: shown as the value in effect.
ENGINE_DEFAULTS = {"warmup_ms": DEFAULT_WARMUP_MS}


def register(sub: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    p = sub.add_parser(
        "config",
        help="show the effective configuration and where each value came from",
        description="Show the effective configuration (defaults, the configuration file, what the "
        "UI remembered) and the source of each value. Exit 2 when the file has a problem.",
    )
    p.add_argument("--json", action="store_true", help="print one JSON object")
    p.set_defaults(handler=cmd_config)


def cmd_config(args: argparse.Namespace) -> int:
    cfg = load_config()
    values = {k: ENGINE_DEFAULTS.get(k, v) if v is None else v for k, v in cfg.values.items()}
    if args.json:
        print_json(
            {
                "config_file": str(cfg.config_path),
                "config_file_exists": cfg.config_path.is_file(),
                "state_file": str(cfg.state_path),
                "settings": {k: {"value": v, "source": cfg.sources[k]} for k, v in values.items()},
                "keys": cfg.keymap,
                "remembered": cfg.remembered,
                "problems": cfg.problems,
            }
        )
    else:
        found = "" if cfg.config_path.is_file() else "  (not found: defaults in use)"
        print(f"configuration file  {cfg.config_path}{found}")
        print(f"state file          {cfg.state_path}")
        for key, value in values.items():
            shown = value if value not in ("", None) else "(automatic)"
            print(f"  {key:<9} {shown!s:<28} {cfg.sources[key]}")
        for binding_id, keys in cfg.keymap.items():
            print(f"  keys      {binding_id} = {keys:<18} {cfg.config_path}")
        for key, value in cfg.remembered.items():
            print(f"  last {key:<5} {value}")
    for problem in cfg.problems:
        print(f"workbench: {problem}", file=sys.stderr)
    return 2 if cfg.problems else 0
