"""Front-ends that write a model's op graph without tracing it (decoder.py: Hugging Face decoder LLMs)."""
