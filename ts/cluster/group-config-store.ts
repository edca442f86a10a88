/**
 * The group configs of a cluster (ts/group/group-config-manager.ts's storage) in etcd: one key
 * per group with overrides, `group-configs/<groupId>` (keys.ts), whose value is the JSON object of
 * its overrides; a group without overrides has no key. Read from etcd on each use, so every
 * broker answers the same at once.
 */
import { decode, encode, groupConfigsKey } from './keys.js'
import type { MetadataStore } from './metadata-store.js'

export class EtcdGroupConfigStore {
  private readonly store: MetadataStore

  constructor(store: MetadataStore) {
    this.store = store
  }

  async get(groupId: string): Promise<Record<string, string>> {
    const kv = await this.store.get(groupConfigsKey(groupId))
    return kv === null ? {} : decode<Record<string, string>>(kv.value)
  }

  async set(groupId: string, configs: Record<string, string>): Promise<void> {
    if (Object.keys(configs).length === 0) await this.store.delete(groupConfigsKey(groupId))
    else await this.store.put(groupConfigsKey(groupId), encode(configs))
  }
}
