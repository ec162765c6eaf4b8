"""Print the calibration table as Markdown: python3 -m gpuadvisor.estimate.calibration > docs/calibration.md"""

from gpuadvisor.estimate.calibration import to_markdown

print(to_markdown())
