"""The neural voice's worker: loads the ONNX models once, then speaks one request per line until stdin closes.

Run by the voice environment's Python (numpy and onnxruntime, from requirements-voice.lock), never the
project's, so it imports nothing of the project: ``python -I tools/voice/neural/worker.py MODELS_DIR``.

It answers one JSON line when it is ready, then one per request. A request is
``{"phrases": [[phone, …], …], "pauses": [seconds after each phrase], "wav": path, "seed": n, "speed": r}``;
the answer ``{"seconds": audio length}`` or ``{"error": what went wrong}``. The audio is 24 kHz 16-bit mono.
"""

from __future__ import annotations

import json
import sys
import wave
from pathlib import Path

import numpy as np
import onnxruntime

RATE = 24000
HIDDEN = 256  # width of FastSpeech2's pitch and energy embeddings, which its dropout masks cover
KEEP = 0.5  # the dropout's rate: a kept value is doubled


class Voice:
    def __init__(self, models: Path):
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # errors only: its warnings about unused initializers are noise here
        cpu = ["CPUExecutionProvider"]
        self.acoustic = onnxruntime.InferenceSession(str(models / "fastspeech2.onnx"), options, providers=cpu)
        self.vocoder = onnxruntime.InferenceSession(str(models / "mb_melgan.onnx"), options, providers=cpu)
        self.ids = json.loads((models / "baker_mapper.json").read_text(encoding="utf-8"))["symbol_to_id"]

    def phrase(self, phones: list[str], rng: np.random.Generator, speed: float) -> np.ndarray:
        if unknown := [p for p in phones if p not in self.ids]:
            raise ValueError(f"phones the model does not know: {' '.join(unknown)}")
        ids = np.array([[self.ids[p] for p in phones] + [self.ids["eos"]]], np.int32)
        keep = [(rng.random((1, ids.shape[1], HIDDEN)) >= KEEP).astype(np.float32) / KEEP for _ in range(2)]
        one = np.array([1.0], np.float32)
        feed = {
            "input_ids": ids,
            "speaker_ids": np.array([0], np.int32),
            "speed_ratios": np.array([speed], np.float32),
            "f0_ratios": one,
            "energy_ratios": one,
            "f0_keep": keep[0],
            "energy_keep": keep[1],
        }
        mel = self.acoustic.run(["Identity_1"], feed)[0]  # the mel after the postnet
        return self.vocoder.run(None, {"mels": mel})[0][0, :, 0]

    def speak(self, request: dict) -> float:
        rng = np.random.default_rng(int(request["seed"]))
        parts = []
        for phones, pause in zip(request["phrases"], request["pauses"], strict=True):
            parts += [self.phrase(phones, rng, float(request["speed"])), np.zeros(round(pause * RATE), np.float32)]
        samples = np.clip(np.concatenate(parts) * 32767, -32768, 32767).astype("<i2")
        with wave.open(request["wav"], "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(RATE)
            out.writeframes(samples.tobytes())
        return len(samples) / RATE


def main(models: Path) -> None:
    voice = Voice(models)
    print(json.dumps({"ready": onnxruntime.__version__}), flush=True)
    for line in sys.stdin:
        try:
            answer = {"seconds": voice.speak(json.loads(line))}
        except Exception as err:  # any failure is the caller's to report, with its cue
            answer = {"error": f"{type(err).__name__}: {err}"}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
