/**
 * Token counting with the real cl100k_base tokenizer (the ranks ship inside js-tiktoken, nothing is
 * fetched). Loading the ranks takes ~0.2 s, so it happens once, lazily or at engine start
 * (`warmTokenizer`). Counting splits text with the tokenizer's own pre-tokenisation pattern and
 * memoises per-piece counts: identical to encoding the whole text, several times faster on real
 * traffic where words repeat.
 *
 * The byte-pair merge is ours, not js-tiktoken's: that one re-ranks every pair of a piece after each
 * merge, building a string key per pair, which is quadratic in the length of a piece (a
 * 50,000-letter "word" took minutes, and a 32-letter chunk of random letters ~0.15 ms). Here each
 * pair's rank is kept in a heap and only the two pairs next to a merge are re-ranked: the same
 * merges in the same order (lowest rank first, leftmost on ties, as tiktoken does), so the same
 * count, in O(n log n) for a piece of n bytes. Pieces are never cut, so counts stay exact.
 */
import cl100k from 'js-tiktoken/ranks/cl100k_base';

interface Ranks {
  /** Token bytes (as a latin1 string, one char per byte) -> rank. */
  byBytes: Map<string, number>;
  /** Longest token in bytes: longer byte strings need no lookup. */
  maxBytes: number;
}

let ranks: Ranks | null = null;
const PIECE_RE = new RegExp(cl100k.pat_str, 'gu');
const pieceCounts = new Map<string, number>();
const MAX_CACHED_PIECES = 100_000;
const MAX_CACHED_PIECE_LENGTH = 64;

function getRanks(): Ranks {
  if (ranks) return ranks;
  const byBytes = new Map<string, number>();
  let maxBytes = 1;
  // Same layout as js-tiktoken reads it: per line, an ignored field, the first rank, base64 tokens.
  for (const line of cl100k.bpe_ranks.split('\n')) {
    if (line.length === 0) continue;
    const [, offsetStr, ...tokens] = line.split(' ');
    const offset = Number.parseInt(offsetStr ?? '0', 10);
    tokens.forEach((token, i) => {
      const bytes = Buffer.from(token, 'base64').toString('latin1');
      byBytes.set(bytes, offset + i);
      maxBytes = Math.max(maxBytes, bytes.length);
    });
  }
  ranks = { byBytes, maxBytes };
  return ranks;
}

export function warmTokenizer(): void {
  getRanks();
}

export function countTokens(text: string): number {
  if (text.length === 0) return 0;
  let total = 0;
  PIECE_RE.lastIndex = 0;
  for (let m = PIECE_RE.exec(text); m !== null; m = PIECE_RE.exec(text)) {
    const piece = m[0];
    let n = pieceCounts.get(piece);
    if (n === undefined) {
      // Special-token text ("<|endoftext|>") is counted as ordinary text, never rejected.
      n = bpeCount(
        isAscii(piece) ? piece : Buffer.from(piece, 'utf8').toString('latin1'),
        getRanks(),
      );
      if (piece.length <= MAX_CACHED_PIECE_LENGTH) {
        if (pieceCounts.size >= MAX_CACHED_PIECES) pieceCounts.clear();
        pieceCounts.set(piece, n);
      }
    }
    total += n;
  }
  return total;
}

/** ASCII text is its own UTF-8, one byte per character. */
function isAscii(s: string): boolean {
  for (let i = 0; i < s.length; i++) if (s.charCodeAt(i) > 0x7f) return false;
  return true;
}

/** Min-heap of candidate merges ordered by (rank, start): tiktoken's lowest rank, leftmost first. */
class PairHeap {
  private ranks = new Int32Array(64);
  private starts = new Int32Array(64);
  private versions = new Int32Array(64);
  size = 0;
  /** Version of the entry `pop` returned last. */
  poppedVersion = 0;

  push(rank: number, start: number, version: number): void {
    if (this.size === this.ranks.length) this.grow();
    let k = this.size++;
    while (k > 0) {
      const parent = (k - 1) >> 1;
      if (!this.less(rank, start, this.ranks[parent] ?? 0, this.starts[parent] ?? 0)) break;
      this.move(parent, k);
      k = parent;
    }
    this.ranks[k] = rank;
    this.starts[k] = start;
    this.versions[k] = version;
  }

  /** Removes the smallest entry; returns its start (its version in `poppedVersion`). */
  pop(): number {
    const top = this.starts[0] ?? 0;
    this.poppedVersion = this.versions[0] ?? 0;
    const last = --this.size;
    const rank = this.ranks[last] ?? 0;
    const start = this.starts[last] ?? 0;
    const version = this.versions[last] ?? 0;
    let k = 0;
    for (;;) {
      let child = 2 * k + 1;
      if (child >= last) break;
      if (
        child + 1 < last &&
        this.less(
          this.ranks[child + 1] ?? 0,
          this.starts[child + 1] ?? 0,
          this.ranks[child] ?? 0,
          this.starts[child] ?? 0,
        )
      )
        child++;
      if (!this.less(this.ranks[child] ?? 0, this.starts[child] ?? 0, rank, start)) break;
      this.move(child, k);
      k = child;
    }
    this.ranks[k] = rank;
    this.starts[k] = start;
    this.versions[k] = version;
    return top;
  }

  private less(rankA: number, startA: number, rankB: number, startB: number): boolean {
    return rankA < rankB || (rankA === rankB && startA < startB);
  }

  private move(from: number, to: number): void {
    this.ranks[to] = this.ranks[from] ?? 0;
    this.starts[to] = this.starts[from] ?? 0;
    this.versions[to] = this.versions[from] ?? 0;
  }

  private grow(): void {
    const ranks = new Int32Array(this.ranks.length * 2);
    const starts = new Int32Array(ranks.length);
    const versions = new Int32Array(ranks.length);
    ranks.set(this.ranks);
    starts.set(this.starts);
    versions.set(this.versions);
    this.ranks = ranks;
    this.starts = starts;
    this.versions = versions;
  }
}

/** Scratch arrays shared by every count (grown as needed): parts are linked by first byte. */
let next = new Int32Array(256);
let prev = new Int32Array(256);
let version = new Int32Array(256);
const heap = new PairHeap();

/** Number of tokens byte-pair encoding gives for one piece (`bytes`: one latin1 char per byte). */
function bpeCount(bytes: string, r: Ranks): number {
  const n = bytes.length;
  if (n <= 1 || r.byBytes.has(bytes)) return Math.min(n, 1);
  if (next.length < n) {
    next = new Int32Array(2 * n);
    prev = new Int32Array(2 * n);
    version = new Int32Array(2 * n);
  }
  for (let i = 0; i < n; i++) {
    next[i] = i + 1;
    prev[i] = i - 1;
    version[i] = 0;
  }
  heap.size = 0;
  for (let i = 0; i + 1 < n; i++) pushPair(bytes, n, r, i);
  let parts = n;
  while (heap.size > 0) {
    const i = heap.pop();
    // Entries for merged-away parts, or for pairs that changed since, are stale.
    if (heap.poppedVersion !== version[i] || (next[i] ?? n) >= n) continue;
    const j = next[i] ?? n;
    const after = next[j] ?? n;
    next[i] = after;
    if (after < n) prev[after] = i;
    version[j] = -1;
    version[i] = (version[i] ?? 0) + 1;
    parts--;
    pushPair(bytes, n, r, i);
    const p = prev[i] ?? -1;
    if (p >= 0) {
      version[p] = (version[p] ?? 0) + 1;
      pushPair(bytes, n, r, p);
    }
  }
  return parts;
}

/** Queues the merge of part i with the part after it, when that makes a token. */
function pushPair(bytes: string, n: number, r: Ranks, i: number): void {
  const j = next[i] ?? n;
  if (j >= n) return;
  const end = next[j] ?? n;
  if (end - i > r.maxBytes) return;
  const rank = r.byBytes.get(bytes.slice(i, end));
  if (rank !== undefined) heap.push(rank, i, version[i] ?? 0);
}
