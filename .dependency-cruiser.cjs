/**
 * The layering of ts/ as a CI gate (`npm run lint:deps`, run by .ci/run). Layers, lowest first:
 *
 *   protocol (wire format, record format)  <-  storage  <-  purgatory  <-  replica, group,
 *   coordinator, cluster, fetch, network  <-  server  <-  cli, index.ts
 *   client (Kafka's clients) sits on protocol and security only.
 *   security (principals, SASL mechanisms, ACL types, certificates) sits on protocol only.
 *
 * A module may import from its own layer or below, never above, and never in a cycle (type-only
 * imports count: a cycle of types is a cycle of concepts). logger.ts and native/ (the generated
 * binding) are usable from any layer.
 */
const UPPER = '^ts/(replica|group|coordinator|cluster|fetch|network|server|cli|client|index\\.ts)'

module.exports = {
  forbidden: [
    {
      name: 'no-circular',
      severity: 'error',
      comment: 'Module cycles: split the shared concept into its own module.',
      from: { path: '^(ts|bench)/' },
      to: { circular: true },
    },
    {
      name: 'protocol-is-the-bottom',
      severity: 'error',
      comment: 'ts/protocol (wire and record format) imports only itself and node builtins.',
      from: { path: '^ts/protocol/' },
      to: { path: '^ts/', pathNot: '^ts/protocol/' },
    },
    {
      name: 'storage-below-the-broker',
      severity: 'error',
      comment: 'ts/storage knows nothing of replicas, groups, the purgatory or the server.',
      from: { path: '^ts/storage/' },
      to: { path: `${UPPER}|^ts/purgatory/` },
    },
    {
      name: 'purgatory-is-generic',
      severity: 'error',
      comment: "The purgatory and timer (Kafka's server-common) know no replica; delayed operations live with their manager.",
      from: { path: '^ts/purgatory/' },
      to: { path: '^ts/', pathNot: '^ts/(purgatory/|logger\\.ts$)' },
    },
    {
      name: 'client-on-protocol-only',
      severity: 'error',
      comment: "ts/client is Kafka's clients: it speaks the protocol and knows no broker internals.",
      from: { path: '^ts/client/' },
      to: { path: '^ts/(storage|purgatory|replica|group|coordinator|cluster|fetch|server|cli)/' },
    },
    {
      name: 'security-on-protocol-only',
      severity: 'error',
      comment: 'ts/security (principals, mechanisms, ACLs, certificates) is shared by the broker and the client: it imports only protocol.',
      from: { path: '^ts/security/' },
      to: { path: '^ts/', pathNot: '^ts/(security|protocol)/|^ts/logger\\.ts$' },
    },
    {
      name: 'replica-below-the-server',
      severity: 'error',
      from: { path: '^ts/replica/' },
      to: { path: '^ts/(server|cli)/|^ts/index\\.ts$' },
    },
    {
      name: 'nothing-imports-the-cli',
      severity: 'error',
      from: { path: '^ts/', pathNot: '^ts/cli/' },
      to: { path: '^ts/cli/' },
    },
    {
      name: 'resolvable',
      severity: 'error',
      from: { path: '^ts/', pathNot: '^ts/native/' },
      to: { couldNotResolve: true },
    },
  ],
  options: {
    tsConfig: { fileName: 'tsconfig.json' },
    // type-only imports are dependencies too
    tsPreCompilationDeps: true,
    doNotFollow: { path: 'node_modules' },
    exclude: { path: '^ts/native/.*\\.(js|node)$' },
  },
}
