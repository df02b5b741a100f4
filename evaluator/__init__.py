"""The MathBode evaluator: strict parsing, harmonic fits, scores, reports and Bode plots."""

from mathbode.schema.parsing import parse_response

from .aggregate import PAPER_CONFIG, ScoreConfig
from .scoring import Scored, score

__all__ = ["PAPER_CONFIG", "ScoreConfig", "Scored", "parse_response", "score"]
