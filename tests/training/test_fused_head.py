"""TRL's fused LM head on CPU scores only the labelled positions (``training.common.score_only_labelled_positions``)
and gives the same loss and gradients as scoring every position."""

from __future__ import annotations

import pytest
import torch

from training import common


def _loss_and_grads(model, batch):
    model.zero_grad()
    out = model(**batch, fused_lm_head=True)
    out.loss.backward()
    return out.loss.detach().clone(), {n: p.grad.detach().clone() for n, p in model.named_parameters()
                                       if p.grad is not None}


def test_cpu_compact_scoring_keeps_loss_and_gradients_and_scores_only_labelled_rows(tiny_path, monkeypatch):
    import trl.trainer.utils as trl_utils
    from trl.trainer.utils import add_fused_lm_head

    if not common.use_cpu():
        pytest.skip("the CPU path: on GPUs TRL already scores only labelled positions")
    model, processor = common.load_policy(str(tiny_path), max_pixels=64 * 64)
    add_fused_lm_head(model, outputs=("log_probs", "entropy", "is_top1"))
    torch.manual_seed(0)
    ids = torch.randint(20, 1500, (3, 90))
    labels = torch.full_like(ids, -100)
    labels[0, 70:80] = ids[0, 70:80]  # an answer in each row, at different places, as after padding
    labels[1, 40:45] = ids[1, 40:45]
    labels[2, 85:] = ids[2, 85:]
    batch = {"input_ids": ids, "attention_mask": torch.ones_like(ids), "labels": labels}

    scored: list[int] = []
    real = trl_utils._ChunkedLogProbFunction

    class Spy:  # records how many positions the head projects; the computation is TRL's own
        @staticmethod
        def apply(hidden, *args):
            scored.append(hidden.shape[0])
            return real.apply(hidden, *args)

    monkeypatch.setattr(trl_utils, "_ChunkedLogProbFunction", Spy)
    from trl.kernels import chunked_logprob

    # TRL's own choice (an SFT run earlier in this process has already applied ours), restored after the test
    monkeypatch.setattr(trl_utils, "_use_triton", chunked_logprob._use_triton)
    every_loss, every_grads = _loss_and_grads(model, batch)
    common.score_only_labelled_positions()
    common.score_only_labelled_positions()  # idempotent: not wrapped twice
    compact_loss, compact_grads = _loss_and_grads(model, batch)

    labelled = int((labels[:, 1:] != -100).sum())
    assert scored == [3 * 89, labelled]  # every shifted position, then only those with a label
    assert torch.allclose(every_loss, compact_loss, atol=1e-6)
    assert every_grads.keys() == compact_grads.keys() and every_grads
    for name, grad in every_grads.items():
        assert torch.allclose(grad, compact_grads[name], atol=1e-6, rtol=1e-4), name
