/** `__transaction_state` records: Kafka's TransactionLogKey v0 and TransactionLogValue v0 (and v1 read), byte for byte. */
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
    expect(encodeTxnLogValue(value).toString('hex')).toBe(bytes.toString('hex'))
    expect(decodeTxnLogValue(bytes)).toStrictEqual(value)
  })

  it('value v1 (flexible, tagged fields) is read', () => {
    const bytes = hex(
      '0001 // version 1',
      '00000000000003e8 0002 0000ea60 04 // producerId, epoch, timeout, CompleteCommit',
      '01 // partitions: empty compact array',
      '0000018bcfe56801 0000018bcfe56800',
      '01 02 08 0000000000000005 // one tagged field (tag 2... here nextProducerId-like, skipped)',
    )
    expect(decodeTxnLogValue(bytes)).toMatchObject({ producerId: 1000n, state: TransactionState.CompleteCommit, partitions: new Map() })
  })

  it("has Kafka's state names and transitions", () => {
    expect(transactionStateName(TransactionState.PrepareAbort)).toBe('PrepareAbort')
    expect(transactionStateOf('CompleteCommit')).toBe(TransactionState.CompleteCommit)
    expect(transactionStateOf('Nope')).toBeUndefined()
    expect(isValidTransition(TransactionState.Ongoing, TransactionState.PrepareCommit)).toBe(true)
    expect(isValidTransition(TransactionState.Empty, TransactionState.PrepareCommit)).toBe(false)
    expect(isValidTransition(TransactionState.PrepareCommit, TransactionState.CompleteCommit)).toBe(true)
  })
})
