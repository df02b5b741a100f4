"""`python -m mathbode ...`: the same command as `mathbode ...`."""

from mathbode.cli.main import mathbode

if __name__ == "__main__":
    mathbode(prog_name="mathbode")
