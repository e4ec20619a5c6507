"""Write tests/curation/data/pii_labelled.jsonl: labelled strings (English and Chinese) for
the PII detectors, positives of every class and hard negatives, seeded (rerunning writes
the same file).

Each line: {"text", "lang", "spans": [{"kind", "value"}]} where every value occurs in text.
Values are valid for their class (libphonenumber-valid numbers, Luhn cards, mod-97
IBANs, check-digit-valid ids); hard negatives are what phone screens show that looks
like them (dates, prices, order numbers, failing checksums, app names, UI words).

    python scripts/make_pii_labelled.py
"""

from __future__ import annotations

import json
import random
import string
from pathlib import Path

import phonenumbers
from faker import Faker
from stdnum import iban as stdnum_iban, luhn, verhoeff
from stdnum.cn import ric

OUT = Path(__file__).resolve().parent.parent / "tests" / "curation" / "data" / "pii_labelled.jsonl"
rng = random.Random(31)
fake_en, fake_in, fake_zh = Faker("en_US"), Faker("en_IN"), Faker("zh_CN")
for f in (fake_en, fake_in, fake_zh):
    f.seed_instance(31)


def email() -> str:
    local = rng.choice([fake_en.user_name(), f"{fake_en.first_name()}.{fake_en.last_name()}".lower(),
                        "josé.müller", "françois.dupont", "zoë_k", "张伟", "李娜.work", "søren+shop", "naïve.user"])
    domain = rng.choice(["gmail.com", "corp-mail.net", "163.com", "qq.com", "outlook.co.uk", "mail.example.org",
                         "universität.de", "yahoo.co.in", "sina.com.cn"])
    return f"{local}{rng.randrange(100) if rng.random() < 0.3 else ''}@{domain}"


def phone() -> str:
    region = rng.choice(["US", "CN", "GB", "IN", "DE", "FR", "JP", "BR", "AU", "KR", "SG", "MX", "ZA", "ES", "IT",
                         "CN", "CN", "US"])
    base = phonenumbers.example_number_for_type(region, phonenumbers.PhoneNumberType.MOBILE)
    national = str(base.national_number)
    for _ in range(200):
        digits = national[:3] + "".join(str(rng.randrange(10)) for _ in national[3:])
        number = phonenumbers.parse(f"+{base.country_code}{digits}")
        if phonenumbers.is_valid_number(number):
            break
    international = rng.random() < 0.6 or region not in ("US", "CN", "GB", "IN", "DE", "FR", "JP", "BR")
    fmt = phonenumbers.PhoneNumberFormat.INTERNATIONAL if international else phonenumbers.PhoneNumberFormat.NATIONAL
    return phonenumbers.format_number(number, fmt)


def card() -> str:
    prefix, length = rng.choice([("4", 16), ("51", 16), ("55", 16), ("37", 15), ("62", 16), ("35", 16), ("4", 16)])
    body = prefix + "".join(str(rng.randrange(10)) for _ in range(length - len(prefix) - 1))
    digits = body + luhn.calc_check_digit(body)
    sep = rng.choice([" ", "-", "", " "])
    return sep.join(digits[k:k + 4] for k in range(0, len(digits), 4)) if sep else digits


def iban() -> str:
    country, bban = rng.choice([
        ("GB", lambda: "".join(rng.choice(string.ascii_uppercase) for _ in range(4)) + _digits(14)),
        ("DE", lambda: _digits(18)), ("FR", lambda: _digits(23)), ("ES", lambda: _digits(20)),
        ("NL", lambda: "".join(rng.choice(string.ascii_uppercase) for _ in range(4)) + _digits(10)),
        ("IT", lambda: rng.choice(string.ascii_uppercase) + _digits(22))])
    for _ in range(10000):  # ES, IT and FR BBANs carry national check digits too
        b = bban()
        numeric = "".join(str(int(c, 36)) for c in b + country + "00")
        value = f"{country}{98 - int(numeric) % 97:02d}{b}"
        if stdnum_iban.is_valid(value):
            break
    return " ".join(value[k:k + 4] for k in range(0, len(value), 4)) if rng.random() < 0.6 else value


def _digits(n: int) -> str:
    return "".join(str(rng.randrange(10)) for _ in range(n))


def national_id() -> tuple[str, str]:
    kind = rng.choice(["cn", "cn", "ssn", "ni", "aadhaar", "pan", "dni", "nir"])
    if kind == "cn":
        body = f"{rng.choice(['110105', '310104', '440305', '510107', '330106'])}{rng.randrange(1950, 2005)}" \
               f"{rng.randrange(1, 13):02d}{rng.randrange(1, 29):02d}{rng.randrange(1000):03d}"
        return "zh", body + ric.calc_check_digit(body + "0")
    if kind == "ssn":
        return "en", f"{rng.randrange(100, 666)}-{rng.randrange(1, 100):02d}-{rng.randrange(1, 10000):04d}"
    if kind == "ni":
        first, second = rng.choice("ABCEGHJKLMNOPRSTWXYZ"), rng.choice("ABCEGHJKLMNPRSTWXYZ")
        if first + second in ("BG", "GB", "NK", "KN", "TN", "NT", "ZZ"):
            first, second = "A", "B"
        d = _digits(6)
        return "en", f"{first}{second} {d[:2]} {d[2:4]} {d[4:]} {rng.choice('ABCD')}"
    if kind == "aadhaar":
        body = str(rng.randrange(2, 10)) + _digits(10)
        v = body + verhoeff.calc_check_digit(body)
        return "en", f"{v[:4]} {v[4:8]} {v[8:]}"
    if kind == "pan":
        letters = "".join(rng.choice(string.ascii_uppercase) for _ in range(3))
        return "en", f"{letters}{rng.choice('PCHFAT')}{rng.choice(string.ascii_uppercase)}{_digits(4)}" \
                     f"{rng.choice(string.ascii_uppercase)}"
    if kind == "dni":
        n = rng.randrange(10 ** 7, 10 ** 8)
        return "en", f"{n}{'TRWAGMYFPDXBNJZSQVHLCKE'[n % 23]}"
    body = f"{rng.choice('12')}{rng.randrange(50, 99)}{rng.randrange(1, 13):02d}{rng.randrange(1, 96):02d}" \
           f"{rng.randrange(1, 990):03d}{rng.randrange(1, 999):03d}"
    return "en", f"{body}{97 - int(body) % 97:02d}"


def address(lang: str) -> str:
    if lang == "en":
        return rng.choice([
            lambda: f"{rng.randrange(1, 9999)} {fake_en.last_name()} {rng.choice(['Street', 'Avenue', 'Road', 'Lane', 'Drive', 'Blvd', 'St'])}",
            lambda: f"{rng.randrange(1, 999)} {fake_en.last_name()} {rng.choice(['Street', 'Avenue', 'Way'])}, "
                    f"{fake_en.city()}, {fake_en.state_abbr()} {fake_en.zipcode()}",
            lambda: f"Flat {rng.randrange(1, 40)}, {rng.randrange(1, 300)} {rng.choice(['High', 'Church', 'Station', 'Victoria'])} "
                    f"{rng.choice(['Street', 'Road', 'Close', 'Crescent'])}, {rng.choice(['Leeds', 'London', 'Bristol', 'York'])} "
                    f"{rng.choice(['LS1 4AP', 'SW1A 2AA', 'BS8 1TH', 'YO1 7HH', 'EC1V 9HX'])}",
            lambda: f"{rng.randrange(1, 999)} {rng.choice(['Oak', 'Maple', 'Cedar', 'Park', 'Lake'])} "
                    f"{rng.choice(['Street', 'Avenue', 'Court', 'Place'])}, Apt {rng.randrange(1, 30)}{rng.choice('ABC')}"])()
    city, district = rng.choice([("北京市", "朝阳区"), ("上海市", "浦东新区"), ("广州市", "天河区"), ("深圳市", "南山区"),
                                 ("杭州市", "西湖区"), ("成都市", "武侯区")])
    road = rng.choice(["建国路", "中山路", "人民大道", "解放街", "文三路", "科技园南路", "南京东路", "长安街"])
    no = f"{rng.randrange(1, 999)}号"
    tail = rng.choice(["", f"{rng.randrange(1, 20)}栋{rng.randrange(101, 2999)}室", f"{rng.randrange(1, 9)}单元{rng.randrange(101, 999)}室"])
    prov = rng.choice(["", "", "广东省" if city in ("广州市", "深圳市") else ""])
    return rng.choice([f"{prov}{city}{district}{road}{no}{tail}", f"{district}{road}{no}{tail}", f"{road}{no}{tail}",
                       f"{city}{district}{road}"])


def name(lang: str) -> str:
    if lang == "zh":
        return fake_zh.name()
    f = rng.choice([fake_en, fake_in])
    return f"{f.first_name()} {f.last_name()}"


def handle(lang: str) -> str:
    kind = rng.choice(["qq", "qqspaced", "wechat", "wxid"])
    if kind == "qq":
        return str(rng.randrange(10 ** 5, 10 ** 10))
    if kind == "qqspaced":
        d = str(rng.randrange(10 ** 5, 10 ** 9))
        return " ".join(d[k:k + 2] for k in range(0, len(d), 2)) + rng.choice(["", " A", " b"])
    if kind == "wechat":
        return rng.choice([f"{fake_en.user_name()}{rng.randrange(10, 99)}", f"zhang_{rng.randrange(1000)}",
                           f"li-na{rng.randrange(100)}"])
    return f"wxid_{''.join(rng.choice(string.ascii_lowercase + string.digits) for _ in range(10))}"


TEMPLATES = {
    "EMAIL": {"en": ["Email {v} about the invoice", "Contact: {v}", "Sent from {v}", "{v}", "Reply to <{v}>"],
              "zh": ["发邮件到{v}", "邮箱：{v}", "请联系 {v} 获取报价", "{v}"]},
    "PHONE": {"en": ["Call {v} tomorrow", "Mobile: {v}", "Text {v} when you land", "{v}", "Phone ({v})"],
              "zh": ["我的手机号是{v}", "电话：{v}", "请拨打 {v}", "给{v}发短信"]},
    "CARD": {"en": ["Card number {v}", "Pay with {v} exp 09/27", "{v}", "Visa {v}"],
             "zh": ["银行卡号{v}", "卡号：{v}", "用这张卡 {v} 付款"]},
    "IBAN": {"en": ["IBAN {v}", "Transfer to {v} by Friday", "Account: {v}"],
             "zh": ["收款账户 IBAN：{v}", "转账到{v}"]},
    "ID": {"en": ["ID {v}", "National insurance: {v}", "SSN {v}", "Document number {v}", "Aadhaar {v}", "PAN {v}"],
           "zh": ["身份证号{v}", "证件号码：{v}", "身份证 {v}"]},
    "ADDRESS": {"en": ["Ship to {v}", "Address: {v}", "Meet me at {v}", "{v}"],
                "zh": ["寄到{v}", "地址：{v}", "收货地址 {v}", "我住在{v}"]},
    "NAME": {"en": ["Call {v}", "Message from {v}", "Dear {v},", "Invite {v} to the meeting", "{v}",
                    "Pay {v} $20", "Remind {v} about lunch"],
             "zh": ["给{v}发短信", "联系人：{v}", "呼叫{v}", "{v}先生你好", "转账给{v}", "收件人：{v}", "{v}"]},
    "HANDLE": {"en": ["QQ {v}", "WeChat: {v}", "add me on WeChat {v}", "QQ number {v}"],
               "zh": ["我的QQ是 {v}", "QQ号：{v}", "微信号：{v}", "加微信 {v}"]},
}

NEGATIVES = {
    "en": ["Turn on Wi-Fi", "Meeting on 2026-11-29 at 10:30", "Price $129.99, 3 items", "Order #3103314 shipped",
           "PIN 1640 for card ending 4242", "Set an alarm for 07:30", "Version 2.3.14 (build 20240501)",
           "Grace period ends May 5", "Will you join us?", "Open Settings", "Battery 87%", "Storage 64 GB of 128 GB",
           "Route 66 diner", "Room 101", "Gate B22", "Flight CA1234 departs 14:05", "Main Street Cafe",
           "Call history", "Send message", "Mark as read", "New contact", "QQ Mail", "WeChat Pay", "Apple Pay",
           "Card 4111 1111 1111 1112", "IBAN GB00 WEST 1234 5698 7654 32", "example.com", "user@localhost",
           "Meet at 3 @ the lobby", "Step 3 of 5", "1920x1080 display", "Temperature 23.5°C", "Rated 4.8 by 12,345 users",
           "Total 1,234,567 steps", "Tracking 1Z999AA10123456784", "Invoice INV-2024-000123", "Chapter 12, page 345",
           "12 34 56", "2024-05-01 10:30 and 12 34 56", "Zip it up", "Sunday brunch", "Park Avenue Hotel review",
           "Lincoln Center tickets", "Jordan shoes on sale", "Victoria Secret", "Amazon Prime", "Google Maps",
           "Dark mode", "Font size 14", "Do not disturb", "5 new messages", "2 missed calls", "Screen time 3h 12m",
           "Airplane mode", "Bluetooth on", "Hotspot 192.168.0.1", "Updated 3 minutes ago", "12:45 PM",
           "Downloading 45 of 120 MB", "Speed 300 Mbps", "Postal Service", "Street Fighter", "Parker pen",
           "Steps today: 10482", "Heart rate 72 bpm", "Calories 2150 kcal", "ISBN 978-3-16-148410-0",
           "Taylor series", "Hunter boots", "Order 55 burgers", "Daisy chain", "Penny stocks", "Frank opinion",
           "Lily pad", "Ruby on Rails", "Jack of all trades", "Pay bills", "Contact support", "Ask a question",
           "Dear customer,", "Hello world", "Message from the team", "From Monday to Friday", "Call us anytime",
           "Invite friends", "Remind me later", "Mr. Bean", "Dr. Pepper", "Text size", "SSN field is required",
           "ID card photo", "Aadhaar number", "PAN card", "IBAN", "Account settings", "My profile",
           "Ship to home", "Address book", "Meet the team", "version 10.0.19045", "Code 123456 expires in 5 min",
           "OTP 482913", "Serial 4 8 15 16 23 42", "Score 98765", "Level 12", "AB 12 CD", "2,400 × 1,080",
           "Weight 72.5 kg", "Height 180 cm", "Lat 39.9042, Lon 116.4074", "Balance $12,345.67",
           "Reference 20240501 1640", "Sat, 12 Oct 2024", "Week 42", "Q3 2024 results", "Top 10 songs", "4K video",
           "5G network", "Lane 3 closed", "Exit 12B", "Platform 9", "Row 7 seat 14", "Tesla Model 3", "iPhone 15 Pro"],
    "zh": ["打开Wi-Fi", "会议时间2026年11月29日10:30", "价格￥129.99，共3件", "订单号3103314已发货", "设置闹钟07:30",
           "这条路很长", "地铁2号线", "周末愉快", "QQ音乐", "微信支付", "高级设置", "马上出发", "王者荣耀", "黄金周",
           "方法一", "金额：1280元", "余额 ¥3,456.78", "版本 8.0.49", "电量87%", "存储空间 64GB", "验证码 482913",
           "新建联系人", "发送短信", "通话记录", "已读", "5条新消息", "2个未接来电", "飞行模式", "蓝牙已开启",
           "下载中 45/120 MB", "步数 10482", "心率 72 次/分", "第12章 第345页", "航班CA1234 14:05起飞", "3号楼",
           "1号门", "座位7排14号", "温度23.5°C", "评分4.8（12,345人）", "周一到周五", "联系客服", "给我们反馈",
           "呼叫转移", "收件人", "联系人", "姓名", "地址", "身份证号", "银行卡", "微信号", "QQ号", "邮箱", "张开双臂",
           "陈列柜", "林业局", "何时出发", "许多人", "于是我们", "程序员节", "常用功能", "文件管理", "安全中心",
           "夏天来了", "路线规划", "时间管理", "关闭通知", "全部已读", "主页", "明天见", "和平精英", "应用商店",
           "马路对面", "走大路", "高铁票", "黄色预警", "谢谢你", "宋体字", "石头剪刀布", "钱包", "江湖", "白色主题",
           "第3步，共5步", "2024-05-01 10:30", "第42周", "屏幕使用时间3小时12分", "字号14", "勿扰模式",
           "正在更新 3 分钟前", "流量 1.2GB", "5G网络", "4K视频", "排名前10", "积分98765", "等级12"],
}


def positives(kind: str, lang: str) -> tuple[str, str]:
    if kind == "EMAIL":
        v = email()
    elif kind == "PHONE":
        v = phone()
    elif kind == "CARD":
        v = card()
    elif kind == "IBAN":
        v = iban()
    elif kind == "ID":
        lang, v = national_id()
    elif kind == "ADDRESS":
        v = address(lang)
    elif kind == "NAME":
        v = name(lang)
    else:
        v = handle(lang)
    return lang, v


def main() -> None:
    rows = []
    per_class = {"EMAIL": 45, "PHONE": 60, "CARD": 40, "IBAN": 35, "ID": 60, "ADDRESS": 50, "NAME": 60, "HANDLE": 40}
    for kind, n in per_class.items():
        for i in range(n):
            lang = "zh" if i % 2 else "en"
            lang, v = positives(kind, lang)
            template = rng.choice(TEMPLATES[kind][lang])
            if kind == "HANDLE" and not v.startswith("wxid") and "{v}" == template:
                template = "QQ {v}"
            if kind == "HANDLE" and v.startswith("wxid"):
                template = rng.choice(["{v}", "add {v}", "加我 {v}"])
            rows.append({"text": template.format(v=v), "lang": lang, "spans": [{"kind": kind, "value": v}]})
    for _ in range(40):  # several values in one string
        lang = rng.choice(["en", "zh"])
        kinds = rng.sample(["EMAIL", "PHONE", "CARD", "NAME", "ADDRESS"], 2)
        parts, spans = [], []
        for kind in kinds:
            _, v = positives(kind, lang)
            spans.append({"kind": kind, "value": v})
            parts.append(rng.choice(TEMPLATES[kind][lang]).format(v=v).rstrip(","))
        rows.append({"text": ("; " if lang == "en" else "；").join(parts), "lang": lang, "spans": spans})
    for lang, texts in NEGATIVES.items():
        rows += [{"text": t, "lang": lang, "spans": []} for t in texts]
    OUT.parent.mkdir(parents=True, exist_ok=True)
    with OUT.open("w", encoding="utf-8") as f:
        for row in rows:
            assert all(s["value"] in row["text"] for s in row["spans"]), row
            f.write(json.dumps(row, ensure_ascii=False) + "\n")
    print(f"{len(rows)} strings -> {OUT}")


if __name__ == "__main__":
    main()
