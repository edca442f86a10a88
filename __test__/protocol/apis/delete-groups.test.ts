import { describe, expect, it } from 'vitest'
import { deleteGroupsCodec as codec } from '../../../ts/protocol/apis/delete-groups.js'
import { decode, encode, expectGolden, groupCodecSuite, hex } from './group-codec-suite.js'
import { deleteGroupsSamples } from './group-samples.js'

describe('DeleteGroups', () => {
  groupCodecSuite(codec, deleteGroupsSamples, 42)

  it('golden v1 request and response', () => {
    expectGolden(
      codec,
      'request',
      1,
      hex(`
        00000001    // groupsNames: 1
        0001 67     //   "g"
      `),
      { groupsNames: ['g'] },
    )
    expectGolden(
      codec,
      'response',
      1,
      hex(`
        00000000    // throttleTimeMs
        00000001    // results: 1
        0001 67     //   groupId "g"
        0044        //   errorCode NON_EMPTY_GROUP
      `),
      { throttleTimeMs: 0, results: [{ groupId: 'g', errorCode: 68, errorMessage: null }] },
    )
  })

  it('golden v3 response with and without an error message', () => {
    expectGolden(
      codec,
      'response',
      3,
      hex(`
        00000000    // throttleTimeMs
        03          // results: 2 (+1)
        02 67       //   groupId "g"
        0000        //   errorCode
        00          //   errorMessage null
        00          //   tagged fields
        02 68       //   groupId "h"
        0045        //   errorCode GROUP_ID_NOT_FOUND
        02 78       //   errorMessage "x"
        00          //   tagged fields
        00          // tagged fields
      `),
      {
        throttleTimeMs: 0,
        results: [
          { groupId: 'g', errorCode: 0, errorMessage: null },
          { groupId: 'h', errorCode: 69, errorMessage: 'x' },
        ],
      },
    )
  })

  it('drops the error message before v3 (ignorable) and skips unknown tagged fields', () => {
    const bytes = encode(codec, 'response', 2, deleteGroupsSamples.response(3))
    expect(decode(codec, 'response', 2, bytes)).toStrictEqual(deleteGroupsSamples.responseExpected(2))
    expect(decode(codec, 'request', 2, hex('02 02 67 // groupsNames ["g"]\n01 05 01 ff // tag 5 (1 byte)'))).toStrictEqual({ groupsNames: ['g'] })
  })
})
