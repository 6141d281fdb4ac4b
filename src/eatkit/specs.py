"""The specs of eatkit's own kinds of test (:class:`eatkit.kinds.KindSpec`), named by :data:`eatkit.kinds.KINDS`.

Plain data, so that loading a suite (which reads a kind's roles) imports no analysis: each spec names its
analysis and renderer by ``"module:Class"``. The analyses read their parameters' defaults and choices
from here (e.g. ``VQA.param("questions").default``); :mod:`eatkit.stats` validates its own arguments,
and ``tests/test_kinds.py`` checks that both agree.
"""

from __future__ import annotations

from eatkit.kinds import VECTOR_SETS, Family, KindSpec, Param, Plot, Presentation, Ranking, RoleGroup, Rules
from eatkit.params import DIRECT_BIAS_C, N_FITS

EAT = KindSpec(
    "eat", ("X", "Y", "A", "B"), "eatkit.analyses.eat:EATAnalysis", renderer="eatkit.report.eat_html:EATRenderer",
    presentation=Presentation(headline="effect_size"), ranking=Ranking("effect_size", "d"),
    title="Embedding association test (WEAT/SEAT/iEAT) with the ML-EAT levels 2 and 3",
    params=(
        Param("specificity", int, 0, low=0, high=10**9, metavar="N", useful=(100, None),
              help="also estimate the false-positive rate of each test on N random re-splits of its pooled "
              "stimuli into four sets (iEAT seed, section 6; each split's p from the run's --permutations, "
              "10000 draws under 'auto'; 0: none)"),
        # facts of each test (its suite file's params)
        Param("iat_d", float, cli=False, low=-100, high=100, useful=(-3, 3), help="the human IAT's d the test replicates (e.g. iEAT Table 1), shown "
              "beside the embedding's d for comparison only"),
    ),
    degeneracy=VECTOR_SETS)
SC_EAT = KindSpec("sc-eat", ("T", "A", "B"), "eatkit.analyses.sc_eat:SCEATAnalysis",
                  renderer="eatkit.report.kinds:SCEATRenderer", title="Single-category EAT",
                  degeneracy=Rules(VECTOR_SETS.sets, compared=(("A", "B"),)))
GROUNDED = KindSpec(
    "grounded", ("X", "Y", "A_x", "A_y", "B_x", "B_y"), "eatkit.analyses.grounded:GroundedAnalysis",
    renderer="eatkit.report.grounded:GroundedRenderer", title="Grounded-WEAT/SEAT (seed 001)",
    params=(
        Param("experiment", choices=(1, 2, 3, "all"),
              help="1: images integrated out; 2: each target with its own images; 3: congruent vs incongruent "
              "images (default: all; 2 with --mask)"),
        Param("embedding", choices=("word", "sentence", "contextual", "all"), default="all",
              help="[CLS] of one-word captions, [CLS] of sentences, or the contextual word in its sentence "
              "(all: the kinds each test's captions support)"),
        Param("mask", choices=("language", "vision"),
              help="mask the contextual words or the person regions (experiment 2 on masked inputs)"),
        # facts of each test (its suite file's params)
        Param("embeddings", many="list", choices=("word", "sentence", "contextual"), default=[], cli=False,
              help="the embedding kinds the test's captions support"),
        Param("contextual_words", many="list", default=[], cli=False, empty=True,
              help="the words whose embedding in context is the contextual embedding (--mask language masks them)"),
        Param("family", cli=False, help="the bias test the test belongs to (default: the test id)"),
        Param("dataset", default="", cli=False, help="the image dataset of the test"),
    ),
    degeneracy=Rules(("zero-variance", "coincide", "overlap", "numeric-range"), compared=(("X", "Y"),),
                     note="the image sets A_x ... may share vectors (one caption over several images)"))
GEOMETRY = KindSpec(
    "geometry", None, "eatkit.analyses.geometry:GeometryAnalysis", renderer="eatkit.report.geometry:GeometryRenderer",
    title="Feature-space geometry of image classes (seed 004)",
    params=(
        Param("iterations", int, 1000, low=1, high=10**6, useful=(100, None), help="random fold draws per score"),
        Param("fold", choices=("half", "pair", "centroid"), default="half", help="fold type"),
        Param("similarity", choices=("cosine", "euclidean"), default="cosine", help="similarity of two folds"),
        Param("t_test", choices=("off", "one-sample"), default="off",
              help="also the thesis's one-sample t-test of each class's iteration scores against the reference "
              "class's mean score (p_t), beside the permutation test"),
        Param("compare", many="list", default=[], flag="--compare-model", metavar="MODEL[@CHECKPOINT]",
              help="also score the classes with this model (repeatable), e.g. the same model fine-tuned; "
              "Spearman's rho between every two models"),
        Param("compare_options", dict, cli=False, help="model options of the compare models"),
        Param("label", cli=False, help="the run model's name in the record"),
        # facts of each test (its suite file's params; eatkit analysis-set writes them)
        Param("pairs", list, many="list", cli=False, help="the inter-class comparisons, each [class, class] "
              "(default: the design of eatkit.stimuli.analysis_sets.design)"),
        Param("groups", dict, cli=False, help="group name -> score keys (a class, or 'a vs b') whose ranks are "
              "compared across models (default: the design's)"),
        Param("reference", cli=False, help="the class each class is compared with (default: random, when a "
              "class has that name)"),
        Param("sizes", dict, cli=False, help="images per class (provenance written by eatkit analysis-set)"),
        Param("available", dict, cli=False, help="images per class before sampling (provenance)"),
        Param("source", dict, cli=False, help="the inputs and options the set was made from (provenance)"),
    ),
    degeneracy=Rules(note="identical images are data here (a class without variation); each class is described, "
                         "and compare_classes applies the rules to the two classes it compares"))
RANKING = KindSpec(
    "ranking", None, "eatkit.analyses.ranking:RankingAnalysis", renderer="eatkit.report.probes:RankingRenderer",
    probe="ranking", title="Image ranking by region prompts vs a region table",
    params=(
        Param("reference", default="us-states-2019", help="bundled region table or CSV"),
        Param("prompt", default="lives-in", help="prompt set (lives-in, lives-in-state) or a template with {region}"),
        Param("overrides", many="pairs", default={}, flag="--override", metavar="REGION=PROMPT",
              help="a region's whole prompt (repeatable)"),
        Param("columns", many="pairs", default={}, flag="--column", metavar="GROUP=COLUMN",
              help="the reference column of a group (repeatable; default: the table's own mapping, else the "
              "group name)"),
        Param("k", int, low=1, high=10**7, useful=(None, None), help="images kept per region (default: the downsampled group size)"),
        Param("group_size", int, low=1, high=10**7, useful=(10, None), help="images drawn per group (default: the smallest group's size)"),
        Param("repeats", int, 1000, low=1, high=10**6, useful=(100, None), help="random balancings averaged"),
        Param("tables", many="list", default=[], flag="--table", help="another per-region table (CSV) to correlate"),
    ),
    degeneracy=Rules(note="images are ranked by comparisons of their similarities (ties shared in proportion) "
                     "and shares counted: no sum of raw values, no group without images"))
VQA = KindSpec(
    "vqa", None, "eatkit.analyses.rates:VQAAnalysis", renderer="eatkit.report.probes:VQARenderer", probe="vqa",
    title="Visual question answering per group",
    params=(
        Param("questions", many="list", flag="--question",
              default=["Is this person an American?", "What state does this person live in?"],
              help="a question (repeatable)"),
        Param("yes", default="yes", help="the answer whose rate is reported"),
        Param("regions", default="us-states-2019", help="region table (bundled or CSV) whose region names count as "
              "a region answer (default: the US states and D.C.)"),
    ),
    degeneracy=Rules(values=("empty-group",)))
CAPTION = KindSpec(
    "caption", None, "eatkit.analyses.rates:CaptionAnalysis", renderer="eatkit.report.probes:CaptionRenderer",
    probe="caption", title="Captions that mention race or ethnicity per group",
    params=(
        Param("top_p", float, [0.5, 0.6, 0.7, 0.8, 0.9], low=0, high=1, low_open=True, useful=(0.1, 1),
               many="list", sep=",",
              help="comma-separated nucleus sizes"),
        Param("lexicon", default="race-ethnicity", help="bundled lexicon or a lexicon JSON file"),
    ),
    degeneracy=Rules(values=("empty-group",)))
#: named settings of a study (``eatkit probe generate --preset NAME``; options given beside it win).
#: wolfe2022: seed 003 section 3.5, 200 iterations, 592 x 592 images, the brightness of a 50 x 50 square of
#: the forehead just above the eyebrows and between the eyes: the authors' crop (250, 175)-(300, 225) of the
#: 592 x 592 frame; the start image stretched to 592 x 592 (VQGAN-CLIP resizes its init image, Lanczos)
GENERATION_PRESETS: dict[str, dict[str, object]] = {
    "wolfe2022": {"steps": 200, "every": 10, "size": 592, "region": [250 / 592, 175 / 592, 50 / 592, 50 / 592],
                  "initial": "stretch"},
}
GENERATION = KindSpec(
    "generation", None, "eatkit.analyses.generation:GenerationAnalysis",
    renderer="eatkit.report.probes:GenerationRenderer", probe="generate",
    title="CLIP-guided generation from each group's images, or from the prompt alone",
    params=(
        Param("prompt", default="an American person", help="the text the image is optimised toward"),
        Param("text_only", bool, False, help="generate from the prompt alone, each start from seeded noise (no "
              "--images: the study's appendix A.3, Figure 8)"),
        Param("starts", int, 3, low=1, high=1000, useful=(None, None), help="with --text-only: noise starts, start i drawn from seed + i"),
        Param("steps", int, 80, low=1, high=100_000, useful=(10, None), help="optimisation steps"),
        Param("every", int, 10, low=1, high=100_000, useful=(None, None), help="keep a frame every N steps"),
        Param("lr", float, 0.05, low=0, low_open=True, high=1e3, useful=(None, 1), help="Adam learning rate"),
        Param("parameterization", choices=("pixel", "fourier"), default="pixel", help="image parameterization"),
        Param("size", int, low=1, high=4096, useful=(32, 2048), help="side of the generated image (default: the model's input size)"),
        Param("cutouts", int, 4, low=0, high=1024, useful=(None, 64), help="random crops per step (0: the whole image)"),
        Param("region", float, [11 / 24, 11 / 24, 1 / 12, 1 / 12], low=0, high=1, useful=(None, None),
               many="list", sep=",", length=4,
              help="left,top,width,height of the measured region as fractions (image starts; default: a centred "
              "square of 1/12 of the side)"),
        Param("max_images", int, low=1, high=10**7, useful=(None, None), help="at most N images per group (image starts)"),
        Param("preset", choices=tuple(GENERATION_PRESETS), help="a study's settings: wolfe2022 (200 steps, 592 px, "
              "the authors' forehead square, the start image stretched); options given beside it win"),
        Param("initial", choices=("center-square", "stretch"), default="center-square",
              help="the start image: its centre square resized (bicubic), or the whole image stretched to the "
              "square (Lanczos, as VQGAN-CLIP)"),
    ),
    degeneracy=Rules(note="optimises an image toward a prompt: no sets compared, no statistic of a group"))


# the field's metrics (eatkit.analyses.metrics, docs/metrics.md): a family on the EAT's roles, one analysis,
# one renderer (one table); a member is its function in eatkit.stats.metrics and one declaration
METRICS = Family(
    "metrics", "metric", ("X", "Y", "A", "B"), "eatkit.analyses.metrics:MetricAnalysis",
    renderer="eatkit.report.kinds:MetricRenderer", presentation=Presentation(headline="value"),
    title="The field's bias metrics (WEFE's definitions) on an EAT test's sets", degeneracy=VECTOR_SETS)
RND = METRICS.member(
    "rnd", "eatkit.stats.metrics:rnd", title="Relative norm distance (Garg et al. 2018)",
    null="X ∪ Y re-partitioned", params=(
        Param("distance", choices=("euclidean", "cosine"), default="euclidean",
              help="RND's distance: euclidean, or cosine (WEFE's 'cos': the cosine similarity)"),))
ECT = METRICS.member("ect", "eatkit.stats.metrics:ect", title="Embedding coherence test (Dev & Phillips 2019)",
                     null="X ∪ Y re-partitioned", chance=1, higher_is_better=True,
                     fixed={"alternative": "less"})
RIPA = METRICS.member("ripa", "eatkit.stats.metrics:ripa",
                      title="Relational inner product association (Ethayarajh et al. 2019)", null="pair order flipped")
MAC = METRICS.member("mac", "eatkit.stats.metrics:mac", title="Mean average cosine distance (Manzini et al. 2019)",
                     template=(None, None), chance=1)
RNSB = METRICS.member(
    "rnsb", "eatkit.stats.metrics:rnsb", title="Relative negative sentiment bias (Sweeney & Najafian 2019)",
    template=(None, 2), higher_is_better=False, params=(
        N_FITS,))
DIRECT_BIAS = METRICS.member(
    "direct-bias", "eatkit.stats.metrics:direct_bias", title="Direct bias (Bolukbasi et al. 2016)",
    higher_is_better=False, label="direct bias", params=(
        DIRECT_BIAS_C,))
CLUSTERING = METRICS.member(
    "clustering", "eatkit.stats.metrics:clustering", title="Clustering accuracy of the targets (Gonen & Goldberg 2019)",
    template=(2, 0), null="X ∪ Y re-partitioned, the clusters fixed", chance=0.5, higher_is_better=False)
RETRIEVAL = KindSpec(
    "retrieval", None, "eatkit.analyses.retrieval:RetrievalAnalysis", probe="retrieval",
    title="Retrieval bias of prompts over a labelled image set (MaxSkew@k, NDKL)",
    presentation=Presentation(columns=("attribute", "k", "mean_max_skew", "mean_ndkl", "max_skew", "p_max_skew",
                                       "ci_max_skew", "ndkl", "p_ndkl"),
                              formats={"mean_max_skew": ".3f", "mean_ndkl": ".3f"}, heading="Retrieval bias",
                              plots=(Plot("max_skew", ("ci_max_skew",), label=("test", "attribute"),
                                          axis="MaxSkew@k of each prompt"),),
                              legend="MaxSkew@k and NDKL of each prompt's ranking of the images (Geyik et al. "
                              "2019; 0: each value in its desired proportion, by default its share of the images); "
                              "means over prompts; p: label-shuffle permutation p; CI: bootstrap over images"),
    params=(
        Param("concepts", many="list", sep=",", metavar="CONCEPTS",
              default=["doctor", "nurse", "criminal", "CEO", "homemaker", "scientist"],
              help="comma-separated concepts, each put into the template"),
        Param("template", default="a photo of a {} person", help="the prompt, {} where the concept goes"),
        Param("k", int, low=1, high=10**7, useful=(None, None),
              help="images kept per prompt for MaxSkew@k (default: the smallest group's size)"),
        Param("desired", default="images", metavar="images|uniform|FILE.json",
              help="the desired proportion of each value: its share of the images, uniform, or a JSON file "
              "{value: share} (a reference table); the permutation p and bootstrap CI of each prompt's MaxSkew@k "
              "and NDKL use it"),
        Param("permutations", int, 1000, low=1, high=10**8, useful=(100, None), metavar="N",
              help="label shuffles of the permutation p of each prompt's MaxSkew@k and NDKL (group-blind null)"),
        Param("n_bootstrap", int, 1000, low=0, high=10**7, useful=(None, None), metavar="N", flag="--bootstrap",
              help="bootstrap resamples of the images for the CIs of MaxSkew@k and NDKL (0: none)"),
    ),
    degeneracy=Rules(values=("value-range",)))
T2IAT = KindSpec(
    "t2iat", ("X", "Y", "A", "B", "N"), "eatkit.analyses.t2iat:T2IATAnalysis",
    renderer="eatkit.report.generated:T2IATRenderer",
    ranking=Ranking("effect_size", "t2iat_d"),
    title="Text-to-image association test (T2IAT, Wang et al. 2023): generated images of neutral vs "
          "attribute-specific prompts",
    presentation=Presentation(
        columns=("template", "effect_size", "p_value", "q_value", "ci_low", "ci_high", "n_partitions"),
        headline="effect_size", formats={"effect_size": ".2f", "ci_low": ".2f", "ci_high": ".2f"},
        heading="T2IAT (text-to-image association tests)",
        plots=(Plot("effect_size", ("ci_low", "ci_high"), axis="d over concepts"),
               Plot("s_x", label=("test", "x_name"), axis="s(c) of each concept of X"),
               Plot("s_y", label=("test", "y_name"), axis="s(c) of each concept of Y")),
        legend="d over concepts: s(c) = mean cos(neutral, A-specific images) - mean cos(neutral, B-specific images) "
               "of concept c; p: permutation over re-partitions of the concepts X ∪ Y; CI: bootstrap over concepts"),
    params=(
        Param("template", default="a photo of a {attribute} studying {concept}", cli=False,
              help="the prompt, with {attribute} (a word of N, A or B) and {concept} (a word of X or Y)"),
    ),
    degeneracy=Rules(note="each concept's sets are generated images, checked by check_embeddings (finite, non-zero, "
                         "one dimension); identical generated images are data"))
#: the zero-shot classifier's default classes and prompts per perceived attribute (depiction tests); the
#: classes are perceived presentation, not identity (Luccioni et al. 2023, section 3)
DEPICTION_CLASSES: dict[str, dict[str, str]] = {
    "gender": {"man": "a photo of a man", "woman": "a photo of a woman"},
    "skin-tone": {"lighter": "a photo of a person with light skin", "darker": "a photo of a person with dark skin"},
    "age": {"young": "a photo of a young person", "middle-aged": "a photo of a middle-aged person",
            "old": "a photo of an old person"},
}
DEPICTION = KindSpec(
    "depiction", None, "eatkit.analyses.depiction:DepictionAnalysis",
    renderer="eatkit.report.generated:DepictionRenderer", ranking=Ranking("mad", "mad"),
    title="Who gets generated: perceived gender, skin tone and age of each prompt's images (DALL-Eval, Stable Bias)",
    params=(
        Param("attributes", many="list", sep=",", choices=tuple(DEPICTION_CLASSES), default=list(DEPICTION_CLASSES),
              help="comma-separated perceived attributes to classify"),
        Param("classes", many="pairs", default={}, flag="--class", metavar="CLASS=PROMPT",
              help="a class of the zero-shot classifier and its prompt (repeatable; replaces the default prompts "
              "of a single --attributes)"),
        Param("reference", default="uniform",
              help="the reference distribution: uniform, or a CSV of group,attribute,class,share rows (e.g. a "
              "labour-statistics table; groups it does not list are compared with uniform)"),
    ),
    degeneracy=Rules(note="shares of generated images per class: every group holds the images generated for it"))
# language models (eatkit.analyses.language_models, docs/language-models.md): a model hf-mlm:/hf-lm: scores or answers
CROWS_PAIRS = KindSpec(
    "crows-pairs", (), "eatkit.analyses.language_models:CrowsPairsAnalysis",
    title="CrowS-Pairs: how often a language model prefers the more stereotyping sentence (Nangia et al. 2020)",
    presentation=Presentation(columns=("bias_type", "pairs", "share", "ci_low", "ci_high", "p_value", "ties"),
                              headline="bias", formats={"share": ".3f", "ci_low": ".3f", "ci_high": ".3f"},
                              heading="CrowS-Pairs",
                              plots=(Plot("share", ("ci_low", "ci_high"), label=("test", "bias_type"),
                                          reference=0.5, axis="share preferring the more stereotyping sentence"),),
                              legend="share: pairs whose more stereotyping sentence scores higher (0.5: no preference; "
                              "ties counted as not higher, as metric.py); p: exact binomial test of the untied pairs "
                              "against 1/2; CI: bootstrap over pairs; headline (heatmaps, audit): bias = 2 share - 1"),
    ranking=Ranking("bias", "crows_pairs"),
    params=(
        Param("pairs_file", default="crows-pairs", flag="--crows-pairs", metavar="CSV",
              help="the CrowS-Pairs CSV (default: the dataset of 'eatkit data get crows-pairs')"),
        Param("max_pairs", int, low=1, high=10**7, useful=(100, None),
              help="score only the first N pairs (a quick look; default: all)"),
        Param("decimals", int, 3, low=0, high=15, useful=(3, None),
              help="compare scores rounded to this many decimals, as CrowS-Pairs' "
              "metric.py (3)"),
    ),
    degeneracy=Rules(values=("value-range", "all-tied")))
STEREOSET = KindSpec(
    "stereoset", (), "eatkit.analyses.language_models:StereoSetAnalysis",
    title="StereoSet intrasentence: stereotype score, language-model score, ICAT (Nadeem et al. 2021)",
    presentation=Presentation(columns=("bias_type", "examples", "ss", "lms", "icat", "p_value"), headline="bias",
                              formats={"ss": ".2f", "lms": ".2f", "icat": ".2f"}, heading="StereoSet (intrasentence)",
                              plots=(Plot("ss", ("ss_ci_low", "ss_ci_high"), label=("test", "bias_type"), reference=50,
                                          axis="SS (%): stereotype more likely"),),
                              legend="SS: percent of examples whose stereotype is more likely than its anti-stereotype "
                              "(50: none); LMS: percent of meaningful options more likely than the unrelated one; "
                              "ICAT = LMS min(SS, 100 - SS) / 50; p: exact binomial test of SS's count against 1/2; "
                              "headline (heatmaps, audit): bias = (SS - 50) / 50"),
    ranking=Ranking("bias", "stereoset"),
    params=(
        Param("stereoset_file", default="stereoset", flag="--stereoset", metavar="JSON",
              help="StereoSet's dev.json (default: the dataset of 'eatkit data get stereoset --allow-unverified')"),
        Param("max_examples", int, low=1, high=10**7, useful=(100, None), help="score only the first N examples (default: all)"),
    ),
    degeneracy=Rules(values=("value-range",)))
#: how a local model answers a multiple-choice question (the bbq and answers kinds: one --answer-mode flag)
ANSWER_MODE = Param("answer_mode", choices=("loglik", "generate"), default="loglik", flag="--answer-mode", answerer=True,
                    help="how a local model answers a multiple-choice question: the option of highest "
                    "log-likelihood, or a generated answer parsed as the authors parse a prediction (an answers "
                    "test's open-ended item is always answered by generation)")
# answer benchmarks (eatkit.analyses.answers, docs/answers.md): recorded answers (--answers) or a local answerer
ANSWERS = KindSpec(
    "answers", (), "eatkit.analyses.answers:AnswersAnalysis",
    title="Answers of a language or vision-language model scored per group: rates, differences, paired "
    "counterfactual tests, decision effects",
    presentation=Presentation(columns=("row", "split", "group", "compared", "n", "estimate", "ci_low", "ci_high",
                                       "p_value", "q_value"), headline="estimate",
                              formats={"estimate": ".3f", "ci_low": ".3f", "ci_high": ".3f"}, heading="Answers",
                              plots=(Plot("estimate", ("ci_low", "ci_high"), label=("test", "split", "group", "compared"),
                                          reference=None, axis="estimate", panels="row"),),
                              legend="rate: share of a group's answers with the counted outcome (Wilson CI, or "
                              "cluster-robust with clusters); difference: the group minus the others (Newcombe CI, "
                              "Fisher's exact p); paired: first minus second level within counterfactual pairs "
                              "(exact McNemar, or sign-flip permutation of pair means); effect: random-effects "
                              "difference of mean logit p(yes) against the reference over decision questions; q: Benjamini-Hochberg "
                              "over the run's answer tests"),
    ranking=Ranking("estimate", "answers"),
    params=(
        Param("measure", default="rate", choices=("rate", "paired", "decision"), cli=False,
              help="what the test computes: per-group rates, a paired comparison of two levels within "
              "counterfactual pairs, or decision effects per attribute"),
        Param("outcome", default="choice", cli=False,
              help="the answer field read as the outcome (choice, text, score, or a column of the item)"),
        Param("values", many="list", default=[], sep="|", cli=False, empty=True,
              help="the outcome values counted (a rate's successes); none: the outcome is a number"),
        Param("group", default="group", cli=False, help="the answer field that names the group (pair family)"),
        Param("split", default="", cli=False, help="a field whose values are analysed apart (e.g. condition)"),
        Param("paired", default="", cli=False, help="the field whose two levels are compared within pairs"),
        Param("pair_by", default="pair", cli=False,
              help="the field that matches answers into counterfactual pairs (default: the answers' pair id; item: "
              "the same item under the two levels)"),
        Param("levels", many="list", default=[], sep="|", cli=False, empty=True,
              help="the two levels of the paired field, first minus second"),
        Param("cluster", default="", cli=False,
              help="a field whose answers share a cluster (repeated samples, a template): cluster-robust rates"),
        Param("reference", many="list", default=[], sep="|", cli=False, empty=True,
              help="decision effects: attribute=reference value, one per attribute"),
        Param("select", many="list", default=[], sep="|", cli=False, empty=True,
              help="keep only answers whose field has a value (field=value, alternatives joined by |)"),
        Param("scorer", default="", cli=False,
              help="a declared scorer of text answers (lexicon:<name>, words); its value is the outcome 'score'"),
        Param("task", default="", cli=False, help="the benchmark's task name (asked of a local answerer)"),
        Param("items", default="", cli=False,
              help="the benchmark's items, a JSON Lines file (id, question, options, context, image, group, pair, "
              "...; relative to the suite file): a local model (--model) answers them, and recorded answers get "
              "their facts by item id"),
        Param("items_sha256", default="", cli=False,
              help="the items file's SHA-256 (set when the suite loads; given in a suite file, a different file "
              "is refused)"),
        ANSWER_MODE,
    ),
    degeneracy=Rules(values=("value-range", "all-tied", "empty-group")))
LLM_IAT = KindSpec(
    "llm-iat", ("X", "Y", "A", "B"), "eatkit.analyses.language_models:LLMIATAnalysis",
    title="Prompted word-association test of a language model (LLM-IAT, Bai et al. 2025)",
    presentation=Presentation(columns=("domain", "responses", "parsed", "unparseable", "refused", "bias_score",
                                       "association", "ci_low", "ci_high", "p_value"),
                              headline="bias_score",
                              formats={"bias_score": ".3f", "association": ".3f", "ci_low": ".3f", "ci_high": ".3f"},
                              heading="LLM-IAT",
                              plots=(Plot("bias_score", ("bias_score_ci_low", "bias_score_ci_high"), axis="bias score"),
                                     Plot("association", ("ci_low", "ci_high"), axis="word-level association")),
                              legend="bias_score: the authors' mean over responses of N(B words, Y)/N(Y) + "
                              "N(A words, X)/N(X) - 1 (1: every pairing stereotypical); association: mean share of X "
                              "pairings of the A words minus that of the B words; its p: permutation test over "
                              "attribute words, CI: bootstrap over prompt variants and words"),
    ranking=Ranking("bias_score", "llm_iat"),
    params=(
        Param("samples", int, 50, low=1, high=100_000, useful=(10, None),
              help="prompts per template, each with a random pair of group names, their "
              "order and the order of the words drawn from the seed (the authors sent 50)"),
        Param("templates", many="list", default=["instruction1", "instruction2", "replication"], sep=",",
              help="prompt templates: the authors' instruction1, instruction2, replication, or a text with {a}, {b} "
              "(the group names) and {words}"),
        Param("answer_tokens", int, 200, low=1, high=32_768, useful=(64, None), help="longest answer in tokens"),
        Param("temperature", float, 1.0, low=0, high=100, useful=(0, 2),
              help="sampling temperature (0: greedy; the authors' API default 1)"),
        # facts of each test (the suite file's params)
        Param("category", cli=False, help="the dataset's name in the authors' response files"),
        Param("variations", many="list", default=[], cli=False, empty=True,
              help="the authors' prompt variations of this test's words, in their response files"),
        Param("domain", default="", cli=False, help="the test's domain (race, gender, religion, health, age)"),
        Param("unscored", many="list", default=[], cli=False, empty=True,
              help="words of the prompts whose side is unknown: their pairings are read, counted apart, not scored"),
    ),
    degeneracy=Rules(values=("value-range",)))

BBQ_CATEGORIES = ("Age", "Disability_status", "Gender_identity", "Nationality", "Physical_appearance", "Race_ethnicity",
                  "Race_x_SES", "Race_x_gender", "Religion", "SES", "Sexual_orientation")
BBQ = KindSpec(
    "bbq", (), "eatkit.analyses.bbq:BBQAnalysis", renderer="eatkit.report.answers:BBQRenderer",
    title="BBQ: accuracy and bias scores of a model's answers in ambiguous and disambiguated contexts "
          "(Parrish et al. 2022)",
    presentation=Presentation(
        columns=("category", "context", "n", "accuracy", "bias_score", "ci_low", "ci_high", "p_value", "q_value"),
        headline="bias_score", formats={"accuracy": ".3f", "bias_score": ".3f", "ci_low": ".3f", "ci_high": ".3f"},
        heading="BBQ (bias benchmark for QA)",
        legend="bias_score: the authors' s_DIS = 2 n_target/n_non_unknown - 1 (disambig) and s_AMB = (1 - accuracy) "
               "s (ambig), -1..1 (the paper prints x100); CI: Wilson interval of n_target/n_non_unknown mapped by "
               "2p - 1 (disambig), Bonett-Price adjusted Wald interval of (n_target - n_non_target)/n (ambig); p: "
               "exact binomial test of n_target against n_non_target; q: Benjamini-Hochberg over the categories and "
               "contexts"),
    ranking=Ranking("bias_score", "bbq", per=("category", "context")),
    params=(
        Param("bbq_data", default="bbq", flag="--bbq-data", metavar="DIR",
              help="the BBQ folder (data/<Category>.jsonl, plain or gzipped; default: the dataset of "
              "'eatkit data get bbq')"),
        Param("bbq_metadata", default="", flag="--bbq-metadata", metavar="CSV",
              help="the authors' additional_metadata.csv (each item's bias-consistent answer; 'bbq': the "
              "dataset's copy); default: derived from each item's stereotyped_groups and answer_info"),
        Param("categories", many="list", sep=",", choices=BBQ_CATEGORIES, default=list(BBQ_CATEGORIES),
              flag="--bbq-categories", help="comma-separated BBQ categories to score (default: all found)"),
        Param("max_items", int, low=1, high=10**7, useful=(100, None), flag="--bbq-max-items",
              help="score only the first N items of each category (a quick look; default: all)"),
        ANSWER_MODE,
    ),
    degeneracy=Rules(note="a category and context whose answers name no option, or only the unknown one, is "
                     "recorded, not refused, with a warning (analyses.bbq: nothing scored; UNDEFINED_BIAS): the "
                     "test's other categories count"))

_MULTIGROUP_LEGEND = ("roles: target sets T1..Tn and attribute sets A1..Am; p: permutation p (exact: every "
                      "distinct assignment counted); CI: percentile bootstrap over target words")
SAME = KindSpec(
    "same", (RoleGroup("T", 1, help="target sets"), RoleGroup("A", 2, help="attribute sets")),
    "eatkit.analyses.multigroup:SAMEAnalysis",
    title="SAME score of target words against two or more attribute sets (Schröder et al. 2021)",
    presentation=Presentation(columns=("statistic", "value", "ci", "skew", "p_value", "q_value", "p_value_exact"),
                              headline="value", formats={"value": ".3f", "skew": ".3f"}, heading="SAME",
                              plots=(Plot("value", ("ci",), label=("test", "statistic"), axis="SAME"),),
                              legend="mean over target words of |cos(t, d_1)| (+ length-weighted |cos| with the "
                              "orthogonalised further directions); skew: signed mean with two attribute sets; p: "
                              "attribute words re-assigned among the attribute sets. " + _MULTIGROUP_LEGEND),
    degeneracy=Rules(VECTOR_SETS.sets, compared=(("A",),)))
GENERALIZED_WEAT = KindSpec(
    "generalized-weat", (RoleGroup("T", 2, help="target sets"), RoleGroup("A", 2, help="attribute sets, paired with them")),
    "eatkit.analyses.multigroup:GeneralizedWEATAnalysis",
    title="Generalised WEAT of n target sets against n attribute sets (Swinger et al. 2019)",
    presentation=Presentation(columns=("statistic", "value", "ci", "p_value", "q_value", "p_value_exact"),
                              headline="value", formats={"value": ".4f"}, heading="Generalised WEAT",
                              plots=(Plot("value", ("ci",), label=("test", "statistic"), axis="generalised WEAT"),),
                              legend="sum over groups of <mean X_i - mean of means, mean A_i - mean of means> "
                              "(unit vectors); p: target words re-assigned among the target sets. "
                              + _MULTIGROUP_LEGEND),
    degeneracy=Rules(VECTOR_SETS.sets, compared=(("T",), ("A",))))
CEAT = KindSpec(
    "ceat", ("X", "Y", "A", "B"), "eatkit.analyses.ceat:CEATAnalysis",
    title="CEAT: effect sizes over sampled sentence contexts, combined by random effects (Guo & Caliskan 2021)",
    presentation=Presentation(
        columns=("estimate", "ci", "p_value", "tau2", "i2", "q_p_value", "prediction_interval", "mean_effect",
                 "n_contexts"),
        headline="estimate", formats={"estimate": ".3f", "tau2": ".3g", "i2": ".0%", "mean_effect": ".3f"},
        heading="CEAT (random effects over sentence contexts)",
        plots=(Plot("estimate", ("ci",), axis="combined effect size"),),
        legend="estimate: random-effects combination of the N per-context effect sizes (within-sample variance: "
        "Hedges-Olkin closed form, or with --ceat-variance ceat the variance of the association scores, as CEAT's "
        "code); p_value: two-sided, p_value_greater: one-sided as CEAT's code; tau2, I²: their heterogeneity; "
        "q_p_value: Cochran's Q test; prediction interval: Higgins et al. 2009; mean_effect: the plain mean of the "
        "N effect sizes"),
    params=(
        Param("corpus", metavar="FILE", help="CEAT: a text file of sentences, one per line; each word is embedded "
              "in sentences of it that contain the word (use a contextual model with pooling=token)"),
        Param("context_templates", many="list", default=[], flag="--context-template", metavar="TEMPLATE",
              help="CEAT: a sentence template with {x} where the word goes (repeatable), instead of --corpus"),
        Param("contexts", int, 100, low=2, high=10**6, useful=(20, None), metavar="N",
              help="CEAT: distinct sentence contexts drawn per word, without replacement (Guo & Caliskan: 10,000); "
              "capped, with a recorded warning, at the distinct contexts of the word with fewest"),
        Param("ceat_variance", choices=("hedges-olkin", "ceat"), default="hedges-olkin",
              help="CEAT: the within-sample variance of each context sample's effect size: the closed form of a "
              "standardised mean difference, or as CEAT's code weights them (the variance of the association "
              "scores; with --meta-method dl the estimate equals CEAT's combined effect size)"),
        Param("meta_method", choices=("dl", "pm", "reml"), default="dl",
              help="CEAT: the estimator of the between-context variance tau² (DerSimonian-Laird, Paule-Mandel, "
              "REML)"),
    ),
    degeneracy=VECTOR_SETS)
SEED_SETS = KindSpec(
    "seed-sets", None, "eatkit.analyses.seed_sets:SeedSetsAnalysis",
    title="Seed-set sensitivity: the EAT with alternative attribute sets A_<variant>, B_<variant> "
    "(Antoniak & Mimno 2021)",
    presentation=Presentation(
        columns=("effect_sizes", "d_min", "d_max", "d_sd", "share_significant", "share_same_sign", "verdicts_agree"),
        formats={"d_min": ".3f", "d_max": ".3f", "d_sd": ".3f", "share_significant": ".0%", "share_same_sign": ".0%"},
        heading="Seed-set sensitivity",
        plots=(Plot("effect_sizes", axis="d with the suite's sets and each variant"),),
        legend="d of the test with the suite's attribute sets A, B and with each variant pair A_<variant>, "
        "B_<variant>; their range and SD; the share of variants significant (p < alpha) and with the suite's sign; "
        "whether every verdict agrees"),
    params=(
        Param("catalogue", default="", cli=False,
              help="seed-sets: a catalogue of published seed sets whose pairs become variants: \"bad-seeds\" (fetched "
              "by `eatkit data get bad-seeds`) or a file in its format (relative to the suite file's folder)"),
        Param("catalogue_a", many="list", default=[], cli=False,
              help="seed-sets: the catalogue's A sets, by Category or Seeds ID (paired with B sets used in the same "
              "paper)"),
        Param("catalogue_b", many="list", default=[], cli=False,
              help="seed-sets: the catalogue's B sets, by Category or Seeds ID"),
        Param("catalogue_sha256", default="", cli=False,
              help="seed-sets: the catalogue file's SHA-256 (checked when given; recorded by eatkit)"),
    ),
    degeneracy=VECTOR_SETS)
