/**
 * Kafka's AcknowledgeType, AcknowledgementMode and Acknowledgements (KIP-932): how a share
 * consumer settles the records it was delivered, and how one partition's settlements go on the
 * wire.
 *
 * - AcknowledgeType: accept (processed: never delivered again), release (back to the group: the
 *   next delivery has its delivery count up), reject (archived: never delivered again), renew
 *   (KIP-1222: the acquisition lock starts again, the record stays held and is still to be
 *   settled). On the wire: 0 gap (an acquired offset with no record, e.g. a control record), 1
 *   accept, 2 release, 3 reject, 4 renew.
 * - share.acknowledgement.mode: `implicit` (the default: whatever a poll delivered is accepted at
 *   the next poll, commitSync/commitAsync or close) or `explicit` (the application calls
 *   acknowledge for each record; a poll while records of the last one are not acknowledged
 *   throws ILLEGAL_STATE, as Java's IllegalStateException).
 * - Acknowledgements: offset -> type for one partition, sent as AcknowledgementBatches: runs of
 *   consecutive offsets; a run whose offsets all share one type carries that type once, otherwise
 *   one type per offset (ShareFetch/ShareAcknowledge's acknowledgeTypes).
 */
import type { AcknowledgementBatch } from '../protocol/messages/share-acknowledge-request.js'

export type AcknowledgeType = 'accept' | 'release' | 'reject' | 'renew'
export type AcknowledgementMode = 'implicit' | 'explicit'

/** The wire codes of AcknowledgementBatch.acknowledgeTypes. */
export const ACKNOWLEDGE_TYPE_GAP = 0
export const ACKNOWLEDGE_TYPE_CODES: Readonly<Record<AcknowledgeType, number>> = { accept: 1, release: 2, reject: 3, renew: 4 }

export function asAcknowledgeType(type: string): AcknowledgeType {
  const t = type.toLowerCase()
  if (t in ACKNOWLEDGE_TYPE_CODES) return t as AcknowledgeType
  throw new TypeError(`an acknowledge type is accept, release, reject or renew, not ${type}`)
}

export class Acknowledgements {
  /** Offset -> wire code (0 gap .. 4 renew). */
  private readonly types = new Map<bigint, number>()

  get size(): number {
    return this.types.size
  }

  add(offset: bigint, type: AcknowledgeType): void {
    this.types.set(offset, ACKNOWLEDGE_TYPE_CODES[type])
  }

  addGap(offset: bigint): void {
    this.types.set(offset, ACKNOWLEDGE_TYPE_GAP)
  }

  /** The offsets acknowledged (gaps included), in order. */
  offsets(): bigint[] {
    return [...this.types.keys()].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0))
  }

  get hasRenew(): boolean {
    for (const t of this.types.values()) if (t === ACKNOWLEDGE_TYPE_CODES.renew) return true
    return false
  }

  /** Moves the acknowledgements of `other` into this one (a later one for an offset wins). */
  merge(other: Acknowledgements): void {
    for (const [o, t] of other.types) this.types.set(o, t)
  }

  /** The AcknowledgementBatches that carry these acknowledgements. */
  toBatches(): AcknowledgementBatch[] {
    const out: AcknowledgementBatch[] = []
    let run: { first: bigint; last: bigint; types: number[] } | null = null
    const flush = () => {
      if (!run) return
      const same = run.types.every((t) => t === run!.types[0])
      out.push({ firstOffset: run.first, lastOffset: run.last, acknowledgeTypes: same ? [run.types[0]!] : run.types })
    }
    for (const offset of this.offsets()) {
      const type = this.types.get(offset)!
      if (run && offset === run.last + 1n) {
        run.last = offset
        run.types.push(type)
        continue
      }
      flush()
      run = { first: offset, last: offset, types: [type] }
    }
    flush()
    return out
  }
}
