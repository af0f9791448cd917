"""scenes/fact_marks.py and scenes/sightings.py: a text made from a fact knows which of its glyphs draw it, drawn
exactly as before; the render's looks turn into intervals, each fact in one box."""

import numpy as np
import pytest
from manim import DOWN, RIGHT, FadeIn, FadeOut, Scene, Transform, tempconfig

from scenes import style
from scenes.fact_marks import FactText, MarkError, StagedFacts, follow_transforms, glyphs_of, unmark
from scenes.sightings import Sightings
from tools.course.facts import Fact


def _same_shape(glyphs, others) -> bool:
    """Whether two runs of glyphs have the same outlines, each glyph wherever it is placed: the same curves, their
    points within 0.01 of a frame unit (pango snaps a glyph's height to the pixel grid where the line sits)."""
    if len(glyphs) != len(others):
        return False
    for ours, theirs in zip(glyphs, others):
        a, b = (np.concatenate([part.points for part in g.family_members_with_points()]) for g in (ours, theirs))
        if a.shape != b.shape or not np.allclose(a - a.min(axis=0), b - b.min(axis=0), atol=0.01):
            return False
    return True


def _glyphs(text, key: str) -> list:
    (mark,) = [m for m in text.fact_marks if m.key == key]
    return glyphs_of(text, mark)


def test_a_fact_formatted_into_words_is_set_as_the_plain_words_and_knows_its_glyphs():
    gap, ttft = FactText("414.1 ms", "mixed_gap"), FactText("0.121 s", "mixed_ttft")
    text = style.zh(f"混部　平均首字 {ttft}　最长停顿 {gap}", size=style.SMALL_SIZE)
    plain = style.zh("混部　平均首字 0.121 s　最长停顿 414.1 ms", size=style.SMALL_SIZE)
    assert text.original_text == plain.original_text  # the marks are taken out before the text is set
    assert np.array_equal(text.get_all_points(), plain.get_all_points())  # so every glyph is drawn as before
    assert [(m.key, m.start, m.end) for m in text.fact_marks] == [("mixed_ttft", 8, 15), ("mixed_gap", 21, 29)]
    alone = style.zh("414.1 ms", size=style.SMALL_SIZE)
    assert _same_shape(_glyphs(text, "mixed_gap"), alone.submobjects)
    assert not _same_shape(_glyphs(text, "mixed_gap"), style.zh("417.1 ms", size=style.SMALL_SIZE).submobjects)
    assert len(_glyphs(text, "mixed_ttft")) == len("0.121s")


def test_a_ligature_is_one_glyph_and_the_number_after_it_is_still_found():
    """The course font sets 「fi」 as one glyph: 「prefill 149 ms」 has 12 glyphs for 13 characters."""
    text = style.zh(f"prefill {FactText('149 ms', 'prefill_4k')}", size=style.LABEL_SIZE)
    assert len(text.submobjects) == len("prefill149ms") - 1
    glyphs = _glyphs(text, "prefill_4k")
    assert _same_shape(glyphs, style.zh("149 ms", size=style.LABEL_SIZE).submobjects)


def test_a_formulas_glyphs_are_those_that_go_when_the_fact_alone_is_hidden():
    moved_in, moved_out, rate = FactText("0.03", "moved_0"), FactText("0.06", "moved_1"), FactText("2", "rate_a")
    formula = style.math(f"{moved_out} div {moved_in} = {rate}", size=style.TITLE_SIZE)
    assert formula.typst_code == "$ 0.06 div 0.03 = 2 $"
    assert [m.glyphs for m in formula.fact_marks] == [4, 4, 1]
    two = style.math("2", size=style.TITLE_SIZE)
    assert _same_shape(_glyphs(formula, "rate_a"), two.submobjects)
    # 「2」 is the last glyph drawn, right of the others
    assert _glyphs(formula, "rate_a")[0].get_x() == pytest.approx(max(g.get_x() for g in formula.submobjects))


def test_a_glyph_copied_alone_brings_no_other_glyph_and_a_text_copied_whole_keeps_its_marks():
    """A Transform copies glyphs one by one as it aligns two texts: each copy must stay one glyph (a mark that
    held its glyphs would bring them all along, and theirs, copy after copy)."""
    text = style.zh(f"最长停顿 {FactText('414.1 ms', 'mixed_gap')}")
    glyph = _glyphs(text, "mixed_gap")[0]
    alone = glyph.copy()
    assert alone.get_family() == [alone]
    assert alone.fact_mark is not glyph.fact_mark  # a mark of its own, with one glyph of four on screen
    whole = text.copy()
    (mark,) = whole.fact_marks
    assert mark is not text.fact_marks[0]
    assert len(glyphs_of(whole, mark)) == mark.glyphs == len("414.1ms")


def test_pieces_of_a_facts_text_still_show_it_and_plain_words_carry_no_mark():
    row = FactText("0.85 0.15", "gates")
    assert [(piece, piece.key) for piece in row.split(" ")] == [("0.85", "gates"), ("0.15", "gates")]
    assert unmark("没有数字") == ("没有数字", ())
    assert unmark(row) == ("0.85 0.15", (("gates", 0, 9),))


def test_a_facts_text_cut_after_it_was_formatted_is_refused_naming_the_words():
    cut = f"比值 {FactText('23×', 'ratio')}"[:-1]
    with pytest.raises(MarkError, match="「比值 23×」"):
        style.zh(cut)


def test_the_staging_is_seen_reading_a_facts_text_or_only_its_value():
    facts = StagedFacts({"a": Fact(1.5, "1.5", "一点五"), "b": Fact([1, 2]), "c": Fact(3, "3", "三")})
    assert isinstance(facts["a"].text, FactText)
    assert facts["a"].text.key == "a"
    assert facts["b"].value == [1, 2]
    assert (facts.reads.text, facts.reads.value) == ({"a"}, {"b"})
    assert facts["c"].spoken == "三"  # the rest of a fact as it is, unnoted


def _run(construct, facts: dict) -> Sightings:
    """Run a plain scene with animations skipped, looking before and after every play as a figure does."""

    class Looked(Scene):
        def construct(self):
            construct(self, self.staged)

        def play(self, *args, **kwargs):
            self.sightings.look(self)
            super().play(*args, **kwargs)
            follow_transforms(self.animations)
            self.sightings.look(self)

    with tempconfig({"dry_run": True, "skip_animations": True, "disable_caching": True}):
        scene = Looked()
        scene.staged = StagedFacts(facts)
        scene.sightings = Sightings(scene.staged)
        scene.render()
    return scene.sightings


def test_each_fact_has_an_interval_per_box_from_the_look_that_sees_it_to_the_first_that_does_not():
    def construct(scene, f):
        before = style.zh(f"前 {f['x_before'].text}").shift(DOWN)
        after = style.zh(f"后 {f['x_after'].text}").shift(DOWN)
        scene.play(FadeIn(before), run_time=1)  # 0 → 1
        scene.wait(2)  # 1 → 3: x_before in one box
        scene.play(Transform(before, after), run_time=1)  # 3 → 4: the text now draws x_after
        scene.play(before.animate.shift(RIGHT), run_time=1)  # 4 → 5: moved, a new box
        scene.play(FadeOut(before), run_time=1)  # 5 → 6

    facts = {"x_before": Fact(5.0, "5.00", "五"), "x_after": Fact(5.03, "5.03", "五点零三")}
    spans = [(i["fact"], i["start"], i["end"]) for i in _run(construct, facts).intervals()]
    assert spans == [("x_before", 1.0, 4.0), ("x_after", 4.0, 5.0), ("x_after", 5.0, 6.0)]


def test_words_are_the_fallback_only_for_a_fact_never_tagged_and_say_so():
    def construct(scene, f):
        joined = style.zh("步：" + f["marks"].text)  # concatenated: its tag is lost
        tagged = style.zh(f"比值 {f['ratio'].text}").shift(DOWN)
        untagged_copy = style.zh("比值 3.52").shift(2 * DOWN)  # the same words, no tag: not the fact's
        scene.play(FadeIn(joined), FadeIn(tagged), FadeIn(untagged_copy))
        scene.wait(1)

    facts = {"marks": Fact([0, 50], "0 50", "零 五十"), "ratio": Fact(3.52, "3.52", "三点五二")}
    found = {(i["fact"], i["found"], i["words"]) for i in _run(construct, facts).intervals()}
    assert found == {("marks", "text", "步：0 50"), ("ratio", "tag", "比值 3.52")}
