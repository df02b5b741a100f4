"""`python -m mathbode ...`: the same command as `mathbode ...`."""

from mathbode.cli.launch import mathbode

if __name__ == "__main__":
    mathbode()
