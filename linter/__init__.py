"""shardlint: a static analyser for LLM inference-engine source."""

__version__ = "0.1.0"
