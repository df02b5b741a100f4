"""Names of the files in a report folder (one place, so the report and the plot agree without importing each other)."""

#: The Bode plot.
PLOT_FILE = "bode.png"
#: The file that marks a folder as a MathBode report (so --out may replace it).
REPORT_MARKER = "report.md"
SCORES_FILE = "scores.json"
SWEEPS_FILE = "sweeps.csv"
SUMMARY_FILE = "frequency_summary.csv"
LEADERBOARD_FILE = "leaderboard.csv"
#: Each submission tested against its neighbour in the ranking (several files only).
COMPARISONS_FILE = "comparisons.json"
