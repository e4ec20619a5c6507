"""Rule sets for the personal data no checksum finds: person names, street addresses and
account handles, in English and Chinese.

Names (``NAME``):

- a name the caller knows (``names``: the lake's own contacts, or names found by these
  rules anywhere in the same data set), wherever it appears;
- English: a given name from Faker's en_US / en_GB / en_IN lists followed by a
  capitalised surname ("Priya Raman", "John A. Smith"); or a given name alone after a
  context word ("Call Priya", "Dear Maria", "from Tom") or a title + surname ("Mr. Lee");
  given names that are common English words ("May", "Will", "Grace") need a known surname;
- Chinese: a surname (Faker zh_CN's list plus compound surnames) and one or two given
  characters after a context word (给 / 联系人 / 呼叫 / 收件人 ...) or before a title
  (先生 / 女士 / 老师 ...), or a whole 3-character string (a contact row) led by one of the
  100 commonest surnames, not a common word.

Addresses (``ADDRESS``): English "<number> <Capitalised words> <street type>" with
optional flat / suite, city, state and ZIP or UK postcode, a UK postcode alone, "PO Box
N"; Chinese "[省][市][区/县]<road>(路/街/道/巷/胡同)<n>号[楼][单元][室]", or an
administrative prefix (市 / 区) plus a road.

Handles (``HANDLE``): the id after "QQ", "WeChat", "微信(号)", "wx", whose digit groups may
be spaced ("QQ 98 76 54 A"); bare ``wxid_...``; ``@user`` handles.
"""

from __future__ import annotations

import re
from functools import lru_cache

from faker.providers.person.en_GB import Provider as _GB
from faker.providers.person.en_IN import Provider as _IN
from faker.providers.person.en_US import Provider as _US
from faker.providers.person.zh_CN import Provider as _ZH

COMMON_WORD_NAMES = frozenset(
    "May Will June April August Grace Hope Joy Faith Bill Mark Rose Summer Dawn Holly Ivy Page Chase Art Jean "
    "Sky Star Angel Rich Pat Sunny Song Gene Penny Ray Rob Sandy Victor Major Rusty Dale Lane Wade Drew Guy "
    "Frank Jack Jewel Amber Ruby Iris Jade Crystal Pearl Autumn Storm River Forest Brook Don Eve Honey Lily "
    "Daisy Violet Hunter Carter Cooper Mason Parker Tucker Taylor Miles Max Young Bishop Austin Houston "
    "Lincoln Jordan Paris Sydney Regan Ali Deepak Hari Prem Raj Raja Ram Noor Pari Sagar Lakshmi".split())
NOT_SURNAMES = frozenset(
    "Settings Street Road Avenue Lane Drive Hotel Park Bank Pay Card Store Mail Maps Music Photos Phone Home "
    "Calendar Clock Camera Files Contacts Messages Notes Wi Fi Bluetooth App Apps Google Chrome Android Play "
    "Account Accounts Search Share Send Save Cancel Delete Edit Done Next Back Open Close Menu Help Today "
    "Tomorrow Monday Tuesday Wednesday Thursday Friday Saturday Sunday January February March September "
    "October November December Morning Evening Night Alarm Timer Garden Gardens Square Center Centre Mall "
    "Airport Station Restaurant Cafe Coffee Shop Market Market Club Team Group Inc Ltd Co Plus Pro Max Mini "
    "Lite Update Version Mode Theme Dark Light Sound Volume Battery Storage Display Network Privacy Security "
    "The And Of For In On At To By With From Your My Our New All Off Is Are Be Has Had Was".split())
# Faker's en_IN list lacks many of India's commonest given names: added here
_MORE_FIRST = frozenset(
    "Rahul Vikram Ravi Sanjay Kiran Amit Anil Sunil Ajay Vijay Suresh Ramesh Rajesh Mahesh Manoj Sandeep Pradeep "
    "Rakesh Mukesh Deepak Ashok Arun Vinod Naveen Nikhil Rohit Sachin Varun Karan Arjun Harish Gaurav Ankit Ankur "
    "Pooja Priyanka Neha Sneha Kavya Divya Anjali Swati Shweta Sunita Anita Kavita Rekha Meena Lata Asha Usha "
    "Nisha Ritu Shalini Deepika Aishwarya Lakshmi Sita Gita Radha Parvati Wei Li Ming Hui Jun".split())
_FIRST = frozenset(n for p in (_US, _GB, _IN) for n in p.first_names) | _MORE_FIRST
_LAST = frozenset(n for p in (_US, _GB, _IN) for n in p.last_names)
_EN_CONTEXT = (r"(?:[Cc]all|[Tt]ext|[Mm]essage|[Ee]mail|[Mm]ail|[Dd]ear|[Hh]i|[Hh]ello|[Hh]ey|[Aa]sk|[Tt]ell|[Rr]emind|"
               r"[Ff]rom|[Tt]o|[Ww]ith|[Ff]or|[Cc]ontact:?|[Nn]ame:|[Ii]nvite|[Pp]ay|[Mm]eet|[Ss]ent by|[Bb]y|[Ss]ee)")
_TITLE = r"(?:Mr|Mrs|Ms|Miss|Dr|Prof|Sir|Madam)\.?"
_CAP = r"[A-Z][a-z]+(?:[-'][A-Z]?[a-z]+)?"
_EN_FULL = re.compile(rf"(?=\b({_CAP})((?: [A-Z]\.)? ({_CAP}))\b(?! (?:Street|St|Road|Rd|Avenue|Ave|Lane|Hotel|Park)\b))")
_EN_CONTEXTUAL = re.compile(rf"\b{_EN_CONTEXT} ({_CAP})\b")
_EN_TITLED = re.compile(rf"\b{_TITLE} ({_CAP})\b")

_COMPOUND = ("欧阳", "司马", "诸葛", "上官", "东方", "皇甫", "尉迟", "公孙", "慕容", "长孙", "宇文", "司徒", "夏侯",
             "令狐", "南宫", "端木")
_ZH_SURNAMES = frozenset(_ZH.last_names) | frozenset(_COMPOUND)
_ZH_TOP = frozenset(list(_ZH.last_names)[:100])
_ZH_NOT_NAMES = frozenset(
    "周末 高级 方法 黄金 李子 马上 张开 陈列 林业 何时 朱红 胡说 许多 于是 余额 宋体 田地 石头 金额 钱包 程序 万一 常用 "
    "文件 江湖 白色 安全 向上 夏天 成功 路线 时间 关闭 通知 全部 新建 主页 明天 和平 应用 高铁 马路 王者 黄色 毛衣 谢谢 "
    "孙子 宋朝 唐朝 杜绝 范围 方向 方式 高度 高清 黄山 金融 钱数 孔雀 叶子 秦始皇 任务 任何 邓紫棋 曾经 汪洋 蔡菜 曹操 "
    "白天 包裹 常见 程度 丁香 董事 杜鹃 范例 方便 付款 付费 关于 管理 贺卡 洪水 华为 黄昏 纪录 季度 江南 蒋介石 金色 "
    "康复 孔子 雷达 黎明 连接 梁山 林子 刘海 龙虾 卢浮宫 陆地 罗马 吕布 毛巾 孟子 潘多拉 彭湖 钱江 秦岭 邱吉尔 任意 "
    "邵阳 沈阳 石油 史书 宋词 苏州 谭木匠 汤圆 唐诗 田野 万能 汪汪 魏国 温度 文字 吴国 武器 夏季 萧山 谢幕 熊猫 徐州 "
    "许可 严格 颜色 杨树 姚明 叶片 易于 殷切 尹其 于今 余下 袁大头 岳阳 云端 曾几何时 张力 张贴 章节 赵国 郑重 钟表 "
    "周年 周期 朱砂 庄园 邹城 左边 右边 高兴 高速 黄河 江苏 李白 王国 王府井 陈旧 马克 马来西亚 何必 罗列 郭德纲 林肯 "
    "何况 胡同 郭子 林荫 周边 周一 周二 周三 周四 周五 周六 周日 周围 方案 方面 高手 金牌 金卡 钱款 常规 程序员".split())
_ZH_CONTEXT = r"(?:给|联系人[:：]?|联系|致电|打给|发给|呼叫|收件人[:：]?|发件人[:：]?|姓名[:：]?|告诉|通知|转账给|转给|邀请|提醒|跟|@)"
_ZH_TITLES = r"(?:先生|女士|小姐|老师|经理|医生|同学|总|阿姨|叔叔|教授|律师|师傅)"
_ZH_STOP = set("发打的说回转送写留和在是了吗吧呢个，。！？、:：的电话手机邮箱")
_HAN = "\u4e00-\u9fff"
_ZH_AFTER_CONTEXT = re.compile(rf"{_ZH_CONTEXT}([{_HAN}]{{2,4}})")
_ZH_BEFORE_TITLE = re.compile(rf"(?<![{_HAN}])([{_HAN}]{{1,3}}?){_ZH_TITLES}|([{_HAN}]{{2,3}})(?={_ZH_TITLES})")

_STREET = (r"(?:Street|St|Avenue|Ave|Road|Rd|Boulevard|Blvd|Lane|Ln|Drive|Dr|Court|Ct|Way|Place|Pl|Terrace|"
           r"Close|Crescent|Square|Sq|Parkway|Pkwy|Highway|Hwy|Circle|Cir|Row|Mews|Gardens|Grove|Hill)")
_POSTCODE = r"[A-Z]{1,2}\d[A-Z\d]? ?\d[A-Z]{2}"
_EN_ADDRESS = re.compile(
    rf"(?:(?:Flat|Apt|Unit|Suite)\.? ?\w+,? )?\b\d{{1,5}}[A-Za-z]?,? (?:[A-Z][a-zA-Z'\-]*\.? ){{1,4}}{_STREET}\b\.?(?: (?:NW|NE|SW|SE|N|S|E|W)\b)?"
    r"(?:,? (?:Apt|Apartment|Suite|Ste|Unit|Flat|#)\.? ?[\w\-]+)?"
    r"(?:, ?[A-Z][a-z]+(?: [A-Z][a-z]+){0,2})?(?:, ?[A-Z]{2}\b)?(?: \d{5}(?:-\d{4})?)?"
    rf"(?:,? {_POSTCODE}\b)?")
_EN_POSTCODE = re.compile(rf"\b(?<!\d )(?!QQ)(?:[A-PR-UWYZ][A-HK-Y]?\d[A-Z\d]? \d[ABD-HJLNP-UW-Z]{{2}})\b")
_PO_BOX = re.compile(r"\bP\.?O\.? Box \d+\b", re.I)
_ZH_NUM = r"(?:\d+|[一二三四五六七八九十百零]+)"
_ZH_ROAD = rf"[{_HAN}\d]{{1,8}}?(?:路|街|大街|大道|道|巷|胡同|里)"
_ZH_ADMIN = rf"(?:[{_HAN}]{{2,6}}?(?:省|自治区))?(?:[{_HAN}]{{2,6}}?市)?(?:[{_HAN}]{{1,6}}?(?:区|县|镇))?"
_ZH_TAIL = rf"(?:{_ZH_NUM}(?:号楼|栋|幢|座))?(?:{_ZH_NUM}单元)?(?:{_ZH_NUM}(?:室|号|楼))?"
_ZH_ADDRESS = re.compile(rf"{_ZH_ADMIN}{_ZH_ROAD}{_ZH_NUM}(?:号|弄)(?:院)?{_ZH_TAIL}"
                         rf"|[{_HAN}]{{2,6}}?(?:市|区)[{_HAN}]{{1,6}}?(?:区|县)?{_ZH_ROAD}")
_ZH_LEAD = ("寄到", "送到", "发到", "住在", "位于", "地址是", "地址：", "地址:", "地址", "搬到", "去", "到", "在", "往")

_HANDLE_KEY = re.compile(r"(?i:(?<![A-Za-z])(qq|wechat(?: id)?|weixin|wx)(?![A-Za-z])|(扣扣|微信))\s*"
                         r"(号码?|id|ID|no\.?|number|是)?\s*([:：])?\s*")
_ZH_ROAD_HINT = re.compile("[路街道巷弄]|胡同")
_HANDLE_TOKEN = re.compile(r"[A-Za-z0-9_\-]+")
_WXID = re.compile(r"\bwxid_[a-z0-9]{4,}\b", re.I)
_AT_HANDLE = re.compile(r"(?<![\w.@])@[A-Za-z_][A-Za-z0-9_.]{2,29}\b")


def find(text: str, names: frozenset[str]) -> list[tuple[int, int, str, str]]:
    """(start, end, kind, key) candidates, handles first, then addresses, then names."""
    out: list[tuple[int, int, str, str]] = []
    out += handles(text)
    if any(ch.isdigit() for ch in text) or _ZH_ROAD_HINT.search(text):
        out += _addresses(text)
    if names:
        for m in _names_pattern(names).finditer(text):
            out.append((m.start(), m.end(), "NAME", m.group()))
    out += _en_names(text) + _zh_names(text)
    return out


def handles(text: str) -> list:
    out = []
    for m in _HANDLE_KEY.finditer(text):
        pos, tokens, marked = m.end(), [], bool(m.group(3) or m.group(4))
        while True:
            t = _HANDLE_TOKEN.match(text, pos)
            if not t:
                break
            token = t.group()
            if tokens and not (any(c.isdigit() for c in token) or len(token) <= 2):
                break
            if not tokens and not (marked or any(c.isdigit() or c == "_" for c in token)):
                break
            tokens.append(t)
            nxt = t.end()
            if nxt < len(text) and text[nxt] == " " and nxt + 1 < len(text) and text[nxt + 1] != " ":
                pos = nxt + 1
            else:
                break
        if tokens:
            value = text[tokens[0].start():tokens[-1].end()]
            if (m.group(1) or m.group(2) or "").lower() in ("qq", "扣扣") and sum(c.isdigit() for c in value) < 5 \
                    and not (marked or "_" in value or "-" in value):
                continue
            out.append((tokens[0].start(), tokens[-1].end(), "HANDLE", value.replace(" ", "").lower()))
    for pattern in (_WXID, _AT_HANDLE):
        for m in pattern.finditer(text):
            out.append((m.start(), m.end(), "HANDLE", m.group().lower()))
    return out


def _addresses(text: str) -> list:
    out = []
    for pattern in (_EN_ADDRESS, _PO_BOX, _EN_POSTCODE):
        for m in pattern.finditer(text):
            out.append((m.start(), m.end(), "ADDRESS", m.group().lower()))
    for m in _ZH_ADDRESS.finditer(text):
        start = m.start()
        stripped = True
        while stripped:
            stripped = False
            for lead in _ZH_LEAD:
                if text.startswith(lead, start) and m.end() - start - len(lead) >= 4:
                    start += len(lead)
                    stripped = True
                    break
        out.append((start, m.end(), "ADDRESS", text[start:m.end()]))
    return out


def _en_names(text: str) -> list:
    out = []
    for m in _EN_FULL.finditer(text):
        first, last = m.group(1), m.group(3)
        if first in _FIRST and last not in NOT_SURNAMES and (first not in COMMON_WORD_NAMES or last in _LAST):
            out.append((m.start(1), m.end(2), "NAME", text[m.start(1):m.end(2)]))
    for pattern in (_EN_CONTEXTUAL, _EN_TITLED):
        for m in pattern.finditer(text):
            word = m.group(1)
            ok = word in _LAST if pattern is _EN_TITLED else (word in _FIRST and word not in COMMON_WORD_NAMES)
            if ok and word not in NOT_SURNAMES:
                out.append((m.start(1), m.end(1), "NAME", word))
    return out


def _zh_given(s: str) -> str | None:
    """The name at the start of ``s`` (surname + one or two characters), or None."""
    for sl in (2, 1):
        if s[:sl] in _ZH_SURNAMES and len(s) > sl:
            given = s[sl:sl + 2]
            if len(given) == 2 and given[1] in _ZH_STOP:
                given = given[:1]
            if given[0] in _ZH_STOP:
                return None
            name = s[:sl] + given
            return None if name in _ZH_NOT_NAMES or name[:2] in _ZH_NOT_NAMES else name
    return None


def _zh_names(text: str) -> list:
    if not re.search(f"[{_HAN}]", text):
        return []
    out = []
    for m in _ZH_AFTER_CONTEXT.finditer(text):
        name = _zh_given(m.group(1))
        if name:
            out.append((m.start(1), m.start(1) + len(name), "NAME", name))
    for m in _ZH_BEFORE_TITLE.finditer(text):
        cand = m.group(1) or m.group(2)
        start = m.start(1) if m.group(1) else m.start(2)
        if (cand[:1] in _ZH_SURNAMES or cand[:2] in _ZH_SURNAMES) and cand not in _ZH_NOT_NAMES:
            out.append((start, start + len(cand), "NAME", cand))
    for m in _ZH_SEGMENT.finditer(text):  # a contact row, or a name between separators
        seg = m.group()
        if seg[0] in _ZH_TOP and seg not in _ZH_NOT_NAMES and seg[:2] not in _ZH_NOT_NAMES \
                and not any(c in _ZH_STOP for c in seg[1:]):
            out.append((m.start(), m.end(), "NAME", seg))
    return out


_ZH_SEGMENT = re.compile(rf"(?:(?<=^)|(?<=[；;，,。\s:：]))[{_HAN}]{{2,3}}(?=$|[；;，,。\s])")


@lru_cache(maxsize=16)
def _names_pattern(names: frozenset[str]) -> re.Pattern:
    """One alternation for all known names, longest first ("Priya Raman" before "Priya")."""
    ordered = sorted(names, key=len, reverse=True)
    latin = "|".join(re.escape(n) for n in ordered if not re.match(f"[{_HAN}]", n)) or "(?!)"
    han = "|".join(re.escape(n) for n in ordered if re.match(f"[{_HAN}]", n)) or "(?!)"
    return re.compile(rf"(?<!\w)(?:{latin})(?![a-z])|{han}")  # Chinese runs on without spaces
