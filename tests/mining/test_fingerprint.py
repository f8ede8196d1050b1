import os
from itertools import pairwise

from ratio_bench.mining.fingerprint import BLOCK, EDGE, FULL_HASH_MAX, file_fingerprint, sampled_ranges


def test_small_files_are_hashed_whole_and_large_ones_sampled_within_bounds():
    assert sampled_ranges(1000) == [(0, 1000)]
    assert sampled_ranges(FULL_HASH_MAX) == [(0, FULL_HASH_MAX)]
    size = 10 * FULL_HASH_MAX + 12345
    ranges = sampled_ranges(size)
    assert ranges[0] == (0, EDGE) and ranges[-1] == (size - EDGE, EDGE)
    assert all(a + n <= b for (a, n), (b, _) in pairwise(ranges))  # in order, no overlap
    assert sum(n for _, n in ranges) == 2 * EDGE + 16 * BLOCK


def test_same_size_edits_change_the_fingerprint_even_with_the_mtime_restored(tmp_path):
    path = tmp_path / "big.jsonl"
    data = bytearray(os.urandom(FULL_HASH_MAX + 5 * EDGE))
    path.write_bytes(data)
    st = path.stat()
    first = file_fingerprint(path)
    assert first == file_fingerprint(path)  # deterministic
    for offset in (10, len(data) - 10, sampled_ranges(len(data))[5][0] + 1):  # head, tail, an interior block
        data[offset] ^= 0xFF
        path.write_bytes(data)
        os.utime(path, ns=(st.st_atime_ns, st.st_mtime_ns))
        changed = file_fingerprint(path)
        assert changed["size"] == first["size"] and changed["mtime_ns"] == first["mtime_ns"]
        assert changed["digest"] != first["digest"], offset
        data[offset] ^= 0xFF
    path.write_bytes(data)
    assert (
        file_fingerprint(path)["mtime_ns"] != first["mtime_ns"] or path.stat().st_mtime_ns == st.st_mtime_ns
    )
