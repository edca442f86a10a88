/**
 * Kafka's Rate over a SampledStat (org.apache.kafka.common.metrics.stats): the values recorded
 * over the last `samples` windows of `windowMs` each, divided by the time they cover. A sample
 * starts at its first record and is complete after `windowMs`; the next record starts the next
 * one, reusing the oldest of `samples + 1` slots (the extra one overlaps the window's start). A
 * sample with no record for `samples * windowMs` is reset. The time covered is counted from the
 * oldest sample's start, and never less than `samples - 1` full windows, so a client's first
 * burst is measured over ten seconds rather than over the milliseconds it took (Rate.windowSize).
 */

interface Sample {
  value: number
  startMs: number
  lastEventMs: number
}

export class SampledRate {
  private readonly samples: Sample[] = []
  private current = 0
  private readonly numSamples: number
  private readonly windowMs: number

  constructor(numSamples: number, windowMs: number) {
    this.numSamples = numSamples
    this.windowMs = windowMs
  }

  record(value: number, nowMs: number): void {
    let sample = this.currentSample(nowMs)
    if (nowMs - sample.startMs >= this.windowMs) sample = this.advance(nowMs)
    sample.value += value
    sample.lastEventMs = nowMs
  }

  /** The rate per second at `nowMs`. */
  measure(nowMs: number): number {
    this.purgeObsolete(nowMs)
    let total = 0
    for (const s of this.samples) total += s.value
    return total / (this.windowSize(nowMs) / 1000)
  }

  /** The time the rate is measured over, in ms (Rate.windowSize). */
  windowSize(nowMs: number): number {
    this.purgeObsolete(nowMs)
    if (this.samples.length === 0) this.samples.push({ value: 0, startMs: nowMs, lastEventMs: nowMs })
    let oldest = this.samples[0]!.startMs
    for (const s of this.samples) if (s.startMs < oldest) oldest = s.startMs
    let elapsed = nowMs - oldest
    const fullWindows = Math.floor(elapsed / this.windowMs)
    const minFullWindows = this.numSamples - 1
    if (fullWindows < minFullWindows) elapsed += (minFullWindows - fullWindows) * this.windowMs
    return Math.max(elapsed, 1)
  }

  /** When a value was last recorded. */
  get lastRecordMs(): number {
    return this.samples[this.current]?.lastEventMs ?? -Infinity
  }

  private currentSample(nowMs: number): Sample {
    if (this.samples.length === 0) this.samples.push({ value: 0, startMs: nowMs, lastEventMs: nowMs })
    return this.samples[this.current]!
  }

  private advance(nowMs: number): Sample {
    this.current = (this.current + 1) % (this.numSamples + 1)
    if (this.current >= this.samples.length) {
      const sample = { value: 0, startMs: nowMs, lastEventMs: nowMs }
      this.samples.push(sample)
      return sample
    }
    const sample = this.samples[this.current]!
    sample.value = 0
    sample.startMs = nowMs
    sample.lastEventMs = nowMs
    return sample
  }

  private purgeObsolete(nowMs: number): void {
    const expireAge = this.numSamples * this.windowMs
    for (const s of this.samples) {
      if (nowMs - s.lastEventMs >= expireAge) {
        s.value = 0
        s.startMs = nowMs
        s.lastEventMs = nowMs
      }
    }
  }
}
