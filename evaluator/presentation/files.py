"""Names of the files in a report folder (one place, so the report and the plot agree without importing each other)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..results import Results

#: The figures, by stem; a report writes them as `<stem>.<format>` (png, svg or pdf).
BODE = "bode"
FIT_QUALITY = "fit_quality"
COMPLIANCE = "compliance"
MIDBAND = "midband_summary"
CHIRP_FIGURE = "chirp"
STEP_FIGURE = "step"
#: A paired release's figures (GAP): scores across each original's variants, and their Bode curves.
VARIANTS_FIGURE = "variants"
VARIANTS_BODE = "variants_bode"
MULTITONE_FIGURE = "multitone_bla"
TWO_TONE_FIGURE = "two_tone"
#: The formats a figure can be written in, and the default resolution of a PNG.
FIGURE_FORMATS = ("png", "svg", "pdf")
DEFAULT_DPI = 90
#: The report itself (what a folder may be replaced by is decided by core.atomic's ownership record).
REPORT_FILE = "report.md"
#: The results document each presentation renders from (one per submission).
RESULTS_FILE = "results.json"
SCORES_FILE = "scores.json"
SWEEPS_FILE = "sweeps.csv"
SUMMARY_FILE = "frequency_summary.csv"
#: Chirp and step measurements (when those rows were answered).
CHIRP_FILE = "chirp.csv"
STEP_FILE = "step.csv"
LEADERBOARD_FILE = "leaderboard.csv"
#: Each submission tested against its neighbour in the ranking (several files only).
COMPARISONS_FILE = "comparisons.json"


@dataclass(frozen=True)
class FigureOptions:
    """How the figures are written: the file format and, for PNG, the resolution."""

    format: str = "png"
    dpi: int = DEFAULT_DPI

    def file(self, stem: str) -> str:
        return f"{stem}.{self.format}"


def figure_stems(sinusoid: bool, chirp: bool, step: bool, multitone: bool = False) -> list[tuple[str, str]]:
    """(stem, caption) of each figure a report has, given which kinds of sweeps were scored."""
    out = []
    if sinusoid:
        out += [
            (BODE, "Bode plot: gain and phase error against frequency, with 95 % intervals over sweeps"),
            (FIT_QUALITY, "R2, residual ACF(1), H2/H1 and residual RMS against frequency"),
            (COMPLIANCE, "Compliance by family"),
            (MIDBAND, "Mid-band summary"),
        ]
    if chirp:
        out.append(
            (CHIRP_FIGURE, "Chirp gain and phase error against instantaneous frequency, sinusoid points over them")
        )
    if step:
        out.append((STEP_FIGURE, "Step responses"))
    if multitone:
        out += [
            (
                MULTITONE_FIGURE,
                "Multi-tone: BLA gain (dB) with noise, stochastic, even and odd distortion and the truncation floor; "
                "BLA phase with 95 % intervals",
            ),
            (TWO_TONE_FIGURE, "Two-tone spectrum: tones and products, the answers against the exact answers"),
        ]
    return out


#: PNG at the default resolution.
DEFAULT_FIGURES = FigureOptions()


def report_figures(results: list[Results]) -> list[tuple[str, str]]:
    """(stem, caption) of the figures these results get: the one list the report links and the plots draw."""
    stems = figure_stems(
        any(len(r.summary) for r in results),
        any(len(r.chirp) for r in results),
        any(len(r.step) for r in results),
        any(r.extra.get("multitone", {}).get("families") for r in results),
    )
    if any(r.extra.get("variants") for r in results):
        stems += [
            (VARIANTS_FIGURE, "MB-Core on each original and its variants (GAP), one line a model"),
            (VARIANTS_BODE, "Bode curves of each original and its variants on the same axes"),
        ]
    return stems


#: The family table's columns: (scores.json field, the name a reader sees, digits). The console
#: table uses the same names; "How to read this report" defines each.
FAMILY_COLUMNS = (
    ("mb_core", "MB-Core", 4),
    ("mb_plus", "MB-Plus", 4),
    ("mb_core_calibrated", "cal. MB-Core", 4),
    ("mb_plus_calibrated", "cal. MB-Plus", 4),
    ("gain_abs_err_mid", "|G-1| mid", 4),
    ("phase_abs_deg_mid", "|phase| mid (deg)", 2),
    ("r2_mean", "R2 mid", 4),
    ("acf1_abs_mean", "|ACF(1)| mid", 4),
    ("compliance_mean", "compliance", 4),
)


def write_tables(r: Results, folder: Path) -> None:
    """A result's CSV tables in `folder`: sweeps and the frequency summary always, chirp and step
    readings when it has them (the report folder and the site's downloads alike)."""
    r.sweeps.to_csv(folder / SWEEPS_FILE)
    r.summary.to_csv(folder / SUMMARY_FILE)
    if len(r.chirp):
        r.chirp.to_csv(folder / CHIRP_FILE)
    if len(r.step):
        r.step.to_csv(folder / STEP_FILE)
