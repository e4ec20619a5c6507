"""To-do lists per seed: the To-do app's lists and tasks, in the phone's language.

``todo``: three lists and 14 tasks spread over them, each with a due date within two weeks
of the simulated clock's epoch (2026-03-02; a few already overdue, a few with none), a
priority, and some already done. Titles are unique on a phone and no title is a part of
another, so a search for one finds one row. Within a list the open tasks' due dates all
differ, so "the task due next" is one task.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass

from mockphone.world import World, section

LISTS = ("Personal", "Work", "Errands")
LISTS_ZH = ("个人", "工作", "跑腿")
PRIORITIES = ("High", "Medium", "Low")
TITLES = ("Renew passport", "Book flu shot", "Call the plumber", "Pay electricity bill", "Return library books",
          "Buy birthday card", "Send quarterly report", "Prepare slides", "Review pull request", "Update roadmap",
          "Email the landlord", "Pick up dry cleaning", "Water the plants", "Order printer ink", "Plan team lunch",
          "Fix bike light", "Back up laptop", "Cancel gym trial", "Schedule car service", "Write thank-you notes",
          "Book dentist", "Sort tax receipts", "Buy running shoes", "Clean the oven", "Reply to Sam", "Mend the fence",
          "Renew parking permit", "Check tyre pressure", "Photograph the meter", "Donate old clothes")
TITLES_ZH = ("续签护照", "预约流感疫苗", "给水管工打电话", "交电费", "还图书馆的书", "买生日贺卡", "发季度报告", "准备幻灯片",
             "审代码合并请求", "更新路线图", "给房东发邮件", "取干洗衣服", "给植物浇水", "买打印机墨盒", "安排团队午餐",
             "修自行车灯", "备份笔记本电脑", "取消健身房试用", "预约汽车保养", "写感谢卡", "预约牙医", "整理报税票据",
             "买跑鞋", "清洁烤箱", "回复小孙", "修篱笆", "续办停车证", "检查胎压", "拍水表读数", "捐旧衣服")
EPOCH_DAY = dt.date(2026, 3, 2)


@dataclass(frozen=True)
class WorldTodo:
    tid: str
    title: str
    list: str
    due: str  # ISO date, or "" for none
    priority: str  # one of PRIORITIES
    done: bool


@section("todo")
def todo(world: World) -> tuple[WorldTodo, ...]:
    rng = world.rng("todo")
    lists = LISTS_ZH if world.zh else LISTS
    titles = rng.sample(TITLES_ZH if world.zh else TITLES, 14)
    out: list[WorldTodo] = []
    used: dict[str, set[int]] = {name: set() for name in lists}
    for i, title in enumerate(titles):
        name = lists[i % 3]
        done = rng.random() < 0.25
        offset = rng.choice([d for d in range(-3, 14) if d not in used[name]])
        if not done:
            used[name].add(offset)
        due = "" if done and rng.random() < 0.4 else (EPOCH_DAY + dt.timedelta(days=offset)).isoformat()
        out.append(WorldTodo(f"t{i:02d}", title, name, due, rng.choice(PRIORITIES), done))
    return tuple(out)
