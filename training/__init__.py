"""Training with TRL: SFT, GRPO, prompt/action formats, the tiny offline model, the model registry."""
