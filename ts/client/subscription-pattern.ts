/**
 * Kafka's SubscriptionPattern (KIP-848): a regular expression the group coordinator resolves
 * against the cluster's topics (RE2 syntax, as Kafka's RE2/J), so every member of a group sees
 * the same topics, and topics created later reach the group without the consumer asking for
 * every topic's metadata. Only with group.protocol=consumer; a client-side RegExp works with
 * both protocols. An invalid expression fails the consumer's poll with INVALID_REGULAR_EXPRESSION.
 */
export class SubscriptionPattern {
  readonly pattern: string

  constructor(pattern: string) {
    this.pattern = pattern
  }

  toString(): string {
    return this.pattern
  }
}
