// The log manager options of the offsets crash test, its child's and its parent's: the offsets
// log compacted in small segments, a log cleaner that cleans whenever anything is dirty.
const { DEFAULT_CLEANER_CONFIG } = require('../../dist/ts/storage/log-cleaner.js')
const { offsetsLogConfig, OFFSETS_TOPIC } = require('../../dist/ts/group/offsets-topic.js')

const OFFSETS_CONFIG = { ...offsetsLogConfig(16384), minCleanableDirtyRatio: 0 }

exports.OFFSETS_CONFIG = OFFSETS_CONFIG

exports.CHILD_LOG_MANAGER_OPTIONS = {
  retentionCheckIntervalMs: 0,
  topicConfig: (topic) => (topic === OFFSETS_TOPIC ? OFFSETS_CONFIG : undefined),
  cleaner: { ...DEFAULT_CLEANER_CONFIG, backOffMs: 5, dedupeBufferSize: 1024 * 1024 },
}
