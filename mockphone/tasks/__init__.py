"""Tasks on the mock phone: TaskEval-shaped templates, their registry, selectors and oracles."""
