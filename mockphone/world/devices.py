"""The phone's own set-up per seed: Wi-Fi networks, paired Bluetooth devices, data plan, display and sound.

``device`` holds what the Settings app starts with: the Wi-Fi networks in range (the
first is the one the phone is connected to), the paired Bluetooth devices, this
month's mobile data use against the plan, the brightness, screen timeout, ring mode
and font scale the owner left it at, and names the owner might give the phone. Names
are in the phone's locale (a zh-CN phone sees ChinaNet / CMCC networks and Chinese
device names).
"""

from __future__ import annotations

from dataclasses import dataclass

from mockphone.world import World, section

DEVICES = ("Car audio", "Pixel Buds", "Sony WH-1000XM5", "Galaxy Watch", "JBL Flip 6", "Kitchen speaker",
           "Fitbit Charge 6", "Bose QC45", "Logitech keyboard", "AirPods Pro", "Garmin Forerunner")
DEVICES_ZH = ("车载蓝牙", "小米手环 8", "华为 FreeBuds", "索尼 WH-1000XM5", "小度音箱", "厨房音箱", "华为手表 GT4",
              "罗技键盘", "漫步者耳机", "荣耀手环", "JBL Flip 6")
DEVICE_NAMES = ("Work phone", "Test device 7", "Kitchen tablet", "Travel phone", "Backup phone", "Lab phone 3")
DEVICE_NAMES_ZH = ("工作手机", "测试机 7", "厨房平板", "出差手机", "备用机", "实验室手机 3")
FONT_SCALES = ("0.85", "1.0", "1.15")  # what the owner left it at: Small, Default, Large (never the largest)
TIMEOUT_MS = ("15000", "30000", "60000", "120000", "300000", "600000")
ALL_ZH_TEXT = DEVICES_ZH + DEVICE_NAMES_ZH + ("家", "的手机", "的WiFi", "星巴克", "公司网络", "图书馆")


@dataclass(frozen=True)
class Device:
    networks: tuple[str, ...]  # in range; networks[0] is the one the phone is connected to
    paired: tuple[str, ...]  # paired Bluetooth devices, sorted
    data_used_gb: str  # this month's mobile data, one decimal
    data_plan_gb: int
    brightness: int  # 0-255
    timeout_ms: str
    sound_mode: str
    font_scale: str
    device_names: tuple[str, ...]  # names the owner might rename the phone to


def _networks(world: World, rng, surname: str) -> list[str]:
    hexes = lambda: f"{rng.randint(0, 0xFFFF):04X}"  # noqa: E731 - a router's suffix
    if world.zh:
        pool = [f"{surname}家的WiFi", f"ChinaNet-{hexes()}", f"CMCC-{hexes()}", f"TP-LINK_{hexes()}", "星巴克WiFi",
                "公司网络", f"图书馆-{rng.randint(1, 9)}F", f"MERCURY_{hexes()}"]
    else:
        pool = [f"{surname} Home", f"NETGEAR-{hexes()}-5G", f"TP-Link_{hexes()}", "CoffeeBar Guest", "Office WiFi",
                f"Library-Floor{rng.randint(1, 5)}", f"xfinitywifi-{hexes()}", "Airport Free WiFi"]
    first = pool[0]
    rest = rng.sample(pool[1:], rng.randint(3, 5))
    return [first, *rest] if rng.random() < 0.7 else [rest[0], first, *rest[1:]]


@section("device")
def device(world: World) -> Device:
    rng = world.rng("device")
    owner = world.owner.name
    surname = owner[0] if world.zh else owner.split()[-1]
    given = owner[1:] if world.zh else owner.split()[0]
    plan = rng.choice((5, 10, 20, 30, 50))
    names = list(DEVICE_NAMES_ZH if world.zh else DEVICE_NAMES)
    names.insert(0, f"{owner}的手机" if world.zh else f"{given}'s phone")
    names.insert(1, f"{owner}的平板" if world.zh else f"{given}'s Pixel")
    return Device(
        networks=tuple(_networks(world, rng, surname)),
        paired=tuple(sorted(rng.sample(DEVICES_ZH if world.zh else DEVICES, rng.randint(2, 4)))),
        data_used_gb=f"{rng.uniform(0.3, plan * 0.95):.1f}",
        data_plan_gb=plan,
        brightness=rng.randint(20, 240),
        timeout_ms=rng.choice(TIMEOUT_MS),
        sound_mode=rng.choice(("normal", "normal", "vibrate", "silent")),
        font_scale=rng.choice(FONT_SCALES),
        device_names=tuple(names),
    )
