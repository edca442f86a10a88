/**
 * Which partition of a coordinator's internal topic holds a key: Kafka's `partitionFor` of the
 * group coordinator (`GroupCoordinatorService.partitionFor`, a group id into
 * `__consumer_offsets`) and of the transaction coordinator (`TransactionStateManager.partitionFor`,
 * a transactional id into `__transaction_state`), both
 *
 *   Utils.abs(key.hashCode()) % numPartitions
 *
 * with Java's `String.hashCode` (31 * h + c over the UTF-16 code units, in 32-bit two's
 * complement, as a JavaScript string holds them) and Kafka's `Utils.abs` (Integer.MIN_VALUE maps
 * to 0, not to itself as Math.abs does). Every broker and every Kafka broker computes the same
 * partition for the same key and count, so a cluster places each group and transactional id as
 * Kafka would; `numPartitions` is the topic's partition count as created (never changed after).
 */

/** Java's `String.hashCode`: s[0]*31^(n-1) + ... + s[n-1], 32-bit signed. */
export function javaStringHashCode(s: string): number {
  let h = 0
  for (let i = 0; i < s.length; i++) h = (Math.imul(31, h) + s.charCodeAt(i)) | 0
  return h
}

/** Kafka's `Utils.abs`: the absolute value, 0 for Integer.MIN_VALUE. */
export function kafkaAbs(n: number): number {
  return n === -2147483648 ? 0 : Math.abs(n)
}

/** The partition of `key` in a coordinator topic of `numPartitions` partitions. */
export function partitionFor(key: string, numPartitions: number): number {
  if (!Number.isInteger(numPartitions) || numPartitions < 1) throw new RangeError(`a coordinator topic has at least one partition, not ${numPartitions}`)
  return kafkaAbs(javaStringHashCode(key)) % numPartitions
}
