"""The multi-tone figures: the BLA as system identification draws it, and the two-tone spectrum.

From `multitone` of each results document alone (docs/multitone.md). One column per family, one
colour per submission; the kinds of level are told apart by marker, as Pintelon and Schoukens draw
them: the BLA's gain in dB at the excited lines with the noise and stochastic distortion levels
under it, the distortion the model adds at the even and odd detection lines, and the truncation
floor the exact answers cannot go below.
"""

from __future__ import annotations

import math
from pathlib import Path
from typing import Any, cast

import numpy as np
from matplotlib.figure import Figure

from ..results import Results
from .figures import _finish, _grid, save
from .files import DEFAULT_FIGURES, MULTITONE_FIGURE, TWO_TONE_FIGURE, FigureOptions


def _readings(results: list[Results]) -> list[dict[str, dict[str, Any]]]:
    # The figures read a family's reading as plain data; the table reads are typed (report.py).
    return [cast(dict[str, dict[str, Any]], r.extra.get("multitone", {}).get("families") or {}) for r in results]


def _value(x: Any) -> float:
    """A level as a float; n/a (None, or NaN read back from the document) as NaN, which draws nothing."""
    return math.nan if x is None else float(x)


def bla_figure(results: list[Results]) -> Figure:
    """Per family: the BLA's gain (dB) and the noise, stochastic, even and odd levels; its phase."""
    readings = _readings(results)
    families = list(dict.fromkeys(f for reading in readings for f in reading))
    title = "Multi-tone: best linear approximation and distortion levels (dB re the exact answers' level)"
    kinds = [("o-", "BLA gain"), ("x", "noise"), ("+", "stochastic"), ("s", "even added"), ("^", "odd added")]
    kinds_shown = [*(label for _, label in kinds), "measured noise (detection lines)", "truncation floor"]
    fig, axes = _grid(2, max(1, len(families)), title, [r.label for r in results] + kinds_shown)
    for col, family in enumerate(families):
        top, bottom = axes[0][col], axes[1][col]
        floor = math.nan
        for i, (r, reading) in enumerate(zip(results, readings, strict=True)):
            m = reading.get(family)
            if not m:
                continue
            color = f"C{i}"
            excited = [line for line in m["lines"] if line["kind"] == "excited"]
            k = np.array([line["cycles"] for line in excited], dtype=float)
            gain = np.array([_value(line["gain"]) for line in excited])
            with np.errstate(divide="ignore", invalid="ignore"):
                gain_db = 20 * np.log10(gain)
            top.plot(k, gain_db, "o-", color=color, markersize=4, label=r.label)
            intervals = m["bla_intervals"]
            top.plot(k, [_value(iv["noise_db"]) for iv in intervals], "x", color=color, markersize=5)
            top.plot(k, [_value(iv["stochastic_db"]) for iv in intervals], "+", color=color, markersize=6)
            for kind, marker in (("even", "s"), ("odd", "^")):
                detect = [line for line in m["lines"] if line["kind"] == kind]
                top.plot(
                    [line["cycles"] for line in detect],
                    [_value(line["added_db"]) for line in detect],
                    marker,
                    color=color,
                    markersize=3.5,
                    fillstyle="none",
                    linestyle="none",
                )
            phase = np.array([_value(line["phase_deg"]) for line in excited])
            low = np.array([_value(iv["phase_low_deg"]) for iv in intervals])
            high = np.array([_value(iv["phase_high_deg"]) for iv in intervals])
            bottom.errorbar(k, phase, yerr=[phase - low, high - phase], fmt="o-", color=color, markersize=4, capsize=2)
            floor = _value(m["floor_db"])
            # The noise the distortion is judged against (docs/multitone.md): a line per submission.
            noise = _value((m.get("noise") or {}).get("level_db"))
            if math.isfinite(noise):
                top.axhline(noise, color=color, linestyle=":", linewidth=1.0)
        if math.isfinite(floor):
            top.axhline(floor, color="grey", linestyle="--", linewidth=0.8)
        top.axhline(0.0, color="grey", linewidth=0.5)
        bottom.axhline(0.0, color="grey", linestyle="--", linewidth=0.8)
    # The kinds of level in the legend, in grey, after the submissions (drawn empty: keys only).
    for marker, label in kinds:
        fill = "none" if label.endswith("added") else "full"
        axes[0][0].plot([], [], marker, color="grey", markersize=4, fillstyle=fill, label=label)
    axes[0][0].plot([], [], ":", color="grey", linewidth=1.0, label="measured noise (detection lines)")
    axes[0][0].plot([], [], "--", color="grey", linewidth=0.8, label="truncation floor")
    _finish(fig, axes, families, ["level (dB)", "BLA phase (deg)"], "line (cycles per 64 steps)")
    return fig


def two_tone_figure(results: list[Results]) -> Figure:
    """Per family: the answers' level at each tone and product (filled) over the exact answers' own (hollow)."""
    readings = _readings(results)
    families = list(dict.fromkeys(f for reading in readings for f in reading if reading[f].get("two_tone")))
    title = "Two-tone spectrum (dB re the exact answers' tones): filled the answers, hollow the exact answers"
    fig, axes = _grid(1, max(1, len(families)), title, [r.label for r in results])
    for col, family in enumerate(families):
        ax = axes[0][col]
        n = len(results)
        for i, (r, reading) in enumerate(zip(results, readings, strict=True)):
            products = (reading.get(family) or {}).get("two_tone") or []
            if not products:
                continue
            # Side by side when several submissions share a line, so no stem hides another.
            k = np.array([p["cycles"] for p in products], dtype=float) + (i - (n - 1) / 2) * 0.18
            level = np.array([_value(p["level_db"]) for p in products])
            bottom = -200.0
            ax.vlines(k, bottom, level, color=f"C{i}", linewidth=1.2)
            ax.plot(k, level, "o", color=f"C{i}", markersize=4, label=r.label)
            ax.plot(
                k, [_value(p["truth_level_db"]) for p in products], "o", color="grey", fillstyle="none", markersize=5
            )
        top: dict[int, tuple[float, str]] = {}
        for reading in readings:
            for p in (reading.get(family) or {}).get("two_tone") or []:
                levels = [v for v in (_value(p["level_db"]), _value(p["truth_level_db"])) if math.isfinite(v)]
                high = max([*levels, top.get(p["cycles"], (-math.inf, ""))[0]])
                top[p["cycles"]] = (high, p["product"])
        finite = [high for high, _ in top.values() if math.isfinite(high)]
        if finite:
            low = min(
                _value(p[key])
                for reading in readings
                for p in (reading.get(family) or {}).get("two_tone") or []
                for key in ("level_db", "truth_level_db")
                if math.isfinite(_value(p[key]))
            )
            ax.set_ylim(low - 10, max(finite) + 22)
        # Each line named above its highest level, upright text so neighbours never overlap.
        for line, (high, name) in sorted(top.items()):
            if math.isfinite(high):
                ax.text(line, high + 2, name, rotation=90, ha="center", va="bottom", fontsize=6)
        ax.set_xticks(sorted(top))
        ax.tick_params(axis="x", labelsize=6)
    _finish(fig, axes, families, ["level (dB)"], "line (cycles per 64 steps) and product")
    return fig


def draw_multitone_figures(
    results: list[Results], out: Path, only: tuple[str, ...] | None = None, options: FigureOptions = DEFAULT_FIGURES
) -> list[Path]:
    """The multi-tone figures, when a submission has a multi-tone reading (`only`: just these stems)."""
    if not any(_readings(results)):
        return []
    makers = {MULTITONE_FIGURE: bla_figure, TWO_TONE_FIGURE: two_tone_figure}
    return [save(make(results), out, stem, options) for stem, make in makers.items() if only is None or stem in only]
