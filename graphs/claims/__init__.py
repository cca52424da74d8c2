"""The claim-explainer graphs (explainer, selection, assignment) and what the claim families register."""
