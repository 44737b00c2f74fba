"""The examples every `--help` page ends with: command lines that work as typed, on the shipped
kernels, from any folder (tests/engine/test_cli_help.py runs each page's lines in order in an
empty folder and checks their exit codes).

`attach` gives the top-level parser and each subcommand its examples and the formatter that shows
them line by line; a command without examples here fails at start-up, so none is forgotten.
"""

from __future__ import annotations

import argparse

HEADING = "examples:"

# A kernel file with a probe, for `probe`'s examples (no shipped kernel calls wb_probe).
_PROBE_KERNEL = (
    "printf '%s\\n' '@group(0) @binding(0) var<storage, read_write> y: array<f32>;' "
    "'@compute @workgroup_size(64) fn twice(@builtin(global_invocation_id) g: vec3<u32>) {' "
    "'  if g.x < arrayLength(&y) { y[g.x] = 2.0 * f32(g.x); wb_probe(1u, y[g.x]); }' '}' > twice.wgsl"
)

# Command (`""`: the top level) -> (command line, what it shows). A line without a comment is a
# setup step of the examples after it.
EXAMPLES: dict[str, tuple[tuple[str, str], ...]] = {
    "": (
        ("workbench list", "every shipped kernel and its status"),
        ("workbench run rope_q --dim seq=64", "one dispatch, compared with the float64 reference"),
        ("workbench check --all --quick", "every check on every kernel, at small sizes (as CI)"),
    ),
    "ui": (
        ("workbench", "the shipped kernels (or the corpus of the last session)"),
        ("workbench --adapter 0", "on the first adapter `workbench adapters` lists"),
        ("workbench ui --fixtures my_fixtures", "fixtures saved with f go to ./my_fixtures"),
    ),
    "adapters": (
        ("workbench adapters", "every adapter: features, limits, subgroup size; * the default"),
        ("workbench adapters --json", "the same, as one JSON object"),
        ("workbench adapters --roofline", "also measure memory bandwidth and FMA rate (seconds)"),
    ),
    "list": (
        ("workbench list", "every shipped kernel: file, workgroup size, bindings, status"),
        ("workbench list --json", "the same, as one JSON object"),
        ("workbench list --pipelines", "the shipped pipelines and their steps"),
    ),
    "run": (
        ("workbench run rope_q --dim seq=64", "one dispatch, compared with the float64 reference"),
        (
            "workbench run swiglu_combine --dim seq=4 --input gate=arange --input up=ones --reps 0",
            "your own inputs, no timing",
        ),
        ("workbench run gelu_inplace --dim seq=8 --seed 7 --json", "another seed, as JSON"),
    ),
    "step": (
        ("workbench step attention --to 2", "the first two dispatches of the attention chain"),
        ("workbench step swiglu --divergence", "also name the first step that leaves float64"),
        ("workbench step gelu --json", "every step as one JSON object"),
    ),
    "check": (
        ("workbench check rope_q --dim seq=64", "compare, evidence, gradients, specials, ..."),
        (
            "workbench check gelu_inplace --dim seq=4 --what compare,special --inject x=nan@5%",
            "NaN in 5% of x",
        ),
        ("workbench check --all --quick", "every kernel, at small sizes (as CI)"),
    ),
    "describe": (
        ("workbench describe rope_q", "a starting workbench.toml description"),
        ("workbench describe embed_lookup --json", "the TOML text and its table as JSON"),
    ),
    "bench": (
        ("workbench bench rope_q --dim seq=64 --ms 50", "50 ms of timing on the roofline"),
        (
            "workbench bench gelu_inplace swiglu_combine --dim seq=64 --ms 20 --json",
            "two kernels, as JSON",
        ),
    ),
    "record": (
        (
            "workbench record rope_q --dim seq=16 --out my_fixtures/rope_q_seq16 --note 'short sequence'",
            "writes .toml + .npz",
        ),
        (
            "workbench record gelu_inplace --dim seq=4 --input x=uniform:-150:150 "
            "--out my_fixtures/gelu_wide --checks compare,special --force",
            "replays the special-value check too",
        ),
    ),
    "replay": (
        ("workbench replay", "every shipped fixture"),
        ("workbench record rope_q --dim seq=16 --out my_fixtures/rope_q_seq16", ""),
        ("workbench replay my_fixtures --junit replay.xml", "your fixtures, with JUnit XML for CI"),
    ),
    "footprint": (
        ("workbench footprint rope_q --dim seq=64", "which workgroup wrote which element of Q"),
        (
            "workbench footprint gelu_inplace --dim seq=64 --max-workgroups 32",
            "a seeded sample of 32 workgroups",
        ),
        ("workbench footprint swiglu_combine --dim seq=8 --json", "as one JSON object"),
    ),
    "probe": (
        (_PROBE_KERNEL, ""),
        ("workbench probe twice --corpus twice.wgsl --dim n=128", "every wb_probe record"),
        (
            "workbench probe twice --corpus twice.wgsl --dim n=128 --invocation 1,5 --json",
            "one invocation's trace, as JSON",
        ),
    ),
    "debug": (
        (
            "workbench debug gelu_inplace --dim seq=2 --invocation 5,0,0",
            "every step of one invocation, with the GPU's values",
        ),
        (
            "workbench debug gelu_inplace --dim seq=2 --invocation 5,0,0 --compare 6,0,0 --json",
            "where two invocations part, as JSON",
        ),
    ),
    "config": (
        ("workbench config", "each setting and where it came from"),
        ("workbench config --json", "the same, as one JSON object"),
        ("WORKBENCH_CONFIG=./wb.toml workbench config", "another configuration file"),
    ),
}


def examples_text(command: str) -> str:
    """The examples of `command` (`""`: the top level), each under a comment saying what it shows,
    so the block can be pasted into a shell as it is."""
    lines = [HEADING]
    for line, why in EXAMPLES[command]:
        lines += [f"  # {why}", f"  {line}"] if why else [f"  {line}"]
    return "\n".join(lines)


class HelpFormatter(argparse.HelpFormatter):
    """argparse's own wrapping, except for the examples, shown line by line as they are typed."""

    def _fill_text(self, text: str, width: int, indent: str) -> str:
        if text.startswith(HEADING):
            return "\n".join(indent + line for line in text.splitlines())
        return super()._fill_text(text, width, indent)


def attach(parser: argparse.ArgumentParser, commands: dict[str, argparse.ArgumentParser]) -> None:
    """Give the top-level parser and every command its examples."""
    for name, p in {"": parser, **commands}.items():
        p.epilog = examples_text(name)
        p.formatter_class = HelpFormatter
