"""LLM-facing roles used as graph nodes, and the chat-model / embedding layer."""
