"""Curation: recipes, filters, dedup, redaction, mixing, splits, dataset versions, exports."""
