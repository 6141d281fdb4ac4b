"""Analysis sets for feature-space geometry: COCO-format annotations and folders (seed 004, §4.2)."""

from __future__ import annotations

import itertools
import re
import json

import pytest

from eatkit.errors import EatkitError
from eatkit.stimuli.analysis_sets import (
    DEFAULT_LEXICON,
    coco_analysis_set,
    design,
    folder_analysis_set,
    open_images_analysis_set,
)
from tiny_coco import write_coco

# image id -> (categories, captions); the comment says where the rules put it
IMAGES = {
    1: (["car"], ["a red car"]),                                  # car
    2: (["car"], ["cars parked"]),                                # car
    3: (["car", "person"], ["a man driving a car"]),              # car+man
    4: (["car", "person"], ["A boy next to his car."]),           # car+man
    5: (["car", "person"], ["a woman in a car"]),                 # car+woman
    6: (["car", "person"], ["the lady's car", "she smiles"]),     # car+woman
    7: (["car", "person"], ["a man and a woman in a car"]),       # both genders: no class
    8: (["car", "refrigerator"], ["a fridge in a car"]),          # two objects of interest: no class
    9: (["person"], ["a man"]),                                   # man
    10: (["person"], ["two guys"]),                               # man
    11: (["person"], ["a girl"]),                                 # woman
    12: (["person"], ["women talking"]),                         # woman
    13: (["person"], ["a person"]),                               # no gender word: random pool
    14: (["stop sign"], ["a stop sign"]),                         # stop-sign control
    15: (["stop sign"], ["stop"]),                                # stop-sign control
    16: (["stop sign", "person"], ["a man at a stop sign"]),      # stop sign with a person: no class
    17: (["refrigerator"], ["a fridge"]),                         # refrigerator
    18: (["refrigerator"], ["an open fridge"]),                   # refrigerator
    19: (["refrigerator", "person"], ["a woman at the fridge"]),  # refrigerator+woman
    20: (["refrigerator", "person"], ["her kitchen"]),            # refrigerator+woman
    21: (["refrigerator", "person"], ["a man opens it"]),         # refrigerator+man
    22: (["refrigerator", "person"], ["he cooks"]),               # refrigerator+man
    23: ([], ["a field"]),                                        # random pool
    24: ([], ["a road"]),                                         # random pool
    25: (["car"], ["a car"]),                                     # car
}


@pytest.fixture
def coco(tmp_path):
    return write_coco(tmp_path, IMAGES, pixels=False)


def _ids(files):
    return sorted(int(f.rsplit("/", 1)[1].split(".")[0]) for f in files)


def test_thesis_exclusivity_rules(coco):
    instances, captions, images = coco
    s = coco_analysis_set(instances, captions, images, ["car", "refrigerator"])
    got = {name: _ids(files) for name, files in s.classes.items()}
    assert {k: v for k, v in got.items() if k != "random"} == {
        "man": [9, 10], "woman": [11, 12], "stop-sign": [14, 15],
        "car": [1, 2, 25], "car+man": [3, 4], "car+woman": [5, 6],
        "refrigerator": [17, 18], "refrigerator+man": [21, 22], "refrigerator+woman": [19, 20],
    }
    # random: drawn from the images in no other class, as many as the largest class (3)
    assert set(got["random"]) <= {7, 8, 13, 16, 23, 24} and len(got["random"]) == 3
    for a, b in itertools.combinations(got, 2):
        assert not set(got[a]) & set(got[b]), (a, b)
    assert s.available["random"] == 6 and s.available["car"] == 3
    assert s.source["instances_sha256"] and s.source["lexicon"]["man"] == sorted(DEFAULT_LEXICON["man"])
    assert s.groups["paired"] == ("car+man", "car+woman", "refrigerator+man", "refrigerator+woman")
    assert ("car+woman", "car") in s.pairs and ("stop-sign", "random") in s.pairs


def test_sampling_is_seeded_and_reported(coco):
    instances, captions, images = coco
    one = coco_analysis_set(instances, captions, images, ["car"], per_class=2, seed=1)
    two = coco_analysis_set(instances, captions, images, ["car"], per_class=2, seed=1)
    assert one.classes == two.classes
    assert one.sizes()["car"] == 2 and one.available["car"] == 4  # 1, 2, 25 and 8 (no refrigerator here)
    draws = {tuple(_ids(coco_analysis_set(instances, captions, images, ["car"], per_class=2, seed=k)
                        .classes["car"])) for k in range(8)}
    assert len(draws) > 1


def test_lexicon_and_exclusive_options(coco):
    instances, captions, images = coco
    with pytest.raises(EatkitError, match="class 'refrigerator\\+man' has 1 image"):
        coco_analysis_set(instances, captions, images, ["refrigerator"],
                          lexicon={"man": ["guys", "man"], "woman": ["girl", "women"]})
    lex = {"man": ["man", "guys", "he"], "woman": ["girl", "women", "woman", "her"]}
    s = coco_analysis_set(instances, captions, images, ["refrigerator"], lexicon=lex)
    # car is not an object of interest here, so a man in a car is a man
    assert _ids(s.classes["man"]) == [3, 9, 10] and _ids(s.classes["woman"]) == [5, 11, 12]
    assert _ids(s.classes["refrigerator+man"]) == [21, 22]
    strict = coco_analysis_set(instances, captions, images, ["refrigerator"], lexicon=lex, exclusive=True)
    assert _ids(strict.classes["man"]) == [9, 10] and _ids(strict.classes["woman"]) == [11, 12]


def test_bad_input_one_line(coco, tmp_path):
    instances, captions, images = coco
    with pytest.raises(EatkitError, match="category 'surfboard' is not in"):
        coco_analysis_set(instances, captions, images, ["surfboard"])
    bad = tmp_path / "bad.json"
    bad.write_text(json.dumps({"images": []}))
    with pytest.raises(EatkitError, match="is not a COCO instances file: no 'annotations' list"):
        coco_analysis_set(bad, captions, images, ["car"])
    with pytest.raises(EatkitError, match="is not a COCO captions file"):
        coco_analysis_set(instances, instances, images, ["car"])
    bad.write_text("not json")
    with pytest.raises(EatkitError, match="invalid JSON"):
        coco_analysis_set(bad, captions, images, ["car"])
    with pytest.raises(EatkitError, match=re.escape("per_class must be an integer in [2, 10000000], got ")):
        coco_analysis_set(instances, captions, images, ["car"], per_class=1)


def test_folders_and_suite(tmp_path):
    root = tmp_path / "sets"
    for name, n in (("female", 3), ("male", 2), ("career", 2)):
        (root / name).mkdir(parents=True)
        for i in range(n):
            (root / name / f"{i}.jpg").write_bytes(b"")
    (root / "male" / "notes.txt").write_text("not an image")
    s = folder_analysis_set(root)
    assert s.sizes() == {"career": 2, "female": 3, "male": 2}
    assert s.pairs == (("career", "female"), ("career", "male"), ("female", "male"))
    assert s.groups["pairs"] == ("career vs female", "career vs male", "female vs male")
    suite = s.suite()
    test = suite["tests"][0]
    assert test["kind"] == "geometry" and test["Female"] == {"name": "female", "modality": "image",
                                                             "category": "female"}
    assert test["params"]["sizes"]["female"] == 3
    out = s.write(tmp_path / "out")
    assert json.loads(out.read_text())["tests"][0]["params"]["pairs"][0] == ["career", "female"]
    assert (tmp_path / "out" / "images" / "female" / "2.jpg").is_symlink()
    with pytest.raises(EatkitError, match="already exists"):
        s.write(tmp_path / "out")
    (root / "tiny").mkdir()
    (root / "tiny" / "0.jpg").write_bytes(b"")
    with pytest.raises(EatkitError, match="class 'tiny' has 1 image"):
        folder_analysis_set(root)
    with pytest.raises(EatkitError, match="does not exist"):
        folder_analysis_set(root, ["female", "nope"])


def test_design_groups():
    names = ["man", "woman", "random", "stop-sign", "car", "car+man", "car+woman"]
    pairs, groups = design(names)
    assert pairs == (("car+man", "car"), ("car+woman", "car"), ("man", "random"), ("woman", "random"),
                     ("stop-sign", "random"), ("car", "random"))
    assert groups["individual"] == ("man", "woman", "random", "stop-sign", "car")
    assert groups["gender+object vs object"] == ("car+man vs car", "car+woman vs car")


def test_folder_names_with_spaces_resolve(tmp_path):
    from eatkit.stimuli.images import resolve_image_set
    from eatkit.stimuli.schema import parse_suite

    for name in ("stop sign", "car+man"):
        (tmp_path / name).mkdir()
        for i in range(2):
            (tmp_path / name / f"{i}.png").write_bytes(b"")
    suite = parse_suite(json.dumps(folder_analysis_set(tmp_path).suite()), "s.json")
    sets = suite.tests[0].sets()
    assert list(sets) == ["Car_man", "Stop_sign"] and sets["Stop_sign"].name == "stop sign"
    assert len(resolve_image_set(sets["Stop_sign"], tmp_path).items) == 2


#: Open Images V6 box annotation columns (oidv6-*-annotations-bbox.csv)
OI_COLUMNS = "ImageID,Source,LabelName,Confidence,XMin,XMax,YMin,YMax,IsOccluded,IsTruncated,IsGroupOf,IsDepiction,IsInside"
OI_LABELS = {"Car": "/m/0k4j", "Man": "/m/04yx4", "Woman": "/m/03bt1vf", "Girl": "/m/05r655", "Person": "/m/01g317",
             "Stop sign": "/m/02pv19", "Dog": "/m/0bt9lr"}


def write_open_images(root, images: dict[str, list[str]], *, header: bool = False):
    """A tiny Open Images layout: class descriptions (V6: no header; V7: a header), box annotations and
    ``<ImageID>.jpg`` files (their content does not matter here)."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "class-descriptions-boxable.csv").write_text(
        ("LabelName,DisplayName\n" if header else "") + "".join(f"{i},{n}\n" for n, i in OI_LABELS.items()))
    rows = [f"{image},xclick,{OI_LABELS[n]},1,0.1,0.5,0.1,0.5,0,0,0,0,0" for image, ns in images.items() for n in ns]
    (root / "boxes.csv").write_text(OI_COLUMNS + "\n" + "\n".join(rows) + "\n")
    for image in images:
        (root / f"{image}.jpg").write_bytes(b"jpg")
    return root


OI_IMAGES = {"c1": ["Car"], "c2": ["Car"], "cm1": ["Car", "Man"], "cm2": ["Car", "Man", "Dog"],
             "cw1": ["Car", "Woman"], "cw2": ["Car", "Girl"], "m1": ["Man"], "m2": ["Man", "Person"],
             "w1": ["Woman"], "w2": ["Woman", "Dog"], "s1": ["Stop sign"], "s2": ["Stop sign"],
             "p1": ["Person"], "mw": ["Man", "Woman"], "d1": ["Dog"], "cs": ["Car", "Stop sign"]}


@pytest.mark.parametrize("header", [False, True])
def test_open_images_analysis_set_from_the_cli(tmp_path, capsys, header):
    from eatkit.cli import main

    root = write_open_images(tmp_path / "oi", OI_IMAGES, header=header)
    out = tmp_path / "oi-set"
    code = main(["analysis-set", "open-images", "--boxes", str(root / "boxes.csv"), "--class-descriptions",
                 str(root / "class-descriptions-boxable.csv"), "--images", str(root), "--objects", "car", "-o",
                 str(out)])
    assert code == 0, capsys.readouterr().err
    suite = json.loads((out / "suite.json").read_text())
    classes = {name: sorted(p.rsplit("/", 1)[-1] for p in files)
               for name, files in open_images_analysis_set(root / "boxes.csv", root / "class-descriptions-boxable.csv",
                                                           root, ["Car"]).classes.items()}
    assert classes["car+man"] == ["cm1.jpg", "cm2.jpg"] and classes["car+woman"] == ["cw1.jpg", "cw2.jpg"]
    assert classes["man"] == ["m1.jpg", "m2.jpg"] and classes["woman"] == ["w1.jpg", "w2.jpg"]
    assert classes["stop-sign"] == ["s1.jpg", "s2.jpg"] and classes["car"] == ["c1.jpg", "c2.jpg"]
    # the random class samples the images in no class: no gender (p1), both genders (mw), nothing of
    # interest (d1), two objects of interest (cs); as many as the largest class (2)
    assert len(classes["random"]) == 2 and set(classes["random"]) <= {"d1.jpg", "mw.jpg", "p1.jpg", "cs.jpg"}
    assert "random         2 images (4 available)" in capsys.readouterr().out
    assert suite["tests"][0]["kind"] == "geometry"
    with pytest.raises(EatkitError, match="class 'woman' has 1 image"):  # exclusive: w2 (with a dog) is out
        open_images_analysis_set(root / "boxes.csv", root / "class-descriptions-boxable.csv", root, ["car"],
                                 exclusive=True)


def test_open_images_bad_inputs(tmp_path):
    root = write_open_images(tmp_path / "oi", OI_IMAGES)
    boxes, names = root / "boxes.csv", root / "class-descriptions-boxable.csv"
    with pytest.raises(EatkitError, match=r"class 'boat' is not in .*\(it has 7 classes\)"):
        open_images_analysis_set(boxes, names, root, ["boat"])
    with pytest.raises(EatkitError, match="people .* cannot be objects of interest"):
        open_images_analysis_set(boxes, names, root, ["Man"])
    (root / "bad.csv").write_text("Image,Label\nc1,/m/0k4j\n")
    with pytest.raises(EatkitError, match="need the columns ImageID and LabelName"):
        open_images_analysis_set(root / "bad.csv", names, root, ["car"])
    with pytest.raises(EatkitError, match="box annotations .*nosuch.csv does not exist"):
        open_images_analysis_set(root / "nosuch.csv", names, root, ["car"])
    (root / "three.csv").write_text("/m/0k4j,Car,x\n")
    with pytest.raises(EatkitError, match="must be a CSV file of 2 columns per row"):
        open_images_analysis_set(boxes, root / "three.csv", root, ["car"])
