/**
 * The bound on sealed segments whose `.log` is open at once in this process (ferrolog issue #11:
 * a start must never need one open descriptor per partition file at once), as the native
 * engine's crates/storage/src/segment/log_file.rs.
 *
 * The active segment's `.log` is pinned (open read-write while it is active). A sealed
 * segment's `.log` is opened by its first read and enrolled here; past `maxOpenSegments` the
 * least recently read one is closed (its descriptor and its shared FileRecords handle), and its
 * next read opens the file again. Nothing is pulled from under a reader: reads are synchronous
 * (nothing can close the descriptor in the middle of one), the FileRecords slices a Fetch
 * response holds own their descriptor (a dup, shared by the slices, released by the last), and
 * the loader's asynchronous reads borrow the segment (`LogSegment.borrowFd`), which keeps it
 * open until they give it back.
 */

/** What the bound closes: a sealed segment's descriptor, if no one borrows it. */
export interface EvictableSegment {
  /** Whether an asynchronous reader holds the descriptor now (it is then not closed). */
  readonly borrowed: boolean
  /** Closes the segment's own descriptor and shared handle; its next read opens the file again. */
  closeLogFd(): void
}

/** The default bound, the native engine's DEFAULT_MAX_OPEN_SEGMENTS. */
export const DEFAULT_MAX_OPEN_SEGMENTS = 1000

let maxOpen = DEFAULT_MAX_OPEN_SEGMENTS
/** Least recently used first (a Map keeps insertion order; a use moves a segment to the end). */
const open = new Map<EvictableSegment, true>()

/** Sets the bound (at least 1); segments over a lowered bound are closed at once. */
export function setMaxOpenSegments(max: number): void {
  if (!Number.isInteger(max) || max < 1) throw new RangeError(`the bound on open segments must be a positive integer, not ${max}`)
  maxOpen = max
  shrink(null)
}

export function maxOpenSegments(): number {
  return maxOpen
}

/** How many sealed segments hold their `.log` open now. */
export function openSealedSegments(): number {
  return open.size
}

/** A sealed segment with an open `.log` was used: it is the most recent; older ones past the bound close. */
export function touch(seg: EvictableSegment): void {
  open.delete(seg)
  open.set(seg, true)
  shrink(seg)
}

/** The segment holds no open sealed `.log` any more (closed, deleted, or active again). */
export function forget(seg: EvictableSegment): void {
  open.delete(seg)
}

function shrink(keep: EvictableSegment | null): void {
  if (open.size <= maxOpen) return
  for (const seg of open.keys()) {
    if (open.size <= maxOpen) break
    if (seg === keep || seg.borrowed) continue
    open.delete(seg)
    seg.closeLogFd()
  }
}
