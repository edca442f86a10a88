/**
 * The group configs of a cluster (ts/group/group-config-manager.ts's storage) in etcd: one key
 * per group with overrides, `group-configs/<groupId>` (keys.ts), whose value is the JSON object of
 * its overrides; a group without overrides has no key. Read from etcd on each use, so every
 * broker answers the same at once.
 */
import { decode, encode, groupConfigsKey } from './keys.js'
import type { EtcdConnection } from './etcd-client.js'

export class EtcdGroupConfigStore {
  private readonly connection: EtcdConnection

  constructor(connection: EtcdConnection) {
    this.connection = connection
  }

  async get(groupId: string): Promise<Record<string, string>> {
    const value = await this.connection.ns.get(groupConfigsKey(groupId)).buffer()
    return value === null ? {} : decode<Record<string, string>>(value)
  }

  async set(groupId: string, configs: Record<string, string>): Promise<void> {
    if (Object.keys(configs).length === 0) await this.connection.ns.delete().key(groupConfigsKey(groupId))
    else await this.connection.ns.put(groupConfigsKey(groupId)).value(encode(configs))
  }
}
