"""Docs that run: every ``eatkit ...`` command line of README.md and docs/*.md, executed on tiny offline
stand-ins.

:func:`documented_commands` extracts each command (fenced ``bash`` or unlabelled blocks; ``\\``
continuations joined; comments dropped; the ``eatkit`` part of ``a && eatkit ...`` lines). :data:`CASES`
says, per command, how it runs offline: which names and paths are replaced by tiny stand-ins (a model
built from a config and saved to a folder, generated images, fake data folders) and which options are
added to keep it small. A documented command without a case fails :func:`test_every_documented_command_has_a_case`,
so no example can be added untested; a case whose command left the docs fails it too.

Every command runs in-process (``eatkit.cli.main``) in one working folder per module, whose ``~`` is a
fake home, in document order; a command that reads what another wrote names it in ``after``.
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import re
import shlex
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pytest

from eatkit.cli import main
from eatkit.stimuli.datasets import load_manifest as REAL_MANIFEST

from conftest import lazy_module, require
torch = lazy_module("torch")
transformers = lazy_module("transformers")
require("open_clip")
require("timm")
Image = lazy_module("PIL.Image")

ROOT = Path(__file__).resolve().parents[1]
DOCS = (ROOT / "README.md", *sorted((ROOT / "docs").glob("*.md")))
FENCE = re.compile(r"^```(\w*)\s*$")


def documented_commands(path: Path) -> list[str]:
    """The ``eatkit`` command lines of one Markdown file, each normalised to its words joined by a space (quoted where needed)."""
    commands, lines, language = [], [], None
    for line in path.read_text(encoding="utf-8").splitlines():
        fence = FENCE.match(line.strip())
        if fence:
            language = None if language is not None else fence.group(1)
            continue
        if language not in ("bash", ""):
            continue
        lines.append(line.rstrip())
        if line.rstrip().endswith("\\"):
            lines[-1] = lines[-1][:-1]
            continue
        joined, lines = " ".join(lines), []
        for part in joined.split("&&"):
            if part.split()[:1] == ["eatkit"]:  # output shown in unlabelled blocks is not a command
                commands.append(" ".join(_quoted(w) for w in shlex.split(part, comments=True)))
    return commands


def _quoted(word: str) -> str:
    """A word as a shell reads it back, quoted only where it must be (``~`` is left to expand)."""
    return word if word and not re.search(r"[\s'\"$;&|<>()*?]", word) else shlex.quote(word)


# -- the stand-ins ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    """How one documented command runs offline: ``subs`` replaces its words (a key ending in ``/`` also
    the start of a word: a folder; values may name the stand-ins of :class:`Workspace` as ``{name}``), ``extra`` words are appended, ``after`` commands
    run first, ``builds`` names stand-ins to make before it runs, ``fresh`` paths are removed before it runs (the
    output of another documented command with the same output folder), ``files`` must exist afterwards (relative to the working folder), ``stdout`` must be printed, each (file, text) of ``contains`` must hold."""

    subs: dict[str, str] = field(default_factory=dict)
    extra: tuple[str, ...] = ()
    after: tuple[str, ...] = ()
    builds: tuple[str, ...] = ()
    fresh: tuple[str, ...] = ()
    files: tuple[str, ...] = ()
    stdout: str = ""
    contains: tuple[tuple[str, str], ...] = ()  # (file, text it must contain)
    slow: bool = False
    ray: bool = False
    covered_by: str = ""  # a test module that runs this page's commands itself (not run again here)


CLIP = {"hf-clip:openai/clip-vit-base-patch32": "hf-clip:{clip}"}
FACES = {"faces/": "{faces}", "~/data/cfd-groups": "{faces}"}
GET_IEAT = "eatkit data get ieat"
RUN_EFFNET = "eatkit run ieat --model efficientnet_lite0 --images ~/.local/share/eatkit/ieat -o results/effnet"
RUN_IGPT = "eatkit run ieat --embeddings ieat/embeddings --embeddings-model igpt_l_32 -o results/igpt"
COCO_SET = ("eatkit analysis-set coco --instances instances_val2017.json --captions captions_val2017.json "
            "--images val2017 --objects car,refrigerator,surfboard --per-class 50 -o coco-set")
FINETUNE = ("eatkit finetune --model efficientnet_lite0 --instances instances_train2017.json --images train2017 "
            "-o ft.safetensors")
GENDER_SET = "eatkit analysis-set folders --images ieat/images/gender -o gender-suite.json"
EPOCHS_1 = {"15": "1"}  # the one word "15" of that command: --epochs 15 -> 1
SMALL_GROUNDED_COCO = ("--tests", "occ_gender")  # 1 of 6 tests: 234 pairs instead of 5459
GENERATE_SMALL = ("--max-images", "1", "--cutouts", "0")  # and 4 steps, a frame every 2 (the words 80, 10)
RESULTS = ("results.json", "manifest.json")
T2I = {"diffusers:stabilityai/stable-diffusion-2-1-base": "diffusers:{t2i_pipe}",
       "hf-clip:openai/clip-vit-large-patch14": "hf-clip:{clip}", "hf-clip:openai/clip-vit-base-patch32": "hf-clip:{clip}"}
T2I_SMALL = ("--generation", "size=16", "--bootstrap", "100")  # 16 x 16 images

#: the example files shipped under docs/examples/ (docs/meta-analysis.md), run from there
EXAMPLES = {"docs/examples/": f"{ROOT / 'docs' / 'examples'}/"}

CASES: dict[str, Case] = {
    # README.md
    "eatkit run weat --model glove-6b-50d --oov drop": Case(
        files=tuple(f"eatkit-results/{f}" for f in RESULTS), stdout="weat1"),
    "eatkit list suites": Case(stdout="american-white"),
    "eatkit list tests ieat": Case(stdout="weapon"),
    "eatkit list models": Case(stdout="efficientnet_lite0"),
    "eatkit list kinds": Case(stdout="direct-bias"),
    "eatkit run weat --vectors glove.840B.300d.txt --tests weat6 --metrics all --seed 0 -o weat6-metrics": Case(
        subs={"glove.840B.300d.txt": "{glove840}"}, files=("weat6-metrics/results.json",), stdout="rnsb"),
    "eatkit debias --vectors glove.840B.300d.txt --method hard --metrics rnd,direct-bias --seed 0 -o glove-hard":
        Case(subs={"glove.840B.300d.txt": "{glove840}"}, files=("glove-hard/manifest.json",)),
    "eatkit probe retrieval --model hf-clip:openai/clip-vit-base-patch32 --images fairface/gender --concepts "
    "doctor,nurse,CEO -o retrieval-gender": Case(subs={**CLIP, "fairface/gender": "{faces}"},
                                                 files=("retrieval-gender/results.json",)),
    "eatkit run weat --vectors glove.840B.300d.txt --seed 1 -o results/weat": Case(
        subs={"glove.840B.300d.txt": "{glove840}"}, files=("results/weat/results.json",)),
    RUN_IGPT: Case(subs={"ieat/embeddings": "{ieat_embeddings}"}, files=("results/igpt/results.json",)),
    GET_IEAT: Case(stdout="ieat: 90 of 90 files verified in"),
    RUN_EFFNET: Case(after=(GET_IEAT,), files=("results/effnet/results.json",), slow=True),
    "eatkit run seat --model all-minilm-l6-v2": Case(extra=("--tests", "sent-weat9"), stdout="sent-weat9"),
    "eatkit run grounded-coco --model hf-vilt:dandelin/vilt-b32-mlm --images ~/coco/val2014 --experiment all "
    "--embedding all": Case(subs={"hf-vilt:dandelin/vilt-b32-mlm": "hf-vilt:{vilt}", "~/coco/val2014": "{coco_val2014}"},
                            extra=SMALL_GROUNDED_COCO, stdout="experiment 3", slow=True),
    "eatkit report results/igpt results/effnet --html report.html": Case(after=(RUN_IGPT, RUN_EFFNET),
                                                                          files=("report.html",), slow=True),
    COCO_SET: Case(builds=("coco",), fresh=("coco-set",), files=("coco-set/suite.json",)),
    FINETUNE: Case(builds=("coco",), extra=("--epochs", "1"), files=("ft.safetensors",),
                   slow=True),
    "eatkit run coco-set/suite.json --images coco-set/images --model efficientnet_lite0 --compare-model "
    "efficientnet_lite0@ft.safetensors --report": Case(after=(COCO_SET, FINETUNE),
                                                       files=("eatkit-results/report.html",), slow=True),
    "eatkit run american-white --model hf-clip:openai/clip-vit-base-patch32 --images faces/ --sd pooled "
    "--p-method welch": Case(subs={**CLIP, **FACES}, stdout="patriotism"),
    "eatkit probe ranking --model hf-clip:openai/clip-vit-base-patch32 --images faces/ --seed 0 --report": Case(
        subs={**CLIP, **FACES}, files=("eatkit-results/report.html",)),
    "eatkit probe vqa --model hf-blip-vqa:Salesforce/blip-vqa-base --images faces/": Case(
        subs={"hf-blip-vqa:Salesforce/blip-vqa-base": "hf-blip-vqa:{blip_vqa}", **FACES}, files=("eatkit-results/results.json",)),
    "eatkit probe caption --model hf-blip-caption:Salesforce/blip-image-captioning-base --images faces/ --seed 0":
        Case(subs={"hf-blip-caption:Salesforce/blip-image-captioning-base": "hf-blip-caption:{blip_caption}", **FACES},
             files=("eatkit-results/captions.csv",)),
    "eatkit probe generate --model open_clip:ViT-B-32/openai --images faces/ --steps 80 --every 10": Case(
        subs={"open_clip:ViT-B-32/openai": "open_clip:{open_clip}", "80": "4", "10": "2", **FACES},
        extra=GENERATE_SMALL,
        files=("eatkit-results/frames",)),
    "eatkit run mleat-histwords --series histwords/sgns/ -o results/histwords --report": Case(
        subs={"histwords/sgns/": "{histwords}"}, files=("results/histwords/report.html",)),
    "eatkit run mleat-clip --model open_clip:ViT-L-14-336/openai --images ~/.local/share/eatkit/ieat "
    "--compare-prompts '' 'a picture that brings to mind {x}' -o results/clip-prompts": Case(
        subs={"open_clip:ViT-L-14-336/openai": "open_clip:{open_clip}"}, after=(GET_IEAT,),
        files=("results/clip-prompts/series.json",)),
    "eatkit run weat --model gpt2-mleat:gpt2 --postprocess center -o results/gpt2-centred": Case(
        subs={"gpt2-mleat:gpt2": "gpt2-mleat:{gpt2}"}, files=("results/gpt2-centred/results.json",)),
    "eatkit verify results/effnet": Case(after=(RUN_EFFNET,), slow=True),
    "eatkit verify results/igpt": Case(after=(RUN_IGPT,), stdout="image names recorded from the embedding files, "
                                                              "45 embedding files), unchanged"),
    "eatkit sweep sweep.toml --executor ray --address auto": Case(builds=("sweep",), ray=True,
                                                                  slow=True),
    # docs/studies.md (the commands not also in README.md or another page)
    "eatkit run ieat --embeddings ieat/embeddings --embeddings-model simclr_152_3x_sk1 -o results/simclr": Case(
        subs={"ieat/embeddings": "{ieat_embeddings}"}, files=("results/simclr/results.json",)),
    "eatkit run ieat-intersectional --embeddings ieat/embeddings --embeddings-model igpt_l_32 -o results/igpt-x": Case(
        subs={"ieat/embeddings": "{ieat_embeddings}"}, files=("results/igpt-x/results.json",)),
    "eatkit run ieat --embeddings ieat/embeddings --embeddings-model igpt-logit_l_32 -o results/igpt-logit": Case(
        subs={"ieat/embeddings": "{ieat_embeddings}"}, files=("results/igpt-logit/results.json",)),
    "eatkit run grounded-google --model hf-lxmert:unc-nlp/lxmert-base-uncased --images ~/grounded-google --regions "
    "~/grounded-google-regions --experiment all --embedding all -o results/lxmert-google": Case(
        subs={"hf-lxmert:unc-nlp/lxmert-base-uncased": "hf-lxmert:{lxmert}",
              "~/grounded-google-regions": "{google_regions}", "~/grounded-google": "{google_images}"},
        extra=("--tests", "sent-weat8"), files=("results/lxmert-google/results.json",), slow=True),
    "eatkit run grounded-google --model hf-visualbert:uclanlp/visualbert-vqa-coco-pre --images ~/grounded-google "
    "--regions ~/grounded-google-regions --experiment all --embedding all -o results/visualbert-google": Case(
        subs={"hf-visualbert:uclanlp/visualbert-vqa-coco-pre": "hf-visualbert:{visualbert}",
              "~/grounded-google-regions": "{google_regions}", "~/grounded-google": "{google_images}"},
        extra=("--tests", "sent-weat8"), files=("results/visualbert-google/results.json",), slow=True),
    "eatkit report results/lxmert-google results/visualbert-google --html results/grounded-google.html": Case(
        after=("eatkit run grounded-google --model hf-lxmert:unc-nlp/lxmert-base-uncased --images ~/grounded-google "
               "--regions ~/grounded-google-regions --experiment all --embedding all -o results/lxmert-google",
               "eatkit run grounded-google --model hf-visualbert:uclanlp/visualbert-vqa-coco-pre --images "
               "~/grounded-google --regions ~/grounded-google-regions --experiment all --embedding all -o "
               "results/visualbert-google"),
        contains=(("results/grounded-google.html", "Significant gender bias tests"),), slow=True),
    "eatkit report results/weat --html results/weat-eatmaps.html": Case(
        after=("eatkit run weat --vectors glove.840B.300d.txt --seed 1 -o results/weat",),
        files=("results/weat-eatmaps.html",)),
    "eatkit run mleat-gpt2 --model gpt2-mleat:gpt2 -o results/gpt2": Case(
        subs={"gpt2-mleat:gpt2": "gpt2-mleat:{gpt2}"}, files=("results/gpt2/results.json",)),
    "eatkit run weat --vectors GoogleNews-vectors-negative300.bin --alternative two-sided -o results/word2vec": Case(
        subs={"GoogleNews-vectors-negative300.bin": "{word2vec}"}, files=("results/word2vec/results.json",)),
    "eatkit run weat --vectors glove.840B.300d.txt --alternative two-sided --seed 1 -o results/weat": Case(
        subs={"glove.840B.300d.txt": "{glove840}"}, files=("results/weat/results.json",)),
    "eatkit run mleat-clip --model open_clip:ViT-B-32/openai --images ~/.local/share/eatkit/ieat -o results/clip-b32":
        Case(subs={"open_clip:ViT-B-32/openai": "open_clip:{open_clip}"}, after=(GET_IEAT,),
             files=("results/clip-b32/results.json",)),
    # docs/datasets.md
    "eatkit data list": Case(stdout="glove-6b"),
    "eatkit data get seat": Case(stdout="seat: 46 of 46 files verified"),
    "eatkit data get glove-6b --allow-unverified": Case(
        stdout="glove.6B.zip: sha256", files=("home/.local/share/eatkit/glove-6b/glove.6B.50d.txt",)),
    "eatkit data get ieat --dest ~/ieat": Case(stdout="verified in"),
    "eatkit run ieat --model efficientnet_lite0 --images ~/ieat": Case(after=("eatkit data get ieat --dest ~/ieat",),
                                                                     slow=True),
    "eatkit run grounded-coco --model hf-vilt:dandelin/vilt-b32-mlm --images ~/coco/val2014 --seed 0": Case(
        subs={"hf-vilt:dandelin/vilt-b32-mlm": "hf-vilt:{vilt}", "~/coco/val2014": "{coco_val2014}"}, extra=SMALL_GROUNDED_COCO,
        slow=True),
    "eatkit run grounded-google --model hf-lxmert:unc-nlp/lxmert-base-uncased --images ~/grounded-google --regions "
    "~/grounded-google-regions --experiment 2 --embedding sentence --mask vision": Case(
        subs={"hf-lxmert:unc-nlp/lxmert-base-uncased": "hf-lxmert:{lxmert}", "~/grounded-google-regions": "{google_regions}",
              "~/grounded-google": "{google_images}"}, extra=("--tests", "sent-weat8"), slow=True),
    # docs/geometry.md
    "eatkit analysis-set coco --instances annotations/instances_val2017.json --captions "
    "annotations/captions_val2017.json --images val2017 --objects car,refrigerator,surfboard --per-class 50 "
    "--seed 0 -o coco-set": Case(builds=("coco",), fresh=("coco-set",),
                                 files=("coco-set/suite.json",)),
    "eatkit analysis-set folders --images /path/to/classes -o classes.json": Case(
        subs={"/path/to/classes": "{classes}"}, files=("classes.json",)),
    "eatkit run coco-set/suite.json --images coco-set/images --model efficientnet_lite0 --compare-model "
    "efficientnet_lite0@ft.safetensors --seed 0 --report": Case(after=(COCO_SET, FINETUNE),
                                                                files=("eatkit-results/report.html",), slow=True),
    "eatkit finetune --model efficientnet_lite0 --instances instances_train2017.json --images train2017 "
    "--val-instances instances_val2017.json --val-images val2017 --epochs 15 --lr 0.001 -o ft.safetensors": Case(
        subs=EPOCHS_1, builds=("coco",), files=("ft.safetensors",),
        slow=True),
    GENDER_SET: Case(subs={"ieat/images/gender": "{gender}"}, files=("gender-suite.json",)),
    "eatkit run gender-suite.json --model efficientnet_lite0 --compare-model efficientnet_lite1 --compare-model "
    "efficientnet_lite2 --images ieat/images/gender --seed 2026 -o gender-geometry --report": Case(
        subs={"ieat/images/gender": "{gender}"}, after=(GENDER_SET,), files=("gender-geometry/report.html",),
        stdout="career vs family", slow=True),
    "eatkit analysis-set open-images --boxes oidv6-train-annotations-bbox.csv --class-descriptions "
    "class-descriptions-boxable.csv --images train --objects car,dog --per-class 150 --seed 0 -o open-images-set":
        Case(builds=("open_images",), fresh=("open-images-set",), files=("open-images-set/suite.json",),
             stdout="dog+woman"),
    # docs/mleat-studies.md
    "eatkit run mleat-histwords --series histwords/sgns/ --decades 1810-1990 --seed 0 -o results/histwords --report":
        Case(subs={"histwords/sgns/": "{histwords}"}, files=("results/histwords/report.html",)),
    "eatkit run mleat-clip --model open_clip:ViT-L-14-336/openai --images ~/.local/share/eatkit/ieat "
    "--compare-prompts '' 'a picture that brings to mind {x}' -o results/clip-prompts --report": Case(
        subs={"open_clip:ViT-L-14-336/openai": "open_clip:{open_clip}"}, after=(GET_IEAT,),
        files=("results/clip-prompts/report.html",)),
    # docs/probes.md
    "eatkit run american-white --model hf-clip:openai/clip-vit-base-patch32 --images ~/data/cfd-groups --sd pooled "
    "--p-method welch --ddof 0 --seed 0": Case(subs={**CLIP, **FACES}, stdout="patriotism"),
    "eatkit probe ranking --model hf-clip:openai/clip-vit-base-patch32 --images ~/data/cfd-groups --prompt "
    "lives-in-state --reference us-states-2019 --repeats 1000 --seed 0 --report": Case(
        subs={**CLIP, **FACES}, contains=(("eatkit-results/report.html", "Ranked shares by state"),)),
    "eatkit probe vqa --model hf-blip-vqa:Salesforce/blip-vqa-base --images ~/data/cfd-groups --report": Case(
        subs={"hf-blip-vqa:Salesforce/blip-vqa-base": "hf-blip-vqa:{blip_vqa}", **FACES}, files=("eatkit-results/report.html",)),
    "eatkit probe caption --model hf-blip-caption:Salesforce/blip-image-captioning-base --images ~/data/cfd-groups "
    "--top-p 0.5,0.6,0.7,0.8,0.9 --seed 0": Case(
        subs={"hf-blip-caption:Salesforce/blip-image-captioning-base": "hf-blip-caption:{blip_caption}", **FACES},
        files=("eatkit-results/captions.csv",)),
    "eatkit probe generate --model open_clip:ViT-B-32/openai --images ~/data/cfd-groups --prompt 'an American "
    "person' --steps 80 --every 10 --region 0.45,0.3,0.085,0.085 --seed 0": Case(
        subs={"open_clip:ViT-B-32/openai": "open_clip:{open_clip}", "80": "4", "10": "2", **FACES},
        extra=GENERATE_SMALL,
        files=("eatkit-results/frames",)),
    "eatkit probe ranking --model hf-clip:openai/clip-vit-base-patch32 --images ~/data/cfd-groups --prompt "
    "lives-in-state --repeats 1000 --seed 0 --table state-iat.csv": Case(
        subs={**CLIP, **FACES}, builds=("state_iat",), stdout="state-iat.csv: asian~iat"),
    "eatkit probe generate --model open_clip:ViT-B-32/openai --images ~/data/cfd-groups --preset wolfe2022 --seed 0":
        Case(subs={"open_clip:ViT-B-32/openai": "open_clip:{open_clip}", **FACES},
             extra=("--steps", "2", "--size", "64", *GENERATE_SMALL), files=("eatkit-results/frames",)),
    "eatkit probe generate --model open_clip:ViT-B-32/openai --text-only --prompt 'an American person' --seed 0 "
    "--steps 80 --every 10": Case(
        subs={"open_clip:ViT-B-32/openai": "open_clip:{open_clip}", "80": "4", "10": "2"},
        extra=("--starts", "1", "--cutouts", "0"), files=("eatkit-results/frames/noise",)),
    "eatkit probe generate --model open_clip:ViT-B-32/openai --text-only --preset wolfe2022 --starts 3 --seed 0": Case(
        subs={"open_clip:ViT-B-32/openai": "open_clip:{open_clip}"},
        extra=("--steps", "2", "--size", "64", "--cutouts", "0"), files=("eatkit-results/frames/noise",)),
    # docs/models.md and docs/validity.md: their own tests run them (tiny published checkpoints; the shared
    # GloVe 840B items, whose numbers that test checks)
    **{command: Case(covered_by="tests/test_docs_models.py") for command in (
        "eatkit run ieat --tests insect-flower --images ieat-images --model simclrv2 --weights r152_3x_sk1.pth -o simclr",
        "eatkit run ieat --tests insect-flower --images ieat-images --model moco-v2-resnet50 --weights "
        "moco_v2_800ep_pretrain.pth.tar -o moco",
        "eatkit run ieat --tests insect-flower --images ieat-images --model slip --weights slip_base_100ep.pt -o slip",
        "eatkit finetune --model hf-clip-image:clip-vit-base-patch32 --instances instances_train2017.json --images "
        "train2017 --epochs 1 -o clip-coco.safetensors",
        "eatkit run ieat --tests insect-flower --images ieat-images --model hf-clip-image:clip-vit-base-patch32 "
        "--weights clip-coco.safetensors -o clip-coco")},
    "eatkit run weat --vectors ../shared/data/glove840b-weat/glove.840B.300d.weat-items.txt --validity --seed 1 -o "
    "weat-validity --report": Case(covered_by="tests/test_validity_run.py"),
    # docs/scale.md (SLURM: sbatch needs a cluster; tests/test_sweep_slurm.py runs the example with --cluster local)
    **{command: Case(covered_by="tests/test_sweep_slurm.py") for command in (
        "eatkit sweep sweep.toml --executor slurm", "eatkit sweep slurm-sweep.toml --executor slurm --cluster local",
        "eatkit sweep slurm-sweep.toml --executor slurm")},
    "eatkit sweep sweep.toml": Case(builds=("sweep",), files=("results/sweep/results.csv",)),
    "eatkit sweep sweep.toml --executor ray --address HEAD:6379": Case(builds=("sweep",), ray=True,
                                                                       slow=True),
    # docs/generation.md: a tiny random Stable Diffusion pipeline and a tiny CLIP, the tiny suite of tests/test_generation.py
    "eatkit run t2iat --model diffusers:stabilityai/stable-diffusion-2-1-base --embedder "
    "hf-clip:openai/clip-vit-large-patch14 --generation images_per_prompt=10 --generation steps=25 --seed 0 "
    "-o results/t2iat --report": Case(subs={**T2I, "t2iat": "{t2i_suite}", "images_per_prompt=10": "images_per_prompt=1",
                                            "steps=25": "steps=2"}, extra=(*T2I_SMALL, "--tests", "gs"),
                                      files=("results/t2iat/report.html", "results/t2iat/generated")),
    "eatkit run depiction-occupations --model diffusers:stabilityai/stable-diffusion-2-1-base --embedder "
    "hf-clip:openai/clip-vit-base-patch32 --generation images_per_prompt=20 --seed 0 -o results/depiction --report":
        Case(subs={**T2I, "depiction-occupations": "{t2i_suite}", "images_per_prompt=20": "images_per_prompt=2"},
             extra=(*T2I_SMALL, "--generation", "steps=2", "--tests", "occ"),
             contains=(("results/depiction/report.html", "contact-sheet"),)),
    "eatkit run depiction-occupations --model diffusers:stabilityai/stable-diffusion-2-1-base --embedder "
    "hf-clip:openai/clip-vit-base-patch32 --attributes gender --reference labour-gender.csv --seed 0 "
    "-o results/depiction-labour": Case(subs={**T2I, "depiction-occupations": "{t2i_suite}"}, builds=("labour",),
                                        extra=(*T2I_SMALL, "--generation", "steps=2", "--tests", "occ"),
                                        contains=(("results/depiction-labour/results.json", "labour-gender.csv"),)),
    "eatkit run depiction-occupations --model diffusers:CompVis/stable-diffusion-v1-4 --embedder "
    "hf-clip:openai/clip-vit-base-patch32 --generation images_per_prompt=20 --seed 0 -o results/depiction-sd14":
        Case(subs={**T2I, "diffusers:CompVis/stable-diffusion-v1-4": "diffusers:{t2i_pipe_1}",
                   "depiction-occupations": "{t2i_suite}", "images_per_prompt=20": "images_per_prompt=2"},
             extra=(*T2I_SMALL, "--generation", "steps=2", "--tests", "occ"), files=("results/depiction-sd14/results.json",)),
    "eatkit compare results/depiction results/depiction-sd14 --measure mad --seed 0": Case(
        after=("eatkit run depiction-occupations --model diffusers:stabilityai/stable-diffusion-2-1-base --embedder "
               "hf-clip:openai/clip-vit-base-patch32 --generation images_per_prompt=20 --seed 0 -o results/depiction "
               "--report",
               "eatkit run depiction-occupations --model diffusers:CompVis/stable-diffusion-v1-4 --embedder "
               "hf-clip:openai/clip-vit-base-patch32 --generation images_per_prompt=20 --seed 0 "
               "-o results/depiction-sd14"), stdout="Doctor"),
    "eatkit sweep t2i-sweep.toml": Case(builds=("t2i_sweep",), extra=("--jobs", "0"), files=("results/t2i-sweep/rankings.csv",),
                                        contains=(("results/t2i-sweep/audit.html", 'data-type="num">t2iat_d</th><th class="sort" '
                                                                             'tabindex="0" data-type="num">mad</th>'),)),
    # docs/language-models.md (tiny stand-ins: a BERT, GPT-2s, a CrowS-Pairs file, recorded answers)
    "eatkit data get crows-pairs": Case(stdout="crows-pairs: 1 of 1 files verified"),
    "eatkit run crows-pairs --model hf-mlm:bert-base-uncased --seed 0 -o results/crows-bert": Case(
        subs={"hf-mlm:bert-base-uncased": "hf-mlm:{tiny_mlm}"}, after=("eatkit data get crows-pairs",),
        files=("results/crows-bert/crows_pairs_scores.csv",), stdout="socioeconomic"),
    "eatkit run crows-pairs --model hf-lm:gpt2 --seed 0 -o results/crows-gpt2": Case(
        subs={"hf-lm:gpt2": "hf-lm:{tiny_lm}"}, after=("eatkit data get crows-pairs",),
        files=("results/crows-gpt2/results.json",)),
    # docs/bbq.md
    "eatkit data get bbq": Case(stdout="bbq: 2 of 2 files verified"),
    "eatkit run bbq --answers preds_Religion.jsonl.gz --answer-field unifiedqa-t5-11b_pred_race -o "
    "results/bbq-unifiedqa --report": Case(subs={"preds_Religion.jsonl.gz": "{bbq_preds}"},
                                           after=("eatkit data get bbq",),
                                           files=("results/bbq-unifiedqa/report.html",), stdout="Religion"),
    "eatkit run bbq --model hf-lm:Qwen/Qwen2.5-0.5B-Instruct --answer-mode generate --bbq-max-items 40 -o "
    "results/bbq-qwen": Case(subs={"hf-lm:Qwen/Qwen2.5-0.5B-Instruct": "hf-lm:{tiny_chat_lm}"},
                             after=("eatkit data get bbq",), files=("results/bbq-qwen/results.csv",), stdout="Age"),
    "eatkit sweep inside-outside.toml": Case(subs={"inside-outside.toml": "{inside_outside_sweep}"},
                                             after=("eatkit data get bbq",),
                                             files=("results/inside-outside/ranking-correlations.csv",)),
    # docs/bbq.md's demonstration on trained models: tests/test_inside_outside.py runs both of its lines
    "eatkit sweep demo/inside-outside-gender.toml": Case(covered_by="tests/test_inside_outside.py"),
    "eatkit sweep bbq-sweep.toml": Case(subs={"bbq-sweep.toml": "{bbq_sweep}"}, after=("eatkit data get bbq",),
                                        files=("results/bbq-sweep/rankings.csv",)),
    "eatkit data get stereoset --allow-unverified": Case(stdout="dev.json: sha256"),
    "eatkit run stereoset --model hf-lm:gpt2 --seed 0 -o results/stereoset-gpt2": Case(
        subs={"hf-lm:gpt2": "hf-lm:{tiny_lm}"}, after=("eatkit data get stereoset --allow-unverified",),
        files=("results/stereoset-gpt2/results.json",), stdout="profession"),
    "eatkit run llm-iat --model responses:llm-implicit-bias/data/result_gpt4o --seed 0 -o results/llm-iat-gpt4o "
    "--report": Case(subs={"responses:llm-implicit-bias/data/result_gpt4o": "responses:{gpt4o_responses}"},
                     files=("results/llm-iat-gpt4o/report.html", "results/llm-iat-gpt4o/llm_iat_responses.csv"),
                     stdout="racism-synonym"),
    "eatkit run llm-iat --model hf-lm:Qwen/Qwen2.5-0.5B-Instruct --tests racism,career --seed 0 -o "
    "results/llm-iat-qwen": Case(subs={"hf-lm:Qwen/Qwen2.5-0.5B-Instruct": "hf-lm:{tiny_chat_lm}"},
                                 extra=("--samples", "1", "--answer-tokens", "4", "--templates", "replication"),
                                 files=("results/llm-iat-qwen/llm_iat_responses.csv",), stdout="career"),
    # docs/answers.md
    "eatkit run shaikh-cot --answers harness-logs/cot-bias-shaikh2023/outputs/flan-t5-xxl -o results/shaikh-xxl": Case(
        subs={"harness-logs/": "{harness_logs}/"}, extra=("--tests", "bbq-cot-vs-direct"),
        files=("results/shaikh-xxl/results.csv",), stdout="cot - direct"),
    "eatkit run decodingtrust-stereotype --answers harness-logs/decodingtrust-stereotype/generations/Llama-2-7b-chat-hf "
    "-o results/decodingtrust-llama2": Case(subs={"harness-logs/": "{harness_logs}/"}, extra=("--tests", "agreement"),
                                            files=("results/decodingtrust-llama2/results.csv",), stdout="Muslims"),
    "eatkit run visbias-descriptions --answers harness-logs/visbias/image_description/Gemini --answer-field group=race "
    "-o results/visbias-gemini": Case(subs={"harness-logs/": "{harness_logs}/"},
                                      files=("results/visbias-gemini/results.csv",), stdout="latino"),
    "eatkit run discrim-eval --answers samples_discrim_yes.jsonl -o results/discrim-eval": Case(
        subs={"samples_discrim_yes.jsonl": "{discrim_samples}"}, files=("results/discrim-eval/results.csv",),
        stdout="Native American"),
    "eatkit run polite-requests.json --answers my-model-answers.csv -o results/polite": Case(
        builds=("polite",), files=("results/polite/results.csv",), stdout="woman - man"),
    "eatkit run hiring.json --model hf-lm:Qwen/Qwen2.5-0.5B-Instruct --generation max_new_tokens=32 -o "
    "results/hiring-qwen": Case(subs={"hf-lm:Qwen/Qwen2.5-0.5B-Instruct": "hf-lm:{tiny_chat_lm}", "max_new_tokens=32":
                                      "max_new_tokens=4"}, builds=("hiring",),
                                files=("results/hiring-qwen/results.csv",), stdout="female - male"),
    "eatkit report results/polite --html polite.html": Case(
        after=("eatkit run polite-requests.json --answers my-model-answers.csv -o results/polite",),
        files=("polite.html",), contains=(("polite.html", "q_value"),)),
    # docs/meta-analysis.md
    "eatkit run ceat.json --model hf:bert-base-uncased --pooling token --corpus corpus.txt --contexts 1000 --seed 0 "
    "-o results/ceat": Case(subs={"hf:bert-base-uncased": "hf:{ceat_bert}", "1000": "12"}, builds=("ceat",),
                            files=("results/ceat/results.json",), stdout="flowers-insects"),
    "eatkit meta docs/examples/effects.csv --method reml --html forest.html": Case(
        subs=EXAMPLES, files=("forest.html",), stdout="random effects (REML, k = 4)"),
    "eatkit run docs/examples/multigroup.json --vectors glove.840B.300d.txt --seed 0 -o results/multigroup": Case(
        subs={**EXAMPLES, "glove.840B.300d.txt": "{glove840}"}, files=("results/multigroup/results.json",),
        stdout="generalized-weat"),
    "eatkit probe retrieval --model hf-clip:openai/clip-vit-base-patch32 --images fairface/gender --concepts "
    "doctor,nurse,CEO --desired uniform --permutations 2000 -o retrieval-uniform": Case(
        subs={**CLIP, "fairface/gender": "{faces}"}, files=("retrieval-uniform/results.json",), stdout="p_max_skew"),
    "eatkit data get bad-seeds": Case(stdout="bad-seeds: 1 of 1 files verified"),
    "eatkit list seeds bad-seeds": Case(after=("eatkit data get bad-seeds",), stdout="pleasantness-P1"),
    "eatkit run docs/examples/weat1-seeds.json --vectors glove.840B.300d.txt --seed 0 -o results/weat1-seeds": Case(
        subs={**EXAMPLES, "glove.840B.300d.txt": "{glove840}"}, files=("results/weat1-seeds/results.json",),
        stdout="weat1-seeds"),
    "eatkit run seeds.json --vectors glove.840B.300d.txt --seed 0 -o results/seeds": Case(
        subs={"glove.840B.300d.txt": "{glove840}"}, builds=("seeds",), after=("eatkit data get bad-seeds",),
        files=("results/seeds/results.json",), stdout="pleasantness_P1",
        contains=(("results/seeds/results.json", '"catalogue": "bad-seeds"'),)),
}


class Workspace:
    """The working folder of the documented commands and its stand-ins, each built on first use."""

    def __init__(self, root: Path) -> None:
        self.root, self.home = root, root / "home"
        self.home.mkdir(parents=True)
        self.done: set[str] = set()
        self._built: dict[str, str] = {}
        self._manifests: dict[str, dict] = {}

    def __getitem__(self, name: str) -> str:  # str.format_map looks stand-ins up by name
        if name not in self._built:
            self._built[name] = str(getattr(self, f"_{name}")())
        return self._built[name]

    def folder(self, name: str) -> Path:
        path = self.root / "stand-ins" / name
        path.mkdir(parents=True, exist_ok=True)
        return path

    # models built from configs, saved as local folders
    def _clip(self) -> str:
        from tiny_vl import tiny_clip

        return tiny_clip(self.folder("clip"))

    def _open_clip(self) -> str:
        from tiny_vl import tiny_open_clip

        return tiny_open_clip(self.folder("open-clip"), "eatkit-docs-tiny").removeprefix("open_clip:")


    def _blip_vqa(self) -> str:
        from tiny_vl import tiny_blip

        return tiny_blip(self.folder("blip-vqa"), "BlipForQuestionAnswering")

    def _blip_caption(self) -> str:
        from tiny_vl import tiny_blip

        return tiny_blip(self.folder("blip-caption"), "BlipForConditionalGeneration")

    def _joint(self, family: str) -> str:
        from test_encoders_joint import TOWER, VOCAB

        torch.manual_seed(0)
        folder = self.folder(family)
        if family == "vilt":
            transformers.ViltModel(transformers.ViltConfig(
                **TOWER, vocab_size=len(VOCAB), max_position_embeddings=40, image_size=32, patch_size=16,
                max_image_length=-1)).save_pretrained(folder)
            transformers.ViltImageProcessor(size={"shortest_edge": 32}, size_divisor=16).save_pretrained(folder)
        elif family == "visualbert":
            transformers.VisualBertModel(transformers.VisualBertConfig(
                **TOWER, vocab_size=len(VOCAB), max_position_embeddings=40, visual_embedding_dim=12)
            ).save_pretrained(folder)
        else:
            transformers.LxmertModel(transformers.LxmertConfig(
                vocab_size=len(VOCAB), hidden_size=32, num_attention_heads=2, intermediate_size=37, l_layers=1,
                x_layers=1, r_layers=1, visual_feat_dim=12, num_qa_labels=2, num_object_labels=3, num_attr_labels=3,
                max_position_embeddings=40)).save_pretrained(folder)
        transformers.BertTokenizerFast(vocab={w: i for i, w in enumerate(VOCAB)}).save_pretrained(folder)
        return str(folder)

    def _vilt(self) -> str:
        return self._joint("vilt")

    def _lxmert(self) -> str:
        return self._joint("lxmert")

    def _visualbert(self) -> str:
        return self._joint("visualbert")

    def _gpt2(self) -> str:
        from tokenizers import Tokenizer, decoders, models, pre_tokenizers, trainers

        folder = self.folder("gpt2")
        bpe = Tokenizer(models.BPE())
        bpe.pre_tokenizer = pre_tokenizers.ByteLevel(add_prefix_space=False)
        bpe.decoder = decoders.ByteLevel()
        bpe.train_from_iterator(["This is a rose."] * 5, trainers.BpeTrainer(
            vocab_size=300, special_tokens=["<|endoftext|>"], initial_alphabet=pre_tokenizers.ByteLevel.alphabet()))
        transformers.PreTrainedTokenizerFast(tokenizer_object=bpe, eos_token="<|endoftext|>").save_pretrained(folder)
        torch.manual_seed(0)
        transformers.GPT2Model(transformers.GPT2Config(vocab_size=300, n_embd=16, n_layer=2, n_head=2,
                                                       n_positions=64)).save_pretrained(folder)
        return str(folder)

    # data
    @functools.cached_property
    def weat_vectors(self) -> dict[str, np.ndarray]:
        """Random 8-d vectors of every WEAT word."""
        from eatkit.stimuli.loader import load_suite

        words = sorted({w for t in load_suite("weat").tests for s in t.sets().values() for w in s.items})
        rng = np.random.default_rng(0)
        return {w: rng.normal(size=8) for w in words}

    def _glove840(self) -> Path:
        """A word-vector text file (GloVe format) with every WEAT word."""
        path = self.folder("vectors") / "glove.txt"
        path.write_text("".join(f"{w} {' '.join(f'{v:.4f}' for v in x)}\n" for w, x in self.weat_vectors.items()))
        return path

    def _word2vec(self) -> Path:
        """A word2vec binary file with every WEAT word."""
        from test_sources import write_word2vec_binary

        return write_word2vec_binary(self.folder("vectors") / "w2v.bin", self.weat_vectors)

    def _ieat_embeddings(self) -> Path:
        """The iEAT layout of published embeddings, ``{test}_{category}_{model}.csv`` with 4 images each,
        for the authors' three models and every category of ieat and ieat-intersectional."""
        folder, rng = self.folder("ieat-embeddings"), np.random.default_rng(1)
        for model in ("igpt_l_32", "simclr_152_3x_sk1", "igpt-logit_l_32"):
            for category in _categories("ieat", "ieat-intersectional"):
                rows = [",".join([str(i), *(f"{v:.5f}" for v in rng.normal(size=6)), f"{i}.jpg"]) for i in range(4)]
                (folder / f"{category.replace('/', '_')}_{model}.csv").write_text(
                    ",0,1,2,3,4,5,img\n" + "\n".join(rows) + "\n")
        return folder

    def dataset_manifest(self, name: str) -> dict:
        """Stands in for ``load_manifest``: a file:// mirror of dataset ``name`` in its real layout, with
        stand-in files (iEAT: 2 images per category of the ieat suite; glove-6b: a zip of a tiny vector
        file; others: small text files), and their checksums (none where eatkit knows none)."""
        if name not in self._manifests:
            from eatkit.stimuli.datasets import checksum_manifest

            real = REAL_MANIFEST(name)
            mirror = self.folder(f"mirror-{name}")
            tree = mirror / real.get("prefix", "")
            if name == "ieat":
                _images(tree, _categories("ieat"), 2)
            elif name in ("crows-pairs", "stereoset"):
                from tiny_lm import write_pairs, write_stereoset

                write_pairs(tree / "crows_pairs_anonymized.csv") if name == "crows-pairs" else write_stereoset(
                    tree / "dev.json")
            elif name == "bbq":
                from tiny_bbq import write_bbq

                write_bbq(tree)
            elif name == "bad-seeds":  # a catalogue in the published format, of WEAT 1's attribute words
                from eatkit.stimuli.loader import load_suite

                weat1 = load_suite("weat").test("weat1")  # the page selects pleasant(ness), unpleasant(ness)
                sets = [(f"{c}{more}-{paper}", c + more, weat1.set(role).items[i:i + 8], paper)
                        for i, more, paper in ((0, "", "P1"), (8, "ness", "P1"), (16, "", "P2"))
                        for c, role in (("pleasant", "A"), ("unpleasant", "B"))]
                (tree / "gathered_seeds.json").write_text(json.dumps([
                    {"Category": c, "Seeds": repr(list(words)), "Source / Justification": None, "Source Categories": None,
                     "Used in Paper": paper, "Link": None, "Seeds ID": i} for i, c, words, paper in sets]))
            elif name == "glove-6b":
                import zipfile

                with zipfile.ZipFile(tree / "glove.6B.zip", "w") as zf:
                    zf.writestr("glove.6B.50d.txt", "the 0.1 0.2\nrose 0.3 0.4\n")
            else:
                for rel in real["files"]:
                    (tree / rel).parent.mkdir(parents=True, exist_ok=True)
                    (tree / rel).write_text(f"stand-in of {rel}\n")
            fields = {k: v for k, v in real.items() if k not in ("files", "known_missing")}
            manifest = checksum_manifest(tree, **{**fields, "base_url": mirror.as_uri()})
            for rel, entry in real["files"].items():
                if not entry.get("sha256"):
                    manifest["files"][rel]["sha256"] = None
            self._manifests[name] = manifest
        return self._manifests[name]

    # language models (docs/language-models.md)
    def _tiny_mlm(self) -> str:
        from tiny_lm import make_bert

        return make_bert(self.folder("tiny-mlm"))

    def _bbq_preds(self) -> Path:
        from tiny_bbq import write_preds

        return write_preds(self.folder("bbq") / "preds_Religion.jsonl")

    def _bbq_sweep(self) -> Path:
        """docs/bbq.md's sweep file, on the stand-in predictions."""
        preds = self["bbq_preds"]
        models = "".join(f'[[models]]\nlabel = "{label}"\nanswers = "{preds}"\nanswer_field = '
                         f'"unifiedqa-t5-11b_pred_race"\n' for label in ("race", "arc"))
        path = self.folder("bbq") / "bbq-sweep.toml"
        path.write_text(f'output = "{self.root / "results" / "bbq-sweep"}"\nsuites = ["bbq"]\n{models}')
        return path

    def _inside_outside_sweep(self) -> Path:
        """docs/bbq.md's inside-and-outside sweep: two tiny causal LMs."""
        from tiny_lm import make_gpt2

        folders = {seed: make_gpt2(self.folder(f"io-lm{seed}"), seed=seed) for seed in (0, 1)}
        models = "".join(f'[[models]]\nlabel = "tiny-{seed}"\nname = "hf-lm:{folder}"\n' for seed, folder in folders.items())
        path = self.folder("bbq") / "inside-outside.toml"
        path.write_text(f'output = "{self.root / "results" / "inside-outside"}"\nsuites = ["inside-outside-religion"]\n'
                        f"{models}")
        return path

    def _tiny_lm(self) -> str:
        from tiny_lm import make_gpt2

        return make_gpt2(self.folder("tiny-lm"))

    def _tiny_chat_lm(self) -> str:
        from tiny_lm import make_gpt2

        return make_gpt2(self.folder("tiny-chat-lm"), chat=True)

    def _gpt4o_responses(self) -> Path:
        from tiny_lm import write_responses

        from eatkit.stimuli.loader import load_suite

        categories = tuple(dict.fromkeys(t.param("category") for t in load_suite("llm-iat").tests))
        return write_responses(self.folder("gpt4o-responses"), categories)

    def _faces(self) -> Path:
        from tiny_vl import group_images

        return group_images(self.folder("faces"), {"asian": 3, "black": 3, "latino": 3, "white": 3})

    def _coco(self) -> Path:
        """A tiny COCO data set in the working folder, as the documented commands name its files
        (``instances_val2017.json``, ``val2017/``, ``annotations/...``, the same for train2017), with every
        class of the analysis set (2 images or more each)."""
        from tiny_coco import CATEGORIES, write_coco

        root = self.root
        images: dict[int, tuple[list[str], list[str]]] = {}
        for obj in ("car", "refrigerator", "surfboard"):
            for cats, caption in (([obj], f"a {obj}"), ([obj, "person"], f"a man and a {obj}"),
                                  ([obj, "person"], f"a woman and a {obj}")):
                for _ in range(2):
                    images[len(images) + 1] = (cats, [caption])
        for cats, caption in ((["person"], "a man"), (["person"], "a woman"), (["stop sign"], "a stop sign"),
                              ([], "a street"), ([], "a field")):
            for _ in range(2):
                images[len(images) + 1] = (cats, [caption])
        surfboard = {"id": 42, "name": "surfboard", "supercategory": "sports"}
        for split in ("val2017", "train2017"):
            write_coco(root, images, split=split, categories=[*CATEGORIES, surfboard])
        (root / "annotations").mkdir(exist_ok=True)
        for name in ("instances_val2017.json", "captions_val2017.json"):
            (root / "annotations" / name).write_bytes((root / name).read_bytes())
        return root

    def _coco_val2014(self) -> Path:
        """Every image that the chosen grounded-coco test names, as a tiny PNG."""
        return _named_images(self.folder("coco-val2014"), "grounded-coco", SMALL_GROUNDED_COCO[1])

    def _google_images(self) -> Path:
        return _named_images(self.folder("grounded-google"), "grounded-google", "sent-weat8")

    def _google_regions(self) -> Path:
        """One .npz of region features per image (3 regions of 12-d features, one a person)."""
        folder, rng = self.folder("grounded-google-regions"), np.random.default_rng(2)
        for image in Path(self["google_images"]).iterdir():
            np.savez(folder / f"{image.stem}.npz", features=rng.normal(size=(3, 12)),
                     boxes=np.array([[0, 0, 4, 4], [2, 2, 8, 8], [1, 1, 6, 6]], dtype=float),
                     labels=np.array(["person", "dog", "tie"]), image_size=np.array([8, 8]))
        return folder

    def _classes(self) -> Path:
        return _images(self.folder("classes"), ["cat", "dog"], 3)

    def _gender(self) -> Path:
        return _images(self.folder("gender"), [c.split("/")[1] for c in _categories("ieat") if c.startswith("gender/")],
                       3)

    def _histwords(self) -> Path:
        from test_histwords import write_series

        folder = self.folder("histwords")
        write_series(folder)
        return folder

    def _open_images(self) -> Path:
        """A tiny Open Images layout in the working folder, as the documented command names its files."""
        from test_analysis_sets import write_open_images

        images = {f"{obj}{who}{i}": [obj.capitalize().replace("Stop", "Stop sign"), *people]
                  for obj in ("car", "dog", "stop") for who, people in (("", []), ("m", ["Man"]), ("w", ["Woman"]))
                  for i in range(2) if obj != "stop" or not people}
        images |= {f"{who}{i}": [who.capitalize()] for who in ("man", "woman", "person") for i in range(2)}
        write_open_images(self.root / "train", images)
        (self.root / "train" / "boxes.csv").rename(self.root / "oidv6-train-annotations-bbox.csv")
        (self.root / "train" / "class-descriptions-boxable.csv").rename(self.root / "class-descriptions-boxable.csv")
        return self.root / "train"

    def _state_iat(self) -> Path:
        """state-iat.csv in the working folder: a number per US state and D.C."""
        from eatkit.stimuli.regions import load_region_table

        rng = np.random.default_rng(5)
        path = self.root / "state-iat.csv"
        path.write_text("state,iat\n" + "".join(f"{r},{rng.normal():.3f}\n"
                                                 for r in load_region_table("us-states-2019").regions))
        return path

    def _sweep(self) -> Path:
        """sweep.toml in the working folder (the models of the documented one need weights or a GPU)."""
        path = self.root / "sweep.toml"
        path.write_text('output = "results/sweep"\nmodels = [{ name = "glove-6b-50d", oov = "drop" }]\n'
                        'suites = [{ suite = "weat", tests = ["weat1", "weat2"] }]\nsettings = [{ seed = 0 }]\n')
        return path


    # text-to-image (docs/generation.md)
    def _t2i_pipe(self, seed: int = 0) -> str:
        from tiny_t2i import tiny_pipeline

        return tiny_pipeline(self.folder(f"t2i-pipe-{seed}"), seed=seed)

    def _t2i_pipe_1(self) -> str:
        """A second tiny pipeline (other random weights): a second model."""
        return self._t2i_pipe(1)

    def _t2i_suite(self) -> Path:
        import json

        from test_generation import tiny_suite

        path = self.folder("t2i") / "suite.json"
        path.write_text(json.dumps(tiny_suite()))
        return path

    def _labour(self) -> Path:
        """labour-gender.csv in the working folder: a reference share per class of the tiny suite's groups."""
        path = self.root / "labour-gender.csv"
        path.write_text("group,attribute,class,share\nDoctor,gender,man,0.62\nDoctor,gender,woman,0.38\n"
                        "Nurse,gender,man,0.12\nNurse,gender,woman,0.88\n")
        return path

    def _t2i_sweep(self) -> Path:
        """t2i-sweep.toml in the working folder: two tiny text-to-image models over the tiny suite."""
        generation = "generation = { images_per_prompt = 1, steps = 2, size = 16 }"
        models = ", ".join(f'{{ label = "tiny-{s}", name = "diffusers:{self._t2i_pipe(s)}", '
                           f'embedder = "hf-clip:{self["clip"]}", {generation} }}' for s in (0, 1))
        path = self.root / "t2i-sweep.toml"
        path.write_text(f'output = "results/t2i-sweep"\nmodels = [{models}]\n'
                        f'suites = ["{self["t2i_suite"]}"]\n'
                        'settings = [{ seed = 0, n_bootstrap = 100 }]\n')
        return path

    # docs/meta-analysis.md: the suite files of the page, a corpus, and a tiny BERT knowing their words
    CEAT_WORDS = {"X": ["rose", "lily"], "Y": ["ant", "fly"], "A": ["love", "peace"], "B": ["war", "hate"]}

    def _ceat(self) -> Path:
        """ceat.json (the page's example) and corpus.txt: every word in several short sentences."""
        import json

        text = (ROOT / "docs" / "meta-analysis.md").read_text(encoding="utf-8")
        suite = text[text.index('{"schema": "eatkit.suite/1", "id": "ceat"'):]
        (self.root / "ceat.json").write_text(suite[:suite.index("```")])
        json.loads((self.root / "ceat.json").read_text())
        words = [w for ws in self.CEAT_WORDS.values() for w in ws]
        lines = [f"the {a} and the {b} ." for a in words for b in words if a != b]
        (self.root / "corpus.txt").write_text("\n".join(lines) + "\n")
        return self.root / "ceat.json"

    def _ceat_bert(self) -> str:
        folder = self.folder("ceat-bert")
        vocab = ["[PAD]", "[UNK]", "[CLS]", "[SEP]", "[MASK]", "the", "and", ".",
                 *[w for ws in self.CEAT_WORDS.values() for w in ws]]
        torch.manual_seed(0)
        config = transformers.BertConfig(vocab_size=len(vocab), hidden_size=16, num_hidden_layers=2,
                                         num_attention_heads=2, intermediate_size=32, max_position_embeddings=32)
        transformers.BertModel(config).save_pretrained(folder)
        transformers.BertTokenizerFast(vocab={w: i for i, w in enumerate(vocab)}).save_pretrained(folder)
        return str(folder)

    def _harness_logs(self) -> Path:
        """The answers recorded by others in ../shared/data/harness-logs (the test skips without them)."""
        from conftest import shared_path

        return shared_path("harness-logs")

    def _discrim_samples(self) -> Path:
        """samples_discrim_yes.jsonl: lm-evaluation-harness sample lines (the layout of tests/data/answers/lm-eval)
        for 3 of Discrim-Eval's decision questions, log-probabilities of " yes" / " no" drawn from a seed."""
        import gzip
        import json

        import numpy as np
        from conftest import shared_path

        rows = [json.loads(line) for line in gzip.open(shared_path("discrim-eval", "explicit.jsonl.gz"), "rt")]
        rng = np.random.default_rng(0)
        path = self.root / "samples_discrim_yes.jsonl"
        lines = [json.dumps({"doc_id": i, "doc": row, "target": 0,
                             "arguments": {"gen_args_0": {"arg_0": "...", "arg_1": " yes"},
                                           "gen_args_1": {"arg_0": "...", "arg_1": " no"}},
                             "resps": [], "filtered_resps": [[str(-abs(rng.normal(1, 1))), "False"],
                                                             [str(-abs(rng.normal(1, 1))), "False"]]})
                 for i, row in enumerate(r for r in rows if r["decision_question_id"] in (0, 1, 2))]
        path.write_text("\n".join(lines) + "\n")
        return path

    def _polite(self) -> Path:
        """polite-requests.json (the page's example), its scorer module (on sys.path) and a model's answers."""
        import sys

        text = (ROOT / "docs" / "answers.md").read_text(encoding="utf-8")
        suite = text[text.index('{"schema": "eatkit.suite/1", "id": "polite-requests"'):]
        (self.root / "polite-requests.json").write_text(suite[:suite.index("```")])
        folder = self.folder("polite-scorer")
        (folder / "polite_scorer.py").write_text(
            'def politeness(argument):\n    return lambda answer: "polite" if "please" in answer.text.lower() else "curt"\n')
        if str(folder) not in sys.path:
            sys.path.insert(0, str(folder))
        rows = ["item,pair,template,group,text"] + [
            f"{i}{g[0]},{i},ask,{g},{'Please sit.' if i < k else 'Sit.'}" for i in range(12) for g, k in
            (("woman", 9), ("man", 4))]
        (self.root / "my-model-answers.csv").write_text("\n".join(rows) + "\n")
        return self.root / "polite-requests.json"

    def _hiring(self) -> Path:
        """hiring.json and hiring-items.jsonl, the page's example: its two item lines for three names of each
        gender (three counterfactual pairs of a hiring question and a description)."""
        text = (ROOT / "docs" / "answers.md").read_text(encoding="utf-8")
        suite = text[text.index('{"schema": "eatkit.suite/1", "id": "hiring"'):]
        (self.root / "hiring.json").write_text(suite[:suite.index("```")])
        lines = [line for line in text.splitlines() if line.startswith('{"id": "')]
        names = [("Maria", "James"), ("Aisha", "Omar"), ("Li", "Wei")]
        items = [line.replace("Maria", name).replace("-0-", f"-{p}-").replace('"pair": "0"', f'"pair": "{p}"')
                 .replace("female", group) for line in lines for p, pair in enumerate(names)
                 for group, name in zip(("female", "male"), pair)]
        (self.root / "hiring-items.jsonl").write_text("\n".join(items) + "\n")
        return self.root / "hiring.json"

    def _seeds(self) -> Path:
        """seeds.json, the page's example: a seed-sets test whose variants come from the catalogue "bad-seeds"."""
        text = (ROOT / "docs" / "meta-analysis.md").read_text(encoding="utf-8")
        suite = text[text.index('{"schema": "eatkit.suite/1", "id": "seeds"'):]
        (self.root / "seeds.json").write_text(suite[:suite.index("```")])
        return self.root / "seeds.json"

def _categories(*suites: str) -> list[str]:
    from eatkit.stimuli.loader import load_suite

    return sorted({s.category for suite in suites for t in load_suite(suite).tests for s in t.sets().values()
                   if s.category})


def _images(root: Path, categories: list[str], n: int) -> Path:
    rng = np.random.default_rng(3)
    for category in categories:
        (root / category).mkdir(parents=True, exist_ok=True)
        for i in range(n):
            Image.fromarray(rng.integers(0, 256, (24, 24, 3), dtype=np.uint8)).save(root / category / f"{i}.png")
    return root


def _named_images(root: Path, suite: str, test: str) -> Path:
    from eatkit.stimuli.loader import load_suite

    (case,) = [t for t in load_suite(suite).tests if t.id == test]
    rng = np.random.default_rng(4)
    for name in {i for s in case.sets().values() for i in (getattr(s, "images", ()) or ())}:
        Image.fromarray(rng.integers(0, 256, (8, 8, 3), dtype=np.uint8)).save(root / name)
    return root


# -- the tests ---------------------------------------------------------------------------------------


def _all_documented() -> dict[str, list[str]]:
    found: dict[str, list[str]] = {}
    for path in DOCS:
        for command in documented_commands(path):
            found.setdefault(command, []).append(path.relative_to(ROOT).as_posix())
    return found


def test_every_documented_command_has_a_case() -> None:
    documented = _all_documented()
    untested = [f"{', '.join(where)}: {c}" for c, where in documented.items() if c not in CASES]
    assert not untested, "documented commands with no stand-in in CASES:\n" + "\n".join(untested)
    assert not set(CASES) - set(documented), f"cases of commands no longer documented: {set(CASES) - set(documented)}"
    for command, case in CASES.items():  # a page whose own test runs its commands: that test reads the page
        if case.covered_by:
            pages = {Path(page).name for page in documented[command]}
            assert any(page in (ROOT / case.covered_by).read_text(encoding="utf-8") for page in pages), command
    assert len(documented) >= 40


def test_extraction_joins_continuations_and_drops_comments(tmp_path) -> None:
    doc = tmp_path / "d.md"
    doc.write_text('text\n```bash\npip x && eatkit run weat \\\n    --seed 1   # note\neatkit list "a b"\n```\n'
                   "```python\neatkit.eat()\n```\n```\neatkit list models\n```\n```json\n{}\n```\n")
    assert documented_commands(doc) == ["eatkit run weat --seed 1", "eatkit list 'a b'", "eatkit list models"]


@pytest.fixture(scope="module", autouse=True)
def _one_torch_thread():
    """Tiny models run fastest on one thread (on a shared machine, many threads each wait for a core)."""
    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


@pytest.fixture(scope="module")
def workspace(tmp_path_factory: pytest.TempPathFactory) -> Workspace:
    return Workspace(tmp_path_factory.mktemp("docs-commands"))


@pytest.fixture(scope="module")
def ray_session(workspace: Workspace):
    ray = pytest.importorskip("ray")
    src = str(ROOT / "src")
    env = {"PYTHONPATH": os.pathsep.join(p for p in (src, os.environ.get("PYTHONPATH")) if p),
           "EATKIT_CACHE_DIR": str(workspace.root / "cache"), "HF_HUB_OFFLINE": "1"}
    ray.init(num_cpus=1, include_dashboard=False, _node_ip_address="127.0.0.1", logging_level="ERROR",
             log_to_driver=False, runtime_env={"env_vars": env})
    yield ray
    ray.shutdown()


def stand_in(command: str, ws: Workspace) -> list[str]:
    """The command's words with the stand-ins of its case, ``~`` expanded to the fake home."""
    case, words = CASES[command], []
    for word in shlex.split(command)[1:]:
        prefix = next((old for old in case.subs if old.endswith("/") and word.startswith(old)), None)
        if word in case.subs:
            word = case.subs[word].format_map(ws)
        elif prefix is not None:  # a folder: the files under it
            word = case.subs[prefix].format_map(ws) + word[len(prefix):]
        words.append(str(ws.home) + word[1:] if word.startswith("~") else word)
    return words + list(case.extra)


def run_documented(command: str, ws: Workspace, capsys: pytest.CaptureFixture[str],
                   monkeypatch: pytest.MonkeyPatch) -> str:
    """Run a documented command (and first the commands it needs), once per module; its standard output."""
    for needed in CASES[command].after:
        if needed not in ws.done:
            run_documented(needed, ws, capsys, monkeypatch)
    monkeypatch.chdir(ws.root)
    monkeypatch.setenv("HOME", str(ws.home))
    monkeypatch.setenv("EATKIT_DATA_DIR", str(ws.home / ".local" / "share" / "eatkit"))
    monkeypatch.setenv("EATKIT_CACHE_DIR", str(ws.root / "cache"))
    if command.startswith("eatkit data get") or any(c.startswith("eatkit data get") for c in CASES[command].after):
        # the network: a file:// mirror of a reduced manifest (and what a command using its data reads of it)
        import eatkit.stimuli.datasets as datasets

        monkeypatch.setattr(datasets, "load_manifest", ws.dataset_manifest)
    for name in CASES[command].builds:
        ws[name]
    for name in CASES[command].fresh:
        shutil.rmtree(ws.root / name, ignore_errors=True)
    argv = stand_in(command, ws)
    torch.set_num_threads(1)  # image runs leave torch's default at the core count (see _one_torch_thread)
    shutil.rmtree(ws.root / "eatkit-results", ignore_errors=True)  # the default output folder: this command's
    capsys.readouterr()
    try:
        code = main(argv)
    except SystemExit as exit_:
        code = exit_.code
    out, err = capsys.readouterr()
    assert code == 0, f"{command}\n  ran as: eatkit {shlex.join(argv)}\n{err}"
    ws.done.add(command)
    return out


@pytest.mark.parametrize("command", [pytest.param(c, marks=[pytest.mark.slow] if CASES[c].slow else [],
                                                  id=re.sub(r"\W+", "-", c)[:90])
                                     for c in _all_documented() if c in CASES and not CASES[c].covered_by])
def test_documented_command_runs(command: str, workspace: Workspace, capsys, monkeypatch, request) -> None:
    case = CASES[command]
    if case.ray:
        request.getfixturevalue("ray_session")
    out = run_documented(command, workspace, capsys, monkeypatch)
    assert case.stdout in out
    for name in case.files:
        assert _written(workspace.root, name).exists(), f"{command}: {name} not written"
    for name, text in case.contains:
        assert text in _written(workspace.root, name).read_text(encoding="utf-8"), f"{command}: {name} lacks {text!r}"


def _written(root: Path, name: str) -> Path:
    """Where a documented output is: ``eatkit-results/X`` is in the one new folder that a run without -o
    makes under eatkit-results/ (eatkit-results/<date>_<time>/X)."""
    if name.startswith("eatkit-results/"):
        (folder,) = (root / "eatkit-results").iterdir()
        return folder / name.removeprefix("eatkit-results/")
    return root / name
