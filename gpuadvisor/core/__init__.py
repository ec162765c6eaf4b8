"""The bottom layer: the result schema (results), where a result came from (provenance), and the file,
path and error helpers they need. probes/ depends on this package alone; it imports nothing else of
gpuadvisor, so the measurement layer can be used without the application (tests/test_layers.py)."""
