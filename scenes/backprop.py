"""Chapter 1, backprop: staging only; every number comes from tools.chapters.backprop."""

from __future__ import annotations

from manim import (
    DOWN,
    LEFT,
    RIGHT,
    UP,
    Circle,
    Create,
    FadeIn,
    Indicate,
    Line,
    ReplacementTransform,
    ShowPassingFlash,
    SurroundingRectangle,
    VGroup,
    Write,
    np,
)

from scenes import style
from scenes.base import LectureScene

# Where each input sits and where each gate sits (frame units).
_INPUTS = {"a": (-5.6, 2.3), "b": (-5.6, 1.0), "d": (-5.6, -0.4), "c": (-5.6, -1.9)}
_GATES = {"q": ((-2.9, 1.65), "+", "分发"), "m": ((0.1, 0.6), "max", "路由"), "f": ((3.1, -0.65), "×", "交换")}
_WIRES = [("a", "q"), ("b", "q"), ("q", "m"), ("d", "m"), ("m", "f"), ("c", "f")]
_OUTPUT = (5.6, -0.65)


class GatesCircuit(LectureScene):
    """f = max(a + b, d) · c: values flow forward, gradients flow back gate by gate."""

    def construct(self):
        facts = self.facts
        heading = self.show_title()
        nodes, wires, gates = self._build_circuit()

        with self.narrate("gates_intro") as cue:
            self.play(FadeIn(nodes), run_time=0.25 * cue.duration)
            self.play(*(Create(w) for w in wires.values()), run_time=0.35 * cue.duration)
            self.play(*(FadeIn(g, scale=0.6) for g in gates.values()), run_time=0.3 * cue.duration)

        values = {name: self._value_label(name, wires, facts[name].text) for name in "abcdqmf"}
        with self.narrate("gates_forward") as cue:
            step = cue.duration / 4.2
            self.play(*(FadeIn(values[n], shift=0.2 * RIGHT) for n in "abdc"), run_time=step)
            for out, (left, right) in (("q", "ab"), ("m", "qd"), ("f", "mc")):
                self._flow(values[left], values[right], gates[out], values[out], wires, out, step)

        grads = {name: self._grad_label(name, wires, facts[f"grad_{name}"].text) for name in "abcdqmf"}
        with self.narrate("gates_seed") as cue:
            self.play(FadeIn(grads["f"], scale=1.4), run_time=0.4 * cue.duration)
            self.play(Indicate(grads["f"], color=style.BACKWARD), run_time=0.4 * cue.duration)

        with self.narrate("gates_mul") as cue:
            rule = self._rule_tag("f", gates)
            self.play(FadeIn(rule), gates["f"].animate.set_stroke(style.BACKWARD), run_time=0.2 * cue.duration)
            # Swap: each input's value crosses over to become the other input's gradient.
            self.play(ReplacementTransform(values["m"].copy(), grads["c"], path_arc=-np.pi / 2),
                      ReplacementTransform(values["c"].copy(), grads["m"], path_arc=-np.pi / 2),
                      run_time=0.55 * cue.duration)

        with self.narrate("gates_max") as cue:
            rule = self._rule_tag("m", gates)
            self.play(FadeIn(rule), gates["m"].animate.set_stroke(style.BACKWARD), run_time=0.2 * cue.duration)
            self.play(ShowPassingFlash(self._backward_copy(wires[("q", "m")]), time_width=0.6),
                      ReplacementTransform(grads["m"].copy(), grads["q"]), run_time=0.45 * cue.duration)
            grads["d"].set_color(style.MUTED)
            self.play(FadeIn(grads["d"]), wires[("d", "m")].animate.set_stroke(opacity=0.35),
                      run_time=0.25 * cue.duration)

        with self.narrate("gates_add") as cue:
            rule = self._rule_tag("q", gates)
            self.play(FadeIn(rule), gates["q"].animate.set_stroke(style.BACKWARD), run_time=0.25 * cue.duration)
            self.play(ReplacementTransform(grads["q"].copy(), grads["a"]),
                      ReplacementTransform(grads["q"].copy(), grads["b"]), run_time=0.5 * cue.duration)

        with self.narrate("gates_result") as cue:
            result = VGroup(
                style.math(f"(partial f)/(partial a) = {facts['grad_a'].text}", color=style.BACKWARD),
                style.math(f"(partial f)/(partial b) = {facts['grad_b'].text}", color=style.BACKWARD),
                style.math(f"(partial f)/(partial c) = {facts['grad_c'].text}", color=style.BACKWARD),
            ).arrange(RIGHT, buff=0.7).to_edge(DOWN, buff=1.0)
            box = SurroundingRectangle(result, color=style.HIGHLIGHT, buff=0.2, corner_radius=0.1)
            self.play(*(Indicate(grads[n], color=style.HIGHLIGHT) for n in "abc"), run_time=0.25 * cue.duration)
            self.play(Write(result), run_time=0.35 * cue.duration)
            self.play(Create(box), run_time=0.15 * cue.duration)
        self.show_source()
        self.wait(1.5)
        del heading

    # -- staging helpers -------------------------------------------------
    def _build_circuit(self):
        nodes = VGroup()
        for name, (x, y) in _INPUTS.items():
            nodes.add(style.zh(name, size=style.BODY_SIZE).move_to((x, y, 0)))
        nodes.add(style.zh("f", size=style.BODY_SIZE).move_to((*_OUTPUT, 0)))
        gates = {}
        for out, ((x, y), symbol, _rule) in _GATES.items():
            ring = Circle(radius=0.45, color=style.TEXT, stroke_width=3).move_to((x, y, 0))
            mark = style.zh(symbol, size=style.BODY_SIZE if len(symbol) == 1 else style.LABEL_SIZE)
            gates[out] = VGroup(ring, mark.move_to(ring))
        position = {name: np.array((x, y, 0.0)) for name, (x, y) in _INPUTS.items()}
        position |= {out: np.array((*xy, 0.0)) for out, (xy, _s, _r) in _GATES.items()}
        wires = {}
        for src, dst in _WIRES:
            start = position[src] + (0.45 if src in _GATES else 0.3) * RIGHT
            end_dir = position[src] - position[dst]
            end = position[dst] + 0.45 * end_dir / np.linalg.norm(end_dir)
            wires[(src, dst)] = Line(start, end, color=style.MUTED, stroke_width=3)
        wires[("f", "out")] = Line(position["f"] + 0.45 * RIGHT, np.array((*_OUTPUT, 0)) + 0.3 * LEFT,
                                   color=style.MUTED, stroke_width=3)
        return nodes, wires, gates

    @staticmethod
    def _wire_from(name, wires):
        return next(w for (src, _dst), w in wires.items() if src == name)

    def _anchor(self, name, wires):
        """Where a wire's labels sit: early on input wires, where they are far apart."""
        wire = self._wire_from(name, wires)
        return wire.point_from_proportion(0.3 if name in _INPUTS else 0.5)

    def _value_label(self, name, wires, text):
        return style.zh(text, size=style.LABEL_SIZE, color=style.FORWARD).next_to(self._anchor(name, wires), UP, buff=0.12)

    def _grad_label(self, name, wires, text):
        return style.zh(text, size=style.LABEL_SIZE, color=style.BACKWARD).next_to(self._anchor(name, wires), DOWN, buff=0.12)

    def _flow(self, left, right, gate, result, wires, out, run_time):
        """Two values fly into a gate and the gate's output value emerges."""
        into = VGroup(left.copy(), right.copy())
        self.play(into.animate.move_to(gate).scale(0.6), run_time=0.55 * run_time)
        self.play(ReplacementTransform(into, result), Indicate(gate, color=style.FORWARD, scale_factor=1.1),
                  ShowPassingFlash(self._wire_from(out, wires).copy().set_stroke(style.FORWARD, 6), time_width=0.8),
                  run_time=0.45 * run_time)

    @staticmethod
    def _backward_copy(wire):
        return Line(wire.get_end(), wire.get_start()).set_stroke(style.BACKWARD, 6)

    @staticmethod
    def _rule_tag(out, gates):
        return style.zh(_GATES[out][2], size=style.LABEL_SIZE, color=style.BACKWARD).next_to(gates[out], UP, buff=0.15)
