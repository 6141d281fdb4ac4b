"""BLIP probe heads (VQA and captioning) on tiny random models built offline: a random BLIP still answers
and generates; the answers are the model's own, captions are reproducible from the seed."""

from __future__ import annotations

import numpy as np
import pytest

from eatkit.registry import build_model
from eatkit.errors import EatkitError

torch = pytest.importorskip("torch")
transformers = pytest.importorskip("transformers")
pytest.importorskip("PIL.Image")

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


def test_vqa_answers_are_the_models_own_greedy_answers(blip_vqa, faces) -> None:
    vqa = build_model(f"hf-blip-vqa:{blip_vqa}", batch_size=2, max_new_tokens=4)
    answers = vqa.answer(faces, "is this an american ?")
    assert len(answers) == 5 and all(isinstance(a, str) for a in answers)
    model = transformers.BlipForQuestionAnswering.from_pretrained(blip_vqa).eval()
    tok = transformers.AutoTokenizer.from_pretrained(blip_vqa)
    pixels = torch.from_numpy(np.stack([vqa.preprocessing.array(p) for p in faces]))
    t = tok(["is this an american ?"] * 5, return_tensors="pt")
    with torch.no_grad():
        out = model.generate(pixel_values=pixels, input_ids=t.input_ids, attention_mask=t.attention_mask,
                             max_new_tokens=4)
    assert answers == [" ".join(s.split()) for s in tok.batch_decode(out, skip_special_tokens=True)]
    assert vqa.manifest()["decoding"] == {"strategy": "greedy", "max_new_tokens": 4}
    assert vqa.manifest()["weights"].startswith("config.json:")


def test_captions_are_seeded_and_sampled_from_the_nucleus(blip_caption, faces) -> None:
    cap = build_model(f"hf-blip-caption:{blip_caption}", batch_size=4, max_new_tokens=4)
    first = cap.caption(faces, top_p=0.9, seed=3)
    assert len(first) == 5 and first == cap.caption(faces, top_p=0.9, seed=3)
    assert cap.caption(faces, top_p=0.9, seed=4) != first
    with pytest.raises(EatkitError, match=r"top-p must be in \(0, 1\]"):
        cap.caption(faces, top_p=1.5, seed=0)


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


@pytest.mark.parametrize("parameterization", ["pixel", "fourier"])
def test_generation_starts_at_the_image_and_moves_toward_the_prompt(clip_model, faces, parameterization) -> None:
    from eatkit.encoders.generation import CLIPGuidedGenerator

    enc = build_model(f"hf-clip:{clip_model}", cache=False)
    gen = CLIPGuidedGenerator(enc, steps=8, every=4, lr=0.2, parameterization=parameterization, cutouts=0)
    frames = gen.run(faces[0], "an american person", seed=1)
    assert frames.shape == (3, 32, 32, 3) and frames.dtype == np.uint8 and gen.frame_steps() == [0, 4, 8]
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
