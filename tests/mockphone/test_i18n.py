"""The zh-CN locale: localized screens drawn with real CJK glyphs, wrapping without spaces,
oracles and verifiers that hold on localized screens, and Chinese instructions."""

import io
import random
import re
import string

import numpy as np
import pytest
from PIL import Image, ImageDraw

from datalake.types import Action
from datalake.uitree import parse_ui_tree
from mockphone import fonts, i18n
from mockphone.phone import MockPhone
from mockphone.tasks import invariants
from mockphone.tasks.instructions import ZH
from mockphone.tasks.registry import REGISTRY
from phones.episode import OraclePolicy, run_episode

TOFU = "\U0010fffd"  # a private-use code point no font has: what the font draws for a missing glyph


@pytest.fixture(scope="module")
def zh_phone():
    p = MockPhone(seed=0, locale="zh-CN")
    yield p
    p.close()


def _texts(phone):
    return [el.text for el in parse_ui_tree(phone.ui_tree()) if el.text]


def _screens(phone):
    """The launcher and every app's first screen, as (name, texts, png)."""
    out = []
    for app in [None, *phone.app_names()]:
        phone.reset(0)
        if app is not None:
            phone.act(Action("open_app", app=app))
        out.append((app or "launcher", _texts(phone), phone.screenshot()))
    return out


@pytest.fixture(scope="module")
def zh_screens(zh_phone):
    return _screens(zh_phone)


def test_unknown_locale_is_refused_naming_the_choices():
    with pytest.raises(ValueError, match="zh-CN"):
        MockPhone(locale="fr-FR")


def test_every_zh_screen_shows_chinese_and_keeps_ids(zh_screens):
    en = {name: texts for name, texts, _ in _screens(MockPhone(seed=0))}
    for name, texts, _ in zh_screens:
        assert any(i18n.has_cjk(t) for t in texts), f"{name}: no Chinese on screen: {texts[:8]}"
        assert len(texts) == len(en[name]), f"{name}: the zh screen has other elements than the en one"


def test_zh_app_titles_and_launcher_labels_are_localized(zh_phone):
    zh_phone.reset(0)
    texts = _texts(zh_phone)
    for label in ("设置", "通讯录", "信息", "日历", "时钟"):
        assert label in texts
    assert "3月2日 周一" in texts  # the launcher's date, as a Chinese phone writes it
    zh_phone.act(Action("open_app", app="设置"))  # open_app takes the localized label too
    assert zh_phone.activity() != ".NexusLauncherActivity" and "网络和互联网" in _texts(zh_phone)


def test_typed_text_is_never_translated(zh_phone):
    zh_phone.reset(0)
    zh_phone.act(Action("open_app", app="notes"))
    new = next(el for el in parse_ui_tree(zh_phone.ui_tree()) if el.text == "新建")
    zh_phone.act(Action("tap", x=new.center[0], y=new.center[1]))
    field = next(el for el in parse_ui_tree(zh_phone.ui_tree()) if el.class_name == "android.widget.EditText")
    zh_phone.act(Action("input_text", text="Save", x=field.center[0], y=field.center[1]))
    assert "Save" in _texts(zh_phone)  # what the user typed, not the catalog's 保存


def _is_tofu(font, ch: str) -> bool:
    return np.array_equal(_draw(ch, font), _draw(TOFU, font))


def test_the_canary_font_without_cjk_draws_tofu():
    latin = fonts.font(40)
    assert _is_tofu(latin, "设") and _is_tofu(latin, "置")  # so the glyph check below can fail
    assert not _is_tofu(latin, "S")


def test_every_cjk_character_on_zh_screens_has_a_real_glyph(zh_screens):
    chars = {ch for _, texts, _ in zh_screens for t in texts for ch in t if i18n.is_cjk(ch)}
    assert len(chars) > 50
    for ch in sorted(chars):
        font = fonts.font_for(ch, 40)
        assert not _is_tofu(font, ch), f"{ch!r} (U+{ord(ch):04X}) is drawn as a .notdef box"


def _draw(value: str, font) -> np.ndarray:
    img = Image.new("L", (400, 80), 255)
    ImageDraw.Draw(img).text((10, 40), value, font=font, fill=0, anchor="lm")
    return np.asarray(img)


def test_zh_label_pixels_differ_from_the_tofu_rendering():
    real = _draw("设置", fonts.font_for("设置", 40))
    tofu = _draw("设置", fonts.font(40))
    assert (real != tofu).sum() > 200
    # two different ideographs are two different shapes (tofu boxes would be identical)
    a, b = _draw("设", fonts.font_for("设", 40)), _draw("置", fonts.font_for("置", 40))
    assert (a != b).sum() > 100


def test_zh_screenshot_draws_the_title_with_cjk_glyphs(zh_phone):
    zh_phone.reset(0)
    zh_phone.act(Action("open_app", app="settings"))
    title = next(el for el in parse_ui_tree(zh_phone.ui_tree()) if el.text == "设置")
    x1, y1, x2, y2 = title.bounds
    crop = np.asarray(Image.open(io.BytesIO(zh_phone.screenshot())).convert("RGB"))[y1 + 4:y2 - 4, x1:x2]
    ink = (crop > 200).all(axis=2)  # the title is white on the app's colour
    cols = np.where(ink.any(axis=0))[0]
    assert cols.size, "nothing drawn in the title's bounds"
    runs = np.split(cols, np.where(np.diff(cols) > 1)[0] + 1)
    glyphs = [ink[:, r[0]:r[-1] + 1] for r in runs if r.size > 3][:2]
    assert len(glyphs) == 2, "expected two glyphs for 设置"
    h = max(g.shape[0] for g in glyphs)
    w = max(g.shape[1] for g in glyphs)
    pad = [np.pad(g, ((0, h - g.shape[0]), (0, w - g.shape[1]))) for g in glyphs]
    assert (pad[0] != pad[1]).sum() > 20, "the two glyphs are the same box: tofu"


WORDS = ("phone", "Wi-Fi", "Bluetooth", "supercalifragilistic", "a", "OK", "12:30", "$1,250")


def _mixed(rng: random.Random) -> str:
    parts = []
    for _ in range(rng.randint(1, 14)):
        kind = rng.random()
        if kind < 0.45:
            parts.append("".join(chr(rng.randint(0x4E00, 0x9FA5)) for _ in range(rng.randint(1, 8))))
        elif kind < 0.8:
            word = rng.choice(WORDS) if rng.random() < 0.6 else "".join(rng.choices(string.ascii_letters, k=6))
            parts.append(f" {word} ")
        else:
            parts.append(rng.choice("，。！？、（）“”"))
    return "".join(parts).strip()


@pytest.mark.parametrize("seed", range(4))
def test_cjk_wrap_fits_the_width_and_keeps_english_words_whole(seed):
    rng = random.Random(seed)
    for _ in range(60):
        value, size, width = _mixed(rng), rng.choice((28, 42, 56)), rng.randint(120, 700)
        lines = fonts.wrap(value, size, width)
        words = re.findall(r"[A-Za-z0-9:$,.\-]+", value)
        for line in lines:
            if fonts.text_width(line, size) > width:  # only a single unbreakable word wider than the line may be cut
                assert not i18n.has_cjk(line) and " " not in line and len(line) > 1, (value, width, line)
        for word in words:
            if fonts.text_width(word, size) <= width:
                assert any(word in line for line in lines), f"{word!r} was split: {lines}"
        assert "".join(lines).replace(" ", "") == value.replace(" ", "").replace("\n", ""), "text was lost"


def test_cjk_wrap_breaks_between_ideographs_without_spaces():
    value = "请检查网络连接后重试" * 4
    lines = fonts.wrap(value, 42, 300)
    assert len(lines) > 2 and "".join(lines) == value
    assert all(fonts.text_width(line, 42) <= 300 for line in lines)
    assert all(not line.startswith(("，", "。")) for line in fonts.wrap("好的，没问题。" * 8, 42, 200))


def test_zh_dialog_lines_fit_the_card_the_xml_reports(zh_phone):
    zh_phone.reset(0)
    zh_phone.act(Action("open_app", app="messages"))
    zh_phone.apps["com.google.android.apps.messaging"]._confirm_delete("Dana Evans" * 4)
    zh_phone.invalidate()
    node = next(n for n in zh_phone.root.walk() if n.kind == "dialog_message")
    x1, y1, x2, y2 = node.bounds
    assert len(node.data["lines"]) > 1 and "将被删除" in node.text
    assert all(fonts.text_width(line, zh_phone.display.dp(16)) <= x2 - x1 for line in node.data["lines"])
    message = next(el for el in parse_ui_tree(zh_phone.ui_tree()) if el.resource_id == "android:id/message")
    assert message.bounds == node.bounds


def test_every_template_has_a_chinese_instruction():
    assert sorted(ZH) == sorted(REGISTRY), "templates without a zh-CN instruction (or stale ones)"
    for name, cls in REGISTRY.items():
        task = cls(seed=0)
        zh = task.instruction("zh-CN")
        assert i18n.has_cjk(zh), f"{name}: {zh!r}"
        assert task.instruction("en-US") == cls.template.format(**task.params) == task.goal


def test_catalog_templates_keep_their_placeholders():
    for key, value in i18n.ZH.items():
        assert set(re.findall(r"\{(\w+)\}", key)) == set(re.findall(r"\{(\w+)\}", value)), key


def test_task_takes_the_phone_locale_for_its_instruction():
    cls = REGISTRY["SettingsRingMode"]
    task = cls({"phrasing": "Set the phone's ring mode to", "mode": "vibrate", "start": "normal"})
    phone = MockPhone(seed=0, locale="zh-CN")
    task.initialize_task(phone)
    assert task.goal == "把手机的铃声模式设为振动。"


@pytest.fixture(scope="module")
def zh_invariants():
    token = invariants.LOCALE.set("zh-CN")
    try:
        yield
    finally:
        invariants.LOCALE.reset(token)


@pytest.mark.parametrize("name", sorted(REGISTRY))
def test_zh_oracle_scores_one_and_start_scores_zero(name, zh_invariants):
    cls = REGISTRY[name]
    failures = invariants.check_start_zero(cls, 0) + invariants.check_oracle_one(cls, 0)
    failures += invariants.check_render_xml(cls, 0)
    assert not failures, [str(f) for f in failures]
    phone, _ = invariants.start(cls, 0)
    assert phone.locale == "zh-CN"


def test_episode_on_a_zh_phone_records_the_locale_and_a_chinese_instruction():
    phone = MockPhone(seed=0, locale="zh-CN")
    task = REGISTRY["SettingsWifiOff"]({"phrasing": "Turn off Wi-Fi.", "entry": "settings"}, seed=0)
    episode = run_episode(phone, OraclePolicy.factory(phone, task), task, seed=0)
    assert episode.meta["locale"] == "zh-CN" and episode.instruction == "关闭 WLAN。"
    assert episode.outcome == "success"
    en = MockPhone(seed=0)
    task = REGISTRY["SettingsWifiOff"](seed=0)
    assert run_episode(en, OraclePolicy.factory(en, task), task, seed=0).meta["locale"] == "en-US"


def test_gym_env_takes_a_locale():
    from mockphone.gym import MockPhoneEnv

    env = MockPhoneEnv("SettingsWifiOff", locale="zh-CN", width=540, height=1200, dpi=210)
    obs, info = env.reset(seed=0, options={"seed": 0})
    assert info["locale"] == "zh-CN" and i18n.has_cjk(obs["instruction"]) and "设置" in obs["ui_xml"]
    env.close()


def test_zh_oracles_get_past_localized_interruptions():
    """Permission dialogs, sign-in prompts, ads, rate-us and network errors in Chinese: every oracle
    still finds its way (it looks for 允许, 以后再说, 关闭, 重试 ... as the screen shows them)."""
    from mockphone.tasks.oracle import solve

    failed = []
    for name, cls in sorted(REGISTRY.items()):
        phone = MockPhone(seed=0, locale="zh-CN", perturbations="heavy")
        task = cls(seed=0)
        task.initialize_task(phone)
        solve(phone, task)
        if task.is_successful(phone) != 1.0:
            failed.append(name)
    assert not failed
