"""Messages: the owner's conversations, in the phone's language.

Five threads a seed with people from ``world.people``, each one or two incoming texts
drawn from the locale's pool (times and places filled in from the section's generator).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from mockphone.world import World, section

THREADS = 5

TEXTS = ("Are we still on for lunch tomorrow?", "Can you send me the slides?", "Running {m} minutes late.",
         "Happy birthday!", "Did you see the game last night?", "Call me when you are free.",
         "Thanks for yesterday!", "Where should we meet?", "The train leaves at {h}:{mm}.",
         "Can you pick up milk on the way?", "I left my umbrella at your place.", "Meet at gate {g}?",
         "Is {h} pm still good for you?", "Got the tickets, row {g}!")
TEXTS_ZH = ("明天的午饭还约吗？", "能把幻灯片发我一下吗？", "我要晚到 {m} 分钟。", "生日快乐！", "昨晚的比赛你看了吗？",
            "有空给我回个电话。", "谢谢你昨天的帮忙！", "我们在哪儿见面？", "火车 {h}:{mm} 开。", "回来路上能买点牛奶吗？",
            "我把伞落在你家了。", "在 {g} 号门见？", "{h} 点还方便吗？", "票买到了，第 {g} 排！")

# what a person may say last (MessagesAnswerLast plants one of these)
SAID = ("The keys are under the mat.", "Meeting moved to {h} pm.", "Bring the charger please.",
        "Table booked for {g} people.", "Parcel is at the front desk.", "Gate {g}, see you there.",
        "The code for the door is {code}.", "Dinner is at {h}:{mm}.", "I paid the {g} euros back.",
        "Bus {g} is running late.")
SAID_ZH = ("钥匙在门垫下面。", "会议改到下午 {h} 点。", "记得带充电器。", "订了 {g} 人的桌子。", "包裹在前台。",
           "{g} 号门见。", "门禁密码是 {code}。", "晚饭 {h}:{mm} 开始。", "那 {g} 块钱我已经还你了。", "{g} 路公交晚点了。")


@dataclass(frozen=True)
class WorldThread:
    contact: str
    texts: tuple[str, ...]  # incoming, oldest first


def fill(text: str, rng) -> str:
    """``text`` with its blanks (minutes, hour, gate, code) drawn from ``rng``."""
    return text.format(m=rng.randint(5, 40), h=rng.randint(2, 9), mm=rng.choice(("00", "15", "30", "45")),
                       g=rng.randint(2, 19), code=rng.randint(1000, 9999))


def pool(world_or_zh, said: bool = False) -> tuple[str, ...]:
    zh = world_or_zh if isinstance(world_or_zh, bool) else world_or_zh.zh
    return (SAID_ZH if zh else SAID) if said else (TEXTS_ZH if zh else TEXTS)


@section("messages")
def messages(world: World) -> tuple[WorldThread, ...]:
    people = world.people
    rng = world.rng("messages")
    shape = random.Random(f"world:{world.seed}:messages:shape")  # thread lengths: alike in every locale
    out = []
    for person in sorted(rng.sample(people, THREADS), key=lambda p: p.name):
        texts = tuple(fill(t, rng) for t in rng.sample(pool(world), shape.randint(1, 2)))
        out.append(WorldThread(person.name, texts))
    return tuple(out)
