"""The layout lint: judge what each figure shows at every cue, by rules kept here in one place.

:mod:`tools.publish.checks.stills` runs each figure with animations skipped, and
``scenes/layout_probe.py`` records every visible text and shape (its box in
frame units) at the end of each cue and once after the last one. The rules
judge those boxes:

- **overlap**: two texts whose boxes share more than ``OVERLAP_SHARE`` of
  the smaller one (a label on a shape is fine; two labels on each other are not);
- **off frame**: anything drawn outside the frame less the safe margin (``style.EDGE``);
- **caption band**: anything drawn in the bottom band the captions cover
  (``style.CAPTION_BAND``) while a cue plays; after the last cue (the source line) it is free.
  The figure standard says "nothing but the source line", so shapes count too: a row of
  cards under the captions hides as much as a label does.

A figure may waive one overlapping pair, naming both texts and why, in
``LAYOUT_WAIVERS = {("text", "other text"): "why"}`` on its scene class; a
waiver that matches nothing is itself a finding. The looks are cached by the
figure's key (see stills), so an unchanged figure is not run again, and a
change to a rule here re-judges every figure in a second.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from tools.course.catalogue import Figure
from tools.publish.checks import stills

OVERLAP_SHARE = 0.05  # of the smaller text's box: glyph outlines of neighbours set GAP_S apart never reach it
TOLERANCE = 0.01  # frame units: a box this close past a limit still counts as inside (outline rounding)
END = "(end)"  # the look after the last cue (scenes/layout_probe.END)

Say = Callable[[str], None]


class LayoutError(Exception):
    """A figure's layout broke a rule (the message lists every finding)."""


@dataclass(frozen=True)
class Finding:
    figure: str
    moment: str  # the cue whose caption was showing, or END
    rule: str
    detail: str  # what is wrong, with the texts (or shapes) and their boxes
    also: tuple[str, ...] = ()  # later cues where the same thing is still wrong

    def __str__(self) -> str:
        at = "after the last cue" if self.moment == END else f"cue '{self.moment}'"
        more = f" (still at {', '.join(self.also)})" if self.also else ""
        return f"{self.figure}, {at}: {self.rule}: {self.detail}{more}"


# -- the rules ------------------------------------------------------------------------------


def _named(item: dict) -> str:
    what = f"「{item['what']}」" if item["kind"] == "text" else item["what"]
    left, bottom, right, top = item["box"]
    return f"{what} at ({left:.2f}, {bottom:.2f})–({right:.2f}, {top:.2f})"


def _area(box: list[float]) -> float:
    return max(box[2] - box[0], 0.0) * max(box[3] - box[1], 0.0)


def overlap_share(a: list[float], b: list[float]) -> float:
    """The area two boxes share, as a share of the smaller one (0 when they only touch)."""
    shared = _area([max(a[0], b[0]), max(a[1], b[1]), min(a[2], b[2]), min(a[3], b[3])])
    smaller = min(_area(a), _area(b))
    return shared / smaller if smaller > 0 else 0.0


def _outside(box: list[float], frame: dict) -> list[str]:
    """Which sides of the safe area (the frame less its edge margin) a box crosses."""
    x, y = frame["width"] / 2 - frame["edge"] + TOLERANCE, frame["height"] / 2 - frame["edge"] + TOLERANCE
    sides = [("left", box[0] < -x), ("bottom", box[1] < -y), ("right", box[2] > x), ("top", box[3] > y)]
    return [side for side, crossed in sides if crossed]


def _overlaps(record: dict) -> list[tuple[dict, dict]]:
    """The pairs of texts in one look whose boxes overlap past OVERLAP_SHARE."""
    texts = [item for item in record["items"] if item["kind"] == "text"]
    return [
        (a, b) for i, a in enumerate(texts) for b in texts[i + 1 :] if overlap_share(a["box"], b["box"]) > OVERLAP_SHARE
    ]


def _things(offenders: list[dict]) -> list[tuple[str, str]]:
    """Offending items as (description, identity): each text by its words (wherever it moves), the
    shapes one entry per class, with their count and joint box (a row of 64 cards is one finding)."""
    things = [(_named(item), item["what"]) for item in offenders if item["kind"] == "text"]
    shapes: dict[str, list[list[float]]] = {}
    for item in offenders:
        if item["kind"] == "shape":
            shapes.setdefault(item["what"], []).append(item["box"])
    for name, boxes in shapes.items():
        joint = [min(b[0] for b in boxes), min(b[1] for b in boxes), max(b[2] for b in boxes), max(b[3] for b in boxes)]
        count = f"{len(boxes)} × " if len(boxes) > 1 else ""
        things.append((_named({"kind": "shape", "what": count + name, "box": joint}), name))
    return things


def look_findings(record: dict) -> list[tuple[str, str, tuple]]:
    """One look's findings as (rule, detail, identity); the identity names the things involved."""
    found = []
    frame, items = record["frame"], record["items"]
    waived = {frozenset(w[:2]) for w in record["waivers"]}
    for a, b in _overlaps(record):
        if frozenset((a["what"], b["what"])) not in waived:
            share = overlap_share(a["box"], b["box"])
            found.append(
                (
                    "overlap",
                    f"{_named(a)} and {_named(b)} share {share:.0%} of the smaller box",
                    ("overlap", a["what"], b["what"]),
                )
            )
    for side in ("left", "bottom", "right", "top"):
        for described, identity in _things([item for item in items if side in _outside(item["box"], frame)]):
            found.append(
                (
                    "off frame",
                    f"{described} crosses the {side} safe margin ({frame['edge']} from the frame's edge)",
                    ("off frame", side, identity),
                )
            )
    band_top = -frame["height"] / 2 + frame["caption_band"] * frame["height"]
    if record["moment"] != END:
        for described, identity in _things([item for item in items if item["box"][1] < band_top - TOLERANCE]):
            found.append(
                (
                    "caption band",
                    f"{described} reaches below y = {band_top:.2f}, where the captions cover it",
                    ("caption band", identity),
                )
            )
    return found


def judge(figure: str, records: list[dict]) -> list[Finding]:
    """Every rule over a figure's looks, in order; the same fault at later cues is folded into the first."""
    if not records:
        return [
            Finding(
                figure,
                END,
                "no looks",
                "the scene recorded nothing: does it play its cues through narrate() on a LectureScene?",
            )
        ]
    first: dict[tuple, tuple[str, str, str]] = {}
    later: dict[tuple, list[str]] = {}
    for record in records:
        for rule, detail, identity in look_findings(record):
            if identity in first:
                if record["moment"] not in (first[identity][0], *later[identity]):
                    later[identity].append(record["moment"])
            else:
                first[identity], later[identity] = (record["moment"], rule, detail), []
    findings = [
        Finding(figure, moment, rule, detail, tuple(later[identity]))
        for identity, (moment, rule, detail) in first.items()
    ]
    overlapping = {frozenset((a["what"], b["what"])) for record in records for a, b in _overlaps(record)}
    for a, b, why in records[0]["waivers"]:
        if not why.strip():
            findings.append(Finding(figure, END, "waiver", f"the waiver for 「{a}」 and 「{b}」 gives no reason"))
        elif frozenset((a, b)) not in overlapping:
            findings.append(
                Finding(
                    figure,
                    END,
                    "waiver",
                    f"the waiver for 「{a}」 and 「{b}」 matches no overlap at any cue: remove it",
                )
            )
    return findings


def report(findings: list[Finding]) -> str:
    figures = sorted({f.figure for f in findings})
    lines = [
        f"layout: {len(findings)} finding{'s' * (len(findings) != 1)} in {len(figures)} "
        f"figure{'s' * (len(figures) != 1)} ({', '.join(figures)})"
    ]
    return "\n".join(lines + [f"  {f}" for f in findings])


# -- the command -----------------------------------------------------------------------------


def lint(figures: list[Figure], jobs: int = 2, say: Say = print) -> list[Finding]:
    """Every finding over the figures, judged from their looks (run again only where a key changed)."""
    return [f for fig_id, still in stills.current(figures, jobs, say).items() for f in judge(fig_id, still.records)]


def check(figures: list[Figure], jobs: int = 2, say: Say = print) -> None:
    """Lint the figures; raises LayoutError listing every finding."""
    findings = lint(figures, jobs, say)
    if findings:
        raise LayoutError(report(findings))
    say(f"layout: {len(figures)} figure{'s' * (len(figures) != 1)} clear (overlap, frame, caption band)")
