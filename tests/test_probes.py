"""BLIP probe heads (VQA and captioning) on tiny random models built offline: a random BLIP still answers
and generates; the answers are the model's own, captions are reproducible from the seed."""

from __future__ import annotations

import numpy as np
import pytest

from eatkit.registry import build_model
from eatkit.errors import EatkitError

from conftest import lazy_module, require, shared_path  # noqa: E402

torch = lazy_module("torch")
transformers = lazy_module("transformers")
require("PIL.Image")

from test_cli import assert_one_line_error, run_cli  # noqa: E402
from tiny_vl import group_images, tiny_blip  # noqa: E402


@pytest.fixture(scope="module")
def blip_vqa(tmp_path_factory) -> str:
    return tiny_blip(tmp_path_factory.mktemp("blip-vqa"), "BlipForQuestionAnswering")


@pytest.fixture(scope="module")
def blip_caption(tmp_path_factory) -> str:
    return tiny_blip(tmp_path_factory.mktemp("blip-caption"), "BlipForConditionalGeneration")


@pytest.fixture(scope="module")
def faces(tmp_path_factory):
    root = group_images(tmp_path_factory.mktemp("faces"), {"a": 3, "b": 2})
    return sorted(str(p) for p in root.rglob("*.png"))


def test_vqa_answers_are_blips_beam_search_answers(blip_vqa, faces) -> None:
    """By default, BLIP's VQA inference as the authors ran it: 3 beams, max_length 10, min_length 1, 480 px
    (Pillow's bicubic resize, CLIP's mean and std), against transformers' generate on those inputs."""
    from PIL import Image

    vqa = build_model(f"hf-blip-vqa:{blip_vqa}", batch_size=2)
    answers = vqa.answer(faces, "is this an american ?")
    assert len(answers) == 5 and all(isinstance(a, str) for a in answers)
    model = transformers.BlipForQuestionAnswering.from_pretrained(blip_vqa).eval()
    tok = transformers.AutoTokenizer.from_pretrained(blip_vqa)
    mean, std = np.array([0.48145466, 0.4578275, 0.40821073]), np.array([0.26862954, 0.26130258, 0.27577711])
    pixels = []
    for path in faces:  # BLIP's transform: Image.open().convert("RGB"), Resize((480, 480), bicubic), Normalize
        image = Image.open(path).convert("RGB").resize((480, 480), Image.Resampling.BICUBIC)
        pixels.append(((np.asarray(image) / 255.0 - mean) / std).transpose(2, 0, 1))
    pixels = torch.from_numpy(np.stack(pixels).astype(np.float32))
    np.testing.assert_allclose(np.stack([vqa.preprocessing.array(p) for p in faces]), pixels.numpy(), atol=1e-5)
    t = tok(["is this an american ?"] * 5, return_tensors="pt")
    with torch.no_grad():
        out = model.generate(pixel_values=pixels, input_ids=t.input_ids, attention_mask=t.attention_mask,
                             num_beams=3, max_length=10, min_length=1, interpolate_pos_encoding=True)
    assert answers == [" ".join(s.split()) for s in tok.batch_decode(out, skip_special_tokens=True)]
    assert vqa.manifest()["decoding"] == {"strategy": "beam search", "num_beams": 3, "max_length": 10,
                                          "min_length": 1}
    assert vqa.manifest()["preprocessing"]["size"] == 480
    assert vqa.manifest()["weights"].startswith("config.json:")
    greedy = build_model(f"hf-blip-vqa:{blip_vqa}", num_beams=1, max_new_tokens=4, preprocess="model")
    assert greedy.manifest()["decoding"] == {"strategy": "greedy", "num_beams": 1, "max_new_tokens": 4,
                                             "min_length": 1}
    assert greedy.manifest()["preprocessing"]["size"] == 32  # the model's own preprocessor config


def test_captions_are_seeded_and_sampled_from_the_nucleus(blip_caption, faces) -> None:
    cap = build_model(f"hf-blip-caption:{blip_caption}", batch_size=4, max_new_tokens=4)
    first = cap.caption(faces, top_p=0.9, seed=3)
    assert len(first) == 5 and first == cap.caption(faces, top_p=0.9, seed=3)
    assert cap.caption(faces, top_p=0.9, seed=4) != first
    with pytest.raises(EatkitError, match=r"top-p must be in \(0, 1\]"):
        cap.caption(faces, top_p=1.5, seed=0)


def test_captions_decode_as_blip_sample_did(blip_caption, faces) -> None:
    """BLIP's ``generate(sample=True, top_p, max_length=20, min_length=5)``: prompt "a picture of " (its
    first token replaced by [DEC], the [SEP] dropped; removed from the caption by its length),
    repetition_penalty 1.1, top_k 50; the same draws as transformers' generate under the same seed."""
    cap = build_model(f"hf-blip-caption:{blip_caption}", batch_size=5, prompt="a photo of ")
    decoding = cap.manifest()["decoding"]
    assert {k: decoding[k] for k in ("prompt", "top_k", "repetition_penalty", "max_length", "min_length")} == {
        "prompt": "a photo of ", "top_k": 50, "repetition_penalty": 1.1, "max_length": 20, "min_length": 5}
    captions = cap.caption(faces, top_p=0.9, seed=3)
    model = transformers.BlipForConditionalGeneration.from_pretrained(blip_caption).eval()
    tok = transformers.AutoTokenizer.from_pretrained(blip_caption)
    pixels = torch.from_numpy(np.stack([cap.preprocessing.array(p) for p in faces]))
    t = tok(["a photo of "] * 5, return_tensors="pt")
    torch.manual_seed(int(np.random.SeedSequence([3, 900, 0]).generate_state(1)[0]))
    with torch.no_grad():
        out = model.generate(pixel_values=pixels, input_ids=t.input_ids, attention_mask=t.attention_mask,
                             do_sample=True, top_p=0.9, top_k=50, repetition_penalty=1.1, max_length=20, min_length=5,
                             interpolate_pos_encoding=True)
    texts = tok.batch_decode(out, skip_special_tokens=True)
    assert all(x.startswith("a photo of") for x in texts)
    assert captions == [" ".join(x[len("a photo of "):].split()) for x in texts]
    assert 5 <= out.shape[1] <= 20
    assert cap.manifest()["preprocessing"]["size"] == 384 and cap.manifest()["preprocessing"]["alpha"] == "drop"


def test_probe_heads_refuse_other_model_families(blip_vqa, tmp_path) -> None:
    from tiny_vl import tiny_clip

    clip = tiny_clip(tmp_path / "clip")
    with pytest.raises(EatkitError, match="model_type 'clip', not 'blip'"):
        build_model(f"hf-blip-caption:{clip}")._load()


# -- CLIP-guided generation --------------------------------------------------------------------------


@pytest.fixture(scope="module")
def clip_model(tmp_path_factory) -> str:
    from tiny_vl import tiny_clip

    return tiny_clip(tmp_path_factory.mktemp("clip"))


def test_generation_start_image_stretched_as_vqgan_clip(clip_model, tmp_path) -> None:
    """initial="stretch": the whole image resized to the square with Lanczos (VQGAN-CLIP's init image), not its
    centre square."""
    from PIL import Image

    from eatkit.encoders.generation import CLIPGuidedGenerator

    path = tmp_path / "wide.png"
    Image.fromarray(np.random.default_rng(0).integers(0, 256, (20, 48, 3), dtype=np.uint8)).save(path)
    gen = CLIPGuidedGenerator(build_model(f"hf-clip:{clip_model}", cache=False), steps=1, initial="stretch")
    expected = np.asarray(Image.open(path).convert("RGB").resize((32, 32), Image.Resampling.LANCZOS))
    np.testing.assert_array_equal(np.asarray(gen.initial.load(path)), expected)
    centre = CLIPGuidedGenerator(build_model(f"hf-clip:{clip_model}", cache=False), steps=1)
    assert not np.array_equal(np.asarray(centre.initial.load(path)), expected)
    assert "stretched" in gen.config()["initial_image"]


@pytest.mark.parametrize("parameterization", ["pixel", "fourier"])
def test_generation_starts_at_the_image_and_moves_toward_the_prompt(clip_model, faces, parameterization) -> None:
    from eatkit.encoders.generation import CLIPGuidedGenerator

    enc = build_model(f"hf-clip:{clip_model}", cache=False)
    gen = CLIPGuidedGenerator(enc, steps=4, every=2, lr=0.2, parameterization=parameterization, cutouts=0)
    frames = gen.run(faces[0], "an american person", seed=1)
    assert frames.shape == (3, 32, 32, 3) and frames.dtype == np.uint8 and gen.frame_steps() == [0, 2, 4]
    start = np.asarray(gen.initial.load(faces[0]))
    assert np.abs(frames[0].astype(int) - start).max() <= 1  # sigmoid(logit(x)) up to the 1e-3 clamp
    np.testing.assert_array_equal(frames, gen.run(faces[0], "an american person", seed=1))
    # the objective: the prompt's cosine with the last frame exceeds that with the first
    tokens = enc._tokenizer(["an american person"], return_tensors="pt")
    x = torch.from_numpy(np.stack([enc.preprocessing.normalize(f) for f in (frames[0], frames[-1])]))
    with torch.no_grad():
        out = enc._net(**tokens, pixel_values=x)
    cos = (out.image_embeds @ out.text_embeds.T).ravel()
    assert cos[1] > cos[0]


# -- the probes end to end (CLI and Python), on tiny models and real images ---------------------------------


from eatkit.analyses import record_from_json  # noqa: E402


def _records(out) -> list[dict]:
    import json

    return json.loads((out / "results.json").read_text())


@pytest.mark.slow
def test_ranking_probe_on_the_ieat_race_images(capsys, clip_model, tmp_path) -> None:
    from eatkit.stats.ranking import rank_shares

    race = shared_path("ieat", "images", "race")
    out = tmp_path / "ranking"
    code, stdout, err = run_cli(capsys, "probe", "ranking", "--model", f"hf-clip:{clip_model}", "--images", str(race),
                                "--groups", "african-american,european-american", "--column", "african-american=Black",
                                "--column", "european-american=White", "--repeats", "50", "--seed", "3", "-o",
                                str(out), "--report", "--no-cache")
    assert code == 0, err
    (record,) = _records(out)
    assert record["kind"] == "ranking" and record["k"] == 6 and record["group_size"] == 6
    assert record_from_json(record).to_json() == record  # typed round trip
    assert len(record["shares"]) == 51 and record["prompts"]["District of Columbia"].endswith("Washington, D.C.")
    assert record["reference_columns"] == {"african-american": "Black", "european-american": "White"}
    assert all(abs(sum(v.values()) - 1) < 1e-12 for v in record["shares"].values())
    # the saved similarities and the recorded seed give the recorded shares again
    sims = np.load(out / "similarities.npz")["ranking/similarities"]
    labels = ["african-american"] * 6 + ["european-american"] * 6
    again = rank_shares(sims, labels, repeats=50, rng=record["seed"])
    assert again.row(again.regions[4]) == pytest.approx(record["shares"]["California"], abs=1e-12)
    manifest = (out / "manifest.json").read_text()
    assert "african-american/" in manifest and '"sha256"' in manifest
    html = (out / "report.html").read_text()
    assert "Ranking probe" in html and "<svg" in html and "R²" in stdout


@pytest.mark.slow
def test_vqa_and_caption_probes_on_the_ieat_skin_tone_images(capsys, blip_vqa, blip_caption, tmp_path) -> None:
    from eatkit.stimuli.lexicon import load_lexicon

    skin = shared_path("ieat", "images", "skin-tone")
    code, _, err = run_cli(capsys, "probe", "vqa", "--model", f"hf-blip-vqa:{blip_vqa}", "--images", str(skin),
                           "--question", "is this an american ?", "--yes", "black", "--max-new-tokens", "3",
                           "--seed", "0", "-o", str(tmp_path / "vqa"), "--report")
    assert code == 0, err
    (vqa,) = _records(tmp_path / "vqa")
    assert vqa["n"] == {"dark": 7, "light": 7} and len(vqa["answers_by_image"]) == 14
    for g in ("dark", "light"):
        assert sum(vqa["answers"][g].values()) == 7
        assert vqa["rates"][g] == vqa["counts"][g] / 7 == vqa["answers"][g].get("black", 0) / 7
        assert vqa["intervals"][g][0] <= vqa["rates"][g] <= vqa["intervals"][g][1]
    code, _, err = run_cli(capsys, "probe", "caption", "--model", f"hf-blip-caption:{blip_caption}", "--images",
                           str(skin), "--top-p", "0.5,0.9", "--max-new-tokens", "4", "--seed", "1",
                           "-o", str(tmp_path / "cap"), "--report")
    assert code == 0, err
    records = _records(tmp_path / "cap")
    assert [record_from_json(r).to_json() for r in records] == records
    assert record_from_json(vqa).to_json() == vqa
    assert [r["top_p"] for r in records] == [0.5, 0.9] and all(r["seed"] == 1 for r in records)
    lexicon = load_lexicon()
    for r in records:
        for g in ("dark", "light"):
            captions = [c for img, c in r["captions_by_image"].items() if img.startswith(g + "/")]
            assert len(captions) == 7 and r["counts"][g] == sum(lexicon.match(c) is not None for c in captions)
    assert len((tmp_path / "cap" / "captions.csv").read_text().splitlines()) == 1 + 28
    assert "Captions that mention race" in (tmp_path / "cap" / "report.html").read_text()


def test_generation_probe_measures_region_brightness_per_group(clip_model, tmp_path) -> None:
    from eatkit.encoders.images import Preprocessing
    from eatkit.run.probes import run_probe

    root = group_images(tmp_path / "faces", {"dark": 2, "light": 2})
    run = run_probe("generation", build_model(f"hf-clip:{clip_model}", cache=False), root, seed=5,
                    params={"steps": 2, "every": 1, "cutouts": 1, "region": [0.25, 0.25, 0.5, 0.5]})
    (r,) = run.records
    assert r.steps == [0, 1, 2] and r.region_pixels == [8, 8, 16, 16] and r.n == {"dark": 2, "light": 2}
    start = Preprocessing(size=32, crop="center-square", interpolation="bicubic")
    first = np.mean([np.asarray(start.load(p), dtype=float)[8:24, 8:24].mean() for p in sorted((root / "dark").iterdir())])
    assert r.brightness_mean["dark"][0] == pytest.approx(first, abs=0.6)  # frame 0 = the image, up to rounding
    assert r.brightness_mean["light"][0] > r.brightness_mean["dark"][0] and r.change_percent["dark"][0] == 0.0
    assert run.similarities["generation"]["brightness-dark"].shape == (2, 3)
    cos = run.similarities["generation"]["similarity-light"]  # each frame's cosine with the prompt, per image
    assert cos.shape == (2, 3) and r.start == "images" and np.all(np.abs(cos) <= 1)
    np.testing.assert_allclose(r.similarity_mean["light"], cos.mean(axis=0), rtol=1e-12)
    # saved from Python, the run keeps every frame (written through the run folder, not the CLI)
    out = run.save(tmp_path / "gen")
    frames = sorted(p.relative_to(out / "frames").as_posix() for p in (out / "frames").rglob("*.png"))
    assert len(frames) == 4 * 3 and frames[0].startswith("dark/") and frames[0].endswith("-step0000.png")
    run.save(out)  # into the same folder again: the frames are replaced, not added to
    assert len(list((out / "frames").rglob("*.png"))) == 4 * 3


@pytest.mark.slow
def test_american_white_suite_on_a_tiny_clip_and_ieat_images(clip_model, tmp_path) -> None:
    from eatkit import run_suite
    from eatkit.stats import sc_eat

    ieat = shared_path("ieat", "images")
    for group, category in (("white", "race/european-american"), ("black", "race/african-american"),
                            ("asian", "asian/asian-american")):
        (tmp_path / group).symlink_to(ieat / category)
    enc = build_model(f"hf-clip:{clip_model}", images=tmp_path, cache=False)
    tests = ["we-they-black", "we-they-asian", "patriotism-black", "nativism-asian"]
    run = run_suite("american-white", enc, tests=tests, seed=0, sd="pooled", p_method="welch", ddof=0,
                    n_bootstrap=0)
    by_test = {r.test: r for r in run.records}
    assert by_test["we-they-black"].kind == "eat" and by_test["we-they-black"].n_x == 6
    nativism = by_test["nativism-asian"]
    # the suite's default: two-sided in every record (the study reports effects of both signs)
    assert (nativism.kind, nativism.alternative, nativism.sd, nativism.ddof) == ("sc-eat", "two-sided", "pooled", 0)
    assert {r.alternative for r in run.records} == {"two-sided"}
    from eatkit.stimuli.loader import load_suite

    test = load_suite("american-white").test("nativism-asian")
    T, A, B = (enc.embed(test.set(role)).vectors for role in ("T", "A", "B"))
    ref = sc_eat(T, A, B, sd="pooled", ddof=0, p_method="welch", alternative="two-sided")
    assert nativism.effect_size == pytest.approx(ref.effect_size, rel=1e-12)
    assert nativism.p_value == pytest.approx(ref.p_value, rel=1e-12)
    assert nativism.p_values == pytest.approx(ref.p_values, rel=1e-12)
    less = run_suite("american-white", enc, tests=["nativism-asian"], seed=0, sd="pooled", p_method="welch",
                     ddof=0, n_bootstrap=0, alternative="less")
    assert less.records[0].alternative == "less" and less.records[0].p_value == pytest.approx(ref.p_values["less"])


@pytest.mark.parametrize(("argv", "fragments"), [
    (["ranking", "--model", "glove-6b-50d"], ["not a vision-language model", "hf-clip:"]),
    (["vqa", "--model", "CLIP"], ["cannot run the vqa probe", "hf-blip-vqa:<name>"]),
    (["ranking", "--model", "CLIP", "--group-size", "9"], ["group 'a' has 3 images, fewer than the 9"]),
    (["ranking", "--model", "CLIP", "--prompt", "people of the state"], ["nor a template containing {region}"]),
    (["ranking", "--model", "CLIP", "--table", "IAT"], ["lacks 50 region(s) of the ranking", "has 1 region(s) not"]),
    (["caption", "--model", "CLIP", "--lexicon", "LEXICON"], ["invalid JSON at line 1"]),
    (["generate", "--model", "CLIP", "--region", "0.9,0.9,0.5,0.5"], ["region must be 4 fractions"]),
])
def test_probe_bad_input_is_one_line_and_exit_2(capsys, clip_model, tmp_path, argv, fragments) -> None:
    faces = group_images(tmp_path / "faces", {"a": 3, "b": 4})
    (tmp_path / "iat.csv").write_text("state,iat\nOhio,0.4\nAtlantis,0.1\n")
    (tmp_path / "lex.json").write_text("{descriptors: [asian")
    swap = {"CLIP": f"hf-clip:{clip_model}", "IAT": str(tmp_path / "iat.csv"), "LEXICON": str(tmp_path / "lex.json")}
    code, _, err = run_cli(capsys, "probe", *[swap.get(a, a) for a in argv], "--images", str(faces),
                           "-o", str(tmp_path / "out"), "-q")
    assert_one_line_error(code, err, *fragments)


# -- VQA answers that name a US state (the seed's Figure 4) ------------------------------------------------


class _ScriptedVQA:
    """A VQA model stand-in that gives scripted answers by image file name (the analysis, not a model, is tested)."""

    ANSWERS = {"00.png": " Ohio ", "01.png": "china", "02.png": "washington dc"}

    def answer(self, paths, question):
        from pathlib import Path

        return [self.ANSWERS.get(Path(p).name, "yes") if "state" in question else "yes" for p in paths]

    def manifest(self):
        return {"source": "scripted"}


def test_vqa_counts_answers_that_name_a_us_state(tmp_path) -> None:
    from eatkit.run.probes import run_probe

    images = group_images(tmp_path / "faces", {"asian": 2, "white": 3})  # asian: Ohio, china; white: + washington dc
    run = run_probe("vqa", _ScriptedVQA(), images, seed=0)
    ask, state = run.records
    assert ask.region_answers["counts"] == {"asian": 0, "white": 0} and ask.region_table == "us-states-2019"
    assert state.region_answers["counts"] == {"asian": 1, "white": 2}
    assert state.region_answers["rates"] == {"asian": 0.5, "white": pytest.approx(2 / 3)}
    assert state.answers["white"] == {"ohio": 1, "china": 1, "washington dc": 1}
    again = record_from_json(state.to_json())  # typed round trip
    assert (again.region_table, again.region_answers) == ("us-states-2019", state.region_answers)
    from eatkit.report import write_html_report

    out = run.save(tmp_path / "out")
    html = write_html_report([out], out / "report.html").read_text()
    assert html.count("Answers naming a region") == 1 and "region answers per group" in html  # the state question
    with pytest.raises(EatkitError, match="region table 'nowhere.csv' is neither"):
        run_probe("vqa", _ScriptedVQA(), images, seed=0, params={"regions": "nowhere.csv"})


def test_generation_preset_wolfe2022_and_options_beside_it() -> None:
    from eatkit.cli import build_parser
    from eatkit.cli.run import given_params
    from eatkit.run.probes import probe_params
    from eatkit.specs import GENERATION

    def params(*argv):
        args = build_parser().parse_args(["probe", "generate", "--model", "M", "--images", "x", *argv])
        return GENERATION.resolve(probe_params("generation", given_params(args, [args.kind])))

    study = params("--preset", "wolfe2022")
    assert (study["steps"], study["every"], study["size"], study["initial"]) == (200, 10, 592, "stretch")
    # the authors' crop of the 592 x 592 frame: (250, 175)-(300, 225), the same pixels the analysis measures
    assert [round(v * 592) for v in study["region"]] == [250, 175, 50, 50]
    assert params()["initial"] == "center-square"
    mine = params("--preset", "wolfe2022", "--steps", "3", "--region", "0.1,0.1,0.2,0.2")
    assert (mine["steps"], mine["size"], mine["region"], mine["preset"]) == (3, 592, [0.1, 0.1, 0.2, 0.2], "wolfe2022")
    assert (params()["steps"], params()["size"]) == (80, None)  # no preset: the defaults
    text = params("--text-only", "--preset", "wolfe2022")  # Figure 8: the study's steps and size, no face region
    assert (text["steps"], text["size"], text["region"]) == (200, 592, GENERATION.param("region").default)
    from eatkit.analyses.generation import preset

    with pytest.raises(EatkitError, match=r"unknown generation preset 'wolfe' \(known: wolfe2022\)"):
        preset("wolfe")
    with pytest.raises(EatkitError, match=r"preset must be one of wolfe2022, got 'wolfe'"):  # the spec checks first
        probe_params("generation", {"preset": "wolfe"})


def test_tile_map_has_one_tile_per_state_and_shades_the_shares() -> None:
    from types import SimpleNamespace

    from eatkit.report.probes import US_TILES, tile_map
    from eatkit.stimuli.regions import load_region_table

    states = load_region_table("us-states-2019").regions
    assert set(US_TILES) == set(states) and len(states) == 51
    assert len({(row, col) for _, row, col in US_TILES.values()}) == 51  # no two states share a tile
    assert len({code for code, _, _ in US_TILES.values()}) == 51
    shares = {s: {"a": i / 100, "b": 1 - i / 100} for i, s in enumerate(states)}
    fig = tile_map(SimpleNamespace(shares=shares, groups=["a", "b"], k=6))
    tiles = [p for p in fig.axes[0].patches]
    assert len(tiles) == 51 and tiles[0].get_facecolor() != tiles[-1].get_facecolor()
    assert tile_map(SimpleNamespace(shares={"x": {"a": 1.0}}, groups=["a"], k=1)) is None  # not the US states


def test_generation_from_the_text_alone_starts_at_seeded_noise(clip_model) -> None:
    from eatkit.encoders.generation import CLIPGuidedGenerator

    gen = CLIPGuidedGenerator(build_model(f"hf-clip:{clip_model}", cache=False), steps=3, every=3, lr=0.2, cutouts=0)
    frames = gen.run(None, "an american person", seed=5)
    noise = np.random.default_rng(5).integers(0, 256, (32, 32, 3))
    assert frames.shape == (2, 32, 32, 3) and np.abs(frames[0].astype(int) - noise).max() <= 1  # the 1e-3 clamp
    np.testing.assert_array_equal(frames, gen.run(None, "an american person", seed=5))
    assert not np.array_equal(frames[0], gen.run(None, "an american person", seed=6)[0])
    assert not np.array_equal(frames[0], frames[-1])  # the prompt moved it


# -- generation from the text alone (seed 003, appendix A.3, Figure 8) ----------------------------------------


@pytest.fixture(scope="module")
def open_clip_model(tmp_path_factory) -> str:
    pytest.importorskip("open_clip")
    from tiny_vl import tiny_open_clip

    return tiny_open_clip(tmp_path_factory.mktemp("open-clip-textgen"), "eatkit-textgen-tiny")


TEXT_ONLY = {"text_only": True, "starts": 2, "steps": 4, "every": 2, "cutouts": 0, "lr": 0.2}


def test_text_only_generation_starts_from_seeded_noise_and_records_cos_with_the_prompt(open_clip_model, tmp_path):
    import open_clip
    from PIL import Image

    from eatkit.run.probes import run_probe

    model = build_model(open_clip_model, cache=False)
    run = run_probe("generation", model, None, seed=7, params=TEXT_ONLY)
    (r,) = run.records
    assert (r.start, r.groups, r.n, r.steps) == ("noise", ["noise"], {"noise": 2}, [0, 2, 4])
    assert r.images == {"noise": ["seed-7", "seed-8"]} and r.generator["size"] == 32
    assert r.brightness_mean == {} and r.region == r.region_pixels == []  # no face region in noise
    out = run.save(tmp_path / "gen")
    frames = np.stack([np.stack([np.asarray(Image.open(out / f)) for f in r.frame_files("noise", s)])
                       for s in r.images["noise"]])  # (start, frame, 32, 32, 3)
    assert frames.shape == (2, 3, 32, 32, 3)
    for i, seed in enumerate((7, 8)):  # start i: uniform noise from seed + i (up to the 1e-3 clamp)
        assert np.abs(frames[i, 0].astype(int) - np.random.default_rng(seed).integers(0, 256, (32, 32, 3))).max() <= 1
    # the record's cosines, from open_clip directly: frame (32 px = the model's input) normalised, both towers
    net, tokenizer = model.towers()
    mean, std = (np.asarray(v, dtype=np.float32).reshape(1, 3, 1, 1) for v in (model.preprocessing.mean,
                                                                             model.preprocessing.std))
    x = (frames.reshape(-1, 32, 32, 3).transpose(0, 3, 1, 2).astype(np.float32) / 255 - mean) / std
    with torch.no_grad():
        image = net.encode_image(torch.from_numpy(x)).double().numpy()
        text = net.encode_text(open_clip.get_tokenizer("eatkit-textgen-tiny")(["an American person"])).double().numpy()
    cos = (image @ text.T).ravel() / np.linalg.norm(image, axis=1) / np.linalg.norm(text)
    cos = cos.reshape(2, 3)
    np.testing.assert_allclose(run.similarities["generation"]["similarity-noise"], cos, atol=1e-5)
    np.testing.assert_allclose(r.similarity_mean["noise"], cos.mean(axis=0), atol=1e-5)
    np.testing.assert_allclose(r.similarity_sd["noise"], cos.std(axis=0, ddof=1), atol=1e-5)
    assert r.similarity_mean["noise"][-1] > r.similarity_mean["noise"][0]  # the prompt pulled the noise toward it
    # reproducible from the seed: the same frames and numbers again; another seed, other frames
    again = run_probe("generation", model, None, seed=7, params=TEXT_ONLY)
    assert again.records[0].to_json() == r.to_json()
    np.testing.assert_array_equal(again.outcomes[0].result["frames"]["noise"][1], frames[1])
    other = run_probe("generation", model, None, seed=9, params=TEXT_ONLY)
    assert not np.array_equal(other.outcomes[0].result["frames"]["noise"][0], frames[0])


def test_text_only_generation_from_the_command_line(capsys, open_clip_model, tmp_path) -> None:
    import json

    out = tmp_path / "textgen"
    code, stdout, err = run_cli(capsys, "probe", "generate", "--model", open_clip_model, "--text-only", "--prompt",
                                "an American person", "--seed", "0", "--steps", "2", "--every", "1", "--cutouts",
                                "0", "--starts", "3", "-o", str(out), "--report")
    assert code == 0, err
    assert "noise (3 starts)" in stdout
    assert len(list((out / "frames" / "noise").glob("seed-*-step*.png"))) == 3 * 3
    manifest = json.loads((out / "manifest.json").read_text())
    stats = manifest["statistics"]
    assert (stats["seed"], stats["params"]["text_only"], stats["params"]["starts"], stats["params"]["steps"],
            stats["params"]["prompt"], stats["generator"]["size"]) == (0, True, 3, 2, "an American person", 32)
    assert manifest["suite"]["file"] == "no images" and manifest["stimuli"] == {"generation": {}}
    (record,) = _records(out)
    assert record["start"] == "noise" and len(record["similarity_mean"]["noise"]) == 3
    html = (out / "report.html").read_text()
    assert "Frames from noise toward" in html and html.count('class="thumb"') == 3 * 3


def test_verify_reproduces_a_fresh_retrieval_probe_run(capsys, clip_model, tmp_path) -> None:
    # issue 45: "the run's manifest names no image folder" though the probe read --images
    images = group_images(tmp_path / "faces", {"a": 3, "b": 3})
    out = tmp_path / "retrieval"
    code, _, err = run_cli(capsys, "probe", "retrieval", "--model", f"hf-clip:{clip_model}", "--images", str(images),
                           "--concepts", "doctor,nurse", "--permutations", "200", "--bootstrap", "0", "-q", "-o",
                           str(out), "--no-cache")
    assert code == 0, err
    code, stdout, err = run_cli(capsys, "verify", str(out))
    assert code == 0 and "6 image files" in stdout, (stdout, err)
    (next((images / "a").iterdir())).write_bytes(b"changed")
    code, stdout, err = run_cli(capsys, "verify", str(out))
    assert code == 1 and "changed" in stdout, (stdout, err)


def test_an_image_far_smaller_than_the_models_input_is_printed_once_and_recorded(capsys, clip_model, tmp_path) -> None:
    # issue 45: an image far smaller than the model's input (1 x 1) was upscaled silently
    import json

    from PIL import Image

    images = group_images(tmp_path / "faces", {"a": 3, "b": 3})
    Image.new("RGB", (1, 1), (200, 10, 10)).save(images / "a" / "tiny.png")
    out = tmp_path / "retrieval"
    code, _, err = run_cli(capsys, "probe", "retrieval", "--model", f"hf-clip:{clip_model}", "--images", str(images),
                           "--concepts", "doctor,nurse", "--permutations", "200", "--bootstrap", "0", "-q", "-o",
                           str(out), "--no-cache")
    assert code == 0, err
    warned = [line for line in err.splitlines() if "tiny.png 1 x 1" in line]
    assert len(warned) == 1 and warned[0].startswith("eatkit: warning: image set 'a': 1 image(s) far smaller"), err
    manifest = json.loads((out / "manifest.json").read_text())
    (record,) = _records(out)
    assert [w for w in manifest["statistics"]["warnings"] if "tiny.png" in w] == [warned[0][len("eatkit: warning: "):]]
    assert warned[0][len("eatkit: warning: "):] in record["warnings"]


def test_eatkit_run_prints_a_tiny_images_warning_once_and_records_it(capsys, clip_model, tmp_path) -> None:
    import json

    from PIL import Image

    images = group_images(tmp_path / "imgs", {"x": 3, "y": 3, "a": 3, "b": 3})
    Image.new("RGB", (1, 1), (200, 10, 10)).save(images / "x" / "tiny.png")
    suite = {"schema": "eatkit.suite/1", "id": "tiny", "title": "tiny", "tests": [
        {"id": t, "title": t, **{r: {"name": r, "modality": "image", "category": r.lower()} for r in "XYAB"}}
        for t in ("t1", "t2")]}  # two tests share the set: one line all the same
    (tmp_path / "suite.json").write_text(json.dumps(suite))
    code, stdout, err = run_cli(capsys, "run", str(tmp_path / "suite.json"), "--model", f"hf-clip:{clip_model}",
                                "--images", str(images), "--bootstrap", "0", "-q", "-o", str(tmp_path / "out"),
                                "--no-cache")
    assert code == 0, err
    printed = [line for line in (stdout + err).splitlines() if "tiny.png 1 x 1" in line]
    assert len(printed) == 1, (stdout, err)
    assert printed[0].startswith("eatkit: warning: image set 'X': 1 image(s) far smaller than the model's ")
    assert " input (tiny.png 1 x 1): upscaled " in printed[0]
    records = json.loads((tmp_path / "out" / "results.json").read_text())
    assert all(printed[0][len("eatkit: warning: "):] in r["warnings"] for r in records) and len(records) == 2
