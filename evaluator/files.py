"""Names of the files in a report folder (one place, so the report and the plot agree without importing each other)."""

from __future__ import annotations

from dataclasses import dataclass

#: The figures, by stem; a report writes them as `<stem>.<format>` (png, svg or pdf).
BODE = "bode"
FIT_QUALITY = "fit_quality"
COMPLIANCE = "compliance"
MIDBAND = "midband_summary"
CHIRP_FIGURE = "chirp"
STEP_FIGURE = "step"
#: The formats a figure can be written in, and the default resolution of a PNG.
FIGURE_FORMATS = ("png", "svg", "pdf")
DEFAULT_DPI = 90
#: The report itself (what a folder may be replaced by is decided by core.atomic's ownership record).
REPORT_FILE = "report.md"
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


def figure_stems(sinusoid: bool, chirp: bool, step: bool) -> list[tuple[str, str]]:
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
    return out


#: PNG at the default resolution.
DEFAULT_FIGURES = FigureOptions()
