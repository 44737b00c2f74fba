"""The Steps view's choices and dims without Textual: the open folder's pipeline files before the
shipped ones, and the dims dialog's text read as dims (hex too) or refused in one line."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.pipelines.user_corpus import user_corpus
from workbench.errors import UserError
from workbench.pipelines import shipped_names
from workbench.viewmodel.steps import dims_text, parse_dims, pipeline_choices


def test_the_folder_pipelines_come_first(tmp_path: Path) -> None:
    root = user_corpus(tmp_path / "mine")
    choices = pipeline_choices(root)
    assert choices[0].label == "pipelines/chain.toml"
    assert choices[0].target == str(root / "pipelines/chain.toml")
    assert (
        [c.label for c in choices[1:]]
        == shipped_names()
        == [c.label for c in pipeline_choices(None)]
    )


def test_dims_read_from_the_dialog_text() -> None:
    known = ["seq", "n_heads"]
    assert parse_dims(dims_text({"seq": 64, "n_heads": 4}), known) == {"seq": 64, "n_heads": 4}
    assert parse_dims("seq=0x80, n_heads=1_024", known) == {"seq": 128, "n_heads": 1024}
    assert parse_dims("", known) == {}
    for text, says in (
        ("seq", "write NAME=VALUE"),
        ("heads=4", "no dim 'heads'; this pipeline's dims: seq, n_heads"),
        ("seq=4.5", "seq=4.5: not a whole number"),
        ("seq=0xZZ", "not a whole number"),
    ):
        with pytest.raises(UserError, match=says):
            parse_dims(text, known)
