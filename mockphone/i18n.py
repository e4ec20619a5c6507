"""Locales of the mock phone: ``en-US`` (the source strings) and ``zh-CN`` (one catalog, below).

Apps, the system UI, dialogs and perturbations are written in English; a phone in
another locale translates every view *before* layout (:func:`localize_view`,
:func:`localize_dialog`), so the wrapped lines, the drawn pixels and the XML bounds
are measured on the text that is shown. The catalog is keyed by the English string.
Keys with ``{placeholders}`` are templates for formatted strings ("Forget {name}?"):
the placeholder matches any text, which is itself looked up (a sort name, a city)
and otherwise kept as it is (a contact's name, an amount). Data (names, products,
hotels, message bodies) has no entry and stays as it was seeded.

Oracles look elements up by :func:`t` of their English label (case-insensitive, so
``ALLOW`` finds 允许), and task instructions come from ``mockphone.tasks.instructions``.
"""

from __future__ import annotations

import dataclasses
import datetime as dt
import re
from functools import lru_cache

from mockphone.widgets import Dialog, View, Widget

DEFAULT = "en-US"
LOCALES = ("en-US", "zh-CN")

ZH: dict[str, str] = {
    # launcher labels
    "Assistant": "助手", "Bank": "银行", "Calendar": "日历", "Clock": "时钟", "Contacts": "通讯录", "Files": "文件",
    "Web Forms": "网页表单", "Mail": "邮件", "Messages": "信息", "Notes": "备忘录", "Settings": "设置",
    "Shop": "商城", "SuperApp": "超级应用",
    # shared buttons and words
    "OK": "确定", "Cancel": "取消", "Delete": "删除", "Save": "保存", "Edit": "编辑", "Send": "发送", "Add": "添加",
    "Confirm": "确认", "Continue": "继续", "Close": "关闭", "Clear": "清除", "Apply": "应用", "Copy": "复制",
    "Rename": "重命名", "Create": "创建", "New": "新建", "Start": "开始", "Reply": "回复", "Retry": "重试",
    "Submit": "提交", "Order": "下单", "Sign up": "注册", "Pay": "支付", "Transfer": "转账", "Name": "姓名",
    "Phone": "电话", "Email": "电子邮件", "Message": "信息", "Title": "标题", "Location": "地点", "Label": "标签",
    "Address": "地址", "Any": "不限", "Min": "最低", "Max": "最高", "Sort": "排序", "Filter": "筛选",
    "Copied to clipboard": "已复制到剪贴板", "Deleted": "已删除",
    # system UI
    "Wi-Fi": "WLAN", "Bluetooth": "蓝牙", "Airplane mode": "飞行模式", "Do not disturb": "勿扰模式",
    "Clear all": "全部清除", "Notifications": "通知", "No notifications": "没有通知", "Recent apps": "最近使用的应用",
    "Recent app": "最近使用", "space": "空格", "No recent items": "没有最近使用的项目", "Loading": "正在加载",
    # assistant
    "Hi! Ask me to draft something.": "你好！请让我帮你起草点什么。", "New chat": "新对话", "Ask anything": "随便问",
    # bank
    "Checking": "活期账户", "Savings": "储蓄账户", "Confirm transfer": "确认转账",
    "Move {amount} from {src} to {dst}?": "从{src}转 {amount} 到{dst}？", "Transfer complete": "转账成功",
    "Send money": "转账给他人", "Pay {payee}": "向 {payee} 付款", "Send money?": "确认付款？",
    "Send {amount} to {payee} from Checking?": "从活期账户向 {payee} 付款 {amount}？", "Money sent": "付款成功",
    "Recent activity": "近期交易", "Available balance": "可用余额", "Invalid amount": "金额无效",
    "Enter a positive amount you have available.": "请输入不超过可用余额的正数金额。", "Payee": "收款人",
    "To {payee}": "付给 {payee}", "Transfer between accounts": "账户间转账", "From {a}": "从{a}",
    "Amount ($)": "金额（$）", "What's it for? (optional)": "用途（选填）", "Payment": "付款", "Deposit": "存入",
    "{src} → {dst}": "{src} → {dst}",
    "Allow Bank to send you notifications?": "允许“银行”向你发送通知吗？",
    # calendar
    "Delete event?": "删除日程？", "\"{title}\" on {when} will be deleted.": "{when}的“{title}”将被删除。",
    "Event deleted": "日程已删除", "Event saved": "日程已保存", "Event": "日程", "Edit event": "编辑日程",
    "New event": "新建日程", "Check the event": "请检查日程",
    "A title, a date (YYYY-MM-DD) and a time (HH:MM) are required.": (
        "标题、日期（YYYY-MM-DD）和时间（HH:MM）为必填项。"
    ),
    "No upcoming events": "没有即将到来的日程", "Today: {day}": "今天：{day}", "No location": "无地点",
    # clock
    "Alarms": "闹钟", "Alarm deleted": "闹钟已删除", "Add alarm": "添加闹钟",
    "Alarm set for {time}": "闹钟已设为 {time}", "No timer running": "没有正在运行的计时器", "Timer": "计时器",
    "Invalid time": "时间无效", "Time left: {left}": "剩余时间：{left}", "Time's up": "时间到",
    "Delete {time}": "删除 {time}", "No alarms": "没有闹钟", "Enter the time as numbers": "请用数字输入时间",
    "Minutes": "分钟", "Cancel timer": "取消计时器", "Enter minutes": "输入分钟数", "Alarm": "闹钟",
    # contacts
    "Delete this contact?": "删除此联系人？",
    "{name} will be removed from your contacts.": "{name} 将从通讯录中移除。", "Contact deleted": "联系人已删除",
    "Contact saved": "联系人已保存", "Contact": "联系人", "Edit contact": "编辑联系人",
    "Create contact": "新建联系人", "Name and phone are required": "姓名和电话为必填项",
    "No contacts found": "未找到联系人", "Favourite": "收藏", "Search contacts": "搜索联系人",
    "Contact was deleted": "联系人已被删除",
    # files
    "Delete file?": "删除文件？", "{file} will be permanently deleted.": "{file} 将被永久删除。",
    "Move {file}": "移动 {file}", "Moved to {folder}": "已移至 {folder}", "New folder": "新建文件夹",
    "{n} items": "{n}项", "File": "文件", "Can't rename": "无法重命名",
    "That name is empty, invalid or already used.": "名称为空、无效或已被使用。", "Folder name": "文件夹名称",
    "Folder name is empty or exists": "文件夹名称为空或已存在", "This folder is empty": "此文件夹为空",
    "Current folder": "当前文件夹", "{size} kB · in {folder}": "{size} kB · 位于{folder}", "Move to…": "移动到…",
    "File no longer exists": "文件已不存在", "File name": "文件名",
    # forms
    "Full name": "姓名", "Phone number": "电话号码", "Birthday (optional)": "生日（选填）",
    "National ID number (optional)": "身份证号（选填）", "Home address (optional)": "家庭住址（选填）",
    "Delivery address": "收货地址", "Card number": "卡号", "Annual salary (optional)": "年薪（选填）",
    "Medical conditions (optional)": "病史（选填）", "Date of birth": "出生日期",
    "{field} (optional)": "{field}（选填）", "FitLife newsletter": "FitLife 电子报",
    "City library card": "市图书馆借书证", "Noodle delivery": "面馆外卖", "Bean coffee club": "Bean 咖啡俱乐部",
    "Airport Wi-Fi": "机场 WLAN", "Tech meetup RSVP": "技术聚会报名", "Bike rental": "共享单车",
    "Salary survey": "薪资调查", "Pharmacy pickup": "药房取药", "Parcel locker": "快递柜", "Job alerts": "职位提醒",
    "Submitted": "已提交", "Cash": "现金", "Card": "银行卡", "Missing information": "信息不完整",
    "Please fill in: {fields}": "请填写：{fields}",
    # mail
    "Compose": "写邮件", "Sent": "已发送", "Inbox": "收件箱", "Archive": "归档", "Trash": "已删除邮件",
    "Add a recipient": "请添加收件人",
    "Enter a valid email address in the To field.": "请在“收件人”中输入有效的邮箱地址。", "To: {to}": "至：{to}",
    "Nothing in {folder}": "{folder}中没有邮件", "From: {sender}": "发件人：{sender}",
    "Message deleted": "邮件已删除", "To": "收件人", "Subject": "主题", "Compose email": "写邮件", "Star": "加星标",
    "Unstar": "取消星标", "Move to Inbox": "移至收件箱", "Archived": "已归档", "Email sent": "邮件已发送",
    "Restored to inbox": "已恢复到收件箱", "Body": "正文",
    # messages
    "Delete conversation?": "删除对话？",
    "All messages with {contact} will be deleted.": "与 {contact} 的所有信息都将被删除。",
    "New conversation": "新对话", "No conversations": "没有对话", "Start chat": "发起聊天", "Type a name": "输入姓名",
    "Text message": "短信", "new": "新",
    # notes
    "Delete note?": "删除笔记？", "\"{title}\" will be deleted.": "“{title}”将被删除。", "Note deleted": "笔记已删除",
    "Note saved": "笔记已保存", "Edit note": "编辑笔记", "New note": "新建笔记",
    "Empty note discarded": "已舍弃空白笔记", "No notes yet": "还没有笔记", "Note": "笔记",
    # settings
    "Network & internet": "网络和互联网", "Connected devices": "已连接的设备", "Forget {name}?": "取消配对 {name}？",
    "The device will be unpaired.": "该设备将被取消配对。", "Custom": "自定义", "Display": "显示",
    "Screen timeout": "屏幕超时", "Sound & vibration": "声音和振动", "About phone": "关于手机",
    "Device name": "设备名称", "Wi-Fi, mobile data, airplane mode": "WLAN、移动数据、飞行模式",
    "Bluetooth, pairing": "蓝牙、配对", "Dark theme, brightness, screen timeout": "深色主题、亮度、屏幕超时",
    "Do not disturb, ring mode": "勿扰模式、铃声模式", "Device name saved": "设备名称已保存",
    "Paired devices": "已配对的设备", "Forget": "取消配对", "Mobile data": "移动数据", "Paired": "已配对",
    "Dark theme": "深色主题", "Brightness": "亮度", "Font size": "字体大小", "Ring mode": "铃声模式",
    "Android version": "Android 版本", "Model": "型号", "Default": "默认", "Large": "大", "Normal": "标准",
    "Vibrate": "振动", "Silent": "静音", "normal": "标准", "vibrate": "振动", "silent": "静音", "15 seconds": "15秒",
    "30 seconds": "30秒", "1 minute": "1分钟", "2 minutes": "2分钟", "5 minutes": "5分钟", "10 minutes": "10分钟",
    "Small": "小", "Largest": "超大", "Available networks": "可用网络", "Connected": "已连接",
    "Saved": "已保存", "Not connected": "未连接", "Connected to {name}": "已连接到 {name}",
    "{used} GB of {plan} GB used": "已用 {used} GB，共 {plan} GB",
    # instruction paraphrases of the settings tasks (mockphone.tasks.settings_tasks: their {phrasing} param)
    "Turn off Wi-Fi.": "关闭 WLAN。",
    "Switch Wi-Fi off.": "把 WLAN 关掉。",
    "Disable Wi-Fi on my phone.": "停用手机上的 WLAN。",
    "Disconnect from Wi-Fi by turning it off.": "关闭 WLAN，断开无线网络。",
    "I don't want to be on Wi-Fi right now. Turn it off.": "我现在不想连 WLAN，把它关掉。",
    "Please turn Wi-Fi off.": "请关闭 WLAN。",
    "Wi-Fi should be off. Switch it off for me.": "WLAN 应该是关着的，帮我关掉。",
    "Shut off the phone's Wi-Fi.": "把手机的 WLAN 关闭。",
    "Turn on Bluetooth.": "打开蓝牙。",
    "Switch Bluetooth on.": "把蓝牙开起来。",
    "Enable Bluetooth on my phone.": "启用手机上的蓝牙。",
    "I want to use my headphones. Turn on Bluetooth.": "我想用耳机，打开蓝牙。",
    "Please turn Bluetooth on.": "请打开蓝牙。",
    "Bluetooth is off. Turn it on for me.": "蓝牙关着，帮我打开。",
    "Get Bluetooth switched on.": "把蓝牙打开。",
    "Activate Bluetooth.": "开启蓝牙功能。",
    "Turn off Bluetooth.": "关闭蓝牙。",
    "Switch Bluetooth off.": "把蓝牙关掉。",
    "Disable Bluetooth on my phone.": "停用手机上的蓝牙。",
    "Save some battery: turn Bluetooth off.": "省点电：把蓝牙关了。",
    "Please turn Bluetooth off.": "请关闭蓝牙。",
    "Bluetooth is on and I don't need it. Turn it off.": "蓝牙开着但我用不上，关掉它。",
    "Get Bluetooth switched off.": "把蓝牙关闭。",
    "Deactivate Bluetooth.": "关闭蓝牙功能。",
    "Turn on airplane mode.": "开启飞行模式。",
    "Switch airplane mode on.": "把飞行模式打开。",
    "Put the phone in airplane mode.": "让手机进入飞行模式。",
    "I'm boarding a flight. Turn on airplane mode.": "我要登机了，开启飞行模式。",
    "Please enable airplane mode.": "请开启飞行模式。",
    "Cut all the radios: airplane mode on.": "关掉所有无线信号：打开飞行模式。",
    "Enable flight mode.": "打开飞行模式。",
    "Airplane mode should be on. Turn it on for me.": "飞行模式应该开着，帮我打开。",
    "Turn off airplane mode.": "关闭飞行模式。",
    "Switch airplane mode off.": "把飞行模式关掉。",
    "Take the phone out of airplane mode.": "让手机退出飞行模式。",
    "I've landed. Turn off airplane mode.": "我落地了，关闭飞行模式。",
    "Please disable airplane mode.": "请关闭飞行模式。",
    "Bring the radios back: airplane mode off.": "恢复无线信号：关闭飞行模式。",
    "Disable flight mode.": "关掉飞行模式。",
    "Airplane mode should be off. Turn it off for me.": "飞行模式应该关着，帮我关掉。",
    "Turn on Do not disturb.": "开启勿扰模式。",
    "Switch Do not disturb on.": "把勿扰模式打开。",
    "Silence my notifications with Do not disturb.": "用勿扰模式让通知安静下来。",
    "I'm going into a meeting. Turn on Do not disturb.": "我要去开会了，开启勿扰模式。",
    "Please enable Do not disturb.": "请开启勿扰模式。",
    "I don't want to be disturbed: turn on Do not disturb.": "我不想被打扰：打开勿扰模式。",
    "Activate Do not disturb.": "启用勿扰模式。",
    "Do not disturb should be on. Turn it on for me.": "勿扰模式应该开着，帮我打开。",
    "Make the text on my phone larger.": "把手机上的字调大一些。",
    "The text is too small for me. Make it bigger.": "字太小了，我看不清，调大一点。",
    "Increase the font size.": "把字体调大。",
    "Please make the font bigger.": "请把字体变大。",
    "I'd like larger text on the screen.": "我想让屏幕上的字大一些。",
    "Set the screen timeout to": "把屏幕超时设为",
    "Change the screen timeout to": "把屏幕超时改成",
    "Make the screen turn off after": "让屏幕在闲置后多久关闭：设为",
    "Let the display go to sleep after": "让屏幕休眠时间设为",
    "I want the screen timeout at": "我想把屏幕超时设成",
    "Set the phone's ring mode to": "把手机的铃声模式设为",
    "Switch the ringer to": "把响铃方式切换到",
    "Change the sound mode to": "把声音模式改成",
    "Put the ring mode on": "把铃声模式调到",
    "I need the ring mode set to": "我需要把铃声模式设成",
    # shop
    "Relevance": "综合", "Price: low to high": "价格从低到高", "Price: high to low": "价格从高到低", "Rating": "评分",
    "{n} results for \"{query}\"{price} · {sort}": "“{query}”共 {n} 个结果{price} · {sort}",
    "Cart ({count})": "购物车（{count}）", "Sort by": "排序方式", "Added to cart": "已加入购物车", "Cart": "购物车",
    "Checkout": "结算", "Place order?": "确认下单？", "You will be charged ${total}.": "将向你收取 ${total}。",
    "Order placed": "下单成功", "Results": "搜索结果", "Your cart is empty": "购物车是空的",
    "No products match your filters": "没有符合筛选条件的商品", "Prices must be whole numbers": "价格必须是整数",
    "Remove {name}": "移除 {name}", "Top rated": "好评榜", "Price range ($)": "价格区间（$）",
    "★ {rating} · {category}": "★ {rating} · {category}",
    "Free delivery in 2 days. 30-day returns.": "2天内免费送达，30天无理由退货。", "Add to cart": "加入购物车",
    "Total: ${total}": "合计：${total}", "Order total: ${total}": "订单总额：${total}", "Place order": "提交订单",
    "Search products": "搜索商品", "Audio": "音频", "Electronics": "电子产品", "Sports": "运动", "Home": "家居",
    "Travel": "旅行", "audio": "音频", "electronics": "电子产品", "sports": "运动", "home": "家居", "travel": "旅行",
    "low to high": "从低到高", "high to low": "从高到低",
    # superapp
    "Hotels": "酒店", "any price": "不限价格", "up to ¥{price}": "¥{price}以内", "Hotels in {city}": "{city}的酒店",
    "Confirm booking": "确认预订", "{hotel}, 1 night, ¥{price}. Pay now?": "{hotel}，1晚，¥{price}。现在支付吗？",
    "Booking confirmed": "预订成功", "Food delivery": "外卖", "Basket": "购物袋",
    "Enter a destination": "请输入目的地", "{stars} · ¥{price}/night": "{stars} · ¥{price}/晚",
    "{n} dishes · from ¥{price}": "{n}道菜 · ¥{price}起",
    "No hotels match. Try raising your budget.": "没有符合条件的酒店，试试提高预算。", "Add {dish}": "添加 {dish}",
    "Mini programs": "小程序", "Book stays in 5 cities": "预订5个城市的住宿",
    "Order from nearby restaurants": "附近餐厅外卖", "Chats": "聊天", "Family group": "相亲相爱一家人",
    "Dinner at 7?": "7点吃晚饭？", "Work": "工作群", "Standup moved to 10:30": "站会改到10:30", "Popular": "热门",
    "Search hotels": "搜索酒店", "{n} stays · {budget}": "{n}家住宿 · {budget}",
    "Max price per night (¥)": "每晚最高价格（¥）", "Star rating": "星级",
    "{stars} · ¥{price} per night": "{stars} · 每晚¥{price}",
    "Free cancellation until 18:00 the day before arrival.": "入住前一天18:00前可免费取消。",
    "Book 1 night": "预订1晚", "View basket ({count})": "查看购物袋（{count}）", "Total ¥{total}": "合计¥{total}",
    "Destination city": "目的城市", "Your basket is empty": "购物袋是空的", "Shanghai": "上海", "Beijing": "北京",
    "Hangzhou": "杭州", "Chengdu": "成都", "Shenzhen": "深圳",
    # perturbations
    "Limited offer!": "限时优惠！", "Get 3 months of Premium for free.": "免费领取3个月高级会员。",
    "New feature": "新功能", "Try dark mode for widgets.": "试试小组件的深色模式。", "Rate us": "给我们评分",
    "Enjoying the app? Leave a review.": "喜欢这个应用吗？留个评价吧。",
    "Allow {app} to send you notifications?": "允许“{app}”向你发送通知吗？", "Sign in to {app}": "登录{app}",
    "Sign in to back up and sync your data.": "登录以备份和同步你的数据。", "Enjoying {app}?": "喜欢{app}吗？",
    "Tap a star to rate it on the Play Store.": "点按星星，在应用商店中评分。",
    "Allow {app} to access this device's location?": "允许“{app}”获取此设备的位置信息吗？", "Not now": "以后再说",
    "Sign in": "登录", "No thanks": "不用了", "Rate": "评分", "Don't allow": "不允许", "Allow": "允许",
    "While using the app": "仅在使用该应用期间允许", "Only this time": "仅限这一次",
    "No internet connection": "无网络连接", "Check your connection and try again.": "请检查网络连接后重试。",
    "Sign-in is not available": "暂时无法登录",
}


def _app_strings() -> dict[str, str]:
    from mockphone.apps.catalog_zh import STRINGS  # the Maps, Rides, To-do, Weather, Music and News apps' labels

    return STRINGS


ZH.update(_app_strings())

_WEEKDAYS_ZH = ("周一", "周二", "周三", "周四", "周五", "周六", "周日")


def check(locale: str) -> str:
    """``locale`` if it is one the phone speaks, else a ValueError naming the choices."""
    if locale not in LOCALES:
        raise ValueError(f"unknown locale {locale!r}; use one of {', '.join(LOCALES)}")
    return locale


def _catalog(locale: str) -> dict[str, str]:
    return ZH if locale == "zh-CN" else {}


@lru_cache(maxsize=1)
def _patterns() -> tuple[tuple[re.Pattern[str], str], ...]:
    out = []
    for key, value in ZH.items():
        if "{" not in key:
            continue
        parts = re.split(r"\{(\w+)\}", key)  # literal, name, literal, name, ...
        regex = "".join(re.escape(p) if i % 2 == 0 else f"(?P<{p}>.*?)" for i, p in enumerate(parts))
        out.append((re.compile(regex + r"\Z", re.S), value))
    return tuple(sorted(out, key=lambda kv: -len(kv[0].pattern)))  # the most specific template first


@lru_cache(maxsize=8192)
def t(text: str, locale: str = DEFAULT) -> str:
    """``text`` in ``locale``: an exact entry, a template entry with its parts looked up, or ``text`` itself."""
    table = _catalog(locale)
    if not table or not text:
        return text
    if text in table:
        return table[text]
    for pattern, value in _patterns():
        m = pattern.match(text)
        if m is not None:
            return value.format(**{k: table.get(v, v) for k, v in m.groupdict().items()})
    return text


@lru_cache(maxsize=1)
def _folded() -> dict[str, str]:
    return {k.casefold(): v for k, v in ZH.items() if "{" not in k}


def label(text: str, locale: str = DEFAULT) -> str:
    """What an English label looks like on a ``locale`` screen, case-insensitively ("ALLOW" -> "允许")."""
    if locale == DEFAULT or not text:
        return text
    exact = t(text, locale)
    return exact if exact != text else _folded().get(text.casefold(), text)


@lru_cache(maxsize=1)
def _reverse() -> dict[str, str]:
    return {v: k for k, v in reversed(list(ZH.items())) if "{" not in k}


def english(text: str, locale: str = DEFAULT) -> str:
    """The English source of a label typed or shown in ``locale`` ("上海" -> "Shanghai"), else ``text``."""
    return _reverse().get(text, text) if locale == "zh-CN" else text


def has_cjk(text: str) -> bool:
    return any(is_cjk(ch) for ch in text)


def is_cjk(ch: str) -> bool:
    """Ideographs, kana, hangul and CJK punctuation / full-width forms: a line may break next to them."""
    o = ord(ch)
    return (0x2E80 <= o <= 0x9FFF or 0xAC00 <= o <= 0xD7AF or 0xF900 <= o <= 0xFAFF or 0xFF00 <= o <= 0xFFEF
            or 0x20000 <= o <= 0x2FA1F)


def _widget(w: Widget, locale: str) -> Widget:
    changes = {}
    if w.kind != "edit":  # an edit's text is what the user typed
        changes["text"] = t(w.text, locale)
    changes.update(hint=t(w.hint, locale), subtitle=t(w.subtitle, locale), trailing=t(w.trailing, locale))
    if w.kind == "slider":  # its label is drawn from desc
        changes["desc"] = t(w.desc, locale)
    if w.children:
        changes["children"] = tuple(_widget(c, locale) for c in w.children)
    return dataclasses.replace(w, **changes)


def localize_view(view: View, locale: str) -> View:
    """``view`` with every visible string in ``locale`` (callbacks, ids and typed text untouched)."""
    if locale == DEFAULT:
        return view
    return dataclasses.replace(view, title=t(view.title, locale),
                               body=tuple(_widget(w, locale) for w in view.body),
                               footer=tuple(_widget(w, locale) for w in view.footer),
                               actions=tuple(_widget(w, locale) for w in view.actions))


def localize_dialog(dlg: Dialog, locale: str) -> Dialog:
    if locale == DEFAULT:
        return dlg
    return dataclasses.replace(dlg, title=t(dlg.title, locale), message=t(dlg.message, locale),
                               buttons=tuple((t(text, locale), cb) for text, cb in dlg.buttons))


def long_date(day: dt.date, locale: str = DEFAULT) -> str:
    """The launcher's date line: "Monday, March 2" / "3月2日 周一"."""
    if locale == "zh-CN":
        return f"{day.month}月{day.day}日 {_WEEKDAYS_ZH[day.weekday()]}"
    return day.strftime("%A, %B ") + str(day.day)


def short_date(day: dt.date, locale: str = DEFAULT) -> str:
    """A day in lists: "Tue, Mar 3" / "3月3日 周二"."""
    if locale == "zh-CN":
        return f"{day.month}月{day.day}日 {_WEEKDAYS_ZH[day.weekday()]}"
    return day.strftime("%a, %b ") + str(day.day)


def short_datetime(day: dt.datetime, locale: str = DEFAULT) -> str:
    """The notification shade's title: "Mon, Mar 2  09:00" / "3月2日 周一  09:00"."""
    if locale == "zh-CN":
        return f"{day.month}月{day.day}日 {_WEEKDAYS_ZH[day.weekday()]}  {day:%H:%M}"
    return day.strftime("%a, %b ") + f"{day.day}  {day:%H:%M}"
