"""Music and news per seed: the Music app's catalogue and library, the News app's feed.

``music``: 24 songs by 8 artists (three songs each, on two or three albums, genres from
``GENRES``), with durations all different within an artist (so "the longest song by X" is
one song); song titles are unique on a phone and no title is a part of another.
``music_library``: the owner's three playlists (four or five songs each, a song in at most
one of them) and five liked songs.
``news``: 20 articles over the five ``SECTIONS`` from eight outlets, each with an age in
minutes (all different: "the newest" is one article) and a reading time; the topics the
owner follows and the articles saved for later.
Names, titles and bodies are in the phone's language.
"""

from __future__ import annotations

from dataclasses import dataclass

from mockphone.world import World, section

GENRES = ("Pop", "Rock", "Jazz", "Electronic", "Folk")
_ARTISTS = ("The Paper Kites", "Nova Lane", "Miles Orchard", "Echo Harbor", "Ruby Vance", "The Low Tides",
            "Kai Monroe", "Silver Fern", "June Avenue", "Otis Grey")
_ARTISTS_ZH = ("青柠乐队", "林夏", "白鸽", "南方姑娘组合", "陈默", "海岸线", "苏北", "夜行者", "木子", "老街乐队")
_WORDS = ("Midnight", "Golden", "Paper", "River", "Neon", "Quiet", "Summer", "Broken", "Velvet", "Northern",
          "Wild", "Electric", "Hollow", "Distant", "Silver", "Crimson")
_NOUNS = ("Lights", "Hearts", "Roads", "Skies", "Letters", "Dreams", "Tides", "Echoes", "Windows", "Fires",
          "Gardens", "Stations")
_WORDS_ZH = ("午夜", "金色", "纸上", "河边", "霓虹", "安静", "夏天", "破碎", "丝绒", "北方", "野生", "电光", "空谷", "遥远",
             "银色", "深红")
_NOUNS_ZH = ("灯火", "心事", "公路", "天空", "来信", "梦境", "潮汐", "回声", "窗台", "烟火", "花园", "车站")
_PLAYLISTS = ("Morning run", "Focus", "Road trip", "Sunday chill", "Dinner party", "Late night")
_PLAYLISTS_ZH = ("晨跑", "专注", "自驾", "周日放松", "晚餐派对", "深夜")

SECTIONS = ("World", "Business", "Tech", "Sports", "Science")
_OUTLETS = ("Daily Ledger", "Metro Wire", "The Courier", "Pulse News", "Global Desk", "Tech Brief", "Field Report",
            "Morning Post")
_OUTLETS_ZH = ("新民日报", "城市快讯", "南方观察", "环球速递", "财经周刊", "科技前沿", "体育在线", "晨报")
_HEADLINES = {
    "World": ("Leaders meet to discuss {thing} talks", "Floods close roads across the {place} region",
              "New border crossing opens near {place}", "Elections called early in {place}"),
    "Business": ("{place} retailer posts record {thing} sales", "Shares of {thing} makers rise sharply",
                 "Central bank holds rates as {thing} prices ease", "Start-up raises funds for {thing} delivery"),
    "Tech": ("New {thing} promises two-day battery", "Open-source {thing} app tops the charts",
             "City tests driverless shuttles in {place}", "Chip maker unveils a faster {thing} processor"),
    "Sports": ("{place} wins the cup after extra time", "Marathon record falls in {place}",
               "Rookie leads {place} to a late comeback", "Tennis star withdraws from {place} open"),
    "Science": ("Rare {thing} seen again near {place}", "Researchers map the {place} coral reef",
                "New species of {thing} found in rainforest", "{place} lab tracks {thing} migration"),
}
_HEADLINES_ZH = {
    "World": ("各国领导人会面商讨{thing}议题", "洪水致{place}地区多条道路封闭", "{place}附近新口岸开通", "{place}宣布提前举行选举"),
    "Business": ("{place}零售商{thing}销量创新高", "{thing}制造商股价大涨", "{thing}价格回落 央行维持利率", "初创公司为{thing}配送融资"),
    "Tech": ("新款{thing}续航可达两天", "开源{thing}应用登顶榜单", "{place}试点无人驾驶接驳车", "芯片厂商发布更快的{thing}处理器"),
    "Sports": ("{place}加时赛后夺冠", "{place}马拉松纪录被打破", "新秀带领{place}逆转取胜", "网球名将退出{place}公开赛"),
    "Science": ("{place}附近再次发现罕见{thing}", "研究人员绘制{place}珊瑚礁地图", "雨林中发现新{thing}物种", "{place}实验室追踪{thing}迁徙"),
}
_THINGS = {"World": ("trade", "climate", "water", "rail"), "Business": ("coffee", "bicycle", "solar", "furniture"),
           "Tech": ("phone", "laptop", "tablet", "camera"), "Sports": ("trade", "climate", "water", "rail"),
           "Science": ("frog", "beetle", "orchid", "butterfly")}
_THINGS_ZH = {"World": ("贸易", "气候", "水资源", "铁路"), "Business": ("咖啡", "自行车", "太阳能", "家具"),
              "Tech": ("手机", "笔记本电脑", "平板", "相机"), "Sports": ("贸易", "气候", "水资源", "铁路"),
              "Science": ("蛙类", "甲虫", "兰花", "蝴蝶")}
_PLACES = ("Lakeside", "Northfield", "Port Elm", "Brookhaven", "Westmoor", "Cedar Bay", "Ashford", "Redwater")
_PLACES_ZH = ("湖滨", "北原", "榆港", "溪城", "西沼", "杉湾", "白石", "赤水")


@dataclass(frozen=True)
class WorldSong:
    title: str
    artist: str
    album: str
    genre: str
    seconds: int


@dataclass(frozen=True)
class WorldLibrary:
    playlists: tuple[tuple[str, tuple[str, ...]], ...]  # (name, song titles)
    liked: tuple[str, ...]


@dataclass(frozen=True)
class WorldArticle:
    aid: str
    title: str
    outlet: str
    section: str  # one of SECTIONS
    minutes_ago: int
    read_minutes: int


@dataclass(frozen=True)
class WorldNews:
    articles: tuple[WorldArticle, ...]
    following: tuple[str, ...]  # sections
    saved: tuple[str, ...]  # article ids


@section("music")
def music(world: World) -> tuple[WorldSong, ...]:
    rng = world.rng("music")
    zh = world.zh
    artists = rng.sample(_ARTISTS_ZH if zh else _ARTISTS, 8)
    words, nouns = (_WORDS_ZH, _NOUNS_ZH) if zh else (_WORDS, _NOUNS)
    titles: list[str] = []
    while len(titles) < 24:
        t = f"{rng.choice(words)}{rng.choice(nouns)}" if zh else f"{rng.choice(words)} {rng.choice(nouns)}"
        if all(t not in o and o not in t for o in titles):
            titles.append(t)
    out = []
    for i, artist in enumerate(artists):
        genre = rng.choice(GENRES)
        albums = [f"{rng.choice(nouns)}{rng.choice(('集', '之夜', '日记'))}" if zh else
                  f"{rng.choice(('Songs of', 'Nights in', 'Letters from'))} {rng.choice(nouns)}" for _ in range(2)]
        for seconds, title in zip(rng.sample(range(150, 330), 3), titles[i * 3:i * 3 + 3]):
            out.append(WorldSong(title, artist, rng.choice(albums), genre, seconds))
    return tuple(out)


@section("music_library")
def music_library(world: World) -> WorldLibrary:
    songs = [s.title for s in world.music]
    rng = world.rng("music_library")
    rng.shuffle(songs)
    names = rng.sample(_PLAYLISTS_ZH if world.zh else _PLAYLISTS, 3)
    lists, at = [], 0
    for name in names:
        n = rng.choice((4, 5))
        lists.append((name, tuple(songs[at:at + n])))
        at += n
    return WorldLibrary(tuple(lists), tuple(rng.sample([s.title for s in world.music], 5)))


@section("news")
def news(world: World) -> WorldNews:
    rng = world.rng("news")
    zh = world.zh
    heads, things, places = (_HEADLINES_ZH, _THINGS_ZH, _PLACES_ZH) if zh else (_HEADLINES, _THINGS, _PLACES)
    outlets = _OUTLETS_ZH if zh else _OUTLETS
    ages = rng.sample(range(5, 24 * 60, 5), 20)
    titles: set[str] = set()
    articles = []
    for i, age in enumerate(ages):
        sec = SECTIONS[i % 5]
        while True:
            title = rng.choice(heads[sec]).format(thing=rng.choice(things[sec]), place=rng.choice(places))
            if title not in titles:
                titles.add(title)
                break
        articles.append(WorldArticle(f"a{i:02d}", title, rng.choice(outlets), sec, age, rng.randint(2, 12)))
    following = tuple(rng.sample(SECTIONS, 2))
    saved = tuple(a.aid for a in rng.sample(articles, 3))
    return WorldNews(tuple(articles), following, saved)
