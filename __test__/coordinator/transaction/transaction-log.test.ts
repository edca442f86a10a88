/** `__transaction_state` records: Kafka's TransactionLogKey v0 and TransactionLogValue v0 and v1, byte for byte. */
import { describe, expect, it } from 'vitest'
import { decodeTxnLogKey, decodeTxnLogValue, encodeTxnLogKey, encodeTxnLogValue, type TxnLogValue } from '../../../ts/coordinator/transaction/transaction-log.js'
import { TransactionState, transactionStateName, transactionStateOf, isValidTransition } from '../../../ts/coordinator/transaction/transaction-state.js'
import { hex, utf8 } from '../../protocol/apis/codec-harness.js'

describe('TransactionLogKey / TransactionLogValue', () => {
  it('key v0: version and transactional id', () => {
    const bytes = hex('0000 // version 0', `0002 ${utf8('tx')}`)
    expect(encodeTxnLogKey('tx').toString('hex')).toBe(bytes.toString('hex'))
    expect(decodeTxnLogKey(bytes)).toBe('tx')
  })

  it('value v0: golden bytes, and back', () => {
    const value: TxnLogValue = {
      producerId: 1000n,
      producerEpoch: 2,
      transactionTimeoutMs: 60000,
      state: TransactionState.Ongoing,
      partitions: new Map([['t', [0, 3]]]),
      lastUpdateTimestampMs: 1700000000001n,
      startTimestampMs: 1700000000000n,
      clientTransactionVersion: 0,
    }
    const bytes = hex(
      '0000 // version 0',
      '00000000000003e8 // producerId',
      '0002 // producerEpoch',
      '0000ea60 // transactionTimeoutMs',
      '01 // transactionStatus Ongoing',
      `00000001 0001 ${utf8('t')} 00000002 00000000 00000003 // partitions [t [0, 3]]`,
      '0000018bcfe56801 // lastUpdate',
      '0000018bcfe56800 // start',
    )
    expect(encodeTxnLogValue(value, 0).toString('hex')).toBe(bytes.toString('hex'))
    expect(decodeTxnLogValue(bytes)).toStrictEqual(value)
  })

  it('value v1 (what transaction.version 2 writes): flexible, clientTransactionVersion in tagged field 2, and back', () => {
    const value: TxnLogValue = {
      producerId: 1000n,
      producerEpoch: 2,
      transactionTimeoutMs: 60000,
      state: TransactionState.Ongoing,
      partitions: new Map([['t', [0, 3]]]),
      lastUpdateTimestampMs: 1700000000001n,
      startTimestampMs: 1700000000000n,
      clientTransactionVersion: 2,
    }
    const bytes = hex(
      '0001 // version 1',
      '00000000000003e8 0002 0000ea60 01 // producerId, epoch, timeout, Ongoing',
      `02 02 ${utf8('t')} 03 00000000 00000003 00 // partitions: compact [t [0, 3]], no tagged fields`,
      '0000018bcfe56801 0000018bcfe56800 // lastUpdate, start',
      '01 02 02 0002 // one tagged field: tag 2 (clientTransactionVersion), 2 bytes, 2',
    )
    expect(encodeTxnLogValue(value).toString('hex')).toBe(bytes.toString('hex'))
    expect(decodeTxnLogValue(bytes)).toStrictEqual(value)
  })

  it('value v1: Empty has null partitions and TV_0 no tagged field, as Kafka writes them; unknown tags are skipped', () => {
    const empty: TxnLogValue = {
      producerId: 7n,
      producerEpoch: 0,
      transactionTimeoutMs: 60000,
      state: TransactionState.Empty,
      partitions: new Map(),
      lastUpdateTimestampMs: 1700000000001n,
      startTimestampMs: -1n,
      clientTransactionVersion: 0,
    }
    const bytes = hex('0001', '0000000000000007 0000 0000ea60 00', '00 // null partitions', '0000018bcfe56801 ffffffffffffffff', '00 // no tagged fields')
    expect(encodeTxnLogValue(empty).toString('hex')).toBe(bytes.toString('hex'))
    expect(decodeTxnLogValue(bytes)).toStrictEqual(empty)
    const withUnknownTag = hex('0001', '0000000000000007 0000 0000ea60 00', '00', '0000018bcfe56801 ffffffffffffffff', '01 09 02 abcd // tag 9: unknown')
    expect(decodeTxnLogValue(withUnknownTag)).toStrictEqual(empty)
  })

  it("has Kafka's state names and transitions", () => {
    expect(transactionStateName(TransactionState.PrepareAbort)).toBe('PrepareAbort')
    expect(transactionStateOf('CompleteCommit')).toBe(TransactionState.CompleteCommit)
    expect(transactionStateOf('Nope')).toBeUndefined()
    expect(isValidTransition(TransactionState.Ongoing, TransactionState.PrepareCommit)).toBe(true)
    expect(isValidTransition(TransactionState.Empty, TransactionState.PrepareCommit)).toBe(false)
    expect(isValidTransition(TransactionState.PrepareCommit, TransactionState.CompleteCommit)).toBe(true)
    // Transaction version 2 aborts a transaction that added nothing.
    expect(isValidTransition(TransactionState.Empty, TransactionState.PrepareAbort)).toBe(true)
    expect(isValidTransition(TransactionState.CompleteCommit, TransactionState.PrepareAbort)).toBe(true)
  })
})
