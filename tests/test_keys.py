"""One content key and one file digest for every cache: tools/files.py, and no other way to hash in tools/."""

import hashlib
import re
from pathlib import Path

import numpy as np
import pytest
from helpers import ROOT

from tools.files import content_key, file_sha256, write_atomically


def test_a_content_key_does_not_depend_on_key_order_and_keeps_chinese_as_it_is():
    assert content_key({"b": 1, "a": [1, "梯度"]}) == content_key({"a": [1, "梯度"], "b": 1})
    text = '{"a": [1, "梯度"], "b": 1}'
    assert content_key({"b": 1, "a": [1, "梯度"]}) == hashlib.sha256(text.encode()).hexdigest()


def test_paths_and_arrays_are_keyed_by_their_plain_form_and_other_objects_are_refused():
    assert content_key([Path("a/b.wav")]) == content_key(["a/b.wav"])
    assert content_key(np.arange(3)) == content_key([0, 1, 2])
    big = np.arange(2000.0)
    assert content_key(big) != content_key(np.append(big[:-1], -1.0))  # no elided "..." as str() gives
    with pytest.raises(TypeError, match="no stable form for object"):
        content_key([object()])


def test_a_file_digest_is_the_sha256_of_its_bytes(tmp_path):
    path = tmp_path / "f.bin"
    path.write_bytes(b"x" * (3 << 20))
    assert file_sha256(path) == hashlib.sha256(path.read_bytes()).hexdigest()


def test_a_failed_write_leaves_the_file_as_it_was_and_nothing_beside_it(tmp_path):
    path = tmp_path / "kept.json"
    write_atomically(path, "old")

    class Unwritable(str):
        """Fails halfway: after the temporary file is open, before anything reaches `path`."""

        def encode(self, *args):
            raise OSError(28, "No space left on device")

    with pytest.raises(OSError, match="No space"):
        write_atomically(path, Unwritable("new"))
    assert path.read_text() == "old"
    assert [p.name for p in tmp_path.iterdir()] == ["kept.json"]


def test_tools_hash_only_through_files_py():
    """hashlib and sha256 of a JSON dump appear in tools/files.py alone (the file digests and the content key)."""
    for path in sorted((ROOT / "tools").rglob("*.py")):
        if path.name == "files.py" and path.parent.name == "tools":
            continue
        source = path.read_text(encoding="utf-8")
        assert not re.search(r"^\s*(import hashlib|from hashlib)", source, re.M), f"{path} hashes on its own"
