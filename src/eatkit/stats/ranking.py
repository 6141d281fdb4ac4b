"""Image ranking against a region table ("American == White" seed, section 4) and ranking fairness.

* :func:`rank_shares`: for each region (a row of text-image cosine similarities), downsample every group
  of images at random to the smallest group's size m, take the top k (default m) images by similarity,
  count them per group, repeat and average: the share of each group in the top k, regions x groups.
  The seed balances the four CFD groups to 108 images each, keeps the 108 most similar images of each
  state's prompt and averages the counts over 1,000 random balancings.
* :func:`compare_shares`: Pearson r of each group's shares with a reference table (e.g. census shares)
  across regions, and the R^2 of a multi-output linear regression of the reference on the shares,
  averaged over outputs (the seed's Table 1 measure).
* :func:`correlate_regions`: Pearson r of every group's shares with every column of another per-region
  table (e.g. state IAT means; the seed's Figure 2).
* :func:`max_skew` and :func:`ndkl`: the ranking-fairness measures of Geyik, Ambler & Kenthapadi (KDD
  2019), used for vision-language retrieval by Berg et al. (2022); :func:`skew_uncertainty`: both for
  one ranking by scores with a permutation p (group labels shuffled over the ranked items) and a
  percentile bootstrap CI (items resampled, re-ranked).

Per-region tables are :class:`RegionValues` (numbers, region names, column names); a table given as a
pandas DataFrame (indexed by region) is read through its ``index``, ``columns`` and ``to_numpy`` without
this module importing pandas (:func:`region_values`).
"""

from __future__ import annotations

import numbers
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np

from eatkit.errors import EatkitError
from eatkit.stats._random import resolve_rng
from eatkit.stats._validation import check_count, check_values
from eatkit.stats.degeneracy import SHARE_RANGE, check_range
from eatkit.stats.options import check_option

#: at most this many similarity values are held at once while ranking (chunks of repeats)
_CHUNK_VALUES = 8_000_000


def _group_codes(groups: Sequence[Any], n: int) -> tuple[list[str], np.ndarray]:
    """Sorted group names and each image's code; the labels must match the images one to one."""
    labels = np.asarray([str(g) for g in groups])
    if labels.ndim != 1 or labels.size != n:
        raise EatkitError(f"groups has {labels.size} labels but there are {n} images (one label per image)")
    names, codes = np.unique(labels, return_inverse=True)
    if names.size < 2:
        raise EatkitError(f"ranking needs at least 2 groups of images, got {names.size}")
    return [str(x) for x in names], codes


@dataclass(frozen=True)
class RegionValues:
    """Numbers per region and column: ``values[i, j]`` is region ``regions[i]``'s value in column
    ``columns[j]`` (ranked shares per group, census shares, mean IAT scores, ...).

    >>> t = RegionValues(np.array([[0.25, 0.75]]), ("Ohio",), ("a", "b"))
    >>> t.row("Ohio"), t.column("b").tolist()
    ({'a': 0.25, 'b': 0.75}, [0.75])
    """

    values: np.ndarray
    regions: tuple[str, ...]
    columns: tuple[str, ...]

    def row(self, region: str) -> dict[str, float]:
        """One region's values by column."""
        return dict(zip(self.columns, map(float, self.values[self.regions.index(region)])))

    def column(self, name: str) -> np.ndarray:
        """One column's values, in the order of :attr:`regions`."""
        return self.values[:, self.columns.index(name)]

    def to_dict(self) -> dict[str, dict[str, float]]:
        """Region -> column -> value."""
        return {r: self.row(r) for r in self.regions}


def region_values(table: Any, what: str = "table") -> RegionValues:
    """``table`` as :class:`RegionValues`: itself, or a table with ``index`` (regions), ``columns`` and
    ``to_numpy()`` (a pandas DataFrame). Names become strings; values must be finite numbers.

    >>> region_values(RegionValues(np.ones((1, 1)), ("x",), ("a",))).regions
    ('x',)
    """
    if isinstance(table, RegionValues):
        return table
    if not all(hasattr(table, a) for a in ("index", "columns", "to_numpy")):
        raise EatkitError(f"the {what} must be RegionValues or a DataFrame indexed by region, got "
                          f"{type(table).__name__}")
    try:
        values = np.asarray(table.to_numpy(dtype=np.float64), dtype=np.float64)
    except (TypeError, ValueError):
        raise EatkitError(f"the {what} has non-numeric values") from None
    if values.ndim != 2:
        raise EatkitError(f"the {what} must be a (regions, columns) table, got shape {values.shape}")
    if not np.isfinite(values).all():
        raise EatkitError(f"the {what} has missing or non-finite values")
    return RegionValues(values, tuple(str(r) for r in table.index), tuple(str(c) for c in table.columns))


@dataclass(frozen=True)
class RankedShares(RegionValues):
    """:func:`rank_shares`' regions x groups table (each row sums to 1) and how it was computed: ``k``
    images kept per region and repeat, ``group_size`` (m) images drawn from every group, ``repeats``
    balancings, the ``seed`` of the draws, and ``group_counts`` (images per group before balancing)."""

    k: int
    group_size: int
    repeats: int
    seed: int | None
    group_counts: dict[str, int]


def _numeric_array(similarities: Any) -> np.ndarray:
    try:
        return np.asarray(similarities, dtype=np.float64)
    except (TypeError, ValueError):
        raise EatkitError("similarities is not a numeric array") from None


def _similarity_table(similarities: Any, regions: Sequence[Any] | None) -> tuple[np.ndarray, list[str]]:
    """The similarities as a finite float (regions, images) array and the region names (``regions``, a
    DataFrame's index, or 0, 1, ...)."""
    if regions is None and hasattr(similarities, "index") and hasattr(similarities, "to_numpy"):
        regions = list(similarities.index)
    sims = _numeric_array(similarities)
    if sims.ndim == 1:
        sims = sims[None, :]
    if sims.ndim != 2 or sims.shape[0] == 0 or sims.shape[1] == 0:
        raise EatkitError(f"similarities must be a non-empty (regions, images) array, got shape {sims.shape}")
    if not np.isfinite(sims).all():
        raise EatkitError("similarities has non-finite values (NaN or inf)")
    return sims, _region_names(regions, sims.shape[0])


def _region_names(regions: Sequence[Any] | None, rows: int) -> list[str]:
    names = [str(r) for r in (regions if regions is not None else range(rows))]
    if len(names) != rows:
        raise EatkitError(f"regions has {len(names)} names but the similarities have {rows} rows")
    return names


def rank_shares(similarities: Any, groups: Sequence[Any], k: int | None = None, repeats: int = 1000,
                rng: Any = None, *, group_size: int | None = None,
                regions: Sequence[Any] | None = None) -> RankedShares:
    """Mean share of each group among the top-``k`` images of each region, over random balancings.

    Each repeat draws, for every group, ``m`` images without replacement (``m`` = the smallest group's
    size), so that all groups are equally represented; one balancing serves every region of the repeat.
    The top ``k`` images by similarity are counted per group. Ties at the k-th value are shared among the
    tied images in proportion (the expected count under a random tie-break), so the result does not
    depend on the order of the images.

    Parameters
    ----------
    similarities : array_like, shape (regions, images)
        Cosine similarity of each region's prompt with each image (a DataFrame's index names the regions).
    groups : sequence
        One group label per image (column).
    k : int, optional
        Images kept per region and repeat; default ``m`` (a region can then be all one group).
    repeats : int
        Random balancings averaged (the seed: 1,000).
    rng : None, int or numpy.random.Generator
        Randomness of the balancings (an int seed makes the table reproducible).
    group_size : int, optional
        Images drawn from every group per repeat (``m``); default the smallest group's size. A group
        with fewer images is an error.
    regions : sequence, optional
        The region names of the rows (default: a DataFrame's index, else 0, 1, ...).

    Returns
    -------
    RankedShares
        Regions x groups (sorted names); each row sums to 1; with ``k``, ``group_size`` (m),
        ``repeats``, ``seed`` and ``group_counts`` (images per group before balancing).

    Examples
    --------
    >>> sims = [[0.9, 0.8, 0.1, 0.2, 0.3], [0.1, 0.2, 0.9, 0.8, 0.7]]
    >>> shares = rank_shares(sims, ["a", "a", "b", "b", "b"], repeats=50, rng=0, regions=["x", "y"])
    >>> shares.values.round(3).tolist(), shares.k, shares.row("y")
    ([[1.0, 0.0], [0.0, 1.0]], 2, {'a': 0.0, 'b': 1.0})
    """
    sims, regions = _similarity_table(similarities, regions)
    names, codes = _group_codes(groups, sims.shape[1])
    if not isinstance(repeats, numbers.Integral) or isinstance(repeats, bool) or repeats < 1:
        raise EatkitError(f"repeats must be a positive integer, got {repeats!r}")
    sizes = np.bincount(codes, minlength=len(names))
    m, k = _balancing(sizes, names, group_size, k)
    generator, seed = resolve_rng(rng)
    members = [np.flatnonzero(codes == g) for g in range(len(names))]
    G, (R, N) = len(names), sims.shape
    order = np.argsort(-sims, axis=1, kind="stable")
    ranked = np.take_along_axis(sims, order, axis=1)
    tied = (np.diff(ranked, axis=1) == 0).any(axis=1)  # regions with tied values take the exact tie rule
    totals = np.zeros((R, G))
    chunk = max(1, _CHUNK_VALUES // (N * (1 + int(tied.sum()) * G * m // N)))
    for start in range(0, repeats, chunk):
        b = min(chunk, repeats - start)
        # (b, G*m) image indices: m random members of each group, group by group
        picks = np.concatenate([idx[np.argsort(generator.random((b, idx.size)), axis=1)[:, :m]]
                                for idx in members], axis=1)
        chosen = np.zeros((N, b), dtype=np.uint8)  # chosen[i, t]: image i drawn in repeat t
        chosen[picks, np.arange(b)[:, None]] = 1
        for r in np.flatnonzero(~tied):
            totals[r] += _untied_counts(chosen, order[r], codes, k, G)
        if tied.any():
            totals[tied] += _top_k_counts(sims[tied][:, picks], k, G, m).sum(axis=1)
    return RankedShares(totals / (repeats * k), tuple(regions), tuple(names), k=int(k), group_size=int(m),
                        repeats=int(repeats), seed=seed, group_counts={n: int(s) for n, s in zip(names, sizes)})


def _balancing(sizes: np.ndarray, names: Sequence[Any], group_size: Any, k: Any) -> tuple[int, int]:
    """``m`` (images drawn from every group, default the smallest group's size) and ``k`` (default ``m``),
    checked."""
    smallest = names[int(sizes.argmin())]
    m = int(sizes.min()) if group_size is None else group_size
    if not isinstance(m, numbers.Integral) or isinstance(m, bool) or m < 1:
        raise EatkitError(f"group_size must be a positive integer, got {m!r}")
    if sizes.min() < m:
        raise EatkitError(f"group '{smallest}' has {int(sizes.min())} images, fewer than the {m} that the "
                          "downsampling draws from every group")
    k = m if k is None else k
    if not isinstance(k, numbers.Integral) or isinstance(k, bool) or not 1 <= k <= m * len(names):
        raise EatkitError(f"k must be an integer from 1 to {m * len(names)} (the {len(names)} groups downsampled "
                          f"to {m} images each), got {k!r}")
    return m, k


def _untied_counts(chosen: np.ndarray, order: np.ndarray, codes: np.ndarray, k: int, G: int) -> np.ndarray:
    """Per group, how often its images are in a region's top ``k`` over the repeats (``chosen``: images x
    repeats drawn), walking the region's ranking ``order``: an image is in the top k when drawn and fewer
    than k drawn images rank above it (the running count of drawn images is at most k at it)."""
    counter = np.int16 if len(order) < 2**15 else np.int64  # the running count of drawn images fits
    in_order = chosen[order]
    top = np.cumsum(in_order, axis=0, dtype=counter) <= k
    top &= in_order.astype(bool)
    return np.bincount(codes[order], weights=top.sum(axis=1), minlength=G)


def _top_k_counts(values: np.ndarray, k: int, G: int, m: int) -> np.ndarray:
    """Per group, how many of the top ``k`` of each row of ``values`` (..., G*m; group g in columns
    g*m..(g+1)*m-1) it holds; the slots left at the k-th value are split among the tied values."""
    n = values.shape[-1]
    kth = np.partition(values, n - k, axis=-1)[..., n - k, None]  # the k-th largest value of each row
    above = values > kth
    tied = values == kth
    shape = (*values.shape[:-1], G, m)
    above_g = above.reshape(shape).sum(axis=-1)
    tied_g = tied.reshape(shape).sum(axis=-1)
    free = k - above_g.sum(axis=-1, keepdims=True)
    return above_g + free * tied_g / tied_g.sum(axis=-1, keepdims=True)


@dataclass(frozen=True)
class ShareComparison:
    """Agreement of ranked shares with a reference table across regions.

    Attributes
    ----------
    r, r_p_values : dict
        Pearson r of each group's shares with its reference column, and its two-sided p-value.
    r_squared : float
        Mean over reference columns of the R^2 of an ordinary least-squares regression (with intercept)
        of the column on all groups' shares (the seed's multi-output R^2, uniform average).
    r_squared_by_output, r_squared_p_values : dict
        Each column's R^2 and the p-value of its overall F-test.
    columns : dict
        Group -> reference column compared.
    n_regions : int
    """

    r: dict[str, float]
    r_p_values: dict[str, float]
    r_squared: float
    r_squared_by_output: dict[str, float]
    r_squared_p_values: dict[str, float]
    columns: dict[str, str]
    n_regions: int

    def to_dict(self) -> dict[str, Any]:
        """A JSON-ready summary."""
        return {"r": dict(self.r), "r_p_values": dict(self.r_p_values), "r_squared": self.r_squared,
                "r_squared_by_output": dict(self.r_squared_by_output),
                "r_squared_p_values": dict(self.r_squared_p_values), "columns": dict(self.columns),
                "n_regions": self.n_regions}


def check_same_regions(regions: Sequence[Any], table: Any, what: str) -> None:
    """Refuse a per-region ``table`` (:func:`region_values`) whose regions are not exactly ``regions``,
    naming the missing and the extra ones.

    >>> check_same_regions(["a", "b"], RegionValues(np.ones((2, 1)), ("a", "c"), ("v",)), "IAT table")
    Traceback (most recent call last):
    eatkit.errors.EatkitError: the IAT table lacks 1 region(s) of the ranking: b; has 1 region(s) not ranked: c
    """
    table = region_values(table, what)
    twice = sorted({r for r in table.regions if table.regions.count(r) > 1})
    if twice:
        raise EatkitError(f"the {what} lists region(s) twice: {_names(twice)}")
    have, want = set(table.regions), {str(x) for x in regions}
    if have != want:
        missing, extra = sorted(want - have), sorted(have - want)
        parts = ([f"lacks {len(missing)} region(s) of the ranking: {_names(missing)}"] if missing else []) + \
                ([f"has {len(extra)} region(s) not ranked: {_names(extra)}"] if extra else [])
        raise EatkitError(f"the {what} {'; '.join(parts)}")


def _aligned(shares: RegionValues, table: Any, what: str) -> RegionValues:
    """``table`` with its rows in the order of the regions of ``shares``; missing or extra regions are
    an error."""
    table = region_values(table, what)
    check_same_regions(shares.regions, table, what)
    if len(shares.regions) < 3:
        raise EatkitError(f"comparing across regions needs at least 3 regions, got {len(shares.regions)}")
    order = [table.regions.index(r) for r in shares.regions]
    return RegionValues(table.values[order], shares.regions, table.columns)


def _names(items: Sequence[Any], limit: int = 5) -> str:
    items = [str(x) for x in items]
    return ", ".join(items[:limit]) + (f" (and {len(items) - limit} more)" if len(items) > limit else "")


def _pearson(x: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """Pearson r and its two-sided p-value (t-test with n - 2 df); NaN when either side is constant."""
    from scipy import stats as sps

    if np.ptp(x) == 0 or np.ptp(y) == 0:
        return float("nan"), float("nan")
    res = sps.pearsonr(x, y)
    return float(res.statistic), float(res.pvalue)


def _r_squared(design: np.ndarray, y: np.ndarray) -> tuple[float, float]:
    """R^2 of OLS of ``y`` on ``design`` with an intercept, and the p-value of the F-test of all slopes
    (F = (R^2 / q) / ((1 - R^2) / (n - q - 1)), q = rank of the centred design)."""
    from scipy import stats as sps

    n = y.size
    X = design - design.mean(axis=0)
    yc = y - y.mean()
    coef, *_ = np.linalg.lstsq(X, yc, rcond=None)
    ss_tot = float(yc @ yc)
    if ss_tot == 0:
        return float("nan"), float("nan")
    resid = yc - X @ coef
    r2 = 1.0 - float(resid @ resid) / ss_tot
    q = int(np.linalg.matrix_rank(X))
    if q == 0 or n - q - 1 <= 0:
        return r2, float("nan")
    if r2 >= 1.0:
        return 1.0, 0.0
    f = (r2 / q) / ((1.0 - r2) / (n - q - 1))
    return r2, float(sps.f.sf(f, q, n - q - 1))


def compare_shares(shares: Any, reference: Any, columns: Mapping[str, str] | None = None) -> ShareComparison:
    """Compare ranked shares (regions x groups) with a reference table (regions x columns).

    Parameters
    ----------
    shares : RankedShares, RegionValues or DataFrame
        From :func:`rank_shares` (a DataFrame: indexed by region name).
    reference : RegionValues or DataFrame
        The same regions (no more, no fewer), in any order.
    columns : mapping, optional
        Group -> reference column (e.g. ``{"Latino": "Hispanic"}``); groups not named are matched to the
        column of the same name. Every group must have a column.

    Examples
    --------
    >>> ref = RegionValues(np.array([[0.1, 0.9], [0.5, 0.5], [0.7, 0.3], [0.2, 0.8]]), tuple("wxyz"), ("a", "b"))
    >>> c = compare_shares(ref, ref)
    >>> round(c.r["a"], 6), round(c.r_squared, 6)
    (1.0, 1.0)
    """
    shares = region_values(shares, "shares")
    columns = dict(columns or {})
    unknown = sorted(set(columns) - set(shares.columns))
    if unknown:
        raise EatkitError(f"column mapping names group(s) not in the shares: {_names(unknown)}")
    ref = _aligned(shares, reference, "reference table")
    pairs = {g: columns.get(g, g) for g in shares.columns}
    absent = sorted(c for c in pairs.values() if c not in ref.columns)
    if absent:
        raise EatkitError(f"the reference table has no column {_names(absent)} (its columns: "
                          f"{_names(list(ref.columns), 10)}); map groups to columns explicitly")
    x = shares.values
    r, r_p, r2, r2_p = {}, {}, {}, {}
    for j, (group, column) in enumerate(pairs.items()):
        y = ref.column(column)
        r[group], r_p[group] = _pearson(x[:, j], y)
        r2[column], r2_p[column] = _r_squared(x, y)
    return ShareComparison(r=r, r_p_values=r_p, r_squared=float(np.mean(list(r2.values()))),
                           r_squared_by_output=r2, r_squared_p_values=r2_p, columns=pairs,
                           n_regions=len(ref.regions))


@dataclass(frozen=True)
class RegionCorrelations:
    """Pearson r (and two-sided p) of each group's shares with each column of a per-region table."""

    r: dict[str, dict[str, float]]  # group -> column -> r
    p_values: dict[str, dict[str, float]]
    n_regions: int

    def to_dict(self) -> dict[str, Any]:
        return {"r": self.r, "p_values": self.p_values, "n_regions": self.n_regions}


def correlate_regions(shares: Any, table: Any) -> RegionCorrelations:
    """Pearson r of every group's shares with every column of ``table`` across regions (e.g. mean IAT
    scores per state; the seed's Figure 2: r = .64 for CLIP's Black shares and White IAT scores); both
    tables as in :func:`compare_shares`.

    >>> s = RegionValues(np.array([[0.1], [0.4], [0.2]]), tuple("xyz"), ("a",))
    >>> t = RegionValues(np.array([[1.0], [4.0], [2.0]]), tuple("zyx"), ("iat",))
    >>> round(correlate_regions(s, t).r["a"]["iat"], 4)  # aligned by region: (.1, .4, .2) vs (2, 4, 1)
    0.7857
    """
    shares = region_values(shares, "shares")
    aligned = _aligned(shares, table, "region table")
    r: dict[str, dict[str, float]] = {}
    p: dict[str, dict[str, float]] = {}
    for group in shares.columns:
        x = shares.column(group)
        pairs = {c: _pearson(x, aligned.column(c)) for c in aligned.columns}
        r[group] = {c: v[0] for c, v in pairs.items()}
        p[group] = {c: v[1] for c, v in pairs.items()}
    return RegionCorrelations(r=r, p_values=p, n_regions=len(aligned.regions))


# -- ranking fairness (Geyik, Ambler & Kenthapadi 2019) ---------------------------------------------


def _ranked_proportions(ranked: Any, desired: Mapping[str, float] | None
                        ) -> tuple[list[str], np.ndarray, np.ndarray]:
    """Group names, the proportion of each group in the top i (rows, ranks, groups) and the desired
    proportions (default: the groups' shares of the whole list)."""
    labels = np.asarray(ranked, dtype=object)
    if labels.ndim == 1:
        labels = labels[None, :]
    if labels.ndim != 2 or labels.size == 0:
        raise EatkitError("a ranking must be a non-empty sequence of group labels (or a 2-D array of them)")
    labels = labels.astype(str)
    names = sorted(set(labels.ravel().tolist()) | set(desired or {}))
    codes = np.searchsorted(names, labels)
    top = top_proportions(codes, len(names))
    if desired is None:
        target = top[0, -1]
    else:
        missing = sorted(set(names) - set(desired))
        if missing:
            raise EatkitError(f"desired proportions lack group(s) {_names(missing)}")
        target = np.array([float(desired[n]) for n in names])
        if not np.isfinite(target).all() or (target <= 0).any() or abs(target.sum() - 1) > 1e-9:
            raise EatkitError("desired proportions must be positive and sum to 1")
        check_range("desired proportions", target, SHARE_RANGE, "ln(share in the top k / desired share) leaves double "
                    "precision")
    return names, top, target


def max_skew(ranked: Any, k: int, desired: Mapping[str, float] | None = None) -> np.ndarray | float:
    """MaxSkew@k = max_g ln(p_{top k, g} / p_g): how much the most over-represented group exceeds its
    desired proportion p_g in the top k (Geyik et al. 2019, eq. for Skew@k); 0 = proportional.

    ``ranked`` holds group labels in rank order (one ranking, or one per row); ``desired`` defaults to
    each group's share of the whole ranking.

    >>> round(max_skew(["a", "a", "b", "b"], 2), 6)  # top 2 all 'a', desired 1/2: ln 2
    0.693147
    """
    names, top, target = _ranked_proportions(ranked, desired)
    if not isinstance(k, numbers.Integral) or isinstance(k, bool) or not 1 <= k <= top.shape[1]:
        raise EatkitError(f"k must be an integer from 1 to {top.shape[1]} (the length of the ranking), got {k!r}")
    skew = skew_at(top, target, k)
    return float(skew[0]) if np.ndim(ranked) == 1 else skew


def ndkl(ranked: Any, desired: Mapping[str, float] | None = None) -> np.ndarray | float:
    """Normalised discounted cumulative KL divergence (Geyik et al. 2019):
    NDKL = (1/Z) Σ_i KL(D_{top i} || D) / log2(i + 1), Z = Σ_i 1 / log2(i + 1), over every prefix of the
    ranking; 0 when every prefix has the desired proportions.

    >>> round(ndkl(["a", "b"]), 6)  # prefix 1 all 'a': KL ln 2, weight 1; prefix 2: KL 0; Z = 1 + 1/log2(3)
    0.425001
    """
    names, top, target = _ranked_proportions(ranked, desired)
    value = ndkl_of(top, target)
    return float(value[0]) if np.ndim(ranked) == 1 else value


def top_proportions(codes: np.ndarray, groups: int) -> np.ndarray:
    """The proportion of each group among the top i of rankings of integer group codes (..., n):
    (..., n, groups).

    >>> top_proportions(np.array([0, 1]), 2).tolist()
    [[1.0, 0.0], [0.5, 0.5]]
    """
    onehot = codes[..., None] == np.arange(groups)
    return np.cumsum(onehot, axis=-2) / np.arange(1, codes.shape[-1] + 1)[:, None]


def skew_at(top: np.ndarray, target: np.ndarray, k: int) -> np.ndarray:
    """MaxSkew@k from top-i proportions (..., n, groups) and desired proportions (..., groups): (...)."""
    with np.errstate(divide="ignore", invalid="ignore"):  # a group absent from a resample: 0/0, ignored
        return np.fmax.reduce(np.log(top[..., k - 1, :] / target), axis=-1)


def ndkl_of(top: np.ndarray, target: np.ndarray) -> np.ndarray:
    """NDKL from top-i proportions (..., n, groups) and desired proportions (..., groups): (...)."""
    with np.errstate(divide="ignore", invalid="ignore"):
        terms = np.where(top > 0, top * np.log(top / target[..., None, :]), 0.0)  # 0 ln 0 = 0
    kl = terms.sum(axis=-1)
    weights = 1.0 / np.log2(np.arange(2, top.shape[-2] + 2))
    return (kl * weights).sum(axis=-1) / weights.sum()


@dataclass(frozen=True)
class SkewUncertainty:
    """MaxSkew@k and NDKL of one ranking with permutation p-values and bootstrap CIs.

    Attributes
    ----------
    k : int
    max_skew, ndkl : float
        The observed measures (desired proportions ``desired``).
    p_max_skew, p_ndkl : float
        One-sided permutation p: the share of label shuffles (group labels re-assigned at random over the
        ranked items, sizes kept: a group-blind ranking) with a measure at least the observed,
        (count + 1) / (permutations + 1).
    ci_max_skew, ci_ndkl : tuple of float
        Percentile bootstrap CIs: items (score and label together) resampled with replacement and
        re-ranked; with ``desired=None`` the desired proportions are each resample's group shares;
        (NaN, NaN) with ``n_bootstrap=0``.
    desired : dict
        The desired proportion of each group (given, or each group's share of the items).
    permutations, n_bootstrap : int
    confidence_level : float
    seed : int or None
    """

    k: int
    max_skew: float
    ndkl: float
    p_max_skew: float
    p_ndkl: float
    ci_max_skew: tuple[float, float]
    ci_ndkl: tuple[float, float]
    desired: dict[str, float]
    permutations: int
    n_bootstrap: int
    confidence_level: float
    seed: int | None

    def to_dict(self) -> dict[str, Any]:
        """Plain JSON values (tuples become lists)."""
        return {name: list(value) if isinstance(value, tuple) else value
                for name, value in self.__dict__.items()}


def _skew_chunks(draw: Any, total: int, n: int, groups: int, k: int, target: np.ndarray | None
                 ) -> tuple[np.ndarray, np.ndarray]:
    """MaxSkew@k and NDKL of ``total`` rankings drawn in chunks: ``draw(r)`` returns r ranked code rows."""
    skews, divergences = [], []
    per = max(1, _CHUNK_VALUES // (n * groups))
    for start in range(0, total, per):
        top = top_proportions(draw(min(per, total - start)), groups)
        desired = top[:, -1, :] if target is None else target
        skews.append(skew_at(top, desired, k))
        divergences.append(ndkl_of(top, desired))
    return np.concatenate(skews), np.concatenate(divergences)


def skew_uncertainty(scores: Any, groups: Sequence[Any], k: int, desired: Mapping[str, float] | None = None, *,
                     permutations: int = 1000, n_bootstrap: int = 1000, confidence_level: float = 0.95,
                     rng: Any = None) -> SkewUncertainty:
    """MaxSkew@k and NDKL of the ranking of items by ``scores`` (descending; ties keep input order), each
    item of group ``groups[i]``, with a permutation null and a bootstrap CI (:class:`SkewUncertainty`).

    >>> r = skew_uncertainty([0.9, 0.8, 0.7, 0.1, 0.2, 0.3], list("aaabbb"), 3, permutations=200,
    ...                      n_bootstrap=200, rng=0)
    >>> round(r.max_skew, 4), round(r.p_max_skew, 3), r.desired
    (0.6931, 0.1, {'a': 0.5, 'b': 0.5})
    """
    values = check_values("scores", scores)
    labels = np.asarray(groups, dtype=object).astype(str)
    if labels.shape != values.shape:
        raise EatkitError(f"scores and groups must have one length, got {values.size} and {labels.size}")
    level = check_option("confidence_level", confidence_level)
    check_count("permutations", permutations)
    if n_bootstrap != 0:
        check_count("n_bootstrap", n_bootstrap)
    generator, seed = resolve_rng(rng)
    ranked = labels[np.argsort(-values, kind="stable")]
    names, top, target = _ranked_proportions(ranked, desired)
    n, count = values.size, len(names)
    if not isinstance(k, numbers.Integral) or isinstance(k, bool) or not 1 <= k <= n:
        raise EatkitError(f"k must be an integer from 1 to {n} (the number of items), got {k!r}")
    ranked_codes = np.searchsorted(names, ranked)
    skew, divergence = float(skew_at(top, target, k)[0]), float(ndkl_of(top, target)[0])
    null_skew, null_ndkl = _skew_chunks(
        lambda r: generator.permuted(np.broadcast_to(ranked_codes, (r, n)), axis=1), permutations, n, count, k,
        target)

    def resample(r: int) -> np.ndarray:
        # items drawn by their rank positions: sorting the positions ranks the resample (a repeated item's
        # copies are adjacent and alike)
        return ranked_codes[np.sort(generator.integers(0, n, (r, n)), axis=1)]

    boot_skew, boot_ndkl = _skew_chunks(resample, n_bootstrap, n, count, k, None if desired is None else target) \
        if n_bootstrap else (np.full(1, np.nan), np.full(1, np.nan))
    tol = 1e-12
    quantiles = [(1 - level) / 2, (1 + level) / 2]
    return SkewUncertainty(
        k=int(k), max_skew=skew, ndkl=divergence,
        p_max_skew=float((np.sum(null_skew >= skew - tol) + 1) / (permutations + 1)),
        p_ndkl=float((np.sum(null_ndkl >= divergence - tol) + 1) / (permutations + 1)),
        ci_max_skew=tuple(float(v) for v in np.quantile(boot_skew, quantiles)),  # type: ignore[arg-type]
        ci_ndkl=tuple(float(v) for v in np.quantile(boot_ndkl, quantiles)),  # type: ignore[arg-type]
        desired=dict(zip(names, map(float, target))), permutations=permutations, n_bootstrap=n_bootstrap,
        confidence_level=level, seed=seed)
