/**
 * Kafka's MemberState: where a member of a KIP-848 consumer group (group.protocol=consumer) is
 * in its life, and the transitions allowed between them (consumer-membership-manager.ts moves it).
 *
 *   UNSUBSCRIBED     not in the group (never subscribed, unsubscribed, or left): no heartbeats
 *   JOINING          heartbeats with epoch 0 and every field, until the coordinator gives an epoch
 *   RECONCILING      a target assignment differs from the one owned: revoke, then assign (at poll)
 *   ACKNOWLEDGING    reconciled: the next heartbeat goes out at once, carrying the owned partitions
 *   STABLE           owns its target assignment; heartbeats every interval the coordinator gives
 *   FENCED           FENCED_MEMBER_EPOCH / UNKNOWN_MEMBER_ID: its partitions are lost, then JOINING
 *   PREPARE_LEAVING  giving its partitions up (onPartitionsRevoked) before the leave heartbeat
 *   LEAVING          the next heartbeat leaves (epoch -1, or -2 for a static member)
 *   FATAL            an error no retry mends (FENCED_INSTANCE_ID, UNSUPPORTED_VERSION...): poll throws it
 *   STALE            left after max.poll.interval.ms; its partitions are lost at the next poll, which rejoins
 */
export enum MemberState {
  UNSUBSCRIBED = 'UNSUBSCRIBED',
  JOINING = 'JOINING',
  RECONCILING = 'RECONCILING',
  ACKNOWLEDGING = 'ACKNOWLEDGING',
  STABLE = 'STABLE',
  FENCED = 'FENCED',
  PREPARE_LEAVING = 'PREPARE_LEAVING',
  LEAVING = 'LEAVING',
  FATAL = 'FATAL',
  STALE = 'STALE',
}

const S = MemberState

/** For each state, the states it may be entered from (Kafka's previousValidStates). */
const PREVIOUS_VALID_STATES: Record<MemberState, readonly MemberState[]> = {
  [S.STABLE]: [S.JOINING, S.ACKNOWLEDGING, S.RECONCILING],
  [S.RECONCILING]: [S.STABLE, S.JOINING, S.ACKNOWLEDGING, S.RECONCILING],
  [S.ACKNOWLEDGING]: [S.RECONCILING],
  [S.FATAL]: [S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.PREPARE_LEAVING, S.LEAVING, S.UNSUBSCRIBED],
  [S.FENCED]: [S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.PREPARE_LEAVING, S.LEAVING],
  [S.JOINING]: [S.FENCED, S.UNSUBSCRIBED, S.STALE],
  [S.PREPARE_LEAVING]: [S.JOINING, S.STABLE, S.RECONCILING, S.ACKNOWLEDGING, S.UNSUBSCRIBED],
  [S.LEAVING]: [S.PREPARE_LEAVING],
  [S.UNSUBSCRIBED]: [S.PREPARE_LEAVING, S.LEAVING, S.FENCED],
  [S.STALE]: [S.LEAVING],
}

export function isValidTransition(from: MemberState, to: MemberState): boolean {
  return from === to || PREVIOUS_VALID_STATES[to].includes(from)
}

/** Whether a member in `state` takes a new assignment in (it is in the group and means to stay). */
export function canHandleNewAssignment(state: MemberState): boolean {
  return PREVIOUS_VALID_STATES[S.RECONCILING].includes(state)
}
