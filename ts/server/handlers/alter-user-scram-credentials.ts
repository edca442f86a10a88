/**
 * AlterUserScramCredentials: validated as Kafka's controller validates it
 * (ts/security/scram/scram-control-manager.ts), then stored all together (the data dir's file, or
 * etcd in a cluster) before the answer; the next authentication uses the new credentials.
 *
 * Authorization (Kafka's ControllerApis): ALTER on the CLUSTER resource, else every user named is
 * answered CLUSTER_AUTHORIZATION_FAILED. The authorizer plugs in here.
 */
import type { AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse } from '../../protocol/apis/alter-user-scram-credentials.js'
import { alterScramCredentials } from '../../security/scram/scram-control-manager.js'
import type { ApiHandler } from '../kafka-apis.js'
import type { BrokerContext } from './broker-context.js'

export function alterUserScramCredentialsHandler(broker: BrokerContext): ApiHandler<AlterUserScramCredentialsRequest, AlterUserScramCredentialsResponse> {
  return (request) =>
    broker.scramCredentials.update((current) => {
      const { response, changes } = alterScramCredentials(request, (user, mechanismName) => current.scramCredential(mechanismName, user) !== undefined)
      return { changes, result: response }
    })
}
