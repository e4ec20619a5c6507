"""zh-CN strings of the Maps, Rides, To-do and Weather apps.

``STRINGS`` joins the phone's catalog (``mockphone.i18n.ZH``): static labels, keyed by
the English text. ``FORMATS`` holds the composed strings those apps build with
``mockphone.apps.kit.tr`` ("{category} · {distance} · ★{rating}"): they are formatted in
the app, never matched as templates, so a loose pattern cannot rewrite other apps' data.
"""

from __future__ import annotations

STRINGS: dict[str, str] = {
    # launcher labels
    "Maps": "地图", "Rides": "打车",
    # maps
    "Explore": "探索", "Favorites": "收藏", "Search places": "搜索地点", "Nearby": "附近", "All": "全部",
    "Cafe": "咖啡馆", "Restaurant": "餐厅", "Pharmacy": "药店", "Museum": "博物馆", "Park": "公园",
    "Supermarket": "超市", "cafe": "咖啡馆", "restaurant": "餐厅", "pharmacy": "药店", "museum": "博物馆",
    "park": "公园", "supermarket": "超市", "drive": "驾车", "walk": "步行", "transit": "公交", "Distance": "距离", "Category": "类别", "No places match your search": "没有符合条件的地点",
    "Place": "地点", "Place not found": "找不到该地点", "Directions": "路线", "Saved to your places": "已收藏",
    "Remove saved place?": "取消收藏？", "Remove": "移除", "Removed from Saved": "已取消收藏", "Drive": "驾车",
    "Walk": "步行", "Transit": "公交", "Navigation": "导航", "Navigation ended": "导航已结束", "End": "结束",
    "No saved places yet": "还没有收藏的地点", "Distance units": "距离单位", "Avoid tolls": "避开收费路段",
    "Avoid highways": "避开高速", "Home address": "家庭地址", "Work address": "公司地址", "Not set": "未设置",
    "Street address": "街道地址", "Enter a street address of at least 5 characters.": "请输入至少 5 个字符的街道地址。",
    "Check the address": "请检查地址", "Address saved": "地址已保存",
    # rides
    "Ride": "叫车", "Activity": "行程", "Account": "账户", "Where to?": "你要去哪儿？", "See prices": "查看价格",
    "Recent": "最近", "Type an address or pick a saved place.": "请输入地址或选择常用地点。", "Choose a ride": "选择车型",
    "Economy": "经济型", "Comfort": "舒适型", "XL": "商务型", "No promo code applied": "未使用优惠码",
    "Schedule": "预约", "Ride requested": "已叫车", "Trip": "行程详情", "Trip not found": "找不到该行程",
    "Completed": "已完成", "Requested": "已叫车", "Cancelled": "已取消", "Your driver is on the way": "司机正在赶来",
    "Cancel ride": "取消行程", "Rate this trip": "为本次行程评分", "Thanks for rating": "感谢评分",
    "Cancel this ride?": "取消本次行程？", "Your driver will be told.": "我们会通知司机。", "Keep ride": "保留行程",
    "Ride cancelled": "行程已取消", "Schedule a ride": "预约用车", "Schedule ride": "确认预约",
    "Check the time": "请检查时间", "Pick a future date (YYYY-MM-DD) and time (HH:MM).": (
        "请选择未来的日期（YYYY-MM-DD）和时间（HH:MM）。"),
    "Ride scheduled": "预约成功", "Upcoming": "即将出行", "No upcoming rides": "没有即将出行的预约",
    "Past trips": "历史行程", "Scheduled ride": "预约行程", "Cancel scheduled ride": "取消预约",
    "Cancel scheduled ride?": "取消预约？", "It will be removed from Upcoming.": "它将从即将出行中移除。",
    "Promo codes": "优惠码", "None": "无", "Email receipts": "邮件发送行程单",
    "Payment method": "支付方式", "Enter promo code": "输入优惠码", "Codes are 4 letters and 2 digits.": "优惠码为 4 个字母加 2 个数字。",
    "Invalid code": "优惠码无效", "Code not recognised": "无法识别该优惠码", "Code already applied": "该优惠码已使用",
    "Promo code applied": "优惠码已使用",
    # to-do
    "To-do": "待办", "Tasks": "任务", "Search tasks": "搜索任务", "Nothing to do here": "这里没有待办事项",
    "No completed tasks": "没有已完成的任务", "Task": "任务详情", "Task deleted": "任务已删除", "Mark as done": "标记为完成",
    "Mark as not done": "标记为未完成", "Marked as done": "已标记为完成", "Marked as not done": "已标记为未完成",
    "Delete task?": "删除任务？", "Edit task": "编辑任务", "New task": "新建任务",
    "Due date (YYYY-MM-DD, optional)": "截止日期（YYYY-MM-DD，选填）", "Priority": "优先级", "List": "清单",
    "High": "高", "Medium": "中", "Low": "低", "Check the task": "请检查任务",
    "A title is required; a due date is written YYYY-MM-DD.": "标题为必填项；截止日期请写成 YYYY-MM-DD。",
    "Task saved": "任务已保存", "Sort tasks by": "任务排序方式", "Due date": "截止日期", "No due date": "无截止日期",
    "Hide completed tasks": "隐藏已完成的任务", "Daily reminder": "每日提醒",
    # weather
    "Weather": "天气", "Today": "今天", "Cities": "城市", "Add a city to see its weather": "添加城市以查看天气",
    "7-day forecast": "7 天预报", "No saved cities": "没有保存的城市", "Add city": "添加城市", "Remove city?": "移除城市？",
    "City removed": "城市已移除", "Search cities": "搜索城市", "No cities found": "未找到城市",
    "Add to my cities": "添加到我的城市", "Set as default": "设为默认", "City added": "城市已添加",
    "Default city changed": "默认城市已更改", "Temperature units": "温度单位", "Rain alerts": "降雨提醒",
    "Alert threshold": "提醒阈值", "Chance of rain (%)": "降雨概率（%）",
    "Alert me when the chance of rain is at least this (0-100).": "降雨概率达到该值（0-100）时提醒我。",
    "Invalid threshold": "阈值无效", "Enter a whole number from 0 to 100.": "请输入 0 到 100 之间的整数。",
    "Threshold saved": "阈值已保存", "Sunny": "晴", "Partly cloudy": "多云", "Cloudy": "阴", "Rain": "雨",
    "Showers": "阵雨", "Thunderstorms": "雷阵雨", "Fog": "雾", "Windy": "大风",
}

FORMATS: dict[str, str] = {
    "{category} · {distance} · ★{rating}": "{category} · {distance} · ★{rating}",
    "{n} places · {category} · {sort}": "{n} 个地点 · {category} · {sort}",
    "★ {rating} · {category} · {distance}": "★ {rating} · {category} · {distance}",
    "Hours: {hours}": "营业时间：{hours}",
    "Route to {place}": "前往 {place}",
    "{n} min · {distance}": "{n} 分钟 · {distance}",
    "{n} min · {distance} · Avoiding tolls": "{n} 分钟 · {distance} · 避开收费路段",
    "Navigating to {place}": "正在导航至 {place}",
    "{mode} · {n} min": "{mode} · {n} 分钟",
    "{name} will be removed from Saved.": "{name} 将从收藏中移除。",
    "Promo {code}: 20% off": "优惠码 {code}：八折",
    "{seats} seats · {n} min away": "{seats} 座 · {n} 分钟后到达",
    "Trip to {place}": "前往 {place}",
    "{km} km · Pay with {card}": "{km} 公里 · 使用 {card} 支付",
    "Selected: {kind}": "已选：{kind}",
    "Request {kind}": "呼叫{kind}",
    "Request {kind}?": "呼叫{kind}？",
    "{kind} to {place} for {price}, paid with {card}.": "{kind}前往 {place}，费用 {price}，使用 {card} 支付。",
    "{kind} · {date} · {status}": "{kind} · {date} · {status}",
    "Driver: {driver}": "司机：{driver}",
    "Fare: {fare}": "车费：{fare}",
    "{car} · Arriving in {n} min": "{car} · {n} 分钟后到达",
    "You rated {n} ★": "你的评分：{n} ★",
    "{kind} ride to {place}": "{kind}前往 {place}",
    "{date} {time} · {kind}": "{date} {time} · {kind}",
    "{date} · {kind} · {status}": "{date} · {kind} · {status}",
    "Applied: {codes}": "已使用：{codes}",
    "{code} is not a valid promo code.": "{code} 不是有效的优惠码。",
    "{due} · {priority} · {list}": "{due} · {priority} · {list}",
    "\"{title}\" will be deleted.": "“{title}”将被删除。",
    "Due: {due}": "截止：{due}",
    "Priority: {priority}": "优先级：{priority}",
    "List: {list}": "清单：{list}",
    "{condition} · {rain}% rain": "{condition} · 降雨概率 {rain}%",
    "{condition} · Humidity {humidity}% · Wind {wind} km/h": "{condition} · 湿度 {humidity}% · 风速 {wind} 公里/小时",
    "{condition} · Default": "{condition} · 默认",
    "{city} will be removed from your cities.": "{city} 将从你的城市中移除。",
}
