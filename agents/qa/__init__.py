"""Question answering over papers, agent side: how a typed context is shown to a model (:mod:`agents.qa.render`)."""
