"""Scripts that build the repository's data and docs from measurements.

Run from the repository root as `python3 -m tools.NAME`.
"""
