"""Mail: the owner's inbox, in the phone's language.

Six emails a seed, from the owner's contacts (``world.people``): the subject and body
come from a locale's pool of kinds of mail (an invoice, a meeting moved, a delivery)
with their numbers, days and times drawn from the section's generator, so two seeds
hardly ever share an inbox. Subjects are distinct within an inbox (mail tasks name an
email by its subject).
"""

from __future__ import annotations

import random
from dataclasses import dataclass

from mockphone.world import World, section

INBOX = 6

WEEKDAYS = ("Monday", "Tuesday", "Wednesday", "Thursday", "Friday")
WEEKDAYS_ZH = ("周一", "周二", "周三", "周四", "周五")
TOPICS = ("budget", "roadmap", "hiring plan", "launch", "survey results", "newsletter")
TOPICS_ZH = ("预算", "路线图", "招聘计划", "发布", "调研结果", "简报")
PLACES = ("Room 4B", "the lobby", "the Pier 7 cafe", "the third floor", "the library")
PLACES_ZH = ("4B 会议室", "一楼大厅", "七号码头咖啡馆", "三楼", "图书馆")

# (subject, body): formatted with n (a number), day, time, topic, place, first (the sender's first name)
KINDS = (
    ("Invoice #{n}", "Invoice #{n} is attached. Payment is due by {day}. Thanks, {first}"),
    ("Meeting moved to {day}", "Our {topic} meeting moves to {day} at {time} in {place}. Sorry for the shuffle."),
    ("Your order {n} has shipped", "Order {n} left the warehouse today. It should arrive on {day}."),
    ("{topic_c} draft for review", "The {topic} draft is ready. Could you send comments by {day}?"),
    ("Lunch on {day}?", "Free for lunch on {day} at {time}? I found a new place near {place}."),
    ("Receipt {n}", "Thank you for your payment. Receipt {n} covers this month's membership."),
    ("Team photo on {day}", "The team photo is on {day} at {time} in {place}. Wear something blue."),
    ("Library hold {n} is ready", "Your hold {n} is ready for pickup until {day}. The desk closes at {time}."),
    ("Notes from the {topic} call", "Notes from today's {topic} call: two actions for you. Deadline {day}."),
    ("Ticket {n} resolved", "Support ticket {n} is resolved. Reply within a week to reopen it."),
    ("Dinner plans for {day}", "Dinner on {day} at {time}? {place} has a table for four."),
    ("{topic_c} numbers", "The {topic} numbers are in. Overall up {pct}% on last quarter."),
)
KINDS_ZH = (
    ("发票 #{n}", "附件是发票 #{n}，请在{day}前付款。谢谢，{first}"),
    ("会议改到{day}", "我们的{topic}会议改到{day} {time}，地点在{place}。抱歉临时调整。"),
    ("订单 {n} 已发货", "订单 {n} 今天已经出库，预计{day}送达。"),
    ("{topic}初稿请审阅", "{topic}初稿已经准备好。请在{day}前给我反馈。"),
    ("{day}一起吃午饭？", "{day} {time}有空一起吃午饭吗？我在{place}附近发现了一家新店。"),
    ("收据 {n}", "感谢您的付款。收据 {n} 对应本月会员费。"),
    ("{day}拍团队合影", "团队合影定在{day} {time}，地点在{place}。请穿蓝色衣服。"),
    ("预约图书 {n} 可取", "您预约的图书 {n} 已可领取，保留到{day}。服务台 {time} 关门。"),
    ("{topic}电话会纪要", "今天{topic}电话会的纪要：有两项待办需要你跟进。截止{day}。"),
    ("工单 {n} 已解决", "支持工单 {n} 已解决。一周内回复即可重新打开。"),
    ("{day}晚饭安排", "{day} {time}一起吃晚饭？{place}有一张四人桌。"),
    ("{topic}数据", "{topic}数据出来了。整体比上季度增长 {pct}%。"),
)


@dataclass(frozen=True)
class WorldEmail:
    sender: str  # an address
    sender_name: str
    subject: str
    body: str
    read: bool


def compose(world: World, rng, kind: tuple[str, str], sender_name: str) -> tuple[str, str]:
    """One (subject, body) of ``kind`` with its blanks drawn from ``rng``."""
    zh = world.zh
    topic = rng.choice(TOPICS_ZH if zh else TOPICS)
    values = {"n": rng.randint(1000, 9899), "day": rng.choice(WEEKDAYS_ZH if zh else WEEKDAYS),
              "time": f"{rng.randint(9, 17)}:{rng.choice(('00', '15', '30', '45'))}", "topic": topic,
              "topic_c": topic[:1].upper() + topic[1:], "place": rng.choice(PLACES_ZH if zh else PLACES),
              "first": sender_name.split()[0] if not zh else sender_name, "pct": rng.randint(2, 19)}
    return kind[0].format(**values), kind[1].format(**values)


@section("mail")
def mail(world: World) -> tuple[WorldEmail, ...]:
    """The inbox, oldest first: ``INBOX`` emails with distinct subjects from distinct kinds."""
    people = world.people
    rng = world.rng("mail")
    # which emails are read: the same in every locale, so a seed's inbox looks alike in each language
    shape = random.Random(f"world:{world.seed}:mail:shape")
    out = []
    for kind in rng.sample(KINDS_ZH if world.zh else KINDS, INBOX):
        person = rng.choice(people)
        subject, body = compose(world, rng, kind, person.name)
        out.append(WorldEmail(person.email, person.name, subject, body, shape.random() < 0.5))
    return tuple(out)
