import numpy as np
import pytest

import curation.neardup as nd
from curation.neardup import (MAX_THRESHOLD, TooManyPairs, clusters, near_duplicate_pairs,
                              near_duplicate_pairs_bruteforce)


def planted(n: int, threshold: int, seed: int) -> np.ndarray:
    """Random hashes where a fifth are copies of others with 0..threshold+2 bits flipped."""
    rng = np.random.default_rng(seed)
    hashes = rng.integers(0, 2**64, size=n, dtype=np.uint64)
    k = n // 5
    sources, targets = rng.integers(0, n, size=k), rng.integers(0, n, size=k)
    flips = np.zeros(k, dtype=np.uint64)
    n_flips = rng.integers(0, threshold + 3, size=k)
    for c in range(threshold + 2):
        bit = np.uint64(1) << rng.integers(0, 64, size=k).astype(np.uint64)
        flips ^= np.where(c < n_flips, bit, np.uint64(0))
    hashes[targets] = hashes[sources] ^ flips
    return hashes


@pytest.mark.parametrize("threshold", [0, 1, 2, 3, 4, 6, 8, 10])
@pytest.mark.parametrize("seed", [0, 1])
def test_pairs_equal_brute_force_on_planted_near_duplicates(threshold, seed):
    hashes = planted(2000, threshold, seed)
    expected = near_duplicate_pairs_bruteforce(hashes, threshold)
    assert len(expected) > 100  # the planted pairs are there
    np.testing.assert_array_equal(near_duplicate_pairs(hashes, threshold), expected)


@pytest.mark.parametrize("k", [1, 2, 3])
def test_every_key_width_finds_the_same_pairs(monkeypatch, k):
    hashes = planted(1500, 5, seed=k)
    monkeypatch.setattr(nd, "_choose_k", lambda n, threshold: k)
    np.testing.assert_array_equal(near_duplicate_pairs(hashes, 5), near_duplicate_pairs_bruteforce(hashes, 5))


def test_long_runs_of_equal_key_values_are_compared_block_by_block(monkeypatch):
    rng = np.random.default_rng(3)
    base = rng.integers(0, 2**64, size=400, dtype=np.uint64)
    base[:300] = (base[:300] & np.uint64(0xFFFFFFFF)) | np.uint64(0xABCD1234 << 32)  # one long run per key
    hashes = np.concatenate([base, base ^ np.uint64(0b101)])
    monkeypatch.setattr(nd, "BIG_RUN", 8)
    monkeypatch.setattr(nd, "BLOCK_CELLS", 1000)  # several row blocks per run
    expected = near_duplicate_pairs_bruteforce(hashes, 3)
    assert len(expected) >= 400
    np.testing.assert_array_equal(near_duplicate_pairs(hashes, 3), expected)


def test_pairs_are_sorted_int64_with_i_less_than_j():
    pairs = near_duplicate_pairs(planted(500, 3, seed=5), 3)
    assert pairs.dtype == np.int64 and pairs.shape[1] == 2 and len(pairs)
    assert (pairs[:, 0] < pairs[:, 1]).all()
    assert (np.lexsort((pairs[:, 1], pairs[:, 0])) == np.arange(len(pairs))).all()


def test_exact_duplicate_group_yields_all_its_pairs_and_near_neighbours():
    hashes = np.array([7, 0, 7, 7, 0xFFFF << 40, 7 ^ 1, 7], dtype=np.uint64)
    expected = [[0, 2], [0, 3], [0, 5], [0, 6], [2, 3], [2, 5], [2, 6], [3, 5], [3, 6], [5, 6]]
    assert near_duplicate_pairs(hashes, 1).tolist() == expected
    assert near_duplicate_pairs(hashes, 0).tolist() == [[0, 2], [0, 3], [0, 6], [2, 3], [2, 6], [3, 6]]


def test_heavy_exact_duplicates_match_brute_force():
    rng = np.random.default_rng(7)
    hashes = planted(1000, 4, seed=7)
    hashes[rng.choice(1000, size=300, replace=False)] = np.uint64(0)  # 300 blank screens
    hashes[rng.choice(1000, size=40, replace=False)] = np.uint64(1 << 63 | 3)  # near a blank: 3 bits
    np.testing.assert_array_equal(near_duplicate_pairs(hashes, 4), near_duplicate_pairs_bruteforce(hashes, 4))


def test_a_huge_blank_group_clusters_without_expanding_its_pairs(monkeypatch):
    hashes = np.zeros(200_000, dtype=np.uint64)  # 2e10 pairs if expanded
    hashes[-1] = np.uint64(0b11)
    monkeypatch.setattr(nd, "_expand", lambda *a: pytest.fail("clusters must not expand member pairs"))
    labels = clusters(hashes, 2)
    assert (labels == 0).all()


def test_too_many_pairs_raise_before_they_are_built():
    hashes = np.zeros(5000, dtype=np.uint64)  # 12,497,500 pairs of identical hashes
    with pytest.raises(TooManyPairs, match="12,497,500 near-duplicate pairs .* 5,000 members"):
        near_duplicate_pairs(hashes, 1, max_pairs=1_000_000)
    assert len(near_duplicate_pairs(hashes[:100], 1, max_pairs=4950)) == 4950


def test_signed_and_python_int_inputs_mean_the_same_bits():
    hashes = np.array([2**63 + 5, 2**63 + 4, 3], dtype=np.uint64)
    expected = near_duplicate_pairs(hashes, 1).tolist()
    assert expected == [[0, 1]]
    assert near_duplicate_pairs(hashes.view(np.int64), 1).tolist() == expected
    assert near_duplicate_pairs([2**63 + 5, 2**63 + 4, 3], 1).tolist() == expected


@pytest.mark.parametrize("threshold, error", [(-1, ValueError), (MAX_THRESHOLD + 1, ValueError),
                                              (2.0, TypeError), (True, TypeError)])
def test_threshold_is_validated(threshold, error):
    with pytest.raises(error, match="threshold"):
        near_duplicate_pairs(np.zeros(3, dtype=np.uint64), threshold)


@pytest.mark.parametrize("hashes, error, message", [
    (np.zeros((2, 2), dtype=np.uint64), ValueError, "1-D"),
    (np.zeros(3, dtype=np.float64), TypeError, "64-bit integers"),
    ([1, 2.5], TypeError, "64-bit integers"),
])
def test_hashes_are_validated(hashes, error, message):
    with pytest.raises(error, match=message):
        near_duplicate_pairs(hashes, 2)


@pytest.mark.parametrize("n", [0, 1])
def test_fewer_than_two_hashes_have_no_pairs_and_own_clusters(n):
    hashes = np.zeros(n, dtype=np.uint64)
    assert near_duplicate_pairs(hashes, 3).shape == (0, 2)
    assert clusters(hashes, 3).tolist() == list(range(n))


def test_cluster_label_is_the_smallest_member_index_through_chains():
    # 0b000 - 0b001 - 0b011 - 0b111 is a chain at threshold 1; 100/101 a pair; 0xFFFF << 40 alone
    hashes = np.array([0xFFFF << 40, 0b011, 100, 0b000, 101, 0b111, 0b001, 0b011], dtype=np.uint64)
    assert clusters(hashes, 1).tolist() == [0, 1, 2, 1, 2, 1, 1, 1]
    assert clusters(hashes, 0).tolist() == [0, 1, 2, 3, 4, 5, 6, 1]


def reference_clusters(n: int, pairs: np.ndarray) -> list[int]:
    """Labels by repeated relaxation over the brute-force pairs."""
    labels = list(range(n))
    changed = True
    while changed:
        changed = False
        for i, j in pairs.tolist():
            low = min(labels[i], labels[j])
            if labels[i] != low or labels[j] != low:
                labels[i] = labels[j] = low
                changed = True
    return labels


@pytest.mark.parametrize("threshold", [1, 3, 6])
def test_clusters_match_connected_components_of_brute_force_pairs(threshold):
    hashes = planted(800, threshold, seed=threshold)
    hashes[::50] = hashes[1]  # exact duplicates spread through the input
    expected = reference_clusters(len(hashes), near_duplicate_pairs_bruteforce(hashes, threshold))
    assert clusters(hashes, threshold).tolist() == expected


def test_union_find_joins_a_long_path_in_one_component():
    n = 10_000
    pairs = np.column_stack([np.arange(n - 1), np.arange(1, n)])[::-1].copy()
    assert (nd._union_find(n, pairs) == 0).all()


def greedy_reference(sigs: np.ndarray, threshold: int, need: int) -> list[int]:
    """first_repeats by brute force: every row against every kept row."""
    kept, out = [], []
    for row in range(len(sigs)):
        twin = next((k for k in kept if (np.bitwise_count(sigs[k] ^ sigs[row]) <= threshold).sum() >= need), -1)
        out.append(twin)
        if twin < 0:
            kept.append(row)
    return out


@pytest.mark.parametrize("positions, need", [(1, 1), (4, 2), (6, 3), (12, 12)])
def test_first_repeats_equals_brute_force_on_close_twins(positions, need):
    rng = np.random.default_rng(positions)
    originals = rng.integers(0, 2**63, size=(300, positions)).astype(np.uint64)
    rows = []
    for i in range(600):
        if i % 2 and i > 2:  # a twin of an earlier original, 0-3 bits off at every position
            base = originals[rng.integers(i // 2)].copy()
            for p in range(positions):
                for b in rng.choice(64, size=int(rng.integers(0, 4)), replace=False):
                    base[p] ^= np.uint64(1) << np.uint64(b)
            rows.append(base)
        else:
            rows.append(originals[i // 2])
    sigs = np.array(rows, dtype=np.uint64)
    assert nd.first_repeats(sigs, 8, need).tolist() == greedy_reference(sigs, 8, need)


def test_first_repeats_of_a_prefix_are_the_prefix_of_first_repeats():
    rng = np.random.default_rng(9)
    sigs = rng.integers(0, 2**63, size=(1, 3)).astype(np.uint64).repeat(500, axis=0)
    for i in range(1, 500):  # a drifting chain: one bit per row at every position
        sigs[i] = sigs[i - 1] ^ (np.uint64(1) << rng.integers(0, 64, size=3).astype(np.uint64))
    full = nd.first_repeats(sigs, 4, 3)
    assert (full < 0).sum() > 10
    for n in (100, 256, 257, 499):
        assert nd.first_repeats(sigs[:n], 4, 3).tolist() == full[:n].tolist()
