"""Learning curves as one PNG: SFT loss, GRPO mean reward, GRPO groups with reward variance, success per round.

``plot_curves`` takes plain lists (what the models' registered metrics and the evaluations hold), so
the experiment (``training.experiment.save_curves``) and the loop (``phoneloop.loop``, after every
round's eval) draw the same figure. Success is one line per policy over the rounds, each point with
its 95% interval.
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

Success = dict[str, list[tuple[float | None, float, float]]]  # policy -> [(rate, low, high)] per round


def plot_curves(path: str | Path, *, sft_losses: Sequence[float], grpo_reward: Sequence[float],
                grpo_zero_std: Sequence[float | None], success: Success) -> Path:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    fig, axes = plt.subplots(1, 4, figsize=(16, 3.5))
    axes[0].plot(list(sft_losses))
    axes[0].set(title="SFT loss", xlabel="step")
    axes[1].plot(list(grpo_reward), marker="o")
    axes[1].set(title="GRPO mean reward", xlabel="step")
    axes[2].plot([1 - v for v in grpo_zero_std if v is not None], marker="o")
    axes[2].set(title="GRPO groups with reward variance", xlabel="step", ylim=(0, 1))
    for k, (policy, points) in enumerate(success.items()):
        rounds = [r + 1 + 0.08 * (k - (len(success) - 1) / 2) for r, p in enumerate(points) if p[0] is not None]
        shown = [p for p in points if p[0] is not None]
        axes[3].errorbar(rounds, [p[0] for p in shown], yerr=[[max(0.0, p[0] - p[1]) for p in shown],
                                                               [max(0.0, p[2] - p[0]) for p in shown]],
                         marker="o", capsize=4, label=policy)
    last = max((len(p) for p in success.values()), default=1)
    axes[3].set(title="held-out success per round (95% CI)", xlabel="round", ylim=(-0.02, 1.02), xlim=(0.5, last + 0.5))
    axes[3].set_xticks(range(1, last + 1))
    axes[3].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path)
    plt.close(fig)
    return Path(path)
