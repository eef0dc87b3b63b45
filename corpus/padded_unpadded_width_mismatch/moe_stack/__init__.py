"""A modular MoE stack written for the corpus: the orchestrator sizes its
output in one class, the experts declare their output width in others."""
