/**
 * A broker's quota managers (Kafka's QuotaFactory.QuotaManagers): produce (producer_byte_rate,
 * the bytes of each Produce request), fetch (consumer_byte_rate, the bytes of each Fetch
 * response to a consumer) and request (request_percentage, the share of time spent on a
 * client's requests), each following the stored quotas.
 */
import { ClientQuotaManager } from './client-quota-manager.js'
import type { ClientQuotaStorage } from './client-quota-storage.js'
import { CONSUMER_BYTE_RATE, PRODUCER_BYTE_RATE, REQUEST_PERCENTAGE } from './quota-config.js'

export class ClientQuotaManagers {
  readonly produce: ClientQuotaManager
  readonly fetch: ClientQuotaManager
  readonly request: ClientQuotaManager

  /** `numSamples` and `windowSizeSeconds`: quota.window.num and quota.window.size.seconds. */
  constructor(windows: { numSamples: number; windowSizeSeconds: number }) {
    this.produce = new ClientQuotaManager(PRODUCER_BYTE_RATE, windows)
    this.fetch = new ClientQuotaManager(CONSUMER_BYTE_RATE, windows)
    this.request = new ClientQuotaManager(REQUEST_PERCENTAGE, windows)
  }

  /** Applies the stored quotas now and on every change. */
  follow(storage: ClientQuotaStorage): void {
    const apply = () => {
      for (const m of [this.produce, this.fetch, this.request]) m.update(storage.image)
    }
    apply()
    storage.onChange(apply)
  }
}

/** Kafka's clock for quotas: milliseconds, here monotonic. */
export const quotaNowMs = (): number => Math.floor(performance.now())
