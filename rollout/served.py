"""One policy for every phone actor on Ray: a checkpoint loaded once, in one actor, that phone actors call.

    actor = serve_policy(lake_uri, "sft-1", "phoneloop-policy-abc")   # phones: policy "ray-actor:phoneloop-policy-abc"
    generate = ActorGenerate("ray-actor:phoneloop-policy-abc", max_tokens=64, timeout_s=30)

The actor batches calls (``rollout.model_server``); ``ActorGenerate`` is a phone's
``generate(messages, images)`` over it. The actors themselves run on ``fleet``'s Ray backend.
"""

from __future__ import annotations

from fleet.backends import ray_module
from rollout.errors import PolicyError

SERVED = "ray-actor:"  # a policy spec naming a PolicyActor: ray-actor:<actor name>


def serve_policy(lake_uri: str, ref: str, name: str, *, max_batch: int = 8, max_wait_ms: float = 20.0,
                 max_queue: int = 64):
    """Load the local checkpoint ``ref`` once, in one Ray actor (named ``name``) that every
    phone actor calls (``ray-actor:<name>`` as their policy). Calls that arrive within
    ``max_wait_ms`` of each other, up to ``max_batch``, are answered by one batched greedy
    ``generate`` (``rollout.model_server``); at most ``max_queue`` requests wait, further
    callers block until there is room (back-pressure, never unbounded memory). Returns
    the actor handle; ``ray.kill`` it when the run is over."""
    ray = ray_module()
    actor = _policy_actor(ray).options(name=name, num_cpus=0, max_concurrency=max_queue + max_batch + 4,
                                       max_restarts=0).remote(lake_uri, ref, max_batch, max_wait_ms, max_queue)
    ray.get(actor.ready.remote(), timeout=600)  # load errors surface here, not in every phone
    return actor


def _policy_actor(ray):
    @ray.remote
    class PolicyActor:
        """A ``ModelServer`` without HTTP: threaded calls feed its batching queue."""

        def __init__(self, lake_uri: str, ref: str, max_batch: int, max_wait_ms: float, max_queue: int) -> None:
            from rollout.model_server import ModelServer

            self.server = ModelServer.load(lake_uri, ref, max_batch=max_batch, max_wait_ms=max_wait_ms,
                                           max_queue=max_queue).start(http=False)

        def ready(self) -> bool:
            return True

        def generate(self, messages: list[dict], images: list[bytes], max_tokens: int) -> str:
            from io import BytesIO

            from PIL import Image

            from rollout.model_server import _Request

            pictures = [Image.open(BytesIO(png)).convert("RGB") for png in images]
            request = self.server.submit(_Request(messages, pictures, max_tokens))
            if request.error:
                raise RuntimeError(request.error)
            return request.text

        def batch_sizes(self) -> list[int]:
            return list(self.server.batch_sizes)

    return PolicyActor


class ActorGenerate:
    """A phone's ``generate(messages, images)`` that calls the named PolicyActor."""

    def __init__(self, spec: str, max_tokens: int, timeout_s: float) -> None:
        self.name, self.max_tokens, self.timeout_s = spec.removeprefix(SERVED), max_tokens, timeout_s
        self.retries = 0
        self._actor = None

    def __call__(self, messages: list[dict], images: list[bytes]) -> str:
        ray = ray_module()
        if self._actor is None:
            self._actor = ray.get_actor(self.name)
        try:
            return ray.get(self._actor.generate.remote(messages, list(images), self.max_tokens),
                           timeout=self.timeout_s)
        except Exception as exc:  # a dead or overloaded policy actor: the episode ends as policy_error
            raise PolicyError(f"policy actor {self.name}: {type(exc).__name__}: {exc}"[:500]) from None
