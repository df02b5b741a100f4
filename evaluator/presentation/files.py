"""Names of the files in a report folder (one place, so the report and the plot agree without importing each other)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..results import Results
from ..table import Table

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
#: A multi-tone reading, per line (BLA at the excited lines, levels at every line) and per two-tone
#: product (when there were two-tone rows).
MULTITONE_LINES_FILE = "multitone_lines.csv"
TWO_TONE_FILE = "two_tone.csv"
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
                "Multi-tone: BLA gain and phase with 95 % intervals; noise and total BLA variance, even and odd "
                "added distortion, the measured noise and the truncation floor in dB",
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


#: multitone_lines.csv's columns: the line, its BLA with the 95 % intervals (excited lines), and
#: its levels in dB relative to the exact answers' mean level at the excited lines.
MULTITONE_LINE_COLUMNS = (
    "family",
    "cycles",
    "kind",
    "gain",
    "gain_low",
    "gain_high",
    "phase_deg",
    "phase_low_deg",
    "phase_high_deg",
    "noise_db",
    "stochastic_db",
    "level_db",
    "truth_level_db",
    "error_level_db",
    "added_db",
)
#: two_tone.csv's columns: each tone and product, levels relative to the exact answers' tones.
TWO_TONE_COLUMNS = ("family", "product", "cycles", "level_db", "truth_level_db", "error_level_db", "added_db")


def multitone_tables(r: Results) -> tuple[Table, Table]:
    """(lines, two-tone products) of a multi-tone reading, one row a family's line or product."""
    families = r.extra.get("multitone", {}).get("families") or {}
    lines, products = [], []
    for family, m in families.items():
        # The BLA's intervals are listed in the order of the excited lines.
        intervals = iter(m["bla_intervals"])
        for line in m["lines"]:
            row = {"family": family, **line}
            if line["kind"] == "excited":
                row |= {k: v for k, v in next(intervals).items() if k != "cycles"}
            lines.append(row)
        products += [{"family": family, **p} for p in m.get("two_tone", [])]
    return Table.from_rows(lines, MULTITONE_LINE_COLUMNS), Table.from_rows(products, TWO_TONE_COLUMNS)


def table_files(r: Results) -> list[str]:
    """The CSV tables a result has: sweeps and the frequency summary when sinusoid sweeps were
    scored, chirp and step readings, a multi-tone reading's lines and two-tone products, each
    only when it holds rows (a table of a header alone says nothing)."""
    lines, products = multitone_tables(r)
    has = {
        SWEEPS_FILE: len(r.sweeps),
        SUMMARY_FILE: len(r.summary),
        CHIRP_FILE: len(r.chirp),
        STEP_FILE: len(r.step),
        MULTITONE_LINES_FILE: len(lines),
        TWO_TONE_FILE: len(products),
    }
    return [name for name, rows in has.items() if rows]


def write_tables(r: Results, folder: Path) -> None:
    """A result's CSV tables (`table_files`) in `folder`: the report folder and the site's downloads alike."""
    lines, products = multitone_tables(r)
    tables = {
        SWEEPS_FILE: r.sweeps,
        SUMMARY_FILE: r.summary,
        CHIRP_FILE: r.chirp,
        STEP_FILE: r.step,
        MULTITONE_LINES_FILE: lines,
        TWO_TONE_FILE: products,
    }
    for name in table_files(r):
        tables[name].to_csv(folder / name)
