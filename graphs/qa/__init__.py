"""Question-answering graphs over a paper store (the NeuSym agent; the baselines come next)."""
