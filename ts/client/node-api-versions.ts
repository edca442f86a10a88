/**
 * What one broker serves, from its ApiVersions response (Kafka's NodeApiVersions): for each
 * ApiKey the range [min, max]. The version used for a request is the highest both sides serve:
 * min(broker max, codec max), refused with UNSUPPORTED_VERSION when that is below
 * max(broker min, codec min) or the broker does not list the key at all.
 */
import type { ApiCodec } from '../protocol/apis/api.js'
import type { ApiVersion } from '../protocol/apis/api-versions.js'
import { KafkaClientError } from './errors.js'

export class NodeApiVersions {
  private readonly ranges = new Map<number, ApiVersion>()

  constructor(apiKeys: readonly ApiVersion[]) {
    for (const api of apiKeys) this.ranges.set(api.apiKey, api)
  }

  /** The broker's range for `apiKey`, if it serves it. */
  range(apiKey: number): ApiVersion | undefined {
    return this.ranges.get(apiKey)
  }

  /** The highest version of `codec` both sides serve (at most `cap` when given). */
  latestUsableVersion(codec: ApiCodec<unknown, unknown>, cap = Infinity): number {
    const api = this.ranges.get(codec.apiKey)
    if (!api) throw new KafkaClientError('UNSUPPORTED_VERSION', `the broker does not serve ${codec.name} (ApiKey ${codec.apiKey})`)
    const version = Math.min(api.maxVersion, codec.maxVersion, cap)
    const floor = Math.max(api.minVersion, codec.minVersion)
    if (version < floor) {
      throw new KafkaClientError('UNSUPPORTED_VERSION', `the broker serves ${codec.name} v${api.minVersion}-v${api.maxVersion}, this client v${codec.minVersion}-v${Math.min(codec.maxVersion, cap)}`)
    }
    return version
  }
}
