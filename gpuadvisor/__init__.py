"""gpuadvisor: measure the GPU you have, and pick the GPU you need.

Data flows one way: probes -> results -> catalog comparison -> advisor -> interfaces.
Nothing in the core imports textual or plotly.
"""

__version__ = "0.1.0"
