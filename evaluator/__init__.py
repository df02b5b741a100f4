"""The MathBode evaluator: strict parsing, harmonic fits, scores, reports and Bode plots."""
