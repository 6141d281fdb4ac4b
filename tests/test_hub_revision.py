"""Pinned hub revisions: --revision for hub models (hf:, open_clip:hf-hub:), the resolved commit in the manifest
and the cache key, and ``eatkit verify`` telling when a re-run would load another commit. The hub is a local
hub-layout cache folder (``models--org--name/refs/main``, ``snapshots/<commit>/...``) read offline."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import numpy as np
import pytest

from eatkit.cli import main
from eatkit.registry import build_model
from eatkit.stimuli.types import StimulusSet

from conftest import lazy_module
torch = lazy_module("torch")
transformers = lazy_module("transformers")
constants = lazy_module("huggingface_hub.constants")

OLD, NEW = "1" * 40, "2" * 40
VOCAB = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "rose", "ant", "good", "bad", "tulip", "bee", "nice", "ugly"]
SUITE = {"schema": "eatkit.suite/1", "id": "tiny", "title": "Tiny", "tests": [{
    "id": "t1", "title": "T1", **{r: {"name": r, "modality": "word", "items": w} for r, w in
                                  {"X": ["rose", "tulip"], "Y": ["ant", "bee"], "A": ["good", "nice"],
                                   "B": ["bad", "ugly"]}.items()}}]}


def _snapshot(hub: Path, repo: str, commit: str, save, main: bool = True) -> Path:
    folder = hub / f"models--{repo.replace('/', '--')}"
    save(folder / "snapshots" / commit)
    if main:
        (folder / "refs").mkdir(parents=True, exist_ok=True)
        (folder / "refs" / "main").write_text(commit)
    return folder


@pytest.fixture
def hub(tmp_path, monkeypatch) -> Path:
    """An offline hub cache with the tiny BERT ``eatkit-tests/tiny-bert`` whose main is commit OLD."""
    folder = tmp_path / "hub"
    monkeypatch.setenv("HF_HUB_CACHE", str(folder))
    monkeypatch.setenv("HF_HUB_OFFLINE", "1")
    monkeypatch.setattr(constants, "HF_HUB_CACHE", str(folder))

    def bert(seed: int):
        def save(path: Path) -> None:
            torch.manual_seed(seed)
            config = transformers.BertConfig(vocab_size=len(VOCAB), hidden_size=16, num_hidden_layers=1,
                                             num_attention_heads=2, intermediate_size=32, max_position_embeddings=32)
            transformers.BertModel(config).save_pretrained(path)
            transformers.BertTokenizerFast(vocab={w: i for i, w in enumerate(VOCAB)}).save_pretrained(path)
        return save

    _snapshot(folder, "eatkit-tests/tiny-bert", OLD, bert(0))
    _snapshot(folder, "eatkit-tests/tiny-bert", NEW, bert(1), main=False)
    return folder


def test_the_manifest_records_the_resolved_commit_and_verify_sees_main_move(hub, tmp_path, capsys):
    (tmp_path / "suite.json").write_text(json.dumps(SUITE))
    run = ["run", str(tmp_path / "suite.json"), "--model", "hf:eatkit-tests/tiny-bert", "--permutations", "99",
           "--n-bootstrap", "0", "-q"]
    assert main([*run, "--revision", "main", "-o", str(tmp_path / "a")]) == 0
    source = json.loads((tmp_path / "a" / "manifest.json").read_text())["source"]
    assert source["hub"] == {"repo": "eatkit-tests/tiny-bert", "revision": "main", "commit": OLD}
    assert source["weights"] == f"hf:eatkit-tests/tiny-bert@{OLD}"  # part of every cache key
    capsys.readouterr()
    assert main(["verify", str(tmp_path / "a")]) == 0
    assert capsys.readouterr().out.endswith("unchanged\n")
    (hub / "models--eatkit-tests--tiny-bert" / "refs" / "main").write_text(NEW)  # main moves on
    assert main(["verify", str(tmp_path / "a")]) == 1
    out = capsys.readouterr().out.splitlines()
    assert out[0] == (f"changed: model revision: the run loaded commit {OLD} of eatkit-tests/tiny-bert (revision "
                      f"'main'); a re-run would load {NEW} (pin it with --revision {OLD})")
    # pinned to the old commit, a re-run gives the same results; main now gives other weights
    assert main([*run, "--revision", OLD, "-o", str(tmp_path / "b")]) == 0
    assert main([*run, "-o", str(tmp_path / "c")]) == 0
    results = {k: json.loads((tmp_path / k / "results.json").read_text())[0]["effect_size"]
               for k in "abc"}
    assert results["a"] == results["b"] != results["c"]
    assert json.loads((tmp_path / "c" / "manifest.json").read_text())["source"]["hub"]["commit"] == NEW
    assert main(["verify", str(tmp_path / "b")]) == 0  # a commit resolves to itself
    shutil.rmtree(hub / "models--eatkit-tests--tiny-bert" / "refs")
    capsys.readouterr()
    assert main(["verify", str(tmp_path / "a")]) == 0
    assert capsys.readouterr().out.startswith("note: model revision: cannot tell which commit of eatkit-tests/tiny-bert")


def test_the_cache_key_tells_two_revisions_apart(hub):
    old = build_model("hf:eatkit-tests/tiny-bert", revision=OLD, cache=False)
    new = build_model("hf:eatkit-tests/tiny-bert", revision=NEW, cache=False)
    assert old.cache_config()["weights"] != new.cache_config()["weights"]
    words = StimulusSet("X", "word", ("rose", "ant"))
    assert not np.allclose(old.embed(words).vectors, new.embed(words).vectors)


TINY_OPEN_CLIP = {"embed_dim": 16,
                  "vision_cfg": {"image_size": 32, "layers": 1, "width": 32, "patch_size": 8, "head_width": 16},
                  "text_cfg": {"context_length": 77, "vocab_size": 49408, "width": 32, "heads": 2, "layers": 1}}


def test_open_clip_hub_models_take_a_revision_and_record_the_commit(hub):
    open_clip = pytest.importorskip("open_clip")
    safetensors = pytest.importorskip("safetensors.torch")
    nets = {}

    def clip(seed: int):
        def save(path: Path) -> None:
            torch.manual_seed(seed)
            nets[seed] = open_clip.CLIP(**TINY_OPEN_CLIP).eval()
            path.mkdir(parents=True)
            safetensors.save_file(nets[seed].state_dict(), path / "open_clip_model.safetensors")
            (path / "open_clip_config.json").write_text(json.dumps(
                {"model_cfg": TINY_OPEN_CLIP, "preprocess_cfg": {"mean": [0.5] * 3, "std": [0.25] * 3}}))
        return save

    _snapshot(hub, "eatkit-tests/tiny-clip", OLD, clip(0))
    _snapshot(hub, "eatkit-tests/tiny-clip", NEW, clip(1), main=False)
    words = StimulusSet("X", "word", ("rose", "ant"))
    tokens = open_clip.get_tokenizer("ViT-B-32")(["rose", "ant"])
    for revision, seed in ((None, 0), (NEW, 1)):
        enc = build_model("open_clip:hf-hub:eatkit-tests/tiny-clip", revision=revision, cache=False)
        commit = NEW if revision else OLD
        assert enc.manifest()["hub"] == {"repo": "eatkit-tests/tiny-clip", "revision": revision or "main",
                                         "commit": commit}
        assert enc.preprocessing.mean == (0.5,) * 3 and enc.preprocessing.size == 32
        with torch.no_grad():
            theirs = nets[seed].encode_text(tokens, normalize=True).numpy()
        np.testing.assert_allclose(enc.embed(words).vectors, theirs, atol=1e-6)


def test_revision_applies_to_hub_models_only(hub, tmp_path, capsys):
    (tmp_path / "suite.json").write_text(json.dumps(SUITE))
    code = main(["run", str(tmp_path / "suite.json"), "--model", "glove-6b-50d", "--revision", "main", "-q",
                 "-o", str(tmp_path / "o")])
    assert code == 2 and "does not take the option --revision" in capsys.readouterr().err
    code = main(["run", str(tmp_path / "suite.json"), "--model", "hf:eatkit-tests/tiny-bert", "--revision", "v9",
                 "-q", "-o", str(tmp_path / "o")])
    err = capsys.readouterr().err
    assert code == 2 and err.count("\n") == 1 and err.startswith("eatkit: error: ")
