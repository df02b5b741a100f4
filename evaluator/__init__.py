"""The MathBode evaluator: strict parsing, harmonic fits, scores, reports and Bode plots."""

from .aggregate import PAPER_CONFIG, ScoreConfig
from .parsing import parse_response
from .scoring import Scored, score

__all__ = ["PAPER_CONFIG", "ScoreConfig", "Scored", "parse_response", "score"]
