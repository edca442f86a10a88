/**
 * Kafka's `PersisterStateBatchCombiner`: a share partition's state batches (ranges of offsets
 * with one delivery state and delivery count) combined with newer ones. Where they overlap the
 * newer batch wins; everything below the start offset is dropped (a batch across it is cut);
 * adjacent ranges of the same state and count become one. The result is sorted and disjoint.
 */

export interface PersisterStateBatch {
  firstOffset: bigint
  lastOffset: bigint
  deliveryState: number
  deliveryCount: number
}

/** `current` with `newer` laid over it, from `startOffset` on. */
export function combineStateBatches(current: readonly PersisterStateBatch[], newer: readonly PersisterStateBatch[], startOffset: bigint): PersisterStateBatch[] {
  let out: PersisterStateBatch[] = sorted(current)
  for (const batch of newer) {
    if (batch.lastOffset < batch.firstOffset) continue
    const next: PersisterStateBatch[] = []
    for (const b of out) {
      if (b.lastOffset < batch.firstOffset || b.firstOffset > batch.lastOffset) {
        next.push(b)
        continue
      }
      if (b.firstOffset < batch.firstOffset) next.push({ ...b, lastOffset: batch.firstOffset - 1n })
      if (b.lastOffset > batch.lastOffset) next.push({ ...b, firstOffset: batch.lastOffset + 1n })
    }
    next.push({ ...batch })
    out = sorted(next)
  }
  const merged: PersisterStateBatch[] = []
  for (const b of out) {
    if (b.lastOffset < startOffset) continue
    const cut = b.firstOffset < startOffset ? { ...b, firstOffset: startOffset } : b
    const last = merged[merged.length - 1]
    if (last !== undefined && last.lastOffset + 1n === cut.firstOffset && last.deliveryState === cut.deliveryState && last.deliveryCount === cut.deliveryCount) last.lastOffset = cut.lastOffset
    else merged.push({ ...cut })
  }
  return merged
}

function sorted(batches: readonly PersisterStateBatch[]): PersisterStateBatch[] {
  return [...batches].sort((a, b) => (a.firstOffset < b.firstOffset ? -1 : a.firstOffset > b.firstOffset ? 1 : 0))
}
