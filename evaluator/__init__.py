"""The MathBode evaluator: two rooms around one document.

- `scorer/` computes: strict parsing of answers, harmonic fits, per-sweep metrics, aggregation,
  scores and their intervals, dynamics, transients, phase parts, repeatability, neighbour tests.
- `presentation/` renders: report.md and its CSV files, the Bode plot and the other figures, the
  plot worker, the leaderboard site and its assets.
- Between them, the results document (`results`), which the scorer writes and the presentation
  reads, typed section by section (`sections`), with what both read it through: its tables
  (`table`), the ranking groups (`ranking`) and the chirp curves (`curves`). Neither room imports
  the other (the contracts in pyproject.toml).
"""

from mathbode.schema.parsing import parse_response

from .results import Results
from .scorer.aggregate import PAPER_CONFIG, ScoreConfig
from .scorer.scoring import score

__all__ = ["PAPER_CONFIG", "Results", "ScoreConfig", "parse_response", "score"]
