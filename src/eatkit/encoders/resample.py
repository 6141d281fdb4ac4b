"""OpenCV's ``INTER_AREA`` resize of 8-bit images, written out in numpy (no OpenCV needed).

The iEAT authors resized with ``cv2.resize(..., interpolation=cv2.INTER_AREA)``; Pillow's box filter gives
the same pixels only when the source side is a multiple of the target. :func:`area_resize` follows
OpenCV's ``imgproc/src/resize.cpp`` for 8-bit images, arithmetic and order of operations included, so the
pixels are the same bits (``tests/test_preprocessing.py`` checks it against ``cv2.resize`` on random
images and on all iEAT images):

- **integer reduction** ``k = src / dst`` (OpenCV's "fast area"): the mean of each ``k x k`` block;
  for ``k = 2`` as ``(sum + 2) >> 2``, otherwise ``round_half_even(float32(sum) * float32(1 / k^2))``;
- **other reductions**: each output pixel is the float32 sum of the source pixels it covers, weighted by
  the covered fraction of each (``computeResizeAreaTab``), first along rows then along columns, rounded
  half to even;
- **enlargement**: OpenCV's bilinear emulation of area (the weight of the next source pixel is the part of
  the output pixel past the source pixel's edge), in 11-bit fixed point as OpenCV's 8-bit bilinear resize.
"""

from __future__ import annotations

import math

import numpy as np

_COEF_BITS = 11  # OpenCV's INTER_RESIZE_COEF_BITS
_COEF_SCALE = 1 << _COEF_BITS


def area_resize(image: np.ndarray, width: int, height: int) -> np.ndarray:
    """``cv2.resize(image, (width, height), interpolation=cv2.INTER_AREA)`` of a uint8 ``(H, W)`` or
    ``(H, W, C)`` array (module docstring).

    >>> a = np.arange(16, dtype=np.uint8).reshape(4, 4)
    >>> area_resize(a, 2, 2).tolist()  # means of 2 x 2 blocks, halves rounded up
    [[3, 5], [11, 13]]
    >>> area_resize(np.array([[0, 255, 0]], dtype=np.uint8), 2, 1).tolist()  # 1.5 pixels per output pixel
    [[85, 85]]
    """
    if image.dtype != np.uint8 or image.ndim not in (2, 3):
        raise ValueError(f"area_resize takes a uint8 (H, W) or (H, W, C) array, got {image.dtype} {image.shape}")
    if width < 1 or height < 1:
        raise ValueError(f"bad target size {width} x {height}")
    src = image if image.ndim == 3 else image[:, :, np.newaxis]
    h, w = src.shape[:2]
    if (w, h) == (width, height):
        out = src.copy()
    else:
        inv_x, inv_y = width / w, height / h
        scale_x, scale_y = 1.0 / inv_x, 1.0 / inv_y
        if scale_x >= 1 and scale_y >= 1:
            ix, iy = int(round(scale_x)), int(round(scale_y))
            if abs(scale_x - ix) < np.finfo(float).eps and abs(scale_y - iy) < np.finfo(float).eps:
                out = _area_fast(src, ix, iy, width, height)
            else:
                out = _area_weighted(src, scale_x, scale_y, width, height)
        else:
            out = _area_linear(src, scale_x, scale_y, inv_x, inv_y, width, height)
    return out if image.ndim == 3 else out[:, :, 0]


def _area_fast(src: np.ndarray, kx: int, ky: int, width: int, height: int) -> np.ndarray:
    """Integer reduction by ``kx`` x ``ky`` (OpenCV's ``resizeAreaFast``)."""
    blocks = src[: height * ky, : width * kx].astype(np.int32)
    sums = blocks.reshape(height, ky, width, kx, -1).sum(axis=(1, 3))
    if kx == 2 and ky == 2:
        return ((sums + 2) >> 2).astype(np.uint8)
    scaled = sums.astype(np.float32) * np.float32(1.0 / (kx * ky))
    return np.clip(np.rint(scaled), 0, 255).astype(np.uint8)


def _area_table(ssize: int, dsize: int, scale: float) -> tuple[np.ndarray, np.ndarray]:
    """OpenCV's ``computeResizeAreaTab``: for each output index, its source indices and float32 weights in
    OpenCV's order (a partly covered first pixel, the fully covered ones, a partly covered last one), as
    ``(dsize, n)`` arrays padded with weight 0 (padding adds 0.0: the sums are unchanged)."""
    f1 = np.arange(dsize, dtype=np.float64) * scale
    f2 = f1 + scale
    cell = np.minimum(scale, ssize - f1)
    s2 = np.minimum(np.floor(f2).astype(np.intp), ssize - 1)
    s1 = np.minimum(np.ceil(f1).astype(np.intp), s2)
    first, last = (s1 - f1) > 1e-3, (f2 - s2) > 1e-3
    middle = s2 - s1
    k = np.arange(int((first + middle + last).max()))[np.newaxis, :]
    pos = k - first[:, np.newaxis]  # position among the fully covered pixels
    is_first = first[:, np.newaxis] & (k == 0)
    is_middle = ~is_first & (pos < middle[:, np.newaxis])
    is_last = ~is_first & last[:, np.newaxis] & (pos == middle[:, np.newaxis])
    index = np.where(is_first, s1[:, np.newaxis] - 1, np.where(is_middle, s1[:, np.newaxis] + pos, s2[:, np.newaxis]))
    weight = np.select([is_first, is_middle, is_last],
                       [((s1 - f1) / cell)[:, np.newaxis], (1.0 / cell)[:, np.newaxis],
                        (np.minimum(np.minimum(f2 - s2, 1.0), cell) / cell)[:, np.newaxis]], 0.0)
    valid = is_first | is_middle | is_last
    return np.where(valid, index, 0), weight.astype(np.float32)


def _area_weighted(src: np.ndarray, scale_x: float, scale_y: float, width: int, height: int) -> np.ndarray:
    """Non-integer reduction (OpenCV's ``ResizeArea_Invoker``): float32 sums in OpenCV's order."""
    h, w, c = src.shape
    xi, xw = _area_table(w, width, scale_x)
    yi, yw = _area_table(h, height, scale_y)
    index = (xi[:, :, np.newaxis] * c + np.arange(c)).transpose(1, 0, 2).reshape(xi.shape[1], width * c)
    weight = np.repeat(xw.T, c, axis=1)
    flat, rows = src.reshape(h, w * c), np.zeros((h, width * c), dtype=np.float32)
    for j in range(xi.shape[1]):  # buf[dx] += S[sx] * alpha, entry by entry (all source rows at once)
        rows += np.take(flat, index[j], axis=1) * weight[j]
    out = yw[:, 0][:, np.newaxis] * rows[yi[:, 0]]  # sum = beta * buf, then sum += beta * buf
    for j in range(1, yi.shape[1]):
        out += yw[:, j][:, np.newaxis] * rows[yi[:, j]]
    return np.clip(np.rint(out), 0, 255).astype(np.uint8).reshape(height, width, c)


def _linear_table(ssize: int, dsize: int, scale: float, inv: float) -> tuple[np.ndarray, np.ndarray]:
    """Source index and 11-bit fixed-point weights ``(1 - f, f)`` of OpenCV's bilinear emulation of area."""
    index, coef = np.zeros(dsize, dtype=np.intp), np.zeros((dsize, 2), dtype=np.int32)
    for d in range(dsize):
        s = math.floor(d * scale)
        f = float(np.float32((d + 1) - (s + 1) * inv))
        f = 0.0 if f <= 0 else float(np.float32(f - math.floor(f)))
        if s >= ssize - 1:
            f, s = 0.0, ssize - 1
        index[d] = s
        for k, c in enumerate((np.float32(1.0) - np.float32(f), np.float32(f))):
            coef[d, k] = int(np.rint(np.float32(c) * np.float32(_COEF_SCALE)))
    return index, coef


def _area_linear(src: np.ndarray, scale_x: float, scale_y: float, inv_x: float, inv_y: float,
                 width: int, height: int) -> np.ndarray:
    """Enlargement (OpenCV's bilinear resize with area coefficients, 8-bit fixed point)."""
    h, w = src.shape[:2]
    xi, xc = _linear_table(w, width, scale_x, inv_x)
    yi, yc = _linear_table(h, height, scale_y, inv_y)
    pixels = src.astype(np.int32)
    nxt = np.minimum(xi + 1, w - 1)
    rows = pixels[:, xi, :] * xc[:, 0][np.newaxis, :, np.newaxis] + pixels[:, nxt, :] * xc[:, 1][np.newaxis, :, np.newaxis]
    s0, s1 = rows[yi] >> 4, rows[np.minimum(yi + 1, h - 1)] >> 4
    b0, b1 = yc[:, 0][:, np.newaxis, np.newaxis], yc[:, 1][:, np.newaxis, np.newaxis]
    out = (((s0 * b0) >> 16) + ((s1 * b1) >> 16) + 2) >> 2
    return np.clip(out, 0, 255).astype(np.uint8)
