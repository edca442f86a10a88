import { describe, it } from 'vitest'
import { offsetDeleteCodec as codec } from '../../../ts/protocol/apis/offset-delete.js'
import { expectGolden, groupCodecSuite, hex } from './group-codec-suite.js'
import { offsetDeleteSamples } from './group-samples.js'

describe('OffsetDelete', () => {
  groupCodecSuite(codec, offsetDeleteSamples, 47)

  it('golden v0 request and responses', () => {
    expectGolden(
      codec,
      'request',
      0,
      hex(`
        0001 67       // groupId "g"
        00000001      // topics: 1
        0001 74       //   name "t"
        00000002      //   partitions: 2
        00000000      //     partitionIndex 0
        00000003      //     partitionIndex 3
      `),
      { groupId: 'g', topics: [{ name: 't', partitions: [{ partitionIndex: 0 }, { partitionIndex: 3 }] }] },
    )
    expectGolden(
      codec,
      'response',
      0,
      hex(`
        0000          // errorCode
        00000000      // throttleTimeMs
        00000001      // topics: 1
        0001 74       //   name "t"
        00000001      //   partitions: 1
        00000003      //     partitionIndex 3
        0056          //     errorCode GROUP_SUBSCRIBED_TO_TOPIC
      `),
      { errorCode: 0, throttleTimeMs: 0, topics: [{ name: 't', partitions: [{ partitionIndex: 3, errorCode: 86 }] }] },
    )
    expectGolden(
      codec,
      'response',
      0,
      hex(`
        0045          // errorCode GROUP_ID_NOT_FOUND
        00000000      // throttleTimeMs
        00000000      // topics: 0
      `),
      { errorCode: 69, throttleTimeMs: 0, topics: [] },
    )
  })
})
