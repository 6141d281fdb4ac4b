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
