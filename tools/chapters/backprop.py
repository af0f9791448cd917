"""Chapter 1, backprop: why a backward pass costs 3x and keeps activations."""

from __future__ import annotations

from tools import circuit
from tools.catalogue import Chapter
from tools.facts import Check, number

CHAPTER = Chapter("backprop", "反向传播：三倍算力与扔不掉的激活")

# gates_circuit: f = max(a + b, d) * c. The page fixes only the three
# gradients (L39); these inputs are ours, chosen so that every gate acts.
GATES = [
    circuit.Gate("add", "q", ("a", "b")),
    circuit.Gate("max", "m", ("q", "d")),
    circuit.Gate("mul", "f", ("m", "c")),
]
GATES_INPUTS = {"a": 1.0, "b": -2.0, "c": 4.0, "d": -3.0}
GATES_PAGE_GRADIENTS = {"a": 4.0, "b": 4.0, "c": -1.0}


@CHAPTER.figure(
    "gates_circuit",
    "电路图与三个门：分发、交换、路由",
    source="讲法取自 CS231n《Backpropagation, Intuitions》讲义；电路与数字为本课自拟",
)
def gates_circuit(check: Check, inputs: dict[str, float] = GATES_INPUTS):
    values = circuit.forward(GATES, inputs)
    grads = circuit.backward(GATES, values)
    numeric = circuit.finite_differences(GATES, inputs)
    for name, page_value in GATES_PAGE_GRADIENTS.items():
        check.close(f"grad_{name}", grads[name], page_value)
    for name in inputs:
        check.close(f"grad_{name} (finite differences)", numeric[name], grads[name], abs=1e-6)
    check.that("max gate routes", grads["d"] == 0 and grads["q"] != 0,
               "the losing input of max gets 0, the winner the whole gradient",
               f"winner {grads['q']}, loser {grads['d']}")
    facts = {name: number(value) for name, value in values.items()}
    facts |= {f"grad_{name}": number(value) for name, value in grads.items()}
    return facts
