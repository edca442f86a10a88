import { describe, expect, it } from 'vitest'
import { AUTHORIZED_OPERATIONS_OMITTED, describeGroupsCodec as codec } from '../../../ts/protocol/apis/describe-groups.js'
import { decode, encode, expectGolden, groupCodecSuite, hex } from './group-codec-suite.js'
import { describeGroupsSamples } from './group-samples.js'

describe('DescribeGroups', () => {
  groupCodecSuite(codec, describeGroupsSamples, 15)

  it('golden v0 request and v1 response', () => {
    expectGolden(
      codec,
      'request',
      0,
      hex(`
        00000001    // groups: 1
        0001 67     //   "g"
      `),
      { groups: ['g'], includeAuthorizedOperations: false },
    )
    expectGolden(
      codec,
      'response',
      1,
      hex(`
        00000000                // throttleTimeMs
        00000001                // groups: 1
        0000                    //   errorCode
        0001 67                 //   groupId "g"
        0006 537461626c65       //   groupState "Stable"
        0008 636f6e73756d6572   //   protocolType "consumer"
        0005 72616e6765         //   protocolData "range"
        00000001                //   members: 1
        0001 6d                 //     memberId "m"
        0001 63                 //     clientId "c"
        0001 68                 //     clientHost "h"
        00000001 01             //     memberMetadata
        00000001 02             //     memberAssignment
      `),
      {
        throttleTimeMs: 0,
        groups: [
          {
            errorCode: 0,
            errorMessage: null,
            groupId: 'g',
            groupState: 'Stable',
            protocolType: 'consumer',
            protocolData: 'range',
            members: [
              {
                memberId: 'm',
                groupInstanceId: null,
                clientId: 'c',
                clientHost: 'h',
                memberMetadata: Buffer.from([1]),
                memberAssignment: Buffer.from([2]),
              },
            ],
            authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
          },
        ],
      },
    )
  })

  it('golden v5 request and v6 response', () => {
    expectGolden(
      codec,
      'request',
      5,
      hex(`
        02 02 67    // groups: 1 (+1), "g"
        01          // includeAuthorizedOperations
        00          // tagged fields
      `),
      { groups: ['g'], includeAuthorizedOperations: true },
    )
    expectGolden(
      codec,
      'response',
      6,
      hex(`
        00000000      // throttleTimeMs
        02            // groups: 1 (+1)
        0045          //   errorCode 69 (GROUP_ID_NOT_FOUND)
        02 78         //   errorMessage "x"
        02 67         //   groupId "g"
        05 44656164   //   groupState "Dead"
        01            //   protocolType ""
        01            //   protocolData ""
        01            //   members: 0 (+1)
        80000000      //   authorizedOperations: omitted
        00            //   tagged fields
        00            // tagged fields
      `),
      {
        throttleTimeMs: 0,
        groups: [
          {
            errorCode: 69,
            errorMessage: 'x',
            groupId: 'g',
            groupState: 'Dead',
            protocolType: '',
            protocolData: '',
            members: [],
            authorizedOperations: AUTHORIZED_OPERATIONS_OMITTED,
          },
        ],
      },
    )
  })

  it('skips unknown tagged fields', () => {
    expect(decode(codec, 'request', 6, hex('02 02 67 00 02 00 00 01 01 aa'))).toStrictEqual({
      groups: ['g'],
      includeAuthorizedOperations: false,
    })
  })

  it('will not encode what a version cannot carry', () => {
    expect(() => encode(codec, 'request', 2, describeGroupsSamples.request(3))).toThrow(/includeAuthorizedOperations/)
    expect(() => encode(codec, 'response', 5, describeGroupsSamples.response(6))).toThrow(/errorMessage/)
    expect(() => encode(codec, 'response', 2, describeGroupsSamples.response(3))).toThrow(/authorizedOperations/)
  })
})
