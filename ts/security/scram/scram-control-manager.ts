/**
 * ScramControlManager (Kafka's controller class of that name): AlterUserScramCredentials
 * validated as Kafka's controller validates it, turned into the credential changes to store.
 * Per user, in request order, deletions before upsertions:
 *
 * - a user named a second time (in either list) is DUPLICATE_RESOURCE, and nothing of its is
 *   applied; further mentions keep that error;
 * - an empty user name is UNACCEPTABLE_CREDENTIAL, a mechanism type Kafka does not know
 *   UNSUPPORTED_SASL_MECHANISM;
 * - an upsertion with fewer iterations than the mechanism's minimum (4096) or more than 16384 is
 *   UNACCEPTABLE_CREDENTIAL ("Too few iterations" / "Too many iterations");
 * - a deletion of a credential that does not exist is RESOURCE_NOT_FOUND.
 *
 * An upsertion carries the salted password (the client ran Hi); it becomes StoredKey and
 * ServerKey here and is dropped: the salted password is never stored. Results list the
 * deletions, then the upsertions, then the failures, as Kafka's do.
 */
import { ErrorCode } from '../../protocol/error-codes.js'
import type { AlterUserScramCredentialsRequest } from '../../protocol/messages/alter-user-scram-credentials-request.js'
import type { AlterUserScramCredentialsResponse, AlterUserScramCredentialsResult } from '../../protocol/messages/alter-user-scram-credentials-response.js'
import type { ScramCredential } from './scram-credential.js'
import { ScramFormatter } from './scram-formatter.js'
import { scramMechanismForType, type ScramMechanism } from './scram-mechanism.js'

/** One credential set (credential) or removed (null). */
export interface ScramCredentialChange {
  mechanismName: string
  username: string
  credential: ScramCredential | null
}

export interface AlterScramCredentialsResult {
  response: AlterUserScramCredentialsResponse
  /** What to store, all or nothing (Kafka writes the records of one request atomically). */
  changes: ScramCredentialChange[]
}

interface ApiError {
  errorCode: number
  errorMessage: string
}

const DUPLICATE: ApiError = { errorCode: ErrorCode.DUPLICATE_RESOURCE, errorMessage: 'A user credential cannot be altered twice in the same request' }

function validateUsernameAndMechanism(name: string, type: number): ApiError | ScramMechanism {
  if (name.length === 0) return { errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Username must not be empty' }
  return scramMechanismForType(type) ?? { errorCode: ErrorCode.UNSUPPORTED_SASL_MECHANISM, errorMessage: 'Unknown SCRAM mechanism' }
}

/**
 * Validates `request` against the credentials that exist (`exists(user, mechanismName)`) and
 * returns the response and the changes to store.
 */
export function alterScramCredentials(request: AlterUserScramCredentialsRequest, exists: (username: string, mechanismName: string) => boolean): AlterScramCredentialsResult {
  const deletions = new Map<string, ScramCredentialChange>()
  const upsertions = new Map<string, ScramCredentialChange>()
  const errors = new Map<string, ApiError>()

  for (const deletion of request.deletions) {
    if (errors.has(deletion.name)) continue
    if (deletions.delete(deletion.name)) {
      errors.set(deletion.name, DUPLICATE)
      continue
    }
    const mechanism = validateUsernameAndMechanism(deletion.name, deletion.mechanism)
    if ('errorCode' in mechanism) errors.set(deletion.name, mechanism)
    else if (!exists(deletion.name, mechanism.mechanismName)) {
      errors.set(deletion.name, { errorCode: ErrorCode.RESOURCE_NOT_FOUND, errorMessage: 'Attempt to delete a user credential that does not exist' })
    } else deletions.set(deletion.name, { mechanismName: mechanism.mechanismName, username: deletion.name, credential: null })
  }
  for (const upsertion of request.upsertions) {
    if (errors.has(upsertion.name)) continue
    if (deletions.delete(upsertion.name) || upsertions.delete(upsertion.name)) {
      errors.set(upsertion.name, DUPLICATE)
      continue
    }
    const mechanism = validateUsernameAndMechanism(upsertion.name, upsertion.mechanism)
    if ('errorCode' in mechanism) errors.set(upsertion.name, mechanism)
    else if (upsertion.iterations < mechanism.minIterations) errors.set(upsertion.name, { errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Too few iterations' })
    else if (upsertion.iterations > mechanism.maxIterations) errors.set(upsertion.name, { errorCode: ErrorCode.UNACCEPTABLE_CREDENTIAL, errorMessage: 'Too many iterations' })
    else {
      const credential = new ScramFormatter(mechanism).credentialFromSaltedPassword(Buffer.from(upsertion.salt), upsertion.saltedPassword, upsertion.iterations)
      upsertions.set(upsertion.name, { mechanismName: mechanism.mechanismName, username: upsertion.name, credential })
    }
  }

  const results: AlterUserScramCredentialsResult[] = []
  for (const change of [...deletions.values(), ...upsertions.values()]) results.push({ user: change.username, errorCode: ErrorCode.NONE, errorMessage: null })
  for (const [user, error] of errors) results.push({ user, ...error })
  return { response: { throttleTimeMs: 0, results }, changes: [...deletions.values(), ...upsertions.values()] }
}
