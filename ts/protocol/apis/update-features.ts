/**
 * UpdateFeatures (key 57, KIP-584), v0-v2; every version flexible. `kafka-features.sh
 * upgrade|downgrade|disable` (the AdminClient's `updateFeatures`) sends it to change the
 * cluster's finalized feature levels. v1 replaces allowDowngrade with the upgrade type and adds
 * validateOnly; v2's response has only the top-level error (no result per feature).
 *
 * The codecs are generated from Kafka's schemas (ts/protocol/messages); this module names the
 * versions the broker serves.
 */
import { updateFeaturesRequestCodec, type UpdateFeaturesRequest, type FeatureUpdateKey } from '../messages/update-features-request.js'
import { updateFeaturesResponseCodec, type UpdateFeaturesResponse, type UpdatableFeatureResult } from '../messages/update-features-response.js'
import { servedCodec } from './api.js'

export type { UpdateFeaturesRequest, FeatureUpdateKey, UpdateFeaturesResponse, UpdatableFeatureResult }

export const updateFeaturesCodec = servedCodec(updateFeaturesRequestCodec, updateFeaturesResponseCodec, 0, 2)
