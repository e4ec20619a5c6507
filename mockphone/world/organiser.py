"""The organiser apps' data: calendar events and the extra files each folder holds, per seed and locale.

``calendar``: the five upcoming events the Calendar app starts with (titles and places
in the phone's language; dates in the two weeks from the simulated clock's epoch).
``files``: files a seed adds to each folder beside the ones every phone has
(``mockphone.apps.files.NAMES``): camera shots, scans, downloads, recordings, with
their sizes, so a folder's listing (and emptying it) differs per seed.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockphone.world import World, section

EVENT_TITLES = ("Dentist", "Team sync", "Yoga class", "Parent-teacher meeting", "Car service", "Dinner with Sam",
                "Project review", "Haircut", "Eye exam", "Book club", "Swimming lesson", "Client call",
                "Flu shot", "Landlord visit", "Guitar lesson", "Farmers market", "Tax advisor", "Team offsite",
                "Vet appointment", "Coffee with Priya", "Design critique", "Lunch with Mom", "Bike tune-up",
                "Sprint planning")
EVENT_TITLES_ZH = ("看牙医", "团队例会", "瑜伽课", "家长会", "汽车保养", "和小王吃饭", "项目评审", "理发", "眼科检查",
                   "读书会", "游泳课", "客户电话", "打流感疫苗", "房东来访", "吉他课", "逛集市", "税务咨询", "团建",
                   "带猫看病", "和同事喝咖啡", "设计评审", "陪妈妈吃午饭", "修自行车", "迭代计划会")
PLACES = ("Room 4B", "Downtown clinic", "Online", "Community center", "Main street garage", "", "Library",
          "Cafe Nero", "City pool")
PLACES_ZH = ("4B会议室", "市中心诊所", "线上", "社区中心", "中山路修车行", "", "图书馆", "星巴克", "市游泳馆")


@dataclass(frozen=True)
class WorldEvent:
    title: str
    day: int  # days after the epoch's date
    time: str  # HH:MM
    location: str


@section("calendar")
def calendar(world: World) -> tuple[WorldEvent, ...]:
    rng = world.rng("calendar")
    titles = rng.sample(EVENT_TITLES_ZH if world.zh else EVENT_TITLES, 5)
    places = PLACES_ZH if world.zh else PLACES
    return tuple(WorldEvent(t, rng.randint(0, 12), f"{rng.randint(8, 18):02d}:{rng.choice((0, 30)):02d}",
                            rng.choice(places)) for t in titles)


@dataclass(frozen=True)
class WorldFile:
    name: str
    folder: str
    size_kb: int


def _extra_names(world: World, rng) -> dict[str, list[str]]:
    doc_words = ("合同", "简历", "报销单", "体检报告", "租房合同") if world.zh else (
        "contract", "cover_letter", "warranty", "payslip", "insurance")
    return {
        "Documents": [f"{w}_{rng.randint(2019, 2026)}.pdf" for w in rng.sample(doc_words, rng.randint(0, 2))],
        "Download": [f"{w}_{rng.randint(100, 9999)}.{e}" for w, e in
                     rng.sample((("ticket", "pdf"), ("statement", "pdf"), ("installer", "apk"), ("slides", "pptx"),
                                 ("wallpaper", "png")), rng.randint(0, 2))],
        "Music": [f"{w}_{rng.randint(1, 40):02d}.{e}" for w, e in
                  rng.sample((("track", "mp3"), ("recording", "m4a"), ("lecture", "mp3"), ("ringtone", "ogg")),
                             rng.randint(0, 2))],
        "Pictures": [f"IMG_{n}.jpg" for n in sorted(rng.sample(range(3000, 9999), rng.randint(1, 3)))]
        + [f"scan_{rng.randint(1, 12):02d}{rng.randint(1, 28):02d}.png" for _ in range(rng.randint(0, 1))],
    }


@section("files")
def files(world: World) -> tuple[WorldFile, ...]:
    rng = world.rng("files")
    return tuple(WorldFile(name, folder, rng.randint(12, 9000))
                 for folder, names in _extra_names(world, rng).items() for name in names)
