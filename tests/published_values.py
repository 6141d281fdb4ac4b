"""Published results that the bundled suites should reproduce, keyed by eatkit test id.

p-values are kept as printed (``"<1e-2"`` for :math:`p < 10^{-2}`), effect sizes as floats.
"""

# Steed & Caliskan (2021), Table 1: iEAT d and permutation p for iGPT-L and SimCLRv2, with the number of
# images per target set (n_t) and per attribute set (n_a), and the human IAT d (None where Table 1 says N/A).
IEAT_TABLE1 = {
    "age": {"igpt": (0.42, "0.24"), "simclr": (0.59, "0.16"), "n_t": 6, "n_a": 55, "iat_d": 1.23},
    "arab-muslim": {"igpt": (0.86, "0.02"), "simclr": (1.06, "<1e-2"), "n_t": 10, "n_a": 55, "iat_d": 0.33},
    "asian": {"igpt": (0.25, "0.34"), "simclr": (0.47, "0.21"), "n_t": 6, "n_a": 6, "iat_d": 0.62},
    "disability": {"igpt": (-0.02, "0.53"), "simclr": (0.38, "0.34"), "n_t": 4, "n_a": 55, "iat_d": 1.05},
    "gender-career": {"igpt": (0.62, "<1e-2"), "simclr": (0.74, "<1e-3"), "n_t": 40, "n_a": 21, "iat_d": 1.1},
    "gender-science": {"igpt": (0.44, "0.02"), "simclr": (-0.10, "0.67"), "n_t": 40, "n_a": 21,
                       "iat_d": 0.93},
    "insect-flower": {"igpt": (0.34, "0.07"), "simclr": (1.69, "<1e-3"), "n_t": 35, "n_a": 55, "iat_d": 1.35},
    "native": {"igpt": (-0.33, "0.73"), "simclr": (-0.19, "0.65"), "n_t": 8, "n_a": 5, "iat_d": 0.46},
    "race": {"igpt": (-0.62, "0.85"), "simclr": (-0.57, "0.83"), "n_t": 6, "n_a": 55, "iat_d": 0.86},
    "religion": {"igpt": (0.37, "0.25"), "simclr": (0.36, "0.26"), "n_t": 7, "n_a": 55, "iat_d": -0.34},
    "sexuality": {"igpt": (-0.03, "0.52"), "simclr": (0.04, "0.47"), "n_t": 9, "n_a": 55, "iat_d": 0.74},
    "skin-tone": {"igpt": (1.26, "<1e-2"), "simclr": (-0.19, "0.71"), "n_t": 7, "n_a": 55, "iat_d": 0.73},
    "weapon": {"igpt": (0.86, "0.07"), "simclr": (1.38, "<1e-2"), "n_t": 6, "n_a": 7, "iat_d": 1.0},
    "weapon-modern": {"igpt": (0.88, "0.06"), "simclr": (1.28, "0.01"), "n_t": 6, "n_a": 9, "iat_d": None},
    "weight": {"igpt": (1.67, "<1e-3"), "simclr": (-0.30, "0.74"), "n_t": 10, "n_a": 55, "iat_d": 1.83},
}

# Steed & Caliskan (2021), Table 2 (intersectional tests) is omitted from the project's copy of the paper.
# These are the iGPT values its Sections 7.2.1-7.2.2 quote in the text (no SimCLR values are quoted).
IEAT_TABLE2_IGPT_FROM_TEXT = {
    "valence-bw": (1.16, "<1e-3"),
    "valence-wmbm": (0.88, "<1e-2"),
    "valence-wmbf": (0.83, "<1e-2"),
    "valence-wmwf": (0.79, "<1e-2"),
    "valence-wfbm": (1.46, "<1e-3"),
    "gender-career-mf": (0.81, "<1e-3"),
    "gender-career-wmwf": (0.97, "<1e-3"),
    "gender-career-wmbm": (0.89, "<1e-2"),
    "gender-science-wmbm": (0.49, "<1e-1"),
    "gender-science-wmbf": (0.80, "<1e-2"),
}

# Caliskan, Bryson & Narayanan (2017), Table 1: WEAT effect sizes on GloVe (Common Crawl 840B).
WEAT_CALISKAN_D = {
    "weat1": 1.50,
    "weat2": 1.53,
    "weat3": 1.41,
    "weat4": 1.50,
    "weat5": 1.28,
    "weat6": 1.81,
    "weat7": 1.06,
    "weat8": 1.24,
    "weat9": 1.38,
    "weat10": 1.21,
}

# Steed & Caliskan's public outputs (ryansteed/ieat, output/results-full.csv): every test their code runs,
# d and p of iGPT-L logits (igpt-logit_l_32), iGPT-L features (igpt_l_32) and SimCLRv2 (simclr_152_3x_sk1), keyed
# by (eatkit suite, test id), with the authors" test name. p is one-sided (X with A), counted over all
# C(2n, n) partitions when at most 10,000 (n <= 7), else from 10,000 random partitions (4 decimals).
IEAT_AUTHORS_OUTPUTS = {  # (suite, test): (the authors' name, {model: (d, p)})
    ("ieat", "insect-flower"): ("Insect-Flower", {"igpt-logit": (-0.32474068269740475, 0.9082), "igpt": (0.3440325875113741, 0.0731), "simclr": (1.6886931291249727, 0.0001)}),
    ("ieat", "weapon"): ("Weapon", {"igpt-logit": (-1.6425625168784792, 0.9989177489177489), "igpt": (0.8617289289768112, 0.06818181818181818), "simclr": (1.3758462876690913, 0.008658008658008658)}),
    ("ieat", "weapon-modern"): ("Weapon (Modern)", {"igpt-logit": (-1.1897473848321076, 0.9805194805194806), "igpt": (0.876496589160384, 0.06060606060606061), "simclr": (1.2813346233335348, 0.010822510822510822)}),
    ("ieat", "native"): ("Native", {"igpt-logit": (0.31724314175566637, 0.275), "igpt": (-0.33446515881027794, 0.7371), "simclr": (-0.19435758403797473, 0.6511)}),
    ("ieat", "asian"): ("Asian", {"igpt-logit": (0.25227824257967013, 0.35714285714285715), "igpt": (0.2543832274917732, 0.3365800865800866), "simclr": (0.4719991381995007, 0.20887445887445888)}),
    ("ieat", "weight"): ("Weight", {"igpt-logit": (-0.8359741991310607, 0.9687), "igpt": (1.6654822471433293, 0.0001), "simclr": (-0.29959345217595434, 0.7453)}),
    ("ieat", "skin-tone"): ("Skin-Tone", {"igpt-logit": (0.42000266141232295, 0.36247086247086246), "igpt": (1.2553244910584593, 0.006993006993006993), "simclr": (-0.19223709480610007, 0.7138694638694638)}),
    ("ieat", "disability"): ("Disability", {"igpt-logit": (-0.6524653849664244, 0.7571428571428571), "igpt": (-0.01853072625181706, 0.5285714285714286), "simclr": (0.378423709809162, 0.34285714285714286)}),
    ("ieat", "president-kennedy-trump"): ("President - Kennedy vs. Trump", {"igpt-logit": (-0.9556292053944256, 0.9534632034632035), "igpt": (0.05063176914437696, 0.4696969696969697), "simclr": (0.09531705616594104, 0.4329004329004329)}),
    ("ieat", "president-clinton-trump"): ("President - B. Clinton vs. Trump", {"igpt-logit": (-0.7660855941401676, 0.9004329004329005), "igpt": (-0.8681116795593076, 0.9372294372294372), "simclr": (-0.011348707718673192, 0.5075757575757576)}),
    ("ieat", "president-bush-trump"): ("President - Bush vs. Trump", {"igpt-logit": (-0.24050183636604333, 0.6515151515151515), "igpt": (0.5159937391980686, 0.2077922077922078), "simclr": (0.8555450597258758, 0.07683982683982683)}),
    ("ieat", "president-lincoln-trump"): ("President - Lincoln vs. Trump", {"igpt-logit": (-0.19487718126591763, 0.6233766233766234), "igpt": (1.1765828931736355, 0.020562770562770564), "simclr": (-0.018185397141612845, 0.5108225108225108)}),
    ("ieat", "religion"): ("Religion", {"igpt-logit": (0.2921837194403789, 0.30011655011655014), "igpt": (0.3724243513659896, 0.2532051282051282), "simclr": (0.3644082514210075, 0.26019813519813517)}),
    ("ieat", "sexuality"): ("Sexuality", {"igpt-logit": (0.6902284137948684, 0.0734), "igpt": (-0.026192674787349175, 0.5223), "simclr": (0.03653332761840453, 0.471)}),
    ("ieat", "race"): ("Race", {"igpt-logit": (-0.1718630381862799, 0.6179653679653679), "igpt": (-0.6193783257256239, 0.8463203463203464), "simclr": (-0.5712131344855029, 0.8268398268398268)}),
    ("ieat", "arab-muslim"): ("Arab-Muslim", {"igpt-logit": (0.06261978434247202, 0.4367), "igpt": (0.8610626018956954, 0.0248), "simclr": (1.0578414993919503, 0.0057)}),
    ("ieat", "age"): ("Age", {"igpt-logit": (0.38111795863266235, 0.37554112554112556), "igpt": (0.422718905555671, 0.24134199134199133), "simclr": (0.5890615792692063, 0.16017316017316016)}),
    ("ieat", "gender-science"): ("Gender-Science", {"igpt-logit": (0.3681103731470981, 0.0513), "igpt": (0.4448515870227443, 0.0215), "simclr": (-0.0974656135822423, 0.661)}),
    ("ieat", "gender-career"): ("Gender-Career", {"igpt-logit": (0.0369451632350923, 0.4344), "igpt": (0.6188690487862906, 0.0023), "simclr": (0.7397587630327744, 0.0003)}),
    ("ieat-intersectional", "gender-science-mf"): ("Intersectional-Gender-Science-MF", {"igpt-logit": (0.6226466881912889, 0.0019), "igpt": (-0.0041921774074935095, 0.5069), "simclr": (-0.2544088708683285, 0.8721)}),
    ("ieat-intersectional", "gender-science-wmbm"): ("Intersectional-Gender-Science-WMBM", {"igpt-logit": (0.2822171914181423, 0.1886), "igpt": (0.4856660365225774, 0.0629), "simclr": (0.8244198616906756, 0.0032)}),
    ("ieat-intersectional", "gender-science-wmbf"): ("Intersectional-Gender-Science-WMBF", {"igpt-logit": (0.8096266330743606, 0.0047), "igpt": (0.7952431396853267, 0.0055), "simclr": (0.7240217331337724, 0.0102)}),
    ("ieat-intersectional", "gender-science-wmwf"): ("Intersectional-Gender-Science-WMWF", {"igpt-logit": (0.8357922729767541, 0.0024), "igpt": (-0.37264179826567456, 0.8847), "simclr": (-0.49432660214290924, 0.9371)}),
    ("ieat-intersectional", "gender-science-bmbf"): ("Intersectional-Gender-Science-BMBF", {"igpt-logit": (0.4460135336758137, 0.0808), "igpt": (0.3335634685785216, 0.1542), "simclr": (-0.06126448557283917, 0.5756)}),
    ("ieat-intersectional", "gender-science-bmwf"): ("Intersectional-Gender-Science-BMWF", {"igpt-logit": (0.4258148813437169, 0.0901), "igpt": (-0.8669445742274683, 0.9977), "simclr": (-1.26285029027587, 1.0)}),
    ("ieat-intersectional", "gender-career-mf"): ("Intersectional-Gender-Career-MF", {"igpt-logit": (-0.29354878774328425, 0.8953), "igpt": (0.8054119783368218, 0.0001), "simclr": (0.9592758852481046, 0.0001)}),
    ("ieat-intersectional", "gender-career-wmbm"): ("Intersectional-Gender-Career-WMBM", {"igpt-logit": (0.21732799373619252, 0.2502), "igpt": (0.8943251737926442, 0.0021), "simclr": (0.11138791955403875, 0.3631)}),
    ("ieat-intersectional", "gender-career-wmbf"): ("Intersectional-Gender-Career-WMBF", {"igpt-logit": (-0.5983865929188862, 0.9721), "igpt": (0.19500043181528912, 0.2715), "simclr": (0.7117805330613741, 0.0117)}),
    ("ieat-intersectional", "gender-career-wmwf"): ("Intersectional-Gender-Career-WMWF", {"igpt-logit": (-0.3327247796742627, 0.8392), "igpt": (0.9686221508531745, 0.0006), "simclr": (1.260827583996383, 0.0001)}),
    ("ieat-intersectional", "gender-career-bmbf"): ("Intersectional-Gender-Career-BMBF", {"igpt-logit": (-0.2720740885103943, 0.7968), "igpt": (0.8422696737252089, 0.0027), "simclr": (0.6898125274380115, 0.0142)}),
    ("ieat-intersectional", "gender-career-bmwf"): ("Intersectional-Gender-Career-BMWF", {"igpt-logit": (0.000769217681467579, 0.5029), "igpt": (1.344890173092039, 0.0001), "simclr": (1.1637503923689145, 0.0001)}),
    ("ieat-intersectional", "valence-bw"): ("Intersectional-Valence-BW", {"igpt-logit": (0.4392856502437437, 0.0229), "igpt": (1.1585995159796385, 0.0001), "simclr": (0.06460666893329389, 0.3796)}),
    ("ieat-intersectional", "valence-wmbm"): ("Intersectional-Valence-WMBM", {"igpt-logit": (0.1996614626698584, 0.2707), "igpt": (0.8753598303531951, 0.0021), "simclr": (-0.2015403441132647, 0.7293)}),
    ("ieat-intersectional", "valence-wmbf"): ("Intersectional-Valence-WMBF", {"igpt-logit": (-0.15651737945643035, 0.6851), "igpt": (0.8267455075167965, 0.0031), "simclr": (-0.14554823974383543, 0.671)}),
    ("ieat-intersectional", "valence-wmwf"): ("Intersectional-Valence-WMWF", {"igpt-logit": (0.8254092808292679, 0.0037), "igpt": (0.7941010369634978, 0.0039), "simclr": (0.46016574094024354, 0.0698)}),
    ("ieat-intersectional", "valence-wfbm"): ("Intersectional-Valence-WFBM", {"igpt-logit": (1.2243289583523007, 0.0001), "igpt": (1.4550653355037966, 0.0001), "simclr": (0.23344870673176213, 0.2295)}),
    ("ieat-intersectional", "valence-bfbm"): ("Intersectional-Valence-BFBM", {"igpt-logit": (0.4127965013333357, 0.0924), "igpt": (0.17438797999689565, 0.2875), "simclr": (-0.10194123224934336, 0.6131)}),
    ("ieat-intersectional", "valence-wfbf"): ("Intersectional-Valence-WFBF", {"igpt-logit": (0.804197734490107, 0.0037), "igpt": (1.509913260360105, 0.0001), "simclr": (0.40919504346579477, 0.0984)}),
    ("ieat-intersectional", "valence-fm"): ("Intersectional-Valence-FM", {"igpt-logit": (0.61485744996307, 0.0032), "igpt": (0.3949652676220293, 0.0398), "simclr": (0.19237677493038313, 0.1887)}),
}
