"""Names of the files in a report folder (one place, so the report and the plot agree without importing each other)."""

#: The Bode plot.
PLOT_FILE = "bode.png"
#: The other figures (drawn when there is something to show).
DIAGNOSTICS_PLOT = "fit_quality.png"
COMPLIANCE_PLOT = "compliance.png"
MIDBAND_PLOT = "midband_summary.png"
CHIRP_PLOT = "chirp.png"
STEP_PLOT = "step.png"
#: The file that marks a folder as a MathBode report (so --out may replace it).
REPORT_MARKER = "report.md"
SCORES_FILE = "scores.json"
SWEEPS_FILE = "sweeps.csv"
SUMMARY_FILE = "frequency_summary.csv"
#: Chirp and step measurements (when those rows were answered).
CHIRP_FILE = "chirp.csv"
STEP_FILE = "step.csv"
LEADERBOARD_FILE = "leaderboard.csv"
#: Each submission tested against its neighbour in the ranking (several files only).
COMPARISONS_FILE = "comparisons.json"


def figure_files(sinusoid: bool, chirp: bool, step: bool) -> list[tuple[str, str]]:
    """(file, caption) of each figure a report has, given which kinds of sweeps were scored."""
    out = []
    if sinusoid:
        out += [
            (PLOT_FILE, "Bode plot: gain and phase error against frequency"),
            (DIAGNOSTICS_PLOT, "R2, residual ACF(1), H2/H1 and residual RMS against frequency"),
            (COMPLIANCE_PLOT, "Compliance by family"),
            (MIDBAND_PLOT, "Mid-band summary"),
        ]
    if chirp:
        out.append(
            (CHIRP_PLOT, "Chirp gain and phase error against instantaneous frequency, sinusoid points over them")
        )
    if step:
        out.append((STEP_PLOT, "Step responses"))
    return out
