"""The neural voice's worker: loads the ONNX models once, then speaks one request per line until stdin closes.

Run by the voice environment's Python (numpy and onnxruntime, from requirements-voice.lock), never the
project's, so it imports nothing of the project: ``python -I tools/voice/neural/worker.py MODELS_DIR``.

It answers one JSON line when it is ready, then one per request. A request is
``{"phrases": [[phone, …], …], "pauses": [seconds after each phrase], "wav": path, "seed": n, "speed": r}``;
the answer ``{"seconds": audio length, "phones": [[seconds each phone of a phrase lasts, its eos last], …]}``
or ``{"error": what went wrong}``. The audio is 24 kHz 16-bit mono.

The phones' lengths are FastSpeech2's own: its length regulator repeats each phone's encoding for the number of
mel frames its duration predictor gives (the graph's output ``Identity_2``, one count per input id), and the
vocoder turns each mel frame into HOP samples; so the audio of phone i starts where the frames before it end.
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
HOP = 300  # samples of audio the vocoder makes per mel frame (MB-MelGAN's upsampling at 24 kHz)
MEL, DURATIONS = "Identity_1", "Identity_2"  # the mel after the postnet; each input id's mel frames


class Voice:
    def __init__(self, models: Path):
        options = onnxruntime.SessionOptions()
        options.log_severity_level = 3  # errors only: its warnings about unused initializers are noise here
        cpu = ["CPUExecutionProvider"]
        self.acoustic = onnxruntime.InferenceSession(str(models / "fastspeech2.onnx"), options, providers=cpu)
        self.vocoder = onnxruntime.InferenceSession(str(models / "mb_melgan.onnx"), options, providers=cpu)
        self.ids = json.loads((models / "baker_mapper.json").read_text(encoding="utf-8"))["symbol_to_id"]

    def phrase(self, phones: list[str], rng: np.random.Generator, speed: float) -> tuple[np.ndarray, list[float]]:
        """The phrase's audio, and how long each of its phones (and the closing eos) lasts in it, in seconds."""
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
        mel, frames = self.acoustic.run([MEL, DURATIONS], feed)
        audio = self.vocoder.run(None, {"mels": mel})[0][0, :, 0]
        if frames.shape != ids.shape or frames.sum() != mel.shape[1] or len(audio) != mel.shape[1] * HOP:
            raise ValueError(
                f"the model's phone durations ({frames.sum()} frames) do not match its mel ({mel.shape[1]} frames) "
                f"and audio ({len(audio)} samples): the converted graph is not the one this worker reads"
            )
        return audio, [int(n) * HOP / RATE for n in frames[0]]

    def speak(self, request: dict) -> dict:
        rng = np.random.default_rng(int(request["seed"]))
        parts, lengths = [], []
        for phones, pause in zip(request["phrases"], request["pauses"], strict=True):
            audio, phone_seconds = self.phrase(phones, rng, float(request["speed"]))
            parts += [audio, np.zeros(round(pause * RATE), np.float32)]
            lengths.append(phone_seconds)
        samples = np.clip(np.concatenate(parts) * 32767, -32768, 32767).astype("<i2")
        with wave.open(request["wav"], "wb") as out:
            out.setnchannels(1)
            out.setsampwidth(2)
            out.setframerate(RATE)
            out.writeframes(samples.tobytes())
        return {"seconds": len(samples) / RATE, "phones": lengths}


def main(models: Path) -> None:
    voice = Voice(models)
    print(json.dumps({"ready": onnxruntime.__version__}), flush=True)
    for line in sys.stdin:
        try:
            answer = voice.speak(json.loads(line))
        except Exception as err:  # any failure is the caller's to report, with its cue
            answer = {"error": f"{type(err).__name__}: {err}"}
        print(json.dumps(answer), flush=True)


if __name__ == "__main__":
    main(Path(sys.argv[1]))
