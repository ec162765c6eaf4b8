"""Scripts run on a GPU machine (`python3 -m lab.device.NAME`).

Their raw output is stored under tools/data or lab/data.
"""
