/**
 * DescribeUserScramCredentials answered from the credentials a broker holds (Kafka's
 * ScramImage.describe): each user's mechanisms and iteration counts, never a salt or a key.
 * No users named: every user with a credential. A user named twice is DUPLICATE_RESOURCE, a user
 * without any credential RESOURCE_NOT_FOUND, with Kafka's messages.
 */
import { ErrorCode } from '../../protocol/error-codes.js'
import type { DescribeUserScramCredentialsRequest } from '../../protocol/messages/describe-user-scram-credentials-request.js'
import type { CredentialInfo, DescribeUserScramCredentialsResponse } from '../../protocol/messages/describe-user-scram-credentials-response.js'
import type { CredentialCache } from './credential-cache.js'
import { SCRAM_MECHANISMS } from './scram-mechanism.js'

const DESCRIBE_DUPLICATE_USER = 'Cannot describe SCRAM credentials for the same user twice in a single request: '
const DESCRIBE_USER_THAT_DOES_NOT_EXIST = 'Attempt to describe a user credential that does not exist: '

export function describeScramCredentials(request: DescribeUserScramCredentialsRequest, cache: CredentialCache): DescribeUserScramCredentialsResponse {
  /** user -> named more than once */
  const users = new Map<string, boolean>()
  if (!request.users || request.users.length === 0) {
    for (const { username } of cache.entries()) users.set(username, false)
  } else {
    for (const { name } of request.users) users.set(name, users.has(name))
  }
  const results = [...users].map(([user, duplicate]) => {
    if (duplicate) return { user, errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: DESCRIBE_DUPLICATE_USER + user, credentialInfos: [] }
    const credentialInfos: CredentialInfo[] = []
    for (const mechanism of SCRAM_MECHANISMS) {
      const credential = cache.scramCredential(mechanism.mechanismName, user)
      if (credential) credentialInfos.push({ mechanism: mechanism.type, iterations: credential.iterations })
    }
    if (credentialInfos.length === 0) return { user, errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: DESCRIBE_USER_THAT_DOES_NOT_EXIST + user, credentialInfos }
    return { user, errorCode: ErrorCode.NONE, errorMessage: null, credentialInfos }
  })
  return { throttleTimeMs: 0, errorCode: ErrorCode.NONE, errorMessage: null, results }
}
