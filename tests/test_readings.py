"""Readings: the pinyin the engine gets for this course's polyphones, the lexicon, inline fixes, the lint."""

import shutil

import pytest
from helpers import ROOT

from tools.course import catalogue
from tools.publish.checks import checks
from tools.voice import audio, cues, readings, speech
from tools.voice.cues import NarrationError

# Phrases from this course's narration, and the tone-numbered pinyin the engine must get.
# 一 and 不 carry their tone changes; third-tone sandhi is left to espeak-ng.
POLYPHONES = [
    ("重算一遍，误差累加，显存增长", "chong2 suan4 yi2 bian4, wu4 cha1 lei3 jia1, xian3 cun2 zeng1 zhang3"),
    ("重新", "chong2 xin1"),
    ("调整学习率", "tiao2 zheng3 xue2 xi2 lv4"),
    ("了解", "liao3 jie3"),
    ("得到梯度", "de2 dao4 ti1 du4"),
    ("的确", "di2 que4"),
    ("这一行里", "zhe4 yi4 hang2 li3"),
    ("混合精度这一行", "hun4 he2 jing1 du4 zhe4 yi4 hang2"),
    ("两行一样长", "liang3 hang2 yi2 yang4 chang2"),
    ("主权重", "zhu3 quan2 zhong4"),
    ("权重和梯度", "quan2 zhong4 he2 ti1 du4"),
    ("带动量的球", "dai4 dong4 liang4 de5 qiu2"),
    ("全量重算", "quan2 liang4 chong2 suan4"),
    ("重跑一遍前向", "chong2 pao3 yi2 bian4 qian2 xiang4"),
    ("小重球", "xiao3 zhong4 qiu2"),
    ("它都得重调", "ta1 dou1 dei3 chong2 tiao2"),
    ("恢复就成了重来", "hui1 fu4 jiu4 cheng2 le5 chong2 lai2"),
    ("数一下", "shu3 yi2 xia4"),
    ("先数一数", "xian1 shu3 yi5 shu3"),
    ("这三个数", "zhe4 san1 ge4 shu4"),
    ("横轴是层数", "heng2 zhou2 shi4 ceng2 shu4"),
    ("十个数量级", "shi2 ge4 shu4 liang4 ji2"),
    ("当量级看", "dang4 liang4 ji2 kan4"),
    ("来量一步有多长", "lai2 liang2 yi2 bu4 you3 duo1 chang2"),
    ("才量得准", "cai2 liang2 de5 zhun3"),
    ("不靠长序列", "bu2 kao4 chang2 xu4 lie4"),
    ("这条长尾巴", "zhe4 tiao2 chang2 wei3 ba5"),
    ("越涨越快", "yue4 zhang3 yue4 kuai4"),
    ("差得远的推得多", "cha4 de5 yuan3 de5 tui1 de5 duo1"),
    ("只差一点点", "zhi3 cha4 yi4 dian3 dian3"),
    ("叫差商", "jiao4 cha1 shang1"),
    ("有限差分", "you3 xian4 cha1 fen1"),
    ("梯度为零", "ti1 du4 wei2 ling2"),
    ("只为看得清", "zhi3 wei4 kan4 de5 qing1"),
    ("就得存着", "jiu4 dei3 cun2 zhe5"),
    ("都得留着", "dou1 dei3 liu2 zhe5"),
    ("对得上", "dui4 de5 shang4"),
    ("只说得出", "zhi3 shuo1 de5 chu1"),
    ("看得见", "kan4 de5 jian4"),
    ("顺着力的方向", "shun4 zhe5 li4 de5 fang1 xiang4"),
    ("倒着走", "dao4 zhe5 zou3"),
    ("所以这一道藏不了", "suo3 yi3 zhe4 yi2 dao4 cang2 bu4 liao3"),
    ("后面的笨办法", "hou4 mian4 de5 ben4 ban4 fa3"),
    ("逐一核对", "zhu2 yi1 he2 dui4"),
    ("唯一的", "wei2 yi1 de5"),
    ("归一化", "gui1 yi1 hua4"),
    ("第一个梯度", "di4 yi1 ge4 ti1 du4"),
    ("下一个字", "xia4 yi2 ge4 zi4"),
    ("一模一样", "yi4 mu2 yi2 yang4"),
    ("一层一层", "yi4 ceng2 yi4 ceng2"),
    ("不是，不会，不多", "bu2 shi4, bu2 hui4, bu4 duo1"),
    ("不一样", "bu4 yi2 yang4"),
    ("一点五，零点一五", "yi1 dian3 wu3, ling2 dian3 yi1 wu3"),
    ("一九六四年，二零一一年", "yi1 jiu3 liu4 si4 nian2, er4 ling2 yi1 yi1 nian2"),
    ("二的负一次方，十的一次方，负一百", "er4 de5 fu4 yi1 ci4 fang1, shi2 de5 yi1 ci4 fang1, fu4 yi4 bai3"),
    ("二加二加一加一加四", "er4 jia1 er4 jia1 yi1 jia1 yi1 jia1 si4"),
    ("它乘以一减它", "ta1 cheng2 yi3 yi1 jian3 ta1"),
    ("是 零点三 减一", "shi4 ling2 dian3 san1 jian3 yi1"),
    ("范围跟 fp32 一样", "fan4 wei2 gen1 F P san1 shi2 er4 yi2 yang4"),
    ("前向 一 次", "qian2 xiang4 yi2 ci4"),
    ("有些实现[还|hai2]给梯度开一个", "you3 xie1 shi2 xian4 hai2 gei3 ti1 du4 kai1 yi2 ge4"),
    ("每层吐出自己的梯度", "mei3 ceng2 tu3 chu1 zi4 ji3 de5 ti1 du4"),
    ("根子在这儿", "gen1 zi5 zai4 zhe4 er5"),
]


@pytest.mark.parametrize(("text", "pinyin"), POLYPHONES, ids=[t for t, _ in POLYPHONES])
def test_course_polyphones_reach_the_engine_as_meant(text, pinyin):
    _, reading = cues.free_text(text)
    assert reading.pinyin == pinyin
    assert not reading.undecided


def test_there_are_at_least_forty_polyphone_phrases():
    assert len(POLYPHONES) >= 40


def test_the_pinyin_voice_says_chong_where_hanzi_would_get_zhong():
    """What the issue is about: espeak-ng's own reading of 重算 is zhòng, of our pinyin chóng (tone 35)."""
    espeak = speech.Espeak()
    assert "ts.'ong51" in espeak.phonemes("重算")
    assert "ts.h'ong35" in espeak.phonemes(cues.free_text("重算")[1].pinyin)


def test_latin_terms_and_fact_readings_keep_their_way():
    cue = next(c for c in cues.figure_cues("ledger_16_bytes") if c.id == "l16_weight")
    assert "B F shi2 liu4" in cue.pinyin
    assert "liang3 zi4 jie2" in cue.pinyin
    assert cue.caption.startswith("第一格是权重，bf16，2 B")


def one_cue(folder, text, lexicon=""):
    (folder / "lexicon.toml").write_text(lexicon, encoding="utf-8")
    (folder / "backprop.toml").write_text(f'[[gates_circuit]]\nid = "one"\ntext = "{text}"\n', encoding="utf-8")
    return cues.chapter_cues("backprop")["gates_circuit"][0]


def test_a_lexicon_phrase_sets_the_reading_wherever_it_occurs(narration_dir):
    cue = one_cue(narration_dir, "先重算，再重算。", '[pinyin]\n"重算" = "zhong4 suan4"\n')
    assert cue.pinyin == "xian1 zhong4 suan4, zai4 zhong4 suan4."
    assert cue.caption == cue.speech == "先重算，再重算。"


def test_an_inline_fix_sets_one_reading_and_the_caption_shows_the_hanzi(narration_dir):
    cue = one_cue(narration_dir, "[重|zhong4]算，再重算，梯度是 {grad_a}。", '[pinyin]\n"重算" = "chong2 suan4"\n')
    assert cue.pinyin == "zhong4 suan4, zai4 chong2 suan4, ti1 du4 shi4 si4."
    assert cue.caption == "重算，再重算，梯度是 4。"
    assert cue.speech == "重算，再重算，梯度是 四。"


def test_an_alone_entry_reads_a_character_no_phrase_covers(narration_dir):
    cue = one_cue(narration_dir, "梯度还在。", '[alone]\n"还" = "huan2"\n')
    assert cue.pinyin == "ti1 du4 huan2 zai4."


@pytest.mark.parametrize(
    ("text", "complaint"),
    [
        ("[重算|chong2]", "重算 has 2 characters but 'chong2' has 1 syllables"),
        ("[重|chong]", "chong is not a tone-numbered syllable"),
        ("[A|chong2]", "must be Chinese characters"),
    ],
)
def test_a_malformed_inline_fix_names_file_and_cue(narration_dir, text, complaint):
    with pytest.raises(NarrationError) as err:
        one_cue(narration_dir, text)
    assert "backprop.toml: cue 'one'" in str(err.value)
    assert complaint in str(err.value)


@pytest.mark.parametrize(
    ("lexicon", "complaint"),
    [
        ('[pinyin]\n"重算" = "chong2"\n', "[pinyin] 重算 has 2 characters"),
        ('[alone]\n"重算" = "chong2 suan4"\n', "[alone] 重算: one character per entry"),
    ],
)
def test_a_malformed_lexicon_entry_names_the_lexicon(narration_dir, lexicon, complaint):
    with pytest.raises(NarrationError) as err:
        one_cue(narration_dir, "文", lexicon)
    assert "lexicon.toml" in str(err.value)
    assert complaint in str(err.value)


def test_check_reports_an_undecided_polyphone_with_file_cue_and_context(narration_dir):
    cue = one_cue(narration_dir, "先数一下，再把它们排好。")
    assert [u.hanzi for u in cue.undecided] == ["数", "把", "排", "好"]
    with pytest.raises(NarrationError) as err:
        checks.run([catalogue.figure("gates_circuit")], layout=False)
    message = str(err.value)
    assert "4 polyphones" in message
    assert "backprop.toml: cue 'one': 数 (now shu4) in “先[数]一下，再把它" in message


@pytest.mark.parametrize(
    ("text", "undecided"),
    [
        ("推得多", []),
        ("就得走", ["得"]),
        ("两个一除，得 {grad_a}", ["得"]),
        ("一小步一小步地磨", []),
        ("我的，来了", []),
    ],
)
def test_particles_count_as_decided_only_where_they_are_particles(narration_dir, text, undecided):
    assert [u.hanzi for u in one_cue(narration_dir, text, '[alone]\n"磨" = "mo2"\n').undecided] == undecided


def test_every_cue_in_the_course_has_its_readings_settled():
    """The lint `lecture check` runs: chapters added later must pass it too."""
    assert cues.undecided_readings([fig.id for fig in catalogue.figures()]) == []


def test_readings_alone_know_nothing_of_files():
    reading = readings.read("重算一遍", {"重算": ("chong2", "suan4")})
    assert reading.pinyin == "chong2 suan4 yi2 bian4"
    assert not reading.undecided


class PinyinSilence(speech.Silent):
    """Silence keyed on the pinyin, as espeak is, counting what it synthesizes."""

    name, reads = "pinyin-silence", "pinyin"
    made: list[str] = []

    def synthesize(self, text, wav):
        PinyinSilence.made.append(text)
        super().synthesize(text, wav)


def _course_cues():
    cues.chapter_cues.cache_clear()
    cues.lexicon.cache_clear()
    return [cue for fig in catalogue.figures() for cue in cues.figure_cues(fig.id)]


def _changed_lexicon(tmp_path, monkeypatch, old, new):
    """The course's narration folder, copied, with one lexicon line changed; the cues re-read from it."""
    folder = tmp_path / "narration"
    shutil.copytree(ROOT / "narration", folder)
    lexicon = folder / "lexicon.toml"
    assert old in lexicon.read_text(encoding="utf-8")
    lexicon.write_text(lexicon.read_text(encoding="utf-8").replace(old, new), encoding="utf-8")
    monkeypatch.setattr(cues, "NARRATION_DIR", folder)
    return _course_cues()


def test_a_changed_lexicon_entry_changes_exactly_the_cues_that_use_it(tmp_path, monkeypatch):
    """Across the whole course: the espeak cache keys of the cues saying 重算 change, and no other."""
    espeak = speech.Espeak()
    before = {(c.chapter, c.id): audio.cache_key(c, espeak) for c in _course_cues()}
    changed = _changed_lexicon(tmp_path, monkeypatch, '"重算" = "chong2 suan4"', '"重算" = "chong2 suan3"')
    using = {(c.chapter, c.id) for c in changed if "重算" in c.speech}
    assert len(using) >= 5
    assert {(c.chapter, c.id) for c in changed if audio.cache_key(c, espeak) != before[(c.chapter, c.id)]} == using
    monkeypatch.undo()
    _course_cues()


def test_a_changed_lexicon_entry_re_synthesizes_only_its_cues(isolated, tmp_path, monkeypatch):
    """The optimizer chapter made once, then again after 学习率 changes: only its cues are made again."""
    engine = PinyinSilence()
    chapter = [c for c in _course_cues() if c.chapter == "optimizer"]
    PinyinSilence.made = []
    assert all(audio.cue_audio(c, engine).made for c in chapter)
    changed = [
        c
        for c in _changed_lexicon(tmp_path, monkeypatch, '"学习率" = "xue2 xi2 lv4"', '"学习率" = "xue2 xi2 shuai4"')
        if c.chapter == "optimizer"
    ]
    PinyinSilence.made = []
    remade = [c.id for c in changed if audio.cue_audio(c, engine).made]
    assert remade == [c.id for c in chapter if "学习率" in c.speech]
    assert len(remade) >= 5
    assert all("xue2 xi2 shuai4" in text for text in PinyinSilence.made)
    monkeypatch.undo()
    _course_cues()
