"""Scripts that build the repository's shipped data and generated docs from measurements (run here, no GPU).

Run from the repository root as `python3 -m tools.NAME`. What runs on a GPU machine is in lab/; the evaluation
harness the pages and fits read is bench/.
"""
