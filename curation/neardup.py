"""Near-duplicate search over 64-bit perceptual hashes: all pairs within a Hamming radius.

Algorithm (``near_duplicate_pairs``), multi-index hashing by the pigeonhole principle:

1. Collapse exact duplicates: ``np.unique`` gives the distinct hashes and, for each, its
   members. A group of identical hashes (blank screens, a frozen app) is searched once.
2. Split the 64 bits into ``m = threshold + k`` contiguous blocks. Two hashes that differ
   in at most ``threshold`` bits touch at most ``threshold`` blocks, so they agree
   exactly on at least ``k`` blocks: on all blocks of at least one of the ``C(m, k)``
   k-subsets ("keys"). ``k = 1`` is the plain pigeonhole split into threshold + 1 bands;
   a larger k makes each key wider (fewer false candidates) at the price of more keys.
   k (1..4) is picked by a cost model: sorts plus expected candidates for uniform hashes.
3. For each key, sort the distinct hashes by their bits under the key's mask; every
   pair inside a run of equal values is a candidate. Runs are walked by offset
   (position ``p`` against ``p + d`` for d = 1, 2, ...), so work is proportional to the
   number of candidates and memory to the number of hashes. Runs longer than BIG_RUN
   are compared block by block (at most BLOCK_CELLS distances in memory at once).
4. Verify each candidate by popcount of the XOR. A pair is kept only under the first key
   (in ``itertools.combinations`` order) on which it agrees, found by a lookup table
   over the pair's block-agreement mask, so no pair is reported twice.
5. Expand distinct-hash pairs to member pairs, add the pairs inside each exact-duplicate
   group, and sort.

Cost for n = 1M uniformly random hashes, k chosen automatically, on one core (brute
force compares 5e11 pairs, ~10 minutes): threshold 2 -> 3 keys of ~21 bits, ~0.5 s;
threshold 4 -> 15 keys of ~21 bits, ~3e6 candidates, ~1.3 s; threshold 6 -> 28 keys of
16 bits, ~2e8 candidates, ~5 s (bench/curation_bench.py).

The worst case is quadratic: many *distinct* hashes sharing a key value (e.g. near-blank
screens differing in a few bits) form one long run, compared block by block - bounded
memory, but ``g**2 / 2`` comparisons for a run of g hashes. The output itself is
quadratic in the size of an exact-duplicate group (g identical hashes yield
``g * (g - 1) / 2`` pairs): past ``max_pairs`` it raises TooManyPairs before allocating
them. ``clusters`` never expands those pairs and stays linear in n.
"""

from __future__ import annotations

import gc
import itertools
import operator
from math import comb

import numpy as np

__all__ = ["MAX_THRESHOLD", "TooManyPairs", "near_duplicate_pairs", "near_duplicate_pairs_bruteforce", "clusters",
           "band_keys", "first_repeats"]

MAX_THRESHOLD = 10  # a dedup radius beyond ~1/6 of the bits no longer means "near duplicate"
BIG_RUN = 256  # runs of equal key values longer than this are compared block by block
BLOCK_CELLS = 1 << 22  # distances held in memory at once by the block comparisons
MAX_KEYS = 1001  # upper bound on C(threshold + k, k) when choosing k
MAX_PAIRS = 100_000_000  # default output limit of near_duplicate_pairs (1.6 GB of int64 pairs)
_U64 = (1 << 64) - 1
SORT_COST, CANDIDATE_COST = 70.0, 15.0  # ns per hash per key, ns per candidate (measured, 1M hashes)


class TooManyPairs(ValueError):
    """near_duplicate_pairs would return more pairs than its max_pairs limit."""


def _validate(hashes, threshold: int) -> np.ndarray:
    """The hashes as a 1-D uint64 array; TypeError/ValueError naming what is wrong."""
    if isinstance(threshold, bool) or not isinstance(threshold, (int, np.integer)):
        raise TypeError(f"threshold must be an int, got {type(threshold).__name__}")
    if not 0 <= threshold <= MAX_THRESHOLD:
        raise ValueError(f"threshold must be in 0..{MAX_THRESHOLD} bits, got {threshold}")
    if not isinstance(hashes, np.ndarray):  # Python ints, signed or not, taken modulo 2**64
        try:
            hashes = np.fromiter((operator.index(h) & _U64 for h in hashes), dtype=np.uint64)
        except TypeError as exc:
            raise TypeError(f"hashes must be 64-bit integers: {exc}") from exc
    if hashes.ndim != 1:
        raise ValueError(f"hashes must be a 1-D array, got shape {hashes.shape}")
    if hashes.dtype == np.int64:
        return hashes.view(np.uint64)  # same 64 bits, e.g. read back from a signed column
    if hashes.dtype != np.uint64:
        if hashes.dtype.kind not in "iu":
            raise TypeError(f"hashes must be 64-bit integers, got dtype {hashes.dtype}")
        return hashes.astype(np.uint64)
    return hashes


def _choose_k(n: int, threshold: int) -> int:
    """Blocks per key minimising C(m, k) * (sort + expected candidates), m = threshold + k."""
    def cost(k: int) -> float:
        m = threshold + k
        bits = 64 * k / m
        return comb(m, k) * (n * SORT_COST + n * n / 2 * 2.0 ** -bits * CANDIDATE_COST)
    ks = [k for k in range(1, 5) if comb(threshold + k, k) <= MAX_KEYS]
    return min(ks, key=cost)


def _block_masks(m: int) -> list[np.uint64]:
    """Masks of m contiguous blocks covering the 64 bits, widths differing by at most 1."""
    widths = [64 // m + (1 if b < 64 % m else 0) for b in range(m)]
    masks, shift = [], 64
    for w in widths:
        shift -= w
        masks.append(np.uint64(((1 << w) - 1) << shift))
    return masks


def _first_key_table(m: int, keys: list[tuple[int, ...]]) -> np.ndarray:
    """For each m-bit block-agreement mask, the index of the first key it contains."""
    agree = np.arange(1 << m)
    first = np.full(1 << m, len(keys), dtype=np.int32)
    for index in range(len(keys) - 1, -1, -1):
        bits = sum(1 << b for b in keys[index])
        first[(agree & bits) == bits] = index
    return first


class _Search:
    """Steps 3-4 for one threshold: the blocks, the keys and the first-key table."""

    def __init__(self, n: int, threshold: int):
        self.threshold = threshold
        k = _choose_k(n, threshold)
        self.blocks = _block_masks(threshold + k)
        self.keys = list(itertools.combinations(range(len(self.blocks)), k))
        self.first_key = _first_key_table(len(self.blocks), self.keys)

    def sorted_by_key(self, u: np.ndarray, key: int) -> tuple[np.ndarray, np.ndarray]:
        """(order, key values in that order) of the hashes sorted by the key's bits.

        When the key's bits and an index fit in 64 bits together, the key is packed into
        the high bits above the index and sorted as plain integers (about twice as fast
        as an argsort); otherwise the masked hashes are argsorted.
        """
        index_bits = max(1, (len(u) - 1).bit_length())
        widths = [int(self.blocks[b]).bit_count() for b in self.keys[key]]
        if sum(widths) + index_bits > 64:
            masked = u & np.bitwise_or.reduce([self.blocks[b] for b in self.keys[key]])
            order = np.argsort(masked)
            return order, masked[order]
        packed = np.zeros(len(u), dtype=np.uint64)
        for b, width in zip(self.keys[key], widths):
            shift = np.uint64((int(self.blocks[b]) & -int(self.blocks[b])).bit_length() - 1)
            packed <<= np.uint64(width)
            packed |= (u & self.blocks[b]) >> shift
        packed <<= np.uint64(index_bits)
        packed |= np.arange(len(u), dtype=np.uint64)
        packed.sort()
        return (packed & np.uint64((1 << index_bits) - 1)).astype(np.int64), packed >> np.uint64(index_bits)

    def verify(self, x: np.ndarray, key: int) -> np.ndarray:
        """Positions of XORs ``x`` within the threshold whose first agreeing key is ``key``."""
        near = np.flatnonzero(np.bitwise_count(x) <= self.threshold)
        agree = np.zeros(len(near), dtype=np.int64)
        for b, mask in enumerate(self.blocks):
            agree |= ((x[near] & mask) == 0).astype(np.int64) << b
        return near[self.first_key[agree] == key]


def _run_pairs(search: _Search, us: np.ndarray, order: np.ndarray, ks: np.ndarray, key: int) -> list:
    """Verified pairs inside runs of equal key values ``ks`` (steps 3-4 of the module docstring).

    ``us`` and ``ks`` are the hashes and their key values in sorted order; ``order`` maps
    sorted positions back to distinct-hash indices.
    """
    found = []
    same = ks[1:] == ks[:-1]
    active = np.flatnonzero(same)  # positions whose next neighbour is in the same run
    starts = np.flatnonzero(np.r_[True, ~same])
    lengths = np.diff(np.r_[starts, len(ks)])
    big = lengths > BIG_RUN
    if big.any():
        in_big = np.repeat(big, lengths)
        active = active[~in_big[active]]
    d = 1
    while len(active):
        ok = active[search.verify(us[active] ^ us[active + d], key)]
        found.append((order[ok], order[ok + d]))
        d += 1
        active = active[active < len(ks) - d]
        active = active[ks[active + d] == ks[active]]
    for s, g in zip(starts[big], lengths[big]):
        run = us[s:s + g]
        rows = max(1, BLOCK_CELLS // g)
        for r0 in range(0, g - 1, rows):
            i, j = np.triu_indices(n=min(rows, g - r0), m=g, k=r0 + 1)
            ok = search.verify(run[r0 + i] ^ run[j], key)
            found.append((order[s + r0 + i[ok]], order[s + j[ok]]))
    return found


def _distinct_pairs(u: np.ndarray, threshold: int) -> np.ndarray:
    """All pairs (a < b) of the distinct hashes ``u`` within ``threshold`` bits."""
    if threshold == 0 or len(u) < 2:
        return np.empty((0, 2), dtype=np.int64)
    search = _Search(len(u), threshold)
    found = []
    for key in range(len(search.keys)):
        order, ks = search.sorted_by_key(u, key)
        found += _run_pairs(search, u[order], order, ks, key)
    if not found:
        return np.empty((0, 2), dtype=np.int64)
    a = np.concatenate([f[0] for f in found]).astype(np.int64)
    b = np.concatenate([f[1] for f in found]).astype(np.int64)
    return np.column_stack([np.minimum(a, b), np.maximum(a, b)])


def _groups(inverse: np.ndarray, n_distinct: int) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Members of each distinct hash: (members sorted by group then index, starts, sizes)."""
    members = np.argsort(inverse, kind="stable")
    sizes = np.bincount(inverse, minlength=n_distinct)
    starts = np.cumsum(sizes) - sizes
    return members, starts, sizes


def _expand(dpairs, members, starts, sizes) -> np.ndarray:
    """Every member pair of each distinct-hash pair (the cartesian product of the groups)."""
    a, b = dpairs[:, 0], dpairs[:, 1]
    counts = sizes[a] * sizes[b]
    single = counts == 1  # the common case: two hashes seen once each
    out = [np.column_stack([members[starts[a[single]]], members[starts[b[single]]]])]
    a, b, counts = a[~single], b[~single], counts[~single]
    which = np.repeat(np.arange(len(a)), counts)
    local = np.arange(counts.sum()) - np.repeat(np.cumsum(counts) - counts, counts)
    sb = sizes[b][which]
    out.append(np.column_stack([members[starts[a][which] + local // sb], members[starts[b][which] + local % sb]]))
    i, j = np.concatenate(out).T
    return np.column_stack([np.minimum(i, j), np.maximum(i, j)])


def _within_groups(members, starts, sizes) -> np.ndarray:
    """All pairs inside each exact-duplicate group, one vectorised pass per group size."""
    out = [np.empty((0, 2), dtype=np.int64)]
    for g in np.unique(sizes[sizes > 1]):
        rows = members[starts[sizes == g][:, None] + np.arange(g)]  # ascending within a row
        ii, jj = np.triu_indices(g, k=1)
        out.append(np.column_stack([rows[:, ii].ravel(), rows[:, jj].ravel()]))
    return np.concatenate(out)


def _sorted_pairs(pairs: np.ndarray) -> np.ndarray:
    """Pairs sorted by (i, j), via one integer key i * (max + 1) + j (fits for n < 3e9)."""
    if len(pairs) == 0:
        return np.empty((0, 2), dtype=np.int64)
    pairs = pairs.astype(np.int64, copy=False)
    width = int(pairs.max()) + 1
    key = np.sort(pairs[:, 0] * width + pairs[:, 1])
    return np.column_stack([key // width, key % width])


def near_duplicate_pairs(hashes, threshold: int, max_pairs: int | None = MAX_PAIRS) -> np.ndarray:
    """All index pairs (i < j) whose hashes differ in at most ``threshold`` bits.

    Returns an int64 array of shape (k, 2), sorted by (i, j). ``hashes`` is a 1-D uint64
    (or int64, read as the same bits) array; ``threshold`` is 0..MAX_THRESHOLD. See the
    module docstring for the algorithm and its worst case. Raises TooManyPairs, before
    building them, when there would be more than ``max_pairs`` pairs (None: no limit).
    """
    h = _validate(hashes, threshold)
    u, inverse = np.unique(h, return_inverse=True)
    members, starts, sizes = _groups(inverse, len(u))
    dpairs = _distinct_pairs(u, threshold)
    total = int((sizes[dpairs[:, 0]] * sizes[dpairs[:, 1]]).sum() + (sizes * (sizes - 1) // 2).sum())
    if max_pairs is not None and total > max_pairs:
        raise TooManyPairs(f"{total:,} near-duplicate pairs among {len(h):,} hashes exceed max_pairs="
                           f"{max_pairs:,} (the largest group of identical hashes has {sizes.max():,} "
                           "members); use clusters(), or raise max_pairs")
    pairs = np.concatenate([_expand(dpairs, members, starts, sizes), _within_groups(members, starts, sizes)])
    return _sorted_pairs(pairs)


def near_duplicate_pairs_bruteforce(hashes, threshold: int) -> np.ndarray:
    """Reference for ``near_duplicate_pairs``: every pair compared, O(n**2), in row blocks."""
    h = _validate(hashes, threshold)
    out = [np.empty((0, 2), dtype=np.int64)]
    block = max(1, BLOCK_CELLS // max(1, len(h)))
    for r0 in range(0, len(h), block):
        rows = h[r0:r0 + block]
        near = np.bitwise_count(rows[:, None] ^ h[None, r0:]) <= threshold
        i, j = np.nonzero(np.triu(near, k=1))
        out.append(np.column_stack([i + r0, j + r0]).astype(np.int64))
    return _sorted_pairs(np.concatenate(out))


def _union_find(n: int, pairs: np.ndarray) -> np.ndarray:
    """Root of each of n nodes; the root of a component is its smallest node.

    Vectorised union-find: each round hooks the larger root of every edge whose ends
    have different roots onto the smaller (``np.minimum.at`` resolves conflicts), then
    compresses all paths by pointer jumping. Parents only ever decrease, so no cycles.
    """
    parent = np.arange(n, dtype=np.int64)
    a, b = pairs[:, 0], pairs[:, 1]
    while True:
        ra, rb = parent[a], parent[b]
        split = ra != rb
        if not split.any():
            return parent
        a, b, ra, rb = a[split], b[split], ra[split], rb[split]
        np.minimum.at(parent, np.maximum(ra, rb), np.minimum(ra, rb))
        while True:
            jumped = parent[parent]
            if np.array_equal(jumped, parent):
                break
            parent = jumped


def clusters(hashes, threshold: int) -> np.ndarray:
    """Cluster label of each hash: connected components of the "within threshold" graph.

    Returns an int64 array; ``label[i]`` is the smallest index in i's cluster, so labels
    are deterministic and ``label[i] == i`` marks the first (kept) member. Exact
    duplicates are joined through their shared distinct hash, never pair by pair, so a
    huge group of identical hashes costs O(n).
    """
    h = _validate(hashes, threshold)
    if len(h) == 0:
        return np.empty(0, dtype=np.int64)
    u, inverse = np.unique(h, return_inverse=True)
    root = _union_find(len(u), _distinct_pairs(u, threshold))
    component = root[inverse]
    first = np.full(len(u), len(h), dtype=np.int64)
    np.minimum.at(first, component, np.arange(len(h)))
    return first[component]


# ---------------------------------------------------------------------------------------------
# Episode repeats: rows of several 64-bit hashes (one per aligned step), a row repeating an
# earlier kept row when at least ``need`` of its hashes are within ``threshold`` bits of the
# kept row's hashes at the same positions. Bit-sampling LSH (the locality-sensitive family
# for Hamming distance), queried against the kept rows only, so the cost is linear in the
# rows whatever the group size: no switch of rule at any size.

LSH_BANDS = 64  # bands per row: dict lookups per row
LSH_BITS = 28  # sampled bits per band: a random row collides with one band of another at 2**-28
CHUNK_ROWS = 4096  # rows whose band keys are computed at once
LSH_SUBSETS = 32  # position subsets the bands are drawn from (all of them when there are fewer)


def _band_plan(positions: int, need: int, bands: int, bits: int) -> list[list[tuple[int, int]]]:
    """For each band, (position, bit mask) pairs: ``bits`` bits drawn from ``need`` positions.

    A band covers a subset of ``need`` positions, so a row that agrees with another on
    those positions collides with it on that band whatever its other positions show
    (two rows sharing only a home screen never become candidates when need > 1). All
    C(positions, need) subsets are used when there are at most LSH_SUBSETS of them, else
    LSH_SUBSETS drawn at random; bits are spread evenly over the subset's positions (drawn at random inside
    each), so no band leans on one position: a position every row shares (a home screen)
    would make such a band collide for every pair and its candidates grow with the kept rows.
    The plan depends only on its arguments (a fixed seed), so a rebuild draws the same.
    """
    rng = np.random.default_rng([positions, need, bands, bits])
    if comb(positions, need) <= LSH_SUBSETS:
        subsets = [list(s) for s in itertools.combinations(range(positions), need)]
    else:
        subsets = [sorted(rng.choice(positions, size=need, replace=False).tolist()) for _ in range(LSH_SUBSETS)]
    plan = []
    for b in range(max(bands, len(subsets))):
        subset = subsets[b % len(subsets)]
        masks: dict[int, int] = {}
        per = [bits // len(subset) + (1 if j < bits % len(subset) else 0) for j in range(len(subset))]
        for j in rng.permutation(len(subset)).tolist():  # which positions get the extra bits: drawn
            p = subset[j]
            for f in rng.choice(64, size=min(per[j], 64), replace=False).tolist():
                masks[p] = masks.get(p, 0) | (1 << f)
        plan.append(sorted(masks.items()))
    return plan


def _mix(x: np.ndarray) -> np.ndarray:
    """splitmix64's finaliser: a bijection of uint64 that spreads every input bit."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def band_keys(sigs: np.ndarray, need: int, bands: int = LSH_BANDS, bits: int = LSH_BITS) -> np.ndarray:
    """(rows, bands) uint64 keys: the band's sampled bits of each row, hashed with the band's number."""
    n, positions = sigs.shape
    plan = _band_plan(positions, need, bands, bits)
    keys = np.empty((n, len(plan)), dtype=np.uint64)
    with np.errstate(over="ignore"):
        for b, masks in enumerate(plan):
            k = np.full(n, b + 1, dtype=np.uint64)
            for p, mask in masks:
                k = _mix(k ^ (sigs[:, p] & np.uint64(mask)))
            keys[:, b] = k
    return keys


def first_repeats(sigs, threshold: int, need: int, *, bands: int = LSH_BANDS, bits: int = LSH_BITS) -> np.ndarray:
    """For each row of ``sigs`` (rows x positions of 64-bit hashes), the index of the earlier
    kept row it repeats, or -1 when it is kept itself. Greedy in row order: a row repeats
    a kept row when at least ``need`` positions are within ``threshold`` bits; it is
    compared only with the kept rows that share one of its LSH bands (``band_keys``), and
    the earliest kept one that passes the exact check is its twin. A row never repeats a
    dropped row, so there are no chains: the kept rows of the first k rows are the same
    whatever follows them.

    Recall: a twin whose ``need`` positions are within d bits collides on one band with
    probability about (1 - d/64)**bits, so on one of the bands of a subset it agrees on
    with 1 - (1 - (1 - d/64)**bits)**(bands per subset): with all positions near (the
    usual repeat) and 64 bands of 28 bits spread evenly over a subset's positions, 1.00 at d <= 4 and
    0.79 at d = 8. Cost: 64 dict
    lookups per row, plus the exact check of the candidates (a random kept row is one
    with probability ~64 * 2**-28, more when a position such as a shared home screen carries
    few bits of its own).
    """
    h = np.asarray(sigs)
    if h.dtype == np.int64:
        h = h.view(np.uint64)
    h = h.astype(np.uint64, copy=False)
    if h.ndim != 2:
        raise ValueError(f"sigs must be a 2-D array (rows x positions), got shape {h.shape}")
    if not 0 <= threshold <= MAX_THRESHOLD:
        raise ValueError(f"threshold must be in 0..{MAX_THRESHOLD} bits, got {threshold}")
    n, positions = h.shape
    twin = np.full(n, -1, dtype=np.int64)
    if n == 0:
        return twin
    need = min(max(0, int(need)), positions)
    if need == 0:
        twin[1:] = 0  # nothing to confirm: every row repeats the first
        return twin
    table: dict[int, int | list[int]] = {}  # band key -> kept row, or kept rows once two share it
    rows = h.tolist()  # Python ints: a handful of candidates is checked faster than by numpy
    gc_was_on = gc.isenabled()
    gc.disable()  # millions of small objects and no cycles: the collector's passes would dominate
    try:
        for start in range(0, n, CHUNK_ROWS):
            chunk = band_keys(h[start:start + CHUNK_ROWS], need, bands, bits).tolist()
            for row, keys in enumerate(chunk, start=start):
                twin[row] = _query_or_insert(table, rows, row, keys, threshold, need)
    finally:
        if gc_was_on:
            gc.enable()
    return twin


def _query_or_insert(table: dict, rows: list, row: int, keys: list[int], threshold: int, need: int) -> int:
    """The earliest kept row sharing a band with ``row`` that passes the exact check, else
    -1 after inserting ``row`` under its band keys."""
    candidates: set[int] = set()
    for k in keys:
        hit = table.get(k)
        if hit is None:
            continue
        if type(hit) is int:
            candidates.add(hit)
        else:
            candidates.update(hit)
    sig = rows[row]
    for c in sorted(candidates):
        if sum((a ^ b).bit_count() <= threshold for a, b in zip(rows[c], sig)) >= need:
            return c
    for k in keys:
        hit = table.get(k)
        if hit is None:
            table[k] = row
        elif type(hit) is int:
            table[k] = [hit, row]
        else:
            hit.append(row)
    return -1
