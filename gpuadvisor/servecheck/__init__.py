"""`gpuadvisor serve-check`: measure a user's OpenAI-compatible endpoint as a client sees it (replay.py over the
small HTTP client of http.py), keep the measurement (measurement.py), and fit an engine profile's host and
front-end figures to it (calibrate.py, `estimate --calibration FILE`)."""
