"""The MathBode evaluator: strict parsing, harmonic fits, scores, reports and Bode plots."""

from .aggregate import ScoreConfig
from .parsing import parse_response
from .scoring import Scored, score

__all__ = ["ScoreConfig", "Scored", "parse_response", "score"]
