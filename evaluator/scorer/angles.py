"""Means of phase angles (degrees) that respect the circle.

A phase error of +180 and one of -180 degrees are the same angle; their plain mean, 0, is the
opposite one. Each mean here is taken with the angles written on the 360-degree branch centred
on their circular mean c = atan2(mean sin, mean cos): an angle more than 180 degrees from c is
moved by 360 towards it, then the plain mean is taken (and put back in [-180, 180)).

Angles that already lie within 180 degrees of c (any cluster narrower than a half turn that does
not straddle +-180) are not moved, so their mean is exactly the plain mean, bit for bit: the
paper's numbers are unchanged wherever the paper's mean was meaningful. When the angles have no
direction (resultant length under MIN_RESULTANT, e.g. 0, 120 and 240 degrees), c is rounding
noise, and the plain mean is kept.

The spread is the circular standard deviation, sqrt(-2 ln R) in degrees (R the mean resultant
length: 0 for a single angle or identical angles, growing without bound as they scatter).
"""

from __future__ import annotations

import math
import warnings

import numpy as np

#: Below this mean resultant length the angles have no mean direction.
MIN_RESULTANT = 1e-6


def _resultant(radians: np.ndarray, axis: int) -> tuple[np.ndarray, np.ndarray]:
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)  # an all-NaN slice has no direction
        s, c = np.nanmean(np.sin(radians), axis=axis), np.nanmean(np.cos(radians), axis=axis)
    return np.arctan2(s, c), np.hypot(s, c)


def unwrap_about_mean(degrees: np.ndarray, axis: int = -1) -> np.ndarray:
    """The angles moved by 360 where they lie more than 180 degrees from their circular mean
    along `axis` (unchanged where the angles have no mean direction); NaN stays NaN."""
    degrees = np.asarray(degrees, dtype=float)
    centre, length = _resultant(np.radians(degrees), axis)
    centre = np.expand_dims(np.degrees(centre), axis)
    directed = np.expand_dims(length >= MIN_RESULTANT, axis)
    offset = degrees - centre
    moved = np.where(offset > 180, degrees - 360, np.where(offset <= -180, degrees + 360, degrees))
    return np.where(directed, moved, degrees)


def wrap_degrees(x: np.ndarray) -> np.ndarray:
    """Into [-180, 180), touching only values outside it (the modulo would perturb the others)."""
    x = np.asarray(x, dtype=float)
    outside = (x < -180) | (x >= 180)
    return np.where(outside, (x + 180) % 360 - 180, x)


def angle_mean(degrees: np.ndarray, axis: int = -1) -> np.ndarray:
    """Mean of angles along `axis` on the circle (see the module text), skipping NaN."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        return wrap_degrees(np.nanmean(unwrap_about_mean(degrees, axis), axis=axis))


def angle_spread(degrees: np.ndarray, axis: int = -1) -> np.ndarray:
    """Circular standard deviation in degrees along `axis`, skipping NaN (NaN with no angle)."""
    _, length = _resultant(np.radians(np.asarray(degrees, dtype=float)), axis)
    with np.errstate(divide="ignore", invalid="ignore"):
        spread = np.degrees(np.sqrt(np.maximum(-2 * np.log(np.minimum(length, 1.0)), 0.0)))  # never -0.0
    return np.where(np.isfinite(length), spread, math.nan)
